"""``ST``: sharded's public op functions in one namespace: every op family's top-level
names (:data:`sharded.ops.FAMILIES`, the same list ``sharded/__init__`` star-imports; the
namespace package may not import ``sharded`` itself, which imports it: that would be a cycle)."""

from __future__ import annotations

from types import SimpleNamespace

from .. import ops

# from the families, not ``ops``: the Array API takes Python scalars where ``st.eq`` refuses them
ST = SimpleNamespace(**{n: getattr(f, n) for f in ops.FAMILIES for n in f.__all__})
