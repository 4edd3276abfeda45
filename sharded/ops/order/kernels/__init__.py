"""sharded.ops.order.kernels."""
