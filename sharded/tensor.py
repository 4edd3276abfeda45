"""ShardedTensor: driver-side metadata plus the keys of its shards inside worker actors.

The driver holds no data. Methods are thin calls into ``functional`` (ops) and the runtime;
data reaches the driver only on ``numpy()``, ``tolist()``, ``item()`` and printing. Dropping
the last reference to a tensor frees its shards on their workers (a finaliser queues a free
command, so worker memory stays flat in long loops).
"""

from __future__ import annotations

import builtins
import numbers
import os

import numpy as np

from . import display_svg
from . import dtypes as D
from .backend import host_copy
from .devices import device
from .display import sharding_map, tensor_repr
from .errors import (
    ArgumentError,
    AutogradError,
    DimError,
    DTypeError,
    PublishedReadOnly,
    SessionClosed,
)
from .layout import normalize_dim


def check_not_published(t) -> None:
    """Raise :class:`PublishedReadOnly` if ``t`` is (a view of) a published snapshot, whose
    ``_readonly`` flag is ``("published", name, version)``."""
    ro = t._readonly
    if isinstance(ro, tuple):
        raise PublishedReadOnly(
            f"{ro[1]!r} is a published snapshot (version {ro[2]}); in-place ops cannot "
            "change it: clone() it, or publish a new version with st.publish"
        )


class Storage:
    """The shards of one tensor: ``keys[i]`` lives on worker ``layout.workers[i]``."""

    __slots__ = ("session", "keys", "_ex", "_layout", "__weakref__")

    def __init__(self, session, layout, keys, dtype=None):
        self.session, self.keys = session, keys
        self._ex = ex = session.executor  # (the executor that holds the shards)
        self._layout = layout
        # the executor's list of live tensors, so that a loss it cannot rebuild names them
        # (one dict entry: a weakref per tensor costs more; __del__ removes it)
        ex.live[id(self)] = (layout, dtype)

    def __del__(self):
        # (not weakref.finalize: 0.9 us a tensor against 0.2, on the path of every op)
        try:
            ex = self._ex
            ex.live.pop(id(self), None)
            if not ex.closed:  # one layout command when the keys are a range (free_group)
                ex.free_group(self._layout, self.keys)
        except Exception:  # (interpreter shutdown: the session's modules may be gone)
            pass


def contiguous_strides(shape) -> tuple:
    """Row-major strides (in elements) of ``shape``, as torch reports them."""
    out, acc = [], 1
    for n in reversed(tuple(shape)):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


class Size(tuple):
    """The shape of a tensor: a tuple that prints like ``torch.Size``."""

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"sharded.Size({list(self)})"


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a sharded tensor (``torch.is_tensor``).

    Examples
    --------
    >>> import sharded as st
    >>> st.is_tensor(st.ones(2)), st.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, ShardedTensor)


def numel(input) -> int:
    """The number of elements of ``input`` (``torch.numel``).

    Examples
    --------
    >>> import sharded as st
    >>> st.numel(st.zeros(2, 3))
    6
    """
    return input.numel()


