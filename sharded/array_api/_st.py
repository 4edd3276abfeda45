"""``ST``: sharded's public op functions in one namespace, gathered from the modules that
``sharded/__init__`` star-imports (the namespace package may not import ``sharded`` itself,
which imports it: that would be a cycle)."""

from __future__ import annotations

from types import SimpleNamespace

from .. import functional
from ..ops import PUBLIC_FAMILIES

ST = SimpleNamespace(
    **{n: getattr(m, n) for m in (functional, *PUBLIC_FAMILIES) for n in m.__all__}
)
