"""sharded.ops.linalg.prims."""
