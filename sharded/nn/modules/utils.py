"""Helpers the layer modules share (torch's ``nn/modules/utils.py``)."""

from __future__ import annotations

from ...layout import Layout


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _rep(fn, shape, dtype, device=None):
    """``fn`` (a creation op) of ``shape``, replicated on every worker: a parameter's
    or buffer's layout by default (see ``sharded.nn``)."""
    return fn(*shape, dtype=dtype, layout=Layout.replicated(), device=device or "cpu")
