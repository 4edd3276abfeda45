"""sharded.ops.index.derived."""
