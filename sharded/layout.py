"""Layouts: how a tensor's global index space is cut into shards and which worker holds each.

Pure math, no Ray. A *bound* layout knows the global ``shape``, per-dim chunk ``bounds`` (the
block grid is their product, in C order) and the worker of every shard. A user writes an
*unbound* request (``st.Layout(dim=1)``, ``st.Layout.block((2, 2))``,
``st.Layout(chunks=(3, 2, 2))``, ``st.Layout.replicated()``) that creation functions bind to a
shape and the session's worker count.

Chunk sizes follow ``numpy.array_split``: 7 rows on 3 shards are 3, 2, 2. A shard count
(``shards=``, ``grid=``) is capped at its dim's length, so 2 rows asked in 3 shards are 2
shards of 1 row, and ``shards=10**6`` on 10 rows makes 10 (a dim of length 0 gets one empty
shard); explicit ``chunks=`` may still make empty shards (zero-size blocks). Shard ``i`` goes
to worker ``i % num_workers`` unless ``workers=`` says otherwise, so neighbouring shards sit on
different workers (and, with workers interleaved across nodes, on different nodes).
"""

from __future__ import annotations

import bisect
import itertools
import math

from .errors import DimError, LayoutMismatch, ShapeError, ShardingError


def split_sizes(n: int, k: int) -> tuple[int, ...]:
    """Sizes of ``k`` nearly equal chunks of ``n`` (larger ones first, as ``np.array_split``).

    Examples
    --------
    >>> split_sizes(7, 3)
    (3, 2, 2)
    """
    q, r = divmod(n, k)
    return tuple(q + 1 if i < r else q for i in range(k))


def _cumulative(sizes) -> tuple[int, ...]:
    return tuple(itertools.accumulate(sizes, initial=0))


