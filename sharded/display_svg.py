"""Pictures of the sharding for notebooks: ``ShardedTensor._repr_html_``, ``x.visualize(path)``
and the ``_repr_html_`` of ``st.stats()``'s result.

Everything here reads metadata only (the layout and the workers' placement); no element is
ever fetched. A picture is first laid out as a :class:`Canvas` (rectangles and text in pixel
coordinates), which is then written as SVG (no dependency) or, for a PNG, drawn by matplotlib
when it is installed.

What is drawn
-------------
A 0-d or 1-d tensor is one horizontal bar cut into its shards; a 2-d tensor is its (rows,
columns) grid. For more dims, two dims are drawn: the split dims when exactly two are split;
the split dim and the last other dim when one is; the last two dims when none is (one
shard); the last two split dims when more than two are split, with one panel per block of
the other split dims. Block edges are to scale along each drawn axis (each axis is scaled on
its own to fit the picture, so a 10**6 x 8 tensor is still readable). Every block is filled
with its worker's colour (:data:`PALETTE`, by worker index) and labelled with the worker and,
where it fits, its node and device; its tooltip says all. A replicated tensor is drawn as
stacked copies of the whole tensor, one per holder (at most :data:`MAX_COPIES` drawn), with a
caption listing every holder.
"""

from __future__ import annotations

import itertools
import math
import os
from html import escape

from .errors import ArgumentError, ArgumentTypeError, BackendUnavailable

# one colour per worker (worker i gets PALETTE[i % len(PALETTE)]); light enough for dark text
PALETTE = (
    "#7aa6d8",
    "#f0a35e",
    "#82c487",
    "#e07b7b",
    "#b59ad6",
    "#c9a27e",
    "#ef9fcf",
    "#b0b0b0",
    "#d4d46a",
    "#6fcfd6",
    "#9fb7f0",
    "#f3c76b",
)
WIDTH = 480  # pixels of a picture's horizontal axis (one panel)
MAX_HEIGHT = 320  # pixels of a 2-d picture's vertical axis at most
MAX_COPIES = 8  # replicated copies drawn (the caption lists every holder)
MAX_PANELS = 16  # panels of an N-d block grid drawn (the caption says how many are left out)
MAX_LEGEND = 16  # workers named in the legend
MARGIN = 10
SVG_NS = "http://www.w3.org/2000/svg"


def colour(worker: int) -> str:
    """The fill colour of ``worker``'s blocks.

    Examples
    --------
    >>> colour(0), colour(len(PALETTE)) == colour(0)
    ('#7aa6d8', True)
    """
    return PALETTE[worker % len(PALETTE)]


