"""sharded.ops.elementwise.prims."""
