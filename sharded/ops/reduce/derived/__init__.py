"""sharded.ops.reduce.derived."""
