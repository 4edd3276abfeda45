"""Runtime: the only package that imports Ray (lazily, so the local executor needs none)."""

from .driver.session import current, init, is_initialized, shutdown

__all__ = ["current", "init", "is_initialized", "shutdown"]