class Canvas:
    """Rectangles and text in pixel coordinates (y down), written as SVG or PNG.

    Examples
    --------
    >>> c = Canvas(40, 20)
    >>> c.rect(0, 0, 40, 20, "#fff", "box")
    >>> c.svg().count("<rect")
    1
    """

    def __init__(self, width: float, height: float):
        self.width, self.height = width, height
        self.shapes: list = []

    def rect(self, x, y, w, h, fill, kind, title=None, **data) -> None:
        """A rectangle of class ``kind``; ``data`` become ``data-*`` attributes (for tests
        and scripts reading the SVG) and ``title`` its tooltip."""
        self.shapes.append(("rect", x, y, w, h, fill, kind, title, data))

    def text(self, x, y, s, size=11, anchor="middle", weight="normal") -> None:
        """Text whose baseline starts (``anchor="start"``) or is centred at ``(x, y)``."""
        self.shapes.append(("text", x, y, str(s), size, anchor, weight))

    def svg(self) -> str:
        """The picture as an ``<svg>`` element (well-formed XML)."""
        out = [
            f'<svg xmlns="{SVG_NS}" width="{_n(self.width)}" height="{_n(self.height)}" '
            f'viewBox="0 0 {_n(self.width)} {_n(self.height)}" '
            'font-family="sans-serif" class="sharded-picture">'
        ]
        for s in self.shapes:
            if s[0] == "rect":
                _, x, y, w, h, fill, kind, title, data = s
                attrs = "".join(f' data-{k}="{escape(str(v))}"' for k, v in data.items())
                tip = f"<title>{escape(title)}</title>" if title else ""
                out.append(
                    f'<rect class="{kind}" x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" '
                    f'height="{_n(h)}" fill="{fill}" stroke="#333" stroke-width="0.8"{attrs}>'
                    f"{tip}</rect>"
                )
            else:
                _, x, y, text, size, anchor, weight = s
                out.append(
                    f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" '
                    f'font-weight="{weight}" fill="#111">{escape(text)}</text>'
                )
        out.append("</svg>")
        return "\n".join(out)

    def png(self, path) -> None:
        """Draw the picture with matplotlib into the PNG file ``path`` (100 dpi: one pixel
        of the SVG is one of the PNG)."""
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
            from matplotlib.patches import Rectangle
        except ImportError as e:
            raise BackendUnavailable(
                f"writing {os.fspath(path)!r} as PNG needs matplotlib, which is not installed "
                f"here ({e}); pip install matplotlib, or give a path ending in .svg"
            ) from None
        # (Figure and the Agg canvas directly, not pyplot: no global state, no GUI backend)
        fig = Figure(figsize=(self.width / 100, self.height / 100), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        ax.axis("off")
        for s in self.shapes:
            if s[0] == "rect":
                _, x, y, w, h, fill, _kind, _title, _data = s
                ax.add_patch(Rectangle((x, y), w, h, facecolor=fill, edgecolor="#333", lw=0.6))
            else:
                _, x, y, text, size, anchor, weight = s
                ha = "center" if anchor == "middle" else "left"
                # an SVG font-size is in pixels; matplotlib's in points (72 per inch)
                ax.text(x, y, text, fontsize=size * 0.72, ha=ha, va="baseline", weight=weight)
        fig.savefig(path, format="png")


def _n(v) -> str:
    """A coordinate for SVG: at most two decimals, no trailing zeros."""
    return f"{v:.2f}".rstrip("0").rstrip(".")


def human_bytes(n: int) -> str:
    """``n`` bytes in binary units.

    Examples
    --------
    >>> human_bytes(140), human_bytes(3 << 20)
    ('140 B', '3 MiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return ""  # (not reached)


# ------------------------------------------------------------------------- tensors
def drawn_dims(layout) -> tuple:
    """The dims a picture of ``layout`` draws: ``(dim,)`` as a bar, ``(rows, cols)`` as a
    grid (see the module's docstring for the choice).

    Examples
    --------
    >>> import sharded as st
    >>> drawn_dims(st.Layout(dim=1).bind((8, 6, 4), num_workers=2))
    (1, 2)
    >>> drawn_dims(st.Layout.block((2, 2, 2)).bind((4, 4, 4), num_workers=2))
    (1, 2)
    """
    nd, split = layout.ndim, layout.split_dims
    if nd <= 1:
        return (0,) if nd else ()
    if nd == 2:
        return (0, 1)
    if len(split) >= 2:
        return tuple(split[-2:])
    if len(split) == 1:
        other = nd - 1 if split[0] != nd - 1 else nd - 2
        return tuple(sorted((split[0], other)))
    return (nd - 2, nd - 1)


def layout_kind(layout) -> str:
    """In words: replicated, one shard, split along one dim (with its chunks) or a block grid.

    Examples
    --------
    >>> import sharded as st
    >>> layout_kind(st.Layout(chunks=(3, 2, 2)).bind((7, 4), num_workers=2))
    'split on dim 0 (chunks 3, 2, 2)'
    """
    if layout.is_replicated:
        return f"replicated on {len(layout.workers)} workers"
    split = layout.split_dims
    if not split:
        return "one shard"
    if len(split) == 1:
        sizes = layout.chunk_sizes(split[0])
        shown = ", ".join(map(str, sizes[:8])) + (", …" if len(sizes) > 8 else "")
        return f"split on dim {split[0]} (chunks {shown})"
    return f"block grid {layout.grid}"


def _axis(n: int, cuts, length: float) -> list:
    """``(start, size)`` in pixels of every chunk between ``cuts`` on an axis of ``length``
    pixels for ``n`` elements (an empty dim: equal parts)."""
    if n == 0:
        k = len(cuts) - 1
        return [(i * length / k, length / k) for i in range(k)]
    scale = length / n
    return [(a * scale, (b - a) * scale) for a, b in zip(cuts, cuts[1:])]


def _extent(shape, dims) -> tuple:
    """Pixel width and height of one panel drawing ``dims`` of ``shape``."""
    if len(dims) < 2:
        return WIDTH, 48
    rows, cols = shape[dims[0]], shape[dims[1]]
    ratio = rows / cols if rows and cols else 1.0
    return WIDTH, min(MAX_HEIGHT, max(48, WIDTH * ratio))


def _label(c: Canvas, x, y, w, h, lines) -> None:
    """As many of ``lines`` as fit inside the block, centred (11 px text, ~6.5 px a char)."""
    fit = [s for s in lines if len(s) * 6.5 + 6 <= w][: max(0, int((h - 4) // 13))]
    top = y + h / 2 - 13 * len(fit) / 2 + 10
    for i, s in enumerate(fit):
        c.text(x + w / 2, top + 13 * i, s)


def _short(node) -> str:
    return str(node)[:8]


def _tip(p, itemsize) -> str:
    block = ", ".join(f"{o}:{o + n}" for o, n in zip(p["offsets"], p["shape"])) or "scalar"
    nbytes = math.prod(p["shape"]) * itemsize
    return (
        f"shard {p['shard']} [{block}]: worker {p['worker']}, node {p['node']}, "
        f"{p['device']}, {human_bytes(nbytes)}"
    )


def picture(t) -> Canvas:
    """The :class:`Canvas` of ``t``'s sharding (metadata only).

    Examples
    --------
    >>> import sharded as st
    >>> c = picture(st.zeros(6, 12, layout=st.Layout(chunks=(4, 2))))
    >>> [s[4] for s in c.shapes if s[0] == "rect" and s[6] == "shard"]  # block heights
    [160.0, 80.0]
    """
    lay, place = t.layout, t.placement()
    itemsize = t.dtype.itemsize
    dims = drawn_dims(lay)
    pw, ph = _extent(lay.shape, dims)
    if lay.is_replicated:
        return _replicated(lay, place, dims, pw, ph, itemsize)
    panel_dims = [d for d in lay.split_dims if d not in dims]
    panels = list(itertools.product(*(range(lay.grid[d]) for d in panel_dims)))
    drawn = panels[:MAX_PANELS]
    per_row = 1 if len(drawn) == 1 else min(len(drawn), 4)
    if len(drawn) > 1:  # several panels share the width of one and a half pictures
        pw = max(96, (1.5 * WIDTH - (per_row - 1) * MARGIN) / per_row)
        ph = ph * pw / WIDTH
    head = 18 if len(drawn) > 1 else 0
    nrows = math.ceil(len(drawn) / per_row)
    width = 2 * MARGIN + per_row * pw + (per_row - 1) * MARGIN
    body = MARGIN + nrows * (head + ph + MARGIN)
    workers = sorted({p["worker"] for p in place})
    legend_rows = math.ceil(min(len(workers), MAX_LEGEND) / 4)
    c = Canvas(max(width, 2 * MARGIN + WIDTH), body + 22 + 18 * legend_rows + 4)
    for k, fixed in enumerate(drawn):
        px = MARGIN + (k % per_row) * (pw + MARGIN)
        py = MARGIN + (k // per_row) * (head + ph + MARGIN)
        if head:
            where = ", ".join(
                f"dim {d}: {lay.bounds[d][i]}:{lay.bounds[d][i + 1]}"
                for d, i in zip(panel_dims, fixed)
            )
            c.text(px, py + 12, where, anchor="start")
        _panel(c, lay, place, dims, dict(zip(panel_dims, fixed)), px, py + head, pw, ph, itemsize)
    caption = _axes_caption(lay.shape, dims)
    if len(panels) > len(drawn):
        caption += f"; {len(panels) - len(drawn)} more panels not drawn"
    c.text(MARGIN, body + 12, caption, anchor="start")
    _legend(c, place, workers, body + 22)
    return c


def _panel(c, lay, place, dims, fixed, x0, y0, pw, ph, itemsize) -> None:
    """The blocks of ``lay`` whose grid coordinates on the panel dims are ``fixed``."""
    cols = _axis(lay.shape[dims[-1]], lay.bounds[dims[-1]], pw) if dims else [(0, pw)]
    rows = _axis(lay.shape[dims[0]], lay.bounds[dims[0]], ph) if len(dims) == 2 else [(0, ph)]
    for i, p in enumerate(place):
        co = lay.coords(i)
        if any(co[d] != v for d, v in fixed.items()):
            continue
        x, w = cols[co[dims[-1]]] if dims else cols[0]
        y, h = rows[co[dims[0]]] if len(dims) == 2 else rows[0]
        c.rect(
            x0 + x,
            y0 + y,
            w,
            h,
            colour(p["worker"]),
            "shard",
            _tip(p, itemsize),
            shard=i,
            worker=p["worker"],
            node=p["node"],
            device=p["device"],
        )
        _label(c, x0 + x, y0 + y, w, h, [f"w{p['worker']}", _short(p["node"]), p["device"]])


def _replicated(lay, place, dims, pw, ph, itemsize) -> Canvas:
    """Stacked copies of the whole tensor, the first holder in front."""
    shown = place[:MAX_COPIES]
    step = 8
    back = step * (len(shown) - 1)
    workers = sorted({p["worker"] for p in place})
    legend_rows = math.ceil(min(len(workers), MAX_LEGEND) / 4)
    body = MARGIN + back + ph + MARGIN
    c = Canvas(2 * MARGIN + back + pw, body + 38 + 18 * legend_rows + 4)
    for k in reversed(range(len(shown))):
        p = shown[k]
        x, y = MARGIN + step * k, MARGIN + back - step * k
        c.rect(
            x,
            y,
            pw,
            ph,
            colour(p["worker"]),
            "copy",
            _tip(p, itemsize),
            shard=k,
            worker=p["worker"],
            node=p["node"],
            device=p["device"],
        )
    p = shown[0]
    front = [f"w{p['worker']} (copy 1 of {len(place)})", _short(p["node"]), p["device"]]
    _label(c, MARGIN, MARGIN + back, pw, ph, front)
    holders = ", ".join(f"w{p['worker']}" for p in place)
    c.text(MARGIN, body + 12, f"replicated: a full copy on {holders}", anchor="start")
    c.text(MARGIN, body + 28, _axes_caption(lay.shape, dims), anchor="start")
    _legend(c, place, workers, body + 38)
    return c


def _axes_caption(shape, dims) -> str:
    if not dims:
        return "scalar"
    across = f"→ dim {dims[-1]} ({shape[dims[-1]]})"
    return across if len(dims) == 1 else f"{across}, ↓ dim {dims[0]} ({shape[dims[0]]})"


def _legend(c: Canvas, place, workers, y0) -> None:
    """A swatch and ``w<i> <node> <device>`` for each worker drawn (four a row)."""
    info = {p["worker"]: p for p in place}
    for k, w in enumerate(workers[:MAX_LEGEND]):
        x, y = MARGIN + (k % 4) * 120, y0 + (k // 4) * 18
        c.rect(x, y, 12, 12, colour(w), "legend", worker=w)
        c.text(
            x + 16,
            y + 10,
            f"w{w} {_short(info[w]['node'])} {info[w]['device']}",
            size=10,
            anchor="start",
        )
    if len(workers) > MAX_LEGEND:
        c.text(MARGIN + 4 * 120, y0 + 10, f"+{len(workers) - MAX_LEGEND}", anchor="start")


def tensor_svg(t) -> str:
    """``t``'s sharding as an SVG document (metadata only).

    Examples
    --------
    >>> import sharded as st
    >>> tensor_svg(st.zeros(4, 6, layout=st.Layout.block((2, 2)))).count('class="shard"')
    4
    """
    return picture(t).svg()


def tensor_html(t) -> str:
    """The notebook view of ``t``: a table of its metadata beside :func:`tensor_svg`.

    Examples
    --------
    >>> import sharded as st
    >>> "<td>(7, 4)</td>" in tensor_html(st.zeros(7, 4, shards=2))
    True
    """
    lay, place = t.layout, t.placement()
    nodes = {p["node"] for p in place}
    rows = [
        ("shape", tuple(lay.shape)),
        ("dtype", t.dtype.name),
        ("device", t.device),
        ("layout", layout_kind(lay)),
        ("shards", len(place)),
        ("workers / nodes", f"{len({p['worker'] for p in place})} / {len(nodes)}"),
        ("bytes", f"{t.nbytes} ({human_bytes(t.nbytes)})"),
        ("requires_grad", t.requires_grad),
    ]
    if t._storage.session.closed:
        rows.append(("session", "shut down (the shards were freed)"))
    cells = "".join(
        f'<tr><th style="text-align:left;padding-right:8px">{escape(k)}</th>'
        f"<td>{escape(str(v))}</td></tr>"
        for k, v in rows
    )
    return (
        '<div class="sharded-tensor" style="display:flex;gap:16px;align-items:flex-start;'
        'font-family:sans-serif;font-size:12px">'
        f'<table class="sharded-meta">{cells}</table>{tensor_svg(t)}</div>'
    )


def save(t, path) -> str:
    """Write ``t``'s picture to ``path``: SVG for ``.svg``, PNG (needs matplotlib) for
    ``.png``; return the path written.

    Examples
    --------
    >>> import os, tempfile, sharded as st
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = save(st.zeros(4, shards=2), os.path.join(d, "x.svg"))
    ...     open(out).read().startswith("<svg")
    True
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"visualize: path must be a str or os.PathLike, got {path!r}")
    name = os.fspath(path)
    suffix = os.path.splitext(name)[1].lower()
    if suffix == ".svg":
        with open(name, "w", encoding="utf-8") as f:
            f.write(tensor_svg(t))
    elif suffix == ".png":
        picture(t).png(name)
    else:
        raise ArgumentError(
            f"visualize: cannot tell the picture format of {name!r} (suffix {suffix!r}); "
            "give a path ending in .svg or .png"
        )
    return name


# --------------------------------------------------------------------------- stats
def stats_svg(stats) -> str:
    """``st.stats()``'s live bytes per worker as a bar chart (one bar per worker, lengths
    proportional to the bytes, coloured as the workers' blocks).

    Examples
    --------
    >>> s = {"workers": [{"worker": 0, "node": "n", "device": "cpu", "live_bytes": 10,
    ...                   "live_shards": 1}]}
    >>> stats_svg(s).count('class="bar"')
    1
    """
    ws = stats["workers"]
    most = max([w["live_bytes"] for w in ws] + [1])
    bar, row, label = 300, 20, 150
    c = Canvas(2 * MARGIN + label + bar + 140, 2 * MARGIN + row * len(ws) + 16)
    for k, w in enumerate(ws):
        y = MARGIN + k * row
        name = f"w{w['worker']} {_short(w.get('node', ''))} {w.get('device', '')}"
        c.text(MARGIN, y + 13, name, anchor="start")
        length = bar * w["live_bytes"] / most
        tip = f"worker {w['worker']}: {w['live_bytes']} bytes in {w['live_shards']} shards"
        c.rect(
            MARGIN + label,
            y + 2,
            length,
            row - 5,
            colour(w["worker"]),
            "bar",
            tip,
            worker=w["worker"],
            bytes=w["live_bytes"],
        )
        note = f"{human_bytes(w['live_bytes'])}, {w['live_shards']} shards"
        c.text(MARGIN + label + length + 6, y + 13, note, size=10, anchor="start")
    c.text(MARGIN, MARGIN + row * len(ws) + 12, "live bytes per worker", size=10, anchor="start")
    return c.svg()


def stats_html(stats) -> str:
    """The notebook view of ``st.stats()``: totals beside :func:`stats_svg`."""
    rec = stats.get("recoveries") or {}
    rows = [
        ("workers", len(stats["workers"])),
        ("live shards", stats.get("live_shards")),
        ("live bytes", human_bytes(sum(w["live_bytes"] for w in stats["workers"]))),
        ("bytes moved", stats.get("bytes_moved")),
        ("commands", stats.get("commands")),
        ("recoveries", rec.get("count", 0)),
    ]
    cells = "".join(
        f'<tr><th style="text-align:left;padding-right:8px">{escape(k)}</th>'
        f"<td>{escape(str(v))}</td></tr>"
        for k, v in rows
    )
    return (
        '<div class="sharded-stats" style="display:flex;gap:16px;align-items:flex-start;'
        'font-family:sans-serif;font-size:12px">'
        f'<table class="sharded-meta">{cells}</table>{stats_svg(stats)}</div>'
    )
