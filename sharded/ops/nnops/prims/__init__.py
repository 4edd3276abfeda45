"""sharded.ops.nnops.prims."""
