"""sharded.ops.linalg.derived."""
