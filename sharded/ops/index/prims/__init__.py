"""sharded.ops.index.prims."""
