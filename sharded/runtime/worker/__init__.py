"""sharded.runtime.worker."""
