"""sharded.runtime.service."""
