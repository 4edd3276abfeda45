"""sharded.ops.shape.prims."""
