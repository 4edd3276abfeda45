"""sharded.ops.random.prims."""