class ShardedTensor:
    """A tensor whose storage is split into shards held by worker actors.

    Create one with ``st.tensor``, ``st.zeros``, ``st.rand``... rather than directly.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.arange(6, shards=2)
    >>> (x * 2).tolist()
    [0, 2, 4, 6, 8, 10]
    """

    __array_priority__ = 1000
    __array_ufunc__ = None  # numpy defers to our reflected operators (a + x -> x.__radd__)

    # The defaults of the fields few tensors change, as class attributes: a new tensor (every
    # op makes one) stores only its own fields; assigning one on an instance overrides it.
    _hooks = None  # register_hook's functions of a leaf: {handle id: fn}
    # torch's view metadata: strides/offset into the base's storage (None: contiguous)
    _strides, _offset, _base, _readonly = None, 0, None, False
    _out_index = 0  # which output of its grad_fn this tensor is
    _retains_grad = False
    _view_chain = ()  # (primitive, args, params) steps from the base to this view

    def __init__(self, session, layout, dtype, keys, requires_grad=False, storage=None):
        self._storage = storage or Storage(session, layout, keys, dtype)
        self._layout, self._dtype, self._keys = layout, dtype, keys
        self._requires_grad = requires_grad
        self.grad = None
        self.grad_fn = None
        self._vc = [0]  # version counter, shared with views: in-place ops bump it

    # ------------------------------------------------------------------ metadata
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        # torch's two rules for the flag: floating/complex dtypes only, and only leaves may drop it
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise ArgumentError(
                f"only Tensors of floating point and complex dtype can require gradients, got "
                f"{self._dtype.name}"
            )
        if not value and self.grad_fn is not None:
            raise AutogradError(
                "you can only change requires_grad flags of leaf variables; use detach() to "
                f"cut this {self.grad_fn.name()} output from the graph"
            )
        self._requires_grad = bool(value)

    @property
    def data(self):
        """This tensor's values outside the graph; assigning replaces them. Unlike
        ``detach()`` its in-place changes are not counted (torch: a fresh version counter)."""
        d = self.detach()
        d._vc = [0]
        return d

    @data.setter
    def data(self, other):
        # torch swaps in other's storage (shape and dtype too) and keeps the graph flags
        if self._requires_grad and not (other.dtype.is_floating_point or other.dtype.is_complex):
            raise ArgumentError(
                "data set to a tensor that requires gradients must be floating point or complex "
                f"dtype, got {other.dtype.name}"
            )
        self._take_storage(other)

    def _take_storage(self, other) -> None:
        """Make this tensor hold ``other``'s shards: its storage, layout, keys, dtype and view
        metadata (the graph flags and the version counter stay). ``x.data = y`` and an
        ``out=`` tensor resized to a result of another shape both do this."""
        self._dtype = other._dtype
        self._storage, self._layout, self._keys = other._storage, other._layout, other._keys
        self._strides, self._offset, self._base = other._strides, other._offset, other._base
        self._readonly = other._readonly

    @property
    def _version(self) -> int:
        """How many in-place ops changed this tensor (or a view sharing its storage)."""
        return self._vc[0]

    @property
    def shape(self) -> Size:
        return Size(self._layout.shape)

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``.

        Examples
        --------
        >>> import sharded as st
        >>> st.zeros(2, 3).size(), st.zeros(2, 3).size(-1)
        (sharded.Size([2, 3]), 3)
        """
        if dim is None:
            return self.shape
        return self._layout.shape[self._dim(dim)]

    def _dim(self, dim) -> int:
        """``dim`` as an index into the shape; a 0-d tensor has none (torch's message)."""
        if self.ndim == 0:
            raise DimError(f"Dimension specified as {dim} but tensor has no dimensions")
        return normalize_dim(dim, self.ndim)

    @property
    def dtype(self) -> D.DType:
        return self._dtype

    @property
    def ndim(self) -> int:
        return self._layout.ndim

    def dim(self) -> int:
        return self._layout.ndim

    ndimension = dim

    def numel(self) -> int:
        return self.shape.numel()

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of all elements (``numel() * itemsize``), summed over the shards."""
        return self.numel() * self._dtype.itemsize

    def is_signed(self) -> bool:
        return self._dtype.is_signed

    def stride(self, dim=None):
        """Strides in elements, as torch reports them for this (possibly viewed) tensor.

        Examples
        --------
        >>> import sharded as st
        >>> st.zeros(2, 3).t().stride()
        (1, 3)
        """
        s = self._strides if self._strides is not None else contiguous_strides(self.shape)
        if dim is None:
            return tuple(s)
        return s[self._dim(dim)]

    def storage_offset(self) -> int:
        """Offset of the first element in the base's storage (torch semantics)."""
        return self._offset

    def is_contiguous(self) -> bool:
        """Whether the strides are row-major (dims of size 1 are ignored, as in torch)."""
        if self._strides is None or self.numel() == 0:  # empty tensors count as contiguous
            return True
        want = contiguous_strides(self.shape)
        return all(a == b for a, b, n in zip(self._strides, want, self.shape) if n > 1)

    @property
    def layout(self):
        """The bound :class:`~sharded.layout.Layout`: chunk bounds and the worker of each
        shard."""
        return self._layout

    @property
    def device(self) -> str:
        """The device of the shards: ``st.device("cpu")``, ``"cuda:0"``..., or the string
        ``"mixed(cpu, cuda:0)"``."""
        ws = self._storage.session.executor.workers
        devs = sorted({ws[w].device for w in self._layout.workers})
        return device(devs[0]) if len(devs) == 1 else f"mixed({', '.join(devs)})"

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")

    @property
    def is_cpu(self) -> bool:
        return self.device == "cpu"

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def requires_grad_(self, requires_grad=True):
        """Record operations on this tensor for autograd (floating dtypes only); returns
        ``self``.

        Examples
        --------
        >>> import sharded as st
        >>> st.ones(2).requires_grad_().requires_grad
        True
        """
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise ArgumentError(
                f"only floating point and complex tensors can require gradients, got "
                f"{self._dtype.name}"
            )
        self.requires_grad = requires_grad
        return self

    def placement(self) -> list:
        """One dict per shard: ``worker``, ``node`` (Ray node id), ``device``, ``offsets``,
        ``shape``.

        Examples
        --------
        >>> import sharded as st
        >>> [p["offsets"] for p in st.zeros(4, shards=2).placement()]
        [(0,), (2,)]
        """
        ws = self._storage.session.executor.workers
        return [
            {
                "shard": i,
                "worker": w,
                "node": ws[w].node,
                "device": ws[w].device,
                "offsets": offs,
                "shape": shp,
            }
            for i, (w, offs, shp) in enumerate(self._layout.shards())
        ]

    def visualize(self, path=None, *, file=None) -> str:
        """Print (and return) a map of which worker and node hold which block; with
        ``path``, draw it instead into a picture file and return the path.

        Only metadata is read: no element is fetched.

        Parameters
        ----------
        path : str or os.PathLike, optional
            ``*.svg`` writes an SVG (no dependency); ``*.png`` a PNG, drawn by matplotlib
            (:class:`~sharded.errors.BackendUnavailable` when it is not installed). Any
            other suffix raises :class:`~sharded.errors.ArgumentError`. The picture is the
            one a notebook shows for the tensor (see :mod:`sharded.display_svg`).
        file : file-like, optional
            Where the text map is printed (default ``sys.stdout``); also accepted in the
            first place, as before ``path`` existed.

        Examples
        --------
        >>> import sharded as st
        >>> _ = st.zeros(4, 2, shards=2).visualize()  # doctest: +ELLIPSIS
        ShardedTensor shape=(4, 2) ...
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     st.zeros(4, 2, shards=2).visualize(os.path.join(d, "x.svg")).endswith("x.svg")
        True
        """
        if path is not None and not isinstance(path, (str, os.PathLike)) and hasattr(path, "write"):
            path, file = None, path  # the old signature, visualize(file)
        if path is not None:
            return display_svg.save(self, path)
        text = sharding_map(self)
        print(text, file=file)
        return text

    def _repr_html_(self) -> str:
        """The notebook view: a metadata table and an SVG of the shard grid (no element is
        fetched; see :mod:`sharded.display_svg`)."""
        return display_svg.tensor_html(self)

    # ------------------------------------------------------------------ reading
    def _executor(self):
        ex = self._storage.session.executor
        if ex.closed:  # name the tensor, which the executor's own check cannot
            raise SessionClosed(
                f"this tensor (shape {tuple(self.shape)}, {self._dtype.name}) belongs to a "
                "session that was shut down (st.shutdown() freed its shards); create it again "
                "after st.init()"
            )
        return ex

    def numpy(self) -> np.ndarray:
        """Gather every shard into a new NumPy array (a copy: writing to it does not change
        the tensor, unlike torch's shared-memory ``numpy()`` on CPU). A tensor that requires
        grad raises, as in torch: call ``detach().numpy()``.

        Examples
        --------
        >>> import sharded as st
        >>> st.arange(4, shards=2).numpy()
        array([0, 1, 2, 3])
        """
        if self._requires_grad:
            raise AutogradError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._gather()

    def _gather(self) -> np.ndarray:
        """Every shard's values in one new array (``numpy()`` without the grad check)."""
        lay = self._layout
        ex = self._executor()
        out = np.empty(lay.shape, dtype=self._dtype.np)
        if lay.is_replicated:
            part = ex.fetch([(lay.workers[0], self._keys[0], None)], out.nbytes)[0]
            return host_copy.assemble(out, [((), np.asarray(part).reshape(lay.shape))])
        shards = [(w, offs, shp, k) for (w, offs, shp), k in zip(lay.shards(), self._keys)]
        shards = [s for s in shards if 0 not in s[2]]
        parts = ex.fetch([(w, k, None) for w, _, _, k in shards], out.nbytes)
        index = [tuple(slice(o, o + n) for o, n in zip(offs, shp)) for _, offs, shp, _ in shards]
        return host_copy.assemble(out, zip(index, parts))

    def __array__(self, dtype=None, copy=None):
        a = self._gather()
        return a if dtype is None else a.astype(dtype)

    def tolist(self):
        return self._gather().tolist()

    def item(self):
        """The value of a one-element tensor as a Python number.

        Examples
        --------
        >>> import sharded as st
        >>> st.tensor([2.5]).item()
        2.5
        """
        n = self.numel()
        if n != 1:
            raise ArgumentError(f"a Tensor with {n} elements cannot be converted to Scalar")
        return self._gather().reshape(()).item()

    def __bool__(self):
        if self.numel() != 1:
            raise ArgumentError(f"Boolean value of Tensor with {self.numel()} values is ambiguous")
        return builtins.bool(self.item())

    def __float__(self):
        if self._dtype.is_complex:  # torch: "value cannot be converted to type double"
            raise DTypeError("a complex tensor cannot be converted to float; take .real first")
        return builtins.float(self.item())

    def __int__(self):
        return builtins.int(self.item())

    def __index__(self):
        if self._dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    def __contains__(self, element):
        """``element in t``: whether any element equals it (a tensor counts where it
        broadcasts and matches along its trailing dims, as ``(t == element).any()``)."""
        if not isinstance(element, (ShardedTensor, numbers.Number)):  # np.int64 too, as torch
            raise DTypeError(
                f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                f"{type(element)}."
            )
        return builtins.bool((self == element).any().item())

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._layout.shape[0]

    __hash__ = object.__hash__

    def __repr__(self):
        return tensor_repr(self)
