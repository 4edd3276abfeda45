"""sharded.ops.order.prims."""
