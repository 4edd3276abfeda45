"""Printing: torch-like ``repr`` (summarised when big) and the sharding map.

A big tensor is never gathered for printing: only its corner elements (the first and last
three along each dim, as torch shows them) are fetched from the shards that hold them.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as D

THRESHOLD = 1000
EDGE = 3
PRECISION = 4
SCI_MODE = None  # None: torch's automatic choice; True/False force or forbid scientific
LINEWIDTH = 80
_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Set how tensors print, as torch's: ``precision`` (digits after the point),
    ``threshold`` (more elements than this print summarized), ``edgeitems`` (elements shown
    at each end of a summarized dim), ``linewidth`` (kept for torch's signature),
    ``profile`` (``"default"``, ``"short"`` or ``"full"``) and ``sci_mode`` (None: automatic).

    Examples
    --------
    >>> import sharded as st
    >>> st.set_printoptions(precision=2)
    >>> st.tensor([1.2345, 2.0])
    tensor([1.23, 2.00], shards=1)
    >>> st.set_printoptions(profile="default")
    """
    global THRESHOLD, EDGE, PRECISION, SCI_MODE, LINEWIDTH
    if profile is not None:
        opts = _PROFILES.get(profile)
        if opts is None:  # torch silently ignores an unknown profile name
            opts = {}
        PRECISION = opts.get("precision", PRECISION)
        THRESHOLD = opts.get("threshold", THRESHOLD)
        EDGE = opts.get("edgeitems", EDGE)
        LINEWIDTH = opts.get("linewidth", LINEWIDTH)
    PRECISION = PRECISION if precision is None else int(precision)
    THRESHOLD = THRESHOLD if threshold is None else threshold
    EDGE = EDGE if edgeitems is None else int(edgeitems)
    LINEWIDTH = LINEWIDTH if linewidth is None else int(linewidth)
    SCI_MODE = sci_mode  # torch sets it whatever it is (None restores the automatic choice)


def _index_sets(shape, summarize):
    return [
        list(range(n))
        if not summarize or n <= 2 * EDGE
        else list(range(EDGE)) + list(range(n - EDGE, n))
        for n in shape
    ]


def corners(t, summarize: bool) -> np.ndarray:
    """The elements of ``t`` at :func:`_index_sets` positions, fetched shard by shard."""
    lay = t._layout
    sets = _index_sets(lay.shape, summarize)
    out = np.zeros([len(s) for s in sets], dtype=t.dtype.np)
    if out.size == 0:
        return out
    shards = [(0, lay.shards()[0])] if lay.is_replicated else list(enumerate(lay.shards()))
    items, places = [], []
    for i, (w, offs, shp) in shards:
        local, where = [], []
        for d, s in enumerate(sets):
            pos = [j for j, g in enumerate(s) if offs[d] <= g < offs[d] + shp[d]]
            local.append([s[j] - offs[d] for j in pos])
            where.append(pos)
        if all(local):
            items.append((w, t._keys[i], np.ix_(*local)))
            places.append(np.ix_(*where))
    for part, pl in zip(t._executor().fetch(items), places):
        out[pl] = part
    return out


class _Formatter:
    """torch's ``_Formatter``: one width for every element; floats in int mode (``3.``), fixed
    (``PRECISION`` decimals) or scientific notation, chosen from the nonzero finite values."""

    def __init__(self, vals: np.ndarray):
        self.floating = D.kind(vals.dtype) == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        if not self.floating:
            strs = [str(v) for v in vals.tolist()]
            self.max_width = max([1] + [len(s) for s in strs])
            return
        v = vals.astype(np.float64)
        nz = v[np.isfinite(v) & (v != 0)]
        if nz.size:
            a = np.abs(nz)
            lo, hi = a.min(), a.max()
            self.int_mode = bool(np.all(nz == np.ceil(nz)))
            auto = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
            self.sci_mode = bool(auto if SCI_MODE is None else SCI_MODE)
            if self.sci_mode:
                widths = [len(f"{x:.{PRECISION}e}") for x in nz]
            elif self.int_mode:
                widths = [len(f"{x:.0f}") + 1 for x in nz]
            else:
                widths = [len(f"{x:.{PRECISION}f}") for x in nz]
            self.max_width = max(widths)

    def format(self, v) -> str:
        if not self.floating:
            s = str(v)
        elif self.sci_mode:
            s = f"{v:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            s = f"{v:.0f}" + ("" if np.isnan(v) or np.isinf(v) else ".")
        else:
            s = f"{v:.{PRECISION}f}"
        return s.rjust(self.max_width)


