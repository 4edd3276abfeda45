"""sharded.ops.shape.derived."""