def normalize_dim(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative index; :class:`DimError` names it when out of range."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise DimError(f"dim must be an int, got {dim!r}")
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise DimError(
            f"dim {dim} is out of range for a {ndim}-d tensor "
            f"(expected to be in range of [{lo}, {hi}])"
        )
    return dim % ndim if ndim else 0


def broadcast_shapes(*shapes, what=""):
    """numpy/torch broadcasting of ``shapes``; :class:`ShapeError` names them if they clash
    (after ``what``, e.g. ``"linalg.solve: batch dims cannot be broadcast: "``).

    Examples
    --------
    >>> broadcast_shapes((2, 1), (2,))
    (2, 2)
    """
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ShapeError(
                f"{what}shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                f"broadcast together (dimension {i}: sizes {sorted(sizes)})"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class Layout:
    """Where the shards of a tensor live.

    Parameters
    ----------
    dim : int, optional
        The dimension to split (default 0).
    shards : int, optional
        Number of equal-ish chunks along ``dim`` (default: the number of workers), capped at
        the size of ``dim`` (at least 1), so that no shard is empty: ``shards=10**6`` on 10
        rows makes 10 shards.
    chunks : sequence of int or dict, optional
        Explicit, possibly uneven chunk sizes along ``dim`` (or ``{dim: sizes}`` for several).
    boundaries : sequence of int or dict, optional
        The same as cut positions: ``(3, 5)`` or ``(0, 3, 5, 7)`` both cut 7 rows into 3, 2, 2.
    grid : tuple of int, optional
        Number of chunks per dimension for a block grid, each capped at its dim's size (at
        least 1) as ``shards``; see :meth:`block`.
    workers : sequence of int, optional
        Worker index of every shard (C order over the grid); default round robin.

    Examples
    --------
    >>> import sharded as st
    >>> lay = st.Layout(chunks=(3, 2, 2)).bind((7, 4), num_workers=2)
    >>> lay.grid, lay.workers, lay.shard_shape(2)
    ((3, 1), (0, 1, 0), (2, 4))
    """

    __slots__ = ("_req", "shape", "bounds", "is_replicated", "workers", "_shards", "_hash")

    def __init__(
        self, dim=None, shards=None, *, chunks=None, boundaries=None, grid=None, workers=None
    ):
        if boundaries is not None:
            chunks = _Cuts(boundaries)
        given = [
            n for n, v in (("shards", shards), ("chunks", chunks), ("grid", grid)) if v is not None
        ]
        if len(given) > 1:
            raise ShardingError(f"give only one of shards=, chunks=, grid= (got {given})")
        if grid is not None and dim is not None:
            raise ShardingError("dim= has no meaning with grid=; grid gives chunks per dim")
        self._req = dict(
            dim=dim, shards=shards, chunks=chunks, grid=grid, workers=workers, replicated=False
        )
        self.shape = self.bounds = self.workers = self._shards = self._hash = None
        self.is_replicated = False

    @classmethod
    def block(cls, grid, workers=None) -> Layout:
        """A block grid: ``grid[d]`` chunks along dimension ``d``.

        Examples
        --------
        >>> import sharded as st
        >>> st.Layout.block((2, 2)).bind((4, 6), num_workers=4).shard_offsets(3)
        (2, 3)
        """
        return cls(grid=tuple(grid), workers=workers)

    @classmethod
    def replicated(cls) -> Layout:
        """Every worker holds the whole tensor (one full shard per worker).

        Examples
        --------
        >>> import sharded as st
        >>> st.Layout.replicated().bind((3,), num_workers=2).workers
        (0, 1)
        """
        lay = cls()
        lay._req["replicated"] = True
        return lay

    # ----------------------------------------------------------------- binding
    @classmethod
    def from_bounds(cls, shape, bounds, workers, replicated=False) -> Layout:
        """A bound layout from per-dim boundaries ``bounds[d] = (0, b1, ..., shape[d])``."""
        lay = cls.__new__(cls)
        lay._req = None
        lay.shape, lay.bounds = tuple(shape), tuple(tuple(b) for b in bounds)
        lay.is_replicated, lay.workers = replicated, tuple(workers)
        n = 1 if replicated else math.prod(len(b) - 1 for b in lay.bounds)
        if replicated and len(lay.workers) < 1 or not replicated and len(lay.workers) != n:
            raise LayoutMismatch(f"{len(lay.workers)} workers given for {n} shards")
        lay._shards = None
        lay._hash = None
        return lay

    @property
    def is_bound(self) -> bool:
        return self.shape is not None

    def bind(self, shape, num_workers: int) -> Layout:
        """This request applied to ``shape`` on ``num_workers`` workers (a bound layout)."""
        shape = tuple(shape)
        if self.is_bound:
            if self.shape != shape:
                raise LayoutMismatch(f"layout for shape {self.shape} applied to shape {shape}")
            return self
        r, nd = self._req, len(shape)
        if r["replicated"]:
            ws = range(num_workers) if r["workers"] is None else r["workers"]
            return Layout.from_bounds(shape, [(0, s) for s in shape], ws, replicated=True)
        sizes = [(s,) for s in shape]
        if r["grid"] is not None:
            grid = tuple(r["grid"])
            if len(grid) != nd:
                raise LayoutMismatch(
                    f"grid {grid} has {len(grid)} dims but the tensor has shape {shape}"
                )
            for d, g in enumerate(grid):
                sizes[d] = split_sizes(shape[d], _capped(g, f"grid[{d}]", shape[d]))
        elif nd:
            dim = normalize_dim(0 if r["dim"] is None else r["dim"], nd)
            chunks = r["chunks"]
            if chunks is None:
                # default: one shard per worker; never more shards than the dim has entries
                k = r["shards"] if r["shards"] is not None else num_workers
                k = _capped(k, "shards", shape[dim])
                sizes[dim] = split_sizes(shape[dim], k)
            else:
                if isinstance(chunks, _Cuts):
                    chunks = chunks.sizes(shape, dim)
                for d, cs in chunks.items() if isinstance(chunks, dict) else [(dim, chunks)]:
                    d = normalize_dim(d, nd)
                    cs = tuple(int(c) for c in cs)
                    if any(c < 0 for c in cs) or sum(cs) != shape[d] or not cs:
                        raise LayoutMismatch(
                            f"chunks {cs} do not add up to size {shape[d]} of dim {d}"
                        )
                    sizes[d] = cs
        elif r["shards"] not in (None, 1) and r["chunks"] is None:
            _check_count(r["shards"], "shards")  # a 0-d tensor is always one shard
        bounds = [_cumulative(s) for s in sizes]
        n = math.prod(len(s) for s in sizes)
        ws = r["workers"]
        if ws is None:
            ws = [i % num_workers for i in range(n)]
        elif len(ws) != n:
            raise LayoutMismatch(f"workers= names {len(ws)} workers for {n} shards")
        for w in ws:
            if not isinstance(w, int) or not 0 <= w < num_workers:
                raise ShardingError(f"worker {w!r} does not exist ({num_workers} workers)")
        return Layout.from_bounds(shape, bounds, ws)

    # ------------------------------------------------------------ shard math
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def grid(self) -> tuple[int, ...]:
        """Number of chunks along each dimension."""
        return tuple(len(b) - 1 for b in self.bounds)

    @property
    def num_shards(self) -> int:
        return len(self.shards())

    @property
    def split_dims(self) -> tuple[int, ...]:
        """Dimensions cut into more than one chunk."""
        return tuple(d for d, g in enumerate(self.grid) if g > 1)

    def chunk_sizes(self, d: int) -> tuple[int, ...]:
        b = self.bounds[d]
        return tuple(b[i + 1] - b[i] for i in range(len(b) - 1))

    def shards(self) -> tuple:
        """``(worker, offsets, shape)`` of every shard, in C order over the grid (cached)."""
        if self._shards is None:
            if self.is_replicated:
                full = ((0,) * self.ndim, self.shape)
                self._shards = tuple((w,) + full for w in self.workers)
            else:
                out = []
                for i, coords in enumerate(itertools.product(*(range(g) for g in self.grid))):
                    offs = tuple(self.bounds[d][c] for d, c in enumerate(coords))
                    shp = tuple(
                        self.bounds[d][c + 1] - self.bounds[d][c] for d, c in enumerate(coords)
                    )
                    out.append((self.workers[i], offs, shp))
                self._shards = tuple(out)
        return self._shards

    def shard_offsets(self, i: int) -> tuple[int, ...]:
        return self.shards()[i][1]

    def shard_shape(self, i: int) -> tuple[int, ...]:
        return self.shards()[i][2]

    def coords(self, i: int) -> tuple[int, ...]:
        """Block-grid coordinates of shard ``i``."""
        out = []
        for g in reversed(self.grid):
            i, c = divmod(i, g)
            out.append(c)
        return tuple(reversed(out))

    def index(self, coords) -> int:
        """Shard index of block-grid ``coords`` (inverse of :meth:`coords`)."""
        i = 0
        for c, g in zip(coords, self.grid):
            i = i * g + c
        return i

    def overlaps(self, region):
        """Shards intersecting ``region`` (one ``(lo, hi)`` per dim).

        Returns ``[(shard, src_slices, dst_slices)]``: the part of the shard, in shard-local
        coordinates, and where it lands inside the region. Empty intersections are skipped.
        """
        if self.is_replicated:
            sl = tuple(slice(lo, hi) for lo, hi in region)
            return (
                []
                if any(lo >= hi for lo, hi in region)
                else [(0, sl, tuple(slice(0, hi - lo) for lo, hi in region))]
            )
        per_dim = []
        for d, (lo, hi) in enumerate(region):
            if lo >= hi:
                return []
            b = self.bounds[d]
            first = bisect.bisect_right(b, lo) - 1
            hits = []
            for c in range(first, len(b) - 1):
                if b[c] >= hi:
                    break
                a, z = max(lo, b[c]), min(hi, b[c + 1])
                if a < z:
                    hits.append((c, slice(a - b[c], z - b[c]), slice(a - lo, z - lo)))
            per_dim.append(hits)
        out = []
        for combo in itertools.product(*per_dim):
            shard = self.index([c for c, _, _ in combo])
            out.append((shard, tuple(s for _, s, _ in combo), tuple(t for _, _, t in combo)))
        return out

    def replace(self, shape=None, bounds=None, workers=None) -> Layout:
        """A bound layout with some fields changed."""
        return Layout.from_bounds(
            self.shape if shape is None else shape,
            self.bounds if bounds is None else bounds,
            self.workers if workers is None else workers,
            self.is_replicated,
        )

    # ------------------------------------------------------------- dunders
    def _key(self):
        return (self.shape, self.bounds, self.is_replicated, self.workers)

    def __eq__(self, other):
        if not isinstance(other, Layout):
            return NotImplemented
        if self is other:
            return True
        if not (self.is_bound and other.is_bound):
            return self._req == other._req and self.is_bound == other.is_bound
        return self._key() == other._key()

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key() if self.is_bound else repr(self))
        return self._hash

    def __repr__(self):
        if not self.is_bound:
            r = self._req
            if r["replicated"]:
                return "Layout.replicated()"
            args = ", ".join(f"{k}={v!r}" for k, v in r.items() if v not in (None, False))
            return f"Layout({args})"
        if self.is_replicated:
            return f"Layout(shape={self.shape}, replicated on workers {self.workers})"
        chunks = {d: self.chunk_sizes(d) for d in self.split_dims}
        return (
            f"Layout(shape={self.shape}, grid={self.grid}, chunks={chunks}, workers={self.workers})"
        )


class _Cuts:
    """Chunk boundaries as given by the user, turned into sizes once the shape is known."""

    def __init__(self, cuts):
        self.cuts = cuts

    def sizes(self, shape, dim):
        items = self.cuts.items() if isinstance(self.cuts, dict) else [(dim, self.cuts)]
        out = {}
        for d, cuts in items:
            n = shape[normalize_dim(d, len(shape))]
            pts = [int(c) for c in cuts]
            # the outer cut points are optional; strip them first, so that (0,) on a dim of
            # size 0 is one empty chunk rather than none
            inner = pts[1:] if pts[:1] == [0] else pts
            inner = inner[:-1] if inner[-1:] == [n] else inner
            pts = [0] + inner + [n]
            if any(b < a for a, b in zip(pts, pts[1:])):
                raise LayoutMismatch(
                    f"boundaries {tuple(cuts)} are not increasing cut points of dim {d} of size {n}"
                )
            out[d] = tuple(b - a for a, b in zip(pts, pts[1:]))
        return out

    def __eq__(self, other):
        return isinstance(other, _Cuts) and self.cuts == other.cuts

    def __repr__(self):
        return repr(self.cuts)


def _check_count(k, what: str) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ShardingError(f"{what} must be a positive int, got {k!r}")
    return k


def _capped(k, what: str, n: int) -> int:
    """Shard count ``k`` (checked) capped at the length ``n`` of its dim, and at least 1: more
    shards would all be empty, and a huge count would cost a command each."""
    return max(1, min(_check_count(k, what), n))


def resolve(shape, num_workers: int, shards=None, dim=None, layout=None) -> Layout:
    """The bound layout for the placement keywords ``shards=``, ``dim=`` and ``layout=``.

    Examples
    --------
    >>> resolve((7, 4), 2, shards=3).grid
    (3, 1)
    """
    if layout is not None:
        if shards is not None or dim is not None:
            raise ShardingError("give either layout= or shards=/dim=, not both")
        if not isinstance(layout, Layout):
            raise ShardingError(f"layout= must be a st.Layout, got {type(layout).__name__}")
        return layout.bind(shape, num_workers)
    return Layout(dim=dim, shards=shards).bind(shape, num_workers)
