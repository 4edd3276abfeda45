"""sharded.ops.elementwise.derived."""
