"""sharded.ops.order.derived."""
