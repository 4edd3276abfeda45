"""sharded.runtime.driver."""