def _tokens(a: np.ndarray):
    """Every element formatted as torch does (complex: real and imaginary formatters apart);
    also the width of one element and its separator, for the line length."""
    flat = a.reshape(-1)
    if flat.dtype.kind == "c":
        f1, f2 = _Formatter(flat.real), _Formatter(flat.imag)
        toks = []
        for z in flat.tolist():
            im = (f2.format(z.imag) + "j").lstrip()
            toks.append(f1.format(z.real) + (im if im[0] in "+-" else "+" + im))
        return np.array(toks, dtype=object).reshape(a.shape), f1.max_width + f2.max_width + 3
    f = _Formatter(flat)
    toks = [f.format(v) for v in flat.tolist()]
    return np.array(toks, dtype=object).reshape(a.shape), f.max_width + 2


def _block(tok, summarized, depth, indent, elem_len):
    if tok.ndim == 0:
        return tok.item()
    cut = summarized[depth] and tok.shape[0] == 2 * EDGE
    if tok.ndim == 1:
        parts = list(tok)
        if cut:
            parts.insert(EDGE, " ...")
        per_line = max(1, int((LINEWIDTH - indent) // elem_len))
        lines = [", ".join(parts[i : i + per_line]) for i in range(0, len(parts), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_block(tok[i], summarized, depth + 1, indent + 1, elem_len) for i in range(len(tok))]
    if cut:
        rows.insert(EDGE, "...")
    sep = "," + "\n" * (tok.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def tensor_repr(t) -> str:
    """``tensor([...], dtype=..., shards=N)`` like torch's repr."""
    lay = t._layout
    if t._storage.session.closed:
        return (
            f"<ShardedTensor shape={tuple(lay.shape)} dtype={t.dtype.name}: its session "
            f"was shut down>"
        )
    summarize = t.numel() > THRESHOLD
    vals = corners(t, summarize)
    summarized = [summarize and n > 2 * EDGE for n in lay.shape]
    extra = []
    dev = t.device
    if dev != "cpu":  # torch puts the device first
        extra.append(f"device='{dev}'")
    if t.numel() == 0:
        body = "[]"
        if lay.ndim != 1:
            extra.append(f"size={tuple(lay.shape)}")
        if t.dtype != D.get_default_dtype():  # nothing printed tells an empty int64 apart
            extra.append(f"dtype={t.dtype!r}")
    else:
        tok, elem_len = _tokens(vals)
        body = _block(tok, summarized, 0, len("tensor("), elem_len)
        if t.dtype not in (D.get_default_dtype(), D.default_complex(), D.int64, D.bool_):
            extra.append(f"dtype={t.dtype!r}")
    post = []
    if getattr(t, "grad_fn", None) is not None:
        post.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        post.append("requires_grad=True")
    parts = _add_suffixes("tensor(" + body, extra + post, len("tensor("))
    # our shards part goes inline after torch's dtype, so removing it leaves torch's string
    shards = f"shards={len(lay.shards())}" + (" (replicated)" if lay.is_replicated else "")
    parts.insert(1 + len(extra), ", " + shards)
    return "".join(parts) + ")"


def _add_suffixes(text, suffixes, indent) -> list:
    """torch's ``_add_suffixes``: a suffix that would pass the line width starts a new line."""
    parts, last = [text], len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return parts


def sharding_map(t) -> str:
    """A text map: one line per shard (block, worker, node, device), plus a 2-D grid."""
    lay = t._layout
    place = t.placement()
    nodes = {p["node"] for p in place}
    lines = [
        f"ShardedTensor shape={tuple(lay.shape)} dtype={t.dtype.name} grid={lay.grid}"
        f"{' replicated' if lay.is_replicated else ''}: {len(place)} shards on "
        f"{len({p['worker'] for p in place})} workers / {len(nodes)} nodes"
    ]
    for p in place:
        block = ", ".join(f"{o}:{o + n}" for o, n in zip(p["offsets"], p["shape"]))
        lines.append(
            f"  shard {p['shard']:>3}  [{block}]  worker {p['worker']:>2}  "
            f"node {str(p['node'])[:8]}  {p['device']}"
        )
    if (
        lay.ndim == 2
        and not lay.is_replicated
        and min(lay.grid) > 1
        or (lay.ndim == 2 and lay.grid[1] > 1 and not lay.is_replicated)
    ):
        lines.append("  grid (worker per block):")
        for r in range(lay.grid[0]):
            row = [f"w{lay.workers[lay.index((r, c))]}" for c in range(lay.grid[1])]
            lines.append("    " + " ".join(f"{x:>4}" for x in row))
    return "\n".join(lines)
