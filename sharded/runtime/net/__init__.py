"""sharded.runtime.net."""
