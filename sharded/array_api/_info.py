"""``__array_namespace_info__()``: what the namespace supports and its defaults."""

from __future__ import annotations

from .. import dtypes as D
from ..runtime.driver import session
from ._dtypes import DTYPES, isdtype


class Info:
    """The inspection object of the standard (``xp.__array_namespace_info__()``).

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> info = xp.__array_namespace_info__()
    >>> info.default_device(), info.default_dtypes()["integral"]
    ('cpu', sharded.int64)
    """

    __module__ = "sharded.array_api"

    def capabilities(self) -> dict:
        """Optional features: boolean indexing and data-dependent shapes are supported."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """The device arrays are created on when ``device=None``."""
        return "cpu"

    def devices(self) -> list:
        """The devices of the live session's workers (``["cpu"]`` before one starts)."""
        if not session.is_initialized():
            return ["cpu"]
        ws = session.current().executor.workers
        return sorted({w.device for w in ws} | {"cpu"})

    def default_dtypes(self, *, device=None) -> dict:
        """The dtypes creation functions pick when ``dtype=None``."""
        cf = "complex128" if D.get_default_dtype() == D.float64 else "complex64"
        return {
            "real floating": D.get_default_dtype(),
            "complex floating": getattr(D, cf, None),
            "integral": D.int64,
            "indexing": D.int64,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The supported dtypes by name, optionally only those of ``kind``."""
        return {d.name: d for d in DTYPES if kind is None or isdtype(d, kind)}


_INFO = Info()


def __array_namespace_info__() -> Info:
    """The namespace's inspection object.

    Examples
    --------
    >>> from sharded import array_api as xp
    >>> sorted(xp.__array_namespace_info__().dtypes(kind="real floating"))
    ['float32', 'float64']
    """
    return _INFO
