"""sharded.ops.index.kernels."""
