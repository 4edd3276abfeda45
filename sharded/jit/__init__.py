"""sharded.jit."""
