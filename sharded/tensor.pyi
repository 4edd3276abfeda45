import builtins
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple, overload

from numpy import ndarray
from typing_extensions import Self

from sharded import CummaxResult, CumminResult, HistogramResult, MaxResult, MinResult
from sharded import display_svg as display_svg
from sharded.backend import host_copy as host_copy
from sharded.devices import device as device
from sharded.dtypes import DType
from sharded.errors import ArgumentError as ArgumentError
from sharded.errors import AutogradError as AutogradError
from sharded.errors import DimError as DimError
from sharded.errors import DTypeError as DTypeError
from sharded.errors import PublishedReadOnly as PublishedReadOnly
from sharded.errors import SessionClosed as SessionClosed
from sharded.layout import Layout
from sharded.linalg import SlogdetResult
from sharded.storage import ShardedStorage

class ShardedTensor:
    """A tensor whose storage is split into shards held by worker actors."""

    grad: ShardedTensor | None
    grad_fn: Any
    __array_priority__: builtins.int
    __array_ufunc__: None
    @property
    def H(self) -> ShardedTensor:
        """``x.H``: the conjugate transpose of a matrix (2-D only, as torch)."""
    @property
    def T(self) -> ShardedTensor:
        """``x.T``: all dims reversed (a view)."""
    def __abs__(self) -> ShardedTensor:
        """Absolute value."""
    def __add__(self, other) -> ShardedTensor:
        """``input + alpha * other`` with broadcasting."""
    def __and__(self, other) -> ShardedTensor:
        """Bitwise AND (logical on bool)."""
    def __array__(self, dtype=..., copy=...) -> ndarray: ...
    def __array_namespace__(self, /, *, api_version=...) -> Any:
        """This namespace (``api_version`` may name any version up to 2024.12)."""
    def __bool__(self) -> builtins.bool: ...
    def __complex__(self, /) -> complex:
        """The value of a one-element array as a Python complex."""
    def __contains__(self, element) -> builtins.bool:
        """``element in t``: whether any element equals it (a tensor counts where it broadcasts
        and matches along its trailing dims, as ``(t == element).any()``)."""
    def __dlpack__(self, /, *, stream=..., max_version=..., dl_device=..., copy=...) -> Any:
        """A DLPack capsule of a host copy of the data (the shards live in other processes)."""
    def __dlpack_device__(self, /) -> tuple[builtins.int, builtins.int]:
        """``(kDLCPU, 0)``: exported data is a host copy."""
    def __eq__(self, other) -> ShardedTensor:  # type: ignore[override]
        """``input == other``."""
    def __float__(self) -> builtins.float: ...
    def __floordiv__(self, other) -> ShardedTensor:
        """``input // other`` (floor, like torch and Python)."""
    def __ge__(self, other) -> ShardedTensor:
        """``input >= other``."""
    def __getitem__(self, key) -> ShardedTensor:
        """``x[key]`` with torch's rules: a view for basic keys (ints, 0-d integer tensors,
        slices, ``None``, ``...``), a gathered copy for advanced ones (lists, arrays,
        tensors, masks, bools)."""
    def __gt__(self, other) -> ShardedTensor:
        """``input > other``."""
    def __iadd__(self, other, **kw) -> Self:
        """In-place ``add``: writes into this tensor's shards and returns it."""
    def __ifloordiv__(self, other, **kw) -> Self:
        """In-place ``floor_divide``: writes into this tensor's shards and returns it."""
    def __ilshift__(self, other) -> ShardedTensor:
        """In-place ``bitwise_left_shift`` (the augmented shift operator)."""
    def __imod__(self, other, **kw) -> Self:
        """In-place ``remainder``: writes into this tensor's shards and returns it."""
    def __imul__(self, other, **kw) -> Self:
        """In-place ``mul``: writes into this tensor's shards and returns it."""
    def __index__(self) -> builtins.int: ...
    def __init__(self, session, layout, dtype, keys, requires_grad=..., storage=...) -> None: ...
    def __int__(self) -> builtins.int: ...
    def __invert__(self) -> ShardedTensor:
        """Bitwise NOT (logical NOT on bool)."""
    def __ipow__(self, other, **kw) -> Self:
        """In-place ``pow``: writes into this tensor's shards and returns it."""
    def __irshift__(self, other) -> ShardedTensor:
        """In-place ``bitwise_right_shift`` (the augmented shift operator)."""
    def __isub__(self, other, **kw) -> Self:
        """In-place ``sub``: writes into this tensor's shards and returns it."""
    def __iter__(self) -> Iterator[ShardedTensor]:
        """Iterate over the rows (views), as ``unbind(0)``."""
    def __itruediv__(self, other, *, rounding_mode=...) -> ShardedTensor:
        """In-place :func:`div`; an int tensor takes only the rounding modes (true division
        gives floats, which it cannot hold, as torch)."""
    def __le__(self, other) -> ShardedTensor:
        """``input <= other``."""
    def __len__(self) -> builtins.int: ...
    def __lshift__(self, other) -> ShardedTensor:
        """``input << other`` (also the operators ``<<``, ``<<=``)."""
    def __lt__(self, other) -> ShardedTensor:
        """``input < other``."""
    def __matmul__(self, other) -> ShardedTensor:
        """Matrix product with torch's rules for 1-D and batched (broadcast) operands."""
    def __mod__(self, other) -> ShardedTensor:
        """``input % other`` with the sign of ``other`` (Python semantics, as torch)."""
    def __mul__(self, other) -> ShardedTensor:
        """Elementwise product."""
    def __ne__(self, other) -> ShardedTensor:  # type: ignore[override]
        """``input != other``."""
    def __neg__(self) -> ShardedTensor:
        """``-input``."""
    def __or__(self, other) -> ShardedTensor:
        """Bitwise OR (logical on bool)."""
    def __pos__(self) -> Self:
        """``+x`` is ``x`` itself."""
    def __pow__(self, other) -> ShardedTensor:
        """``input ** exponent``."""
    def __radd__(self, other) -> ShardedTensor:
        """``input + alpha * other`` with broadcasting."""
    def __rand__(self, other) -> ShardedTensor:
        """Bitwise AND (logical on bool)."""
    def __repr__(self) -> str: ...
    def __rfloordiv__(self, other) -> ShardedTensor:
        """``input // other`` (floor, like torch and Python)."""
    def __rlshift__(self, other) -> ShardedTensor:
        """``input << other`` (also the operators ``<<``, ``<<=``)."""
    def __rmatmul__(self, other) -> ShardedTensor:
        """Matrix product with torch's rules for 1-D and batched (broadcast) operands."""
    def __rmod__(self, other) -> ShardedTensor:
        """``input % other`` with the sign of ``other`` (Python semantics, as torch)."""
    def __rmul__(self, other) -> ShardedTensor:
        """Elementwise product."""
    def __ror__(self, other) -> ShardedTensor:
        """Bitwise OR (logical on bool)."""
    def __rpow__(self, other) -> ShardedTensor:
        """``input ** exponent``."""
    def __rrshift__(self, other) -> ShardedTensor:
        """``input >> other``, arithmetic (also the operators ``>>``, ``>>=``)."""
    def __rshift__(self, other) -> ShardedTensor:
        """``input >> other``, arithmetic (also the operators ``>>``, ``>>=``)."""
    def __rsub__(self, other) -> ShardedTensor:
        """``input - alpha * other``."""
    def __rtruediv__(self, other) -> ShardedTensor:
        """True division (integers give the default float dtype); ``rounding_mode="floor"``
        floors and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay
        ints)."""
    def __rxor__(self, other) -> ShardedTensor:
        """Bitwise XOR (logical on bool)."""
    def __setitem__(self, key, value) -> None:
        """``x[key] = value`` in place (scalars, NumPy arrays, tensors; broadcasting after
        dropping the value's leading size-1 dims, as torch)."""
    def __sub__(self, other) -> ShardedTensor:
        """``input - alpha * other``."""
    def __truediv__(self, other) -> ShardedTensor:
        """True division (integers give the default float dtype); ``rounding_mode="floor"``
        floors and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay
        ints)."""
    def __xor__(self, other) -> ShardedTensor:
        """Bitwise XOR (logical on bool)."""
    def abs(self) -> ShardedTensor:
        """Absolute value."""
    def abs_(self) -> Self:
        """In-place ``abs`` (refused for complex tensors, whose modulus is real, as torch)."""
    def absolute(self) -> ShardedTensor:
        """Absolute value."""
    def absolute_(self) -> Self:
        """In-place ``abs`` (refused for complex tensors, whose modulus is real, as torch)."""
    def acos(self) -> ShardedTensor:
        """Inverse cosine."""
    def acos_(self) -> Self:
        """In-place ``acos``: writes into this tensor's shards and returns it."""
    def acosh(self) -> ShardedTensor:
        """Inverse hyperbolic cosine."""
    def acosh_(self) -> Self:
        """In-place ``acosh``: writes into this tensor's shards and returns it."""
    def add(self, other, *, alpha=...) -> ShardedTensor:
        """``input + alpha * other`` with broadcasting."""
    def add_(self, other, **kw) -> Self:
        """In-place ``add``: writes into this tensor's shards and returns it."""
    def addbmm(self, batch1, batch2, *, beta=..., alpha=...) -> ShardedTensor:
        """``beta * input + alpha * sum_b (batch1[b] @ batch2[b])``."""
    def addcdiv(self, tensor1, tensor2, *, value=...) -> ShardedTensor:
        """``input + value * tensor1 / tensor2``, as torch (integer tensor1 and tensor2 raise)."""
    def addcdiv_(self, tensor1, tensor2, *, value=...) -> ShardedTensor:
        """In-place :func:`addcdiv`."""
    def addcmul(self, tensor1, tensor2, *, value=...) -> ShardedTensor:
        """``input + value * tensor1 * tensor2``, as torch."""
    def addcmul_(self, tensor1, tensor2, *, value=...) -> ShardedTensor:
        """In-place :func:`addcmul`."""
    def addmm(self, mat1, mat2, *, beta=..., alpha=...) -> ShardedTensor:
        """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1``, ``mat2``."""
    def addmv(self, mat, vec, *, beta=..., alpha=...) -> ShardedTensor:
        """``beta * input + alpha * (mat @ vec)`` for a 2-D ``mat`` and 1-D ``vec``."""
    def addr(self, vec1, vec2, *, beta=..., alpha=...) -> ShardedTensor:
        """``beta * input + alpha * outer(vec1, vec2)``."""
    def adjoint(self) -> ShardedTensor:
        """The conjugate transpose of the last two dims (``x.mH``; ``x.mT`` for a real tensor)."""
    def all(self, dim=..., keepdim=...) -> ShardedTensor:
        """True if every element is non-zero."""
    def allclose(self, other, rtol=..., atol=..., equal_nan=...) -> builtins.bool:
        """Whether every element pair is close (:func:`isclose`), as a Python bool."""
    def amax(self, dim=..., keepdim=...) -> ShardedTensor:
        """Maximum over all elements, a dim or a tuple of dims (values only)."""
    def amin(self, dim=..., keepdim=...) -> ShardedTensor:
        """Minimum over all elements, a dim or a tuple of dims (values only)."""
    def aminmax(self, *, dim=..., keepdim=...) -> _AminmaxResult:
        """``(min, max)`` over all elements or one ``dim``, a named tuple as torch's."""
    def angle(self) -> ShardedTensor:
        """The argument (phase) of each element in radians; real result."""
    def any(self, dim=..., keepdim=...) -> ShardedTensor:
        """True if any element is non-zero."""
    def arccos(self) -> ShardedTensor:
        """Inverse cosine."""
    def arccos_(self) -> Self:
        """In-place ``acos``: writes into this tensor's shards and returns it."""
    def arccosh(self) -> ShardedTensor:
        """Inverse hyperbolic cosine."""
    def arccosh_(self) -> Self:
        """In-place ``acosh``: writes into this tensor's shards and returns it."""
    def arcsin(self) -> ShardedTensor:
        """Inverse sine."""
    def arcsin_(self) -> Self:
        """In-place ``asin``: writes into this tensor's shards and returns it."""
    def arcsinh(self) -> ShardedTensor:
        """Inverse hyperbolic sine."""
    def arcsinh_(self) -> Self:
        """In-place ``asinh``: writes into this tensor's shards and returns it."""
    def arctan(self) -> ShardedTensor:
        """Inverse tangent."""
    def arctan2(self, other) -> ShardedTensor:
        """Angle of the point ``(other, input)``, in ``[-pi, pi]``."""
    def arctan2_(self, other) -> ShardedTensor:
        """In-place ``atan2``: writes into this tensor's shards (the result cast to its dtype)
        and returns it."""
    def arctan_(self) -> Self:
        """In-place ``atan``: writes into this tensor's shards and returns it."""
    def arctanh(self) -> ShardedTensor:
        """Inverse hyperbolic tangent."""
    def arctanh_(self) -> Self:
        """In-place ``atanh``: writes into this tensor's shards and returns it."""
    def argmax(self, dim=..., keepdim=...) -> ShardedTensor:
        """Index of the maximum (into the flattened tensor when ``dim`` is None)."""
    def argmin(self, dim=..., keepdim=...) -> ShardedTensor:
        """Index of the minimum (into the flattened tensor when ``dim`` is None)."""
    def argsort(self, dim=..., descending=..., stable=...) -> ShardedTensor:
        """Indices that sort ``input`` along ``dim`` (``sort(...).indices``: along the split dim
        of a 1-d tensor the sorted values are not kept)."""
    def argwhere(self) -> ShardedTensor:
        """``nonzero(input)``: the ``(n, ndim)`` indices of the non-zero elements."""
    def asin(self) -> ShardedTensor:
        """Inverse sine."""
    def asin_(self) -> Self:
        """In-place ``asin``: writes into this tensor's shards and returns it."""
    def asinh(self) -> ShardedTensor:
        """Inverse hyperbolic sine."""
    def asinh_(self) -> Self:
        """In-place ``asinh``: writes into this tensor's shards and returns it."""
    def atan(self) -> ShardedTensor:
        """Inverse tangent."""
    def atan2(self, other) -> ShardedTensor:
        """Angle of the point ``(other, input)``, in ``[-pi, pi]``."""
    def atan2_(self, other) -> ShardedTensor:
        """In-place ``atan2``: writes into this tensor's shards (the result cast to its dtype)
        and returns it."""
    def atan_(self) -> Self:
        """In-place ``atan``: writes into this tensor's shards and returns it."""
    def atanh(self) -> ShardedTensor:
        """Inverse hyperbolic tangent."""
    def atanh_(self) -> Self:
        """In-place ``atanh``: writes into this tensor's shards and returns it."""
    def backward(self, gradient=..., retain_graph=..., create_graph=..., inputs=...) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``gradient`` is required
        unless ``self`` has one element)."""
    def baddbmm(self, batch1, batch2, *, beta=..., alpha=...) -> ShardedTensor:
        """``beta * input + alpha * bmm(batch1, batch2)`` (3-D batches)."""
    def bernoulli(self, p=..., *, generator=...) -> ShardedTensor:
        """0/1 samples, 1 with probability ``input[i]`` (or ``p`` for every element), in the
        input's dtype."""
    def bernoulli_(self, p=..., *, generator=...) -> ShardedTensor:
        """Fill with 0/1 samples, 1 with probability ``p`` (a float or a tensor), in place."""
    def bfloat16(self) -> ShardedTensor:
        """``x.to(sharded.bfloat16)``."""
    def bincount(self, weights=..., minlength=...) -> ShardedTensor:
        """Count occurrences of each value of a 1-D non-negative integer tensor (``weights``:
        sum those instead). The length is ``max(max(input) + 1, minlength)``: the planner
        reads the global min and max first (a driver wait)."""
    def bitwise_and(self, other) -> ShardedTensor:
        """Bitwise AND (logical on bool)."""
    def bitwise_and_(self, other) -> ShardedTensor:
        """In-place ``bitwise_and``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def bitwise_left_shift(self, other) -> ShardedTensor:
        """``input << other`` (also the operators ``<<``, ``<<=``)."""
    def bitwise_left_shift_(self, other) -> ShardedTensor:
        """In-place ``bitwise_left_shift``: writes into this tensor's shards (the result cast to
        its dtype) and returns it."""
    def bitwise_not(self) -> ShardedTensor:
        """Bitwise NOT (logical NOT on bool)."""
    def bitwise_not_(self) -> Self:
        """In-place ``bitwise_not``: writes into this tensor's shards and returns it."""
    def bitwise_or(self, other) -> ShardedTensor:
        """Bitwise OR (logical on bool)."""
    def bitwise_or_(self, other) -> ShardedTensor:
        """In-place ``bitwise_or``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def bitwise_right_shift(self, other) -> ShardedTensor:
        """``input >> other``, arithmetic (also the operators ``>>``, ``>>=``)."""
    def bitwise_right_shift_(self, other) -> ShardedTensor:
        """In-place ``bitwise_right_shift``: writes into this tensor's shards (the result cast
        to its dtype) and returns it."""
    def bitwise_xor(self, other) -> ShardedTensor:
        """Bitwise XOR (logical on bool)."""
    def bitwise_xor_(self, other) -> ShardedTensor:
        """In-place ``bitwise_xor``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def bmm(self, mat2) -> ShardedTensor:
        """Batched product of two 3-D tensors with equal batch sizes."""
    def bool(self) -> ShardedTensor:
        """``x.to(sharded.bool)``."""
    def broadcast_to(self, size) -> ShardedTensor:
        """``x`` expanded to ``shape`` (a view), as ``torch.broadcast_to``."""
    def bucketize(self, boundaries, *, out_int32=..., right=...) -> ShardedTensor:
        """Index of the bucket of every element of ``input`` given 1-D sorted ``boundaries``
        (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``)."""
    def byte(self) -> ShardedTensor:
        """``x.to(sharded.uint8)``."""
    def cauchy_(self, median=..., sigma=..., *, generator=...) -> ShardedTensor:
        """Fill with samples of the Cauchy distribution ``median + sigma * tan(pi (u - 1/2))``,
        in place."""
    def cdouble(self) -> ShardedTensor:
        """``x.to(sharded.complex128)``."""
    def ceil(self) -> ShardedTensor:
        """Smallest integer >= input."""
    def ceil_(self) -> Self:
        """In-place ``ceil``: writes into this tensor's shards and returns it."""
    def cfloat(self) -> ShardedTensor:
        """``x.to(sharded.complex64)``."""
    def char(self) -> ShardedTensor:
        """``x.to(sharded.int8)``."""
    def cholesky(self, upper=...) -> ShardedTensor:
        """torch's older Cholesky: ``L`` (``upper=True``: ``U = L^H``) of positive-definite
        matrices."""
    def cholesky_inverse(self, upper=...) -> ShardedTensor:
        """The inverse of ``A = L L^H`` (``U^H U`` with ``upper``) from its Cholesky factor, as
        ``torch.cholesky_inverse``."""
    def cholesky_solve(self, L, upper=...) -> ShardedTensor:
        """Solution of ``A X = B`` for ``A = L L^H`` (``U^H U`` with ``upper``) given its
        Cholesky factor, as ``torch.cholesky_solve``."""
    def chunk(self, chunks, dim=...) -> tuple[ShardedTensor, ...]:
        """Split into ``chunks`` views of ``ceil(n / chunks)`` along ``dim`` (fewer if it runs
        out, as ``torch.chunk``; an empty dim gives ``chunks`` empty views)."""
    def clamp(self, min=..., max=...) -> ShardedTensor:
        """Clamp into ``[min, max]`` (either may be a tensor)."""
    def clamp_(self, min=..., max=...) -> Self:
        """In-place :func:`clamp`."""
    def clamp_max(self, max) -> ShardedTensor:
        """:func:`clamp` with an upper bound only (torch's ``clamp_max``)."""
    def clamp_max_(self, max) -> ShardedTensor:
        """In-place :func:`clamp_max`."""
    def clamp_min(self, min) -> ShardedTensor:
        """:func:`clamp` with a lower bound only (torch's ``clamp_min``)."""
    def clamp_min_(self, min) -> ShardedTensor:
        """In-place :func:`clamp_min`."""
    def clip(self, min=..., max=...) -> ShardedTensor:
        """Clamp into ``[min, max]`` (either may be a tensor)."""
    def clip_(self, min=..., max=...) -> Self:
        """In-place :func:`clamp`."""
    def clone(self) -> ShardedTensor:
        """A copy with its own storage (same layout)."""
    def conj(self) -> ShardedTensor:
        """Complex conjugate (a copy; a real tensor is returned as it is)."""
    def conj_physical(self) -> ShardedTensor:
        """Complex conjugate (a copy; a real tensor is returned as it is)."""
    def conj_physical_(self) -> Self:
        """In-place ``conj``: writes into this tensor's shards and returns it."""
    def contiguous(self) -> ShardedTensor:
        """``x`` itself if contiguous, else a C-ordered copy (shards stay on their workers)."""
    def copy_(self, src) -> ShardedTensor:
        """Copy ``src`` (broadcastable; converted to this dtype) into this tensor, in place."""
    def copysign(self, other) -> ShardedTensor:
        """``abs(input)`` with the sign of ``other``."""
    def copysign_(self, other) -> ShardedTensor:
        """In-place ``copysign``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def corrcoef(self) -> ShardedTensor:
        """Pearson correlation coefficients of the variables in the rows of ``input``."""
    def cos(self) -> ShardedTensor:
        """Cosine."""
    def cos_(self) -> Self:
        """In-place ``cos``: writes into this tensor's shards and returns it."""
    def cosh(self) -> ShardedTensor:
        """Hyperbolic cosine."""
    def cosh_(self) -> Self:
        """In-place ``cosh``: writes into this tensor's shards and returns it."""
    def count_nonzero(self, dim=...) -> ShardedTensor:
        """Number of non-zero elements (over all, a dim or a tuple of dims), int64."""
    def cov(self, *, correction=..., fweights=..., aweights=...) -> ShardedTensor:
        """Covariance matrix of the variables in the rows of ``input`` (observations in the
        columns; a 1-D input is one variable), with frequency weights ``fweights`` (integers)
        and observation weights ``aweights`` (floats), as torch's."""
    def cpu(self) -> ShardedTensor:
        """The tensor on CPU workers (itself if it is there already)."""
    def cross(self, other, dim=...) -> ShardedTensor:
        """The 3-D cross product along ``dim`` (inputs broadcast; ``dim=None`` takes the first
        dim of size 3, as torch's deprecated default)."""
    def cuda(self, device=...) -> ShardedTensor:
        """The tensor on GPU workers (``device``: ``"cuda:N"`` or N; default: all GPUs)."""
    def cummax(self, dim) -> CummaxResult:
        """Running maximum along ``dim``: ``(values, indices)``; on ties and NaN the index is
        the last one reaching the value, as torch."""
    def cummin(self, dim) -> CumminResult:
        """Running minimum along ``dim``: ``(values, indices)`` (ties: the last index)."""
    def cumprod(self, dim, *, dtype=...) -> ShardedTensor:
        """Cumulative product along ``dim`` (integer and bool inputs give int64, as torch)."""
    def cumprod_(self, dim, *, dtype=...) -> ShardedTensor:
        """In-place :func:`cumprod` (the result is cast to this tensor's dtype)."""
    def cumsum(self, dim, *, dtype=...) -> ShardedTensor:
        """Cumulative sum along ``dim`` (integer and bool inputs give int64, as torch)."""
    def cumsum_(self, dim, *, dtype=...) -> ShardedTensor:
        """In-place :func:`cumsum` (the result is cast to this tensor's dtype)."""
    @property
    def data(self) -> ShardedTensor:
        """This tensor's values outside the graph; assigning replaces them. Unlike ``detach()``
        its in-place changes are not counted (torch: a fresh version counter)."""
    @data.setter
    def data(self, other) -> None: ...
    def deg2rad(self) -> ShardedTensor:
        """Degrees to radians, ``input * pi / 180``."""
    def deg2rad_(self) -> ShardedTensor:
        """In-place :func:`deg2rad` (a floating-point tensor only, as torch)."""
    def det(self) -> ShardedTensor:
        """Determinant of (a batch of) square matrices (a big split matrix: from its block LU)."""
    def detach(self) -> ShardedTensor:
        """A tensor sharing this one's shards, cut from the graph (``requires_grad=False``)."""
    def detach_(self) -> Self:
        """Cut this tensor from the graph in place (not a view: torch refuses those)."""
    @property
    def device(self) -> str:
        """The device of the shards: ``st.device("cpu")``, ``"cuda:0"``..., or the string
        ``"mixed(cpu, cuda:0)"``."""
    def diag(self, diagonal=...) -> ShardedTensor:
        """A 1-D input: the square matrix with it on diagonal ``diagonal``; a 2-D input: that
        diagonal of it."""
    def diag_embed(self, offset=..., dim1=..., dim2=...) -> ShardedTensor:
        """Matrices (in dims ``dim1``, ``dim2`` of the result) whose diagonal ``offset`` is the
        last dim of ``input``; zero elsewhere."""
    def diagflat(self, offset=...) -> ShardedTensor:
        """A 2-D tensor with the flattened ``input`` on diagonal ``offset``."""
    def diagonal(self, offset=..., dim1=..., dim2=...) -> ShardedTensor:
        """The diagonal ``offset`` of the planes ``(dim1, dim2)``, as the last dim: a view of
        ``input`` when neither dim is split across shards (a tensor held whole, replicated,
        or split along other dims); otherwise a strided slice of the flattened planes, a view
        when they flatten in place (a matrix split by rows), else a copy."""
    def diagonal_scatter(self, src, offset=..., dim1=..., dim2=...) -> ShardedTensor:
        """A copy of ``input`` with ``src`` written at ``input.diagonal(offset, dim1, dim2)``
        (the diagonal's dim last in ``src``, as ``diagonal`` returns it)."""
    def diff(self, n=..., dim=..., prepend=..., append=...) -> ShardedTensor:
        """``n``-th forward difference along ``dim`` (``prepend``/``append`` are concatenated
        first; bool tensors use xor, as torch)."""
    def digamma(self) -> ShardedTensor:
        """``d/dx lgamma(x)`` (torch's values at the poles: -inf at 0, nan at the negative
        integers)."""
    def digamma_(self) -> Self:
        """In-place ``digamma``: writes into this tensor's shards and returns it."""
    def dim(self) -> builtins.int: ...
    def dist(self, other, p=...) -> ShardedTensor:
        """``norm(input - other, p)`` (broadcast), a 0-d tensor; floating or complex only."""
    def div(self, other, *, rounding_mode=...) -> ShardedTensor:
        """True division (integers give the default float dtype); ``rounding_mode="floor"``
        floors and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay
        ints)."""
    def div_(self, other, *, rounding_mode=...) -> ShardedTensor:
        """In-place :func:`div`; an int tensor takes only the rounding modes (true division
        gives floats, which it cannot hold, as torch)."""
    def divide(self, other, *, rounding_mode=...) -> ShardedTensor:
        """True division (integers give the default float dtype); ``rounding_mode="floor"``
        floors and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay
        ints)."""
    def divide_(self, other, *, rounding_mode=...) -> ShardedTensor:
        """In-place :func:`div`; an int tensor takes only the rounding modes (true division
        gives floats, which it cannot hold, as torch)."""
    def dot(self, other) -> ShardedTensor:
        """Inner product of two 1-D tensors (a 0-d tensor)."""
    def double(self) -> ShardedTensor:
        """``x.to(sharded.float64)``."""
    def dsplit(
        self, indices_or_sections=..., *, sections=..., indices=...
    ) -> tuple[ShardedTensor, ...]:
        """``tensor_split`` along dim 2 of a tensor of at least 3 dims; an int must divide it."""
    @property
    def dtype(self) -> DType: ...
    def element_size(self) -> builtins.int: ...
    def eq(self, other) -> ShardedTensor:
        """``input == other``."""
    def eq_(self, other) -> ShardedTensor:
        """In-place ``eq``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def equal(self, other) -> builtins.bool:
        """Whether both tensors have the same shape and elements (NaN differs from NaN), as a
        Python bool; dtypes may differ (``ones(2)`` equals ``ones(2, dtype=int64)``, as
        torch)."""
    def erf(self) -> ShardedTensor:
        """The error function ``2/sqrt(pi) * int_0^x exp(-t^2) dt``."""
    def erf_(self) -> Self:
        """In-place ``erf``: writes into this tensor's shards and returns it."""
    def erfc(self) -> ShardedTensor:
        """``1 - erf(input)``, accurate where it is tiny (``erfc(10)`` ~ 2e-45)."""
    def erfc_(self) -> Self:
        """In-place ``erfc``: writes into this tensor's shards and returns it."""
    def erfinv(self) -> ShardedTensor:
        """The inverse of ``erf`` on [-1, 1] (+-inf at +-1, nan outside)."""
    def erfinv_(self) -> Self:
        """In-place ``erfinv``: writes into this tensor's shards and returns it."""
    def exp(self) -> ShardedTensor:
        """``e ** input``."""
    def exp2(self) -> ShardedTensor:
        """``2 ** input``."""
    def exp2_(self) -> Self:
        """In-place ``exp2``: writes into this tensor's shards and returns it."""
    def exp_(self) -> Self:
        """In-place ``exp``: writes into this tensor's shards and returns it."""
    def expand(self, *sizes, size=...) -> ShardedTensor:
        """Repeat size-1 dims without copying (a view; ``-1`` keeps a size). As in torch, an
        in-place write to it raises where two of its elements share memory, and works where
        none do (``st.zeros(1).expand(1, 1)``, or a view of one expanded row)."""
    def expand_as(self, other) -> ShardedTensor:
        """``x.expand(other.shape)``."""
    def expm1(self) -> ShardedTensor:
        """``exp(input) - 1``, accurate near 0."""
    def expm1_(self) -> Self:
        """In-place ``expm1``: writes into this tensor's shards and returns it."""
    def exponential_(self, lambd=..., *, generator=...) -> ShardedTensor:
        """Fill with samples of the exponential distribution of rate ``lambd`` (mean ``1 /
        lambd``), in place."""
    def fill_(self, value) -> ShardedTensor:
        """Set every element to ``value`` (a number or a one-element tensor). As in torch, a
        number may fill an expanded view (``st.zeros(1).expand(3).fill_(7)``)."""
    def fill_diagonal_(self, fill_value, wrap=...) -> ShardedTensor:
        """Write ``fill_value`` on the main diagonal, in place (all dims equal when more than
        two; ``wrap`` restarts the diagonal every ``cols + 1`` rows of a tall matrix)."""
    def fix(self) -> ShardedTensor:
        """Rounds toward zero."""
    def fix_(self) -> Self:
        """In-place ``trunc``: writes into this tensor's shards and returns it."""
    def flatten(self, start_dim=..., end_dim=...) -> ShardedTensor:
        """Merge dims ``start_dim..end_dim`` into one (a view when possible)."""
    def flip(self, dims, *more) -> ShardedTensor:
        """A copy with the order of elements reversed along ``dims`` (``x.flip(0, 1)`` too)."""
    def fliplr(self) -> ShardedTensor:
        """Reverse dim 1 (a copy); ``x`` must be at least 2-d, as ``torch.fliplr``."""
    def flipud(self) -> ShardedTensor:
        """Reverse dim 0 (a copy); ``x`` must be at least 1-d, as ``torch.flipud``."""
    def float(self) -> ShardedTensor:
        """``x.to(sharded.float32)``."""
    def float_power(self, exponent) -> ShardedTensor:
        """``input ** exponent`` computed in double precision (float64, complex128 if complex)."""
    def float_power_(self, exponent) -> ShardedTensor:
        """In-place :func:`float_power`: ``self`` must already be float64 (complex128), as
        torch."""
    def floor(self) -> ShardedTensor:
        """Largest integer <= input."""
    def floor_(self) -> Self:
        """In-place ``floor``: writes into this tensor's shards and returns it."""
    def floor_divide(self, other) -> ShardedTensor:
        """``input // other`` (floor, like torch and Python)."""
    def floor_divide_(self, other, **kw) -> Self:
        """In-place ``floor_divide``: writes into this tensor's shards and returns it."""
    def fmax(self, other) -> ShardedTensor:
        """Elementwise maximum that ignores NaN (NaN only where both are)."""
    def fmin(self, other) -> ShardedTensor:
        """Elementwise minimum that ignores NaN (NaN only where both are)."""
    def fmod(self, other) -> ShardedTensor:
        """C's remainder: the sign of ``input`` (compare :func:`remainder`)."""
    def fmod_(self, other) -> ShardedTensor:
        """In-place ``fmod``: writes into this tensor's shards (the result cast to its dtype)
        and returns it."""
    def frac(self) -> ShardedTensor:
        """``input - trunc(input)``."""
    def frac_(self) -> Self:
        """In-place ``frac``: writes into this tensor's shards and returns it."""
    def frexp(self) -> _FrexpResult:
        """Split ``input`` into ``(mantissa, exponent)`` with ``input = mantissa *
        2**exponent``, ``0.5 <= |mantissa| < 1`` (0, inf and NaN keep themselves with
        exponent 0); the exponent is int32, as torch's."""
    def gather(self, dim, index, *, sparse_grad=...) -> ShardedTensor:
        """Values of ``input`` along ``dim`` at ``index`` (torch's ``gather``): ``out[i][j] =
        input[index[i][j]][j]`` for ``dim=0``. The result is laid out like ``index``; index
        blocks are routed to the workers owning the rows they name and the values routed back
        (the driver reads per-block counts: one wait). An out-of-range index raises
        :class:`~sharded.errors.IndexOutOfRange` naming it."""
    def gcd(self, other) -> ShardedTensor:
        """Greatest common divisor."""
    def gcd_(self, other) -> ShardedTensor:
        """In-place ``gcd``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def ge(self, other) -> ShardedTensor:
        """``input >= other``."""
    def ge_(self, other) -> ShardedTensor:
        """In-place ``ge``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def geometric_(self, p, *, generator=...) -> ShardedTensor:
        """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...),
        in place; integer tensors too, as torch."""
    def geqrf(self) -> _GeqrfResult:
        """The QR factorization of (a batch of) ``m x n`` matrices in LAPACK's compact form
        (geqrf): ``(a, tau)``, ``a`` holding ``R`` on and above the diagonal and the
        Householder vectors below it (their unit heads implied), ``tau`` (``min(m, n)``)
        their scalars, so that ``Q = householder_product(a, tau)``. Batch dims may be split;
        a split matrix is gathered on one worker. Not differentiable (as torch;
        :func:`sharded.linalg.qr` is)."""
    def ger(self, vec2) -> ShardedTensor:
        """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``."""
    def get_device(self) -> builtins.int:
        """The CUDA ordinal of the tensor's device, -1 on the CPU (as torch)."""
    def greater(self, other) -> ShardedTensor:
        """``input > other``."""
    def greater_(self, other) -> ShardedTensor:
        """In-place ``gt``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def greater_equal(self, other) -> ShardedTensor:
        """``input >= other``."""
    def greater_equal_(self, other) -> ShardedTensor:
        """In-place ``ge``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def gt(self, other) -> ShardedTensor:
        """``input > other``."""
    def gt_(self, other) -> ShardedTensor:
        """In-place ``gt``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def half(self) -> ShardedTensor:
        """``x.to(sharded.float16)``."""
    def hardshrink(self, lambd=...) -> ShardedTensor:
        """``x`` where ``|x| > lambd``, else 0."""
    def heaviside(self, other) -> ShardedTensor:
        """Step function: 0 below zero, ``values`` at zero, 1 above."""
    def heaviside_(self, other) -> ShardedTensor:
        """In-place ``heaviside``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def histc(self, bins=..., min=..., max=...) -> ShardedTensor:
        """Histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both are
        equal; elements outside are ignored; the max lands in the last bin)."""
    def histogram(self, bins, *, range=..., weight=..., density=...) -> HistogramResult:
        """Histogram with ``bins`` equal bins (over ``range`` or the data's range) or between
        the given sorted edges: ``(hist, bin_edges)``. ``density`` divides by the total and
        the bin widths."""
    def hsplit(
        self, indices_or_sections=..., *, sections=..., indices=...
    ) -> tuple[ShardedTensor, ...]:
        """``tensor_split`` along dim 1 (dim 0 of a vector); an int must divide that dim."""
    def hypot(self, other) -> ShardedTensor:
        """``sqrt(input**2 + other**2)`` without overflow."""
    def hypot_(self, other) -> ShardedTensor:
        """In-place ``hypot``: writes into this tensor's shards (the result cast to its dtype)
        and returns it."""
    def i0(self) -> ShardedTensor:
        """The modified Bessel function of the first kind of order 0."""
    def i0_(self) -> Self:
        """In-place ``i0``: writes into this tensor's shards and returns it."""
    def igamma(self, other) -> ShardedTensor:
        """The regularized lower incomplete gamma function ``P(input, other)``: ``int_0^other
        t^(input-1) e^-t dt / Gamma(input)`` (``torch.igamma``, ``st.special.gammainc``);
        both tensors, of a floating result dtype. The gradient flows to ``other`` only."""
    def igamma_(self, other) -> ShardedTensor:
        """In-place :func:`igamma`: writes into this tensor's shards and returns it."""
    def igammac(self, other) -> ShardedTensor:
        """The regularized upper incomplete gamma function ``Q = 1 - P`` (``torch.igammac``,
        ``st.special.gammaincc``), accurate where ``P`` is near 1."""
    def igammac_(self, other) -> ShardedTensor:
        """In-place :func:`igammac`: writes into this tensor's shards and returns it."""
    @property
    def imag(self) -> ShardedTensor:
        """The imaginary part: a real view of a complex tensor (complex tensors only)."""
    @imag.setter
    def imag(self, value) -> None: ...
    def index_add(self, dim, index, source, *, alpha=...) -> ShardedTensor:
        """``input`` with ``alpha * source`` added at the rows ``index`` along ``dim`` (repeated
        rows accumulate)."""
    def index_add_(self, dim, index, source, *, alpha=...) -> ShardedTensor:
        """In-place :func:`index_add`."""
    def index_copy(self, dim, index, source) -> ShardedTensor:
        """``input`` with the rows ``index`` along ``dim`` replaced by ``source``'s rows."""
    def index_copy_(self, dim, index, source) -> ShardedTensor:
        """In-place :func:`index_copy`."""
    def index_fill(self, dim, index, value) -> ShardedTensor:
        """``input`` with the rows ``index`` along ``dim`` set to the scalar ``value``."""
    def index_fill_(self, dim, index, value) -> ShardedTensor:
        """In-place :func:`index_fill`."""
    def index_put(self, indices, values, accumulate=...) -> ShardedTensor:
        """``input`` with ``input[indices] = values`` (or ``+=`` with ``accumulate=True``, where
        repeated points accumulate), ``indices`` a tuple of integer tensors routed worker to
        worker (negative indices count from the end). Other keys (bool masks, ``None``) take
        the ``__setitem__`` path, which reads them on the driver. ``values`` must be a
        tensor, as in torch (:class:`~sharded.errors.DTypeError` otherwise; ``x[key] = 1.0``
        takes scalars)."""
    def index_put_(self, indices, values, accumulate=...) -> ShardedTensor:
        """In-place :func:`index_put`."""
    def index_reduce(self, dim, index, source, reduce, *, include_self=...) -> ShardedTensor:
        """``input`` with the slices of ``source`` reduced into ``input.select(dim, index[i])``
        (``reduce`` one of ``prod mean amax amin``; ``include_self=False`` leaves the old
        values of the slices written out; integer ``mean`` rounds down, as torch)."""
    def index_reduce_(self, dim, index, source, reduce, *, include_self=...) -> ShardedTensor:
        """In-place :func:`index_reduce`."""
    def index_select(self, dim, index) -> ShardedTensor:
        """The rows ``index`` of ``input`` along ``dim`` (torch's ``index_select``)."""
    def inner(self, other) -> ShardedTensor:
        """Sum of products over the last dim of both: one matmul of the flattened free dims."""
    def int(self) -> ShardedTensor:
        """``x.to(sharded.int32)``."""
    def inverse(self) -> ShardedTensor:
        """The inverse of (a batch of) square matrices; singular ones raise
        :class:`LinAlgError`."""
    def is_complex(self) -> builtins.bool:
        """Whether ``input``'s dtype is complex (``complex64`` or ``complex128``)."""
    def is_conj(self) -> builtins.bool:
        """Always False: ``conj`` returns a materialised tensor, never a lazy conjugate view."""
    def is_contiguous(self) -> builtins.bool:
        """Whether the strides are row-major (dims of size 1 are ignored, as in torch)."""
    @property
    def is_cpu(self) -> builtins.bool: ...
    @property
    def is_cuda(self) -> builtins.bool: ...
    def is_floating_point(self) -> builtins.bool: ...
    @property
    def is_leaf(self) -> builtins.bool: ...
    def is_neg(self) -> builtins.bool:
        """Always False: ``conj`` returns a materialised tensor, never a lazy conjugate view."""
    def is_nonzero(self) -> builtins.bool:
        """Whether a one-element tensor is not zero (more or fewer elements: RuntimeError)."""
    def is_same_size(self, other) -> builtins.bool:
        """Whether two tensors have the same shape."""
    def is_signed(self) -> builtins.bool: ...
    def isclose(self, other, rtol=..., atol=..., equal_nan=...) -> ShardedTensor:
        """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities are close;
        NaN is close to NaN only with ``equal_nan``). Both operands must have the same dtype,
        as in torch."""
    def isfinite(self) -> ShardedTensor:
        """True where the element is neither inf nor NaN."""
    def isinf(self) -> ShardedTensor:
        """Whether each element is +inf or -inf (always False for integers and bools)."""
    def isnan(self) -> ShardedTensor:
        """True where the element is NaN."""
    def isneginf(self) -> ShardedTensor:
        """Whether each element is -inf."""
    def isposinf(self) -> ShardedTensor:
        """Whether each element is +inf."""
    def isreal(self) -> ShardedTensor:
        """Whether each element is real: its imaginary part is 0 (always True for real dtypes)."""
    def istft(
        self,
        n_fft,
        hop_length=...,
        win_length=...,
        window=...,
        center=...,
        normalized=...,
        onesided=...,
        length=...,
        return_complex=...,
    ) -> ShardedTensor:
        """Inverse of :func:`stft`: the least-squares signal ``(B?, L)`` of a complex spectrum
        ``(B?, N, T)``, as torch's ``istft`` (inverse transforms of the frames, windowed,
        overlap-added and divided by the overlap-added squared window). ``length`` trims or
        zero-pads the result; ``return_complex=True`` inverts a two-sided spectrum of a
        complex signal."""
    def item(self) -> builtins.bool | builtins.int | builtins.float | complex:
        """The value of a one-element tensor as a Python number."""
    @property
    def itemsize(self) -> builtins.int: ...
    def kron(self, other) -> ShardedTensor:
        """The Kronecker product: block ``(i, j, ...)`` of the result is ``input[i, j, ...] *
        other``."""
    def kthvalue(self, k, dim=..., keepdim=...) -> _KthValue:
        """The ``k``-th smallest element along ``dim`` (1-based) and its index, as ``(values,
        indices)``; NaN counts as the largest value."""
    @property
    def layout(self) -> Layout:
        """The bound :class:`~sharded.layout.Layout`: chunk bounds and the worker of each shard."""
    def lcm(self, other) -> ShardedTensor:
        """Least common multiple."""
    def lcm_(self, other) -> ShardedTensor:
        """In-place ``lcm``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def ldexp(self, other) -> ShardedTensor:
        """``input * 2**other`` (torch's definition: integers give the default float dtype)."""
    def ldexp_(self, other) -> ShardedTensor:
        """In-place :func:`ldexp` (an integer tensor cannot hold the float result, as torch)."""
    def le(self, other) -> ShardedTensor:
        """``input <= other``."""
    def le_(self, other) -> ShardedTensor:
        """In-place ``le``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def lerp(self, end, weight) -> ShardedTensor:
        """Linear interpolation ``input + weight * (end - input)``, as torch."""
    def lerp_(self, end, weight) -> ShardedTensor:
        """In-place :func:`lerp`."""
    def less(self, other) -> ShardedTensor:
        """``input < other``."""
    def less_(self, other) -> ShardedTensor:
        """In-place ``lt``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def less_equal(self, other) -> ShardedTensor:
        """``input <= other``."""
    def less_equal_(self, other) -> ShardedTensor:
        """In-place ``le``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def lgamma(self) -> ShardedTensor:
        """``log|Gamma(input)|`` (+inf at 0, -1, -2, ...)."""
    def lgamma_(self) -> Self:
        """In-place ``lgamma``: writes into this tensor's shards and returns it."""
    def log(self) -> ShardedTensor:
        """Natural logarithm."""
    def log10(self) -> ShardedTensor:
        """Base-10 logarithm."""
    def log10_(self) -> Self:
        """In-place ``log10``: writes into this tensor's shards and returns it."""
    def log1p(self) -> ShardedTensor:
        """``log(1 + input)``, accurate for small inputs."""
    def log1p_(self) -> Self:
        """In-place ``log1p``: writes into this tensor's shards and returns it."""
    def log2(self) -> ShardedTensor:
        """Base-2 logarithm."""
    def log2_(self) -> Self:
        """In-place ``log2``: writes into this tensor's shards and returns it."""
    def log_(self) -> Self:
        """In-place ``log``: writes into this tensor's shards and returns it."""
    def log_normal_(self, mean=..., std=..., *, generator=...) -> ShardedTensor:
        """Fill with ``exp(N(mean, std**2))`` samples, in place."""
    def log_softmax(self, dim, dtype=...) -> ShardedTensor:
        """``x - logsumexp(x, dim)``: log-probabilities without overflow (shifted by the max)."""
    def logaddexp(self, other) -> ShardedTensor:
        """``log(exp(input) + exp(other))`` without overflow."""
    def logaddexp2(self, other) -> ShardedTensor:
        """``log2(2**input + 2**other)`` without overflow."""
    def logaddexp2_(self, other) -> ShardedTensor:
        """In-place ``logaddexp2``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def logaddexp_(self, other) -> ShardedTensor:
        """In-place ``logaddexp``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def logcumsumexp(self, dim) -> ShardedTensor:
        """``log(cumsum(exp(input)))`` along ``dim``, computed stably (floating and complex
        dtypes; complex ones fold one slice at a time, as torch)."""
    def logdet(self) -> ShardedTensor:
        """``log(det(A))`` (NaN for a negative real determinant, as torch; the principal log
        ``log|det| + i arg(det)`` of a complex one)."""
    def logical_and(self, other) -> ShardedTensor:
        """Elementwise logical AND."""
    def logical_and_(self, other) -> ShardedTensor:
        """In-place ``logical_and``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def logical_not(self) -> ShardedTensor:
        """Elementwise logical NOT."""
    def logical_not_(self) -> Self:
        """In-place ``logical_not``: writes into this tensor's shards and returns it."""
    def logical_or(self, other) -> ShardedTensor:
        """Elementwise logical OR."""
    def logical_or_(self, other) -> ShardedTensor:
        """In-place ``logical_or``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def logical_xor(self, other) -> ShardedTensor:
        """Elementwise logical XOR."""
    def logical_xor_(self, other) -> ShardedTensor:
        """In-place ``logical_xor``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    def logit(self, eps=...) -> ShardedTensor:
        """``log(p / (1 - p))``; a non-negative ``eps`` clamps ``p`` to ``[eps, 1 - eps]`` first
        (the gradient is 0 outside it, as torch's)."""
    def logit_(self, eps=...) -> ShardedTensor:
        """In-place :func:`logit` (a floating-point tensor only: torch cannot cast the float
        result back to an integer tensor)."""
    def logsumexp(self, dim=..., keepdim=...) -> ShardedTensor:
        """``log(sum(exp(x)))`` over ``dim``, computed without overflow."""
    def long(self) -> ShardedTensor:
        """``x.to(sharded.int64)``."""
    def lt(self, other) -> ShardedTensor:
        """``input < other``."""
    def lt_(self, other) -> ShardedTensor:
        """In-place ``lt``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def lu(self, pivot=..., get_infos=...) -> tuple:
        """torch's older LU: ``(LU, pivots)`` packed as ``st.linalg.lu_factor``'s (int32
        pivots), plus the int32 ``infos`` with ``get_infos=True``; singular matrices factor
        without raising either way (their ``infos`` name the first zero pivot)."""
    def lu_solve(self, LU_data, LU_pivots) -> ShardedTensor:
        """torch's older ``lu_solve(b, LU_data, LU_pivots)``: the solution of ``A X = b`` from
        :func:`lu`'s factorization of ``A`` (``st.linalg.lu_solve`` with the arguments in
        torch's old order)."""
    @property
    def mH(self) -> ShardedTensor:
        """The conjugate transpose of the last two dims (``x.mH``; ``x.mT`` for a real tensor)."""
    @property
    def mT(self) -> Self:
        """``x.mT``: the last two dims swapped (a view)."""
    def masked_fill(self, mask, value) -> ShardedTensor:
        """``input`` with ``value`` (a scalar or 0-d tensor) where ``mask`` is true; the mask
        broadcasts to ``input``. Shard-local."""
    def masked_fill_(self, mask, value) -> Self:
        """In-place :func:`masked_fill`."""
    def masked_scatter(self, mask, source) -> ShardedTensor:
        """``input`` with its elements where ``mask`` is true replaced, in order, by the first
        elements of ``source`` (the driver reads one count per shard)."""
    def masked_scatter_(self, mask, source) -> Self:
        """In-place :func:`masked_scatter`."""
    def masked_select(self, mask) -> ShardedTensor:
        """The elements of ``input`` where ``mask`` is true, as a 1-D tensor (both broadcast;
        the driver reads one count per shard)."""
    def matmul(self, other) -> ShardedTensor:
        """Matrix product with torch's rules for 1-D and batched (broadcast) operands."""
    def matrix_exp(self) -> ShardedTensor:
        """The matrix exponential: scaling and squaring of an order-18 Taylor polynomial (the
        largest 1-norm of the batch sets the scaling: one short read)."""
    def matrix_power(self, n) -> ShardedTensor:
        """``A`` to the integer power ``n`` by repeated squaring; ``n = 0`` gives the identity,
        ``n < 0`` powers ``inv(A)`` (floating point only), as ``torch.linalg.matrix_power``."""
    @overload
    def max(self, dim: None = ..., keepdim=..., *, other=...) -> ShardedTensor:
        """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)`` along
        ``dim``; ``max(x, y)``: elementwise maximum."""
    @overload
    def max(self, dim: builtins.int, keepdim=..., *, other=...) -> MaxResult:
        """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)`` along
        ``dim``; ``max(x, y)``: elementwise maximum."""
    def maximum(self, other) -> ShardedTensor:
        """Elementwise maximum (NaN propagates); both operands tensors, as torch (for a number
        use :func:`clamp`)."""
    def maximum_(self, other) -> ShardedTensor:
        """In-place ``maximum``: writes into this tensor's shards (the result cast to its dtype)
        and returns it."""
    def mean(self, dim=..., keepdim=..., *, dtype=..., axis=...) -> ShardedTensor:
        """Arithmetic mean; floating inputs only (or give ``dtype=``), like torch."""
    @overload
    def median(self, dim: None = ..., keepdim=...) -> ShardedTensor:
        """torch's *lower* median: of all elements (a 0-d tensor) or along ``dim`` as ``(values,
        indices)``. A NaN in a row makes its median NaN (see :func:`nanmedian`)."""
    @overload
    def median(self, dim: builtins.int, keepdim=...) -> _Median:
        """torch's *lower* median: of all elements (a 0-d tensor) or along ``dim`` as ``(values,
        indices)``. A NaN in a row makes its median NaN (see :func:`nanmedian`)."""
    @overload
    def min(self, dim: None = ..., keepdim=..., *, other=...) -> ShardedTensor:
        """Like :func:`max`, for the minimum."""
    @overload
    def min(self, dim: builtins.int, keepdim=..., *, other=...) -> MinResult:
        """Like :func:`max`, for the minimum."""
    def minimum(self, other) -> ShardedTensor:
        """Elementwise minimum (NaN propagates); both operands tensors, as torch (for a number
        use :func:`clamp`)."""
    def minimum_(self, other) -> ShardedTensor:
        """In-place ``minimum``: writes into this tensor's shards (the result cast to its dtype)
        and returns it."""
    def mm(self, mat2) -> ShardedTensor:
        """Product of two 2-D tensors."""
    def mode(self, dim=..., keepdim=...) -> _Mode:
        """The most frequent value along ``dim`` (the smallest on ties) and the index of its
        last occurrence, as ``(values, indices)``."""
    def moveaxis(self, source, destination) -> ShardedTensor:
        """Move dims ``source`` to positions ``destination``; the others keep their order."""
    def movedim(self, source, destination) -> ShardedTensor:
        """Move dims ``source`` to positions ``destination``; the others keep their order."""
    def msort(self) -> ShardedTensor:
        """Values sorted along the first dim (``sort(input, dim=0).values``)."""
    def mul(self, other) -> ShardedTensor:
        """Elementwise product."""
    def mul_(self, other, **kw) -> Self:
        """In-place ``mul``: writes into this tensor's shards and returns it."""
    def multinomial(self, num_samples, replacement=..., *, generator=...) -> ShardedTensor:
        """``num_samples`` category indices per row of non-negative weights ``input`` (1-D or
        2-D). Without replacement: the Gumbel top-k trick (the largest ``log w - log(-log
        u)``); with replacement: inverse-CDF search of uniforms in the rows' cumulative
        weights."""
    def multiply(self, other) -> ShardedTensor:
        """Elementwise product."""
    def multiply_(self, other, **kw) -> Self:
        """In-place ``mul``: writes into this tensor's shards and returns it."""
    def mv(self, vec) -> ShardedTensor:
        """Matrix-vector product."""
    def mvlgamma(self, p) -> ShardedTensor:
        """The multivariate log-gamma ``sum_i lgamma(input - i/2) + p(p-1)/4 log(pi)`` over ``i
        < p`` (``torch.special.multigammaln``); integers give the default float dtype."""
    def mvlgamma_(self, p) -> ShardedTensor:
        """In-place :func:`mvlgamma` (a floating-point tensor only, as torch)."""
    def nan_to_num(self, nan=..., posinf=..., neginf=...) -> ShardedTensor:
        """Replaces NaN with ``nan``, +inf with ``posinf`` and -inf with ``neginf`` (None: the
        dtype's largest / lowest finite value); integer and bool tensors come back unchanged."""
    def nan_to_num_(self, nan=..., posinf=..., neginf=...) -> ShardedTensor:
        """In-place :func:`nan_to_num`."""
    def nanmean(self, dim=..., keepdim=..., *, dtype=...) -> ShardedTensor:
        """Mean of the non-NaN elements (NaN where all are NaN); floating inputs only, as torch."""
    @overload
    def nanmedian(self, dim: None = ..., keepdim=...) -> ShardedTensor:
        """Like :func:`median`, ignoring NaN (an all-NaN row gives NaN)."""
    @overload
    def nanmedian(self, dim: builtins.int, keepdim=...) -> _NanMedian:
        """Like :func:`median`, ignoring NaN (an all-NaN row gives NaN)."""
    def nanquantile(self, q, dim=..., keepdim=..., *, interpolation=...) -> ShardedTensor:
        """Like :func:`quantile`, ignoring NaN."""
    def nansum(self, dim=..., keepdim=..., *, dtype=...) -> ShardedTensor:
        """Sum treating NaN as zero (integers and bools sum in int64, as :func:`sum`)."""
    def narrow(self, dim, start, length) -> ShardedTensor:
        """The slice ``start:start+length`` of ``dim`` (a view)."""
    def narrow_copy(self, dim, start, length) -> ShardedTensor:
        """``narrow`` as a new tensor (no storage shared), as ``torch.narrow_copy``."""
    @property
    def nbytes(self) -> builtins.int:
        """Bytes of all elements (``numel() * itemsize``), summed over the shards."""
    @property
    def ndim(self) -> builtins.int: ...
    def ndimension(self) -> builtins.int: ...
    def ne(self, other) -> ShardedTensor:
        """``input != other``."""
    def ne_(self, other) -> ShardedTensor:
        """In-place ``ne``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def neg(self) -> ShardedTensor:
        """``-input``."""
    def neg_(self) -> Self:
        """In-place ``neg``: writes into this tensor's shards and returns it."""
    def negative(self) -> ShardedTensor:
        """``-input``."""
    def negative_(self) -> Self:
        """In-place ``neg``: writes into this tensor's shards and returns it."""
    def nelement(self) -> builtins.int: ...
    def new_empty(self, *size, dtype=..., device=..., requires_grad=..., **kw) -> ShardedTensor:
        """``empty(size)`` with this tensor's dtype and device unless given."""
    def new_full(
        self, size, fill_value, *, dtype=..., device=..., requires_grad=..., **kw
    ) -> ShardedTensor:
        """``full(size, fill_value)`` with this tensor's dtype (not the value's) and device."""
    def new_ones(self, *size, dtype=..., device=..., requires_grad=..., **kw) -> ShardedTensor:
        """``ones(size)`` with this tensor's dtype and device unless given."""
    def new_tensor(self, data, *, dtype=..., device=..., requires_grad=..., **kw) -> ShardedTensor:
        """``tensor(data)`` with this tensor's dtype (not the data's) and device unless given."""
    def new_zeros(self, *size, dtype=..., device=..., requires_grad=..., **kw) -> ShardedTensor:
        """``zeros(size)`` with this tensor's dtype and device unless given."""
    def nextafter(self, other) -> ShardedTensor:
        """The next representable value after ``input`` towards ``other``."""
    def nextafter_(self, other) -> ShardedTensor:
        """In-place ``nextafter``: writes into this tensor's shards (the result cast to its
        dtype) and returns it."""
    @overload
    def nonzero(self, *, as_tuple: Literal[False] = ...) -> ShardedTensor:
        """Indices of the non-zero elements of ``input`` in C order: an ``(n, ndim)`` int64
        tensor, or with ``as_tuple=True`` one 1-D tensor per dim. Each shard finds its own;
        the driver reads one count per shard (a tensor split along a later dim is resharded
        by rows first, so that shard order is C order)."""
    @overload
    def nonzero(self, *, as_tuple: Literal[True]) -> tuple[ShardedTensor, ...]:
        """Indices of the non-zero elements of ``input`` in C order: an ``(n, ndim)`` int64
        tensor, or with ``as_tuple=True`` one 1-D tensor per dim. Each shard finds its own;
        the driver reads one count per shard (a tensor split along a later dim is resharded
        by rows first, so that shard order is C order)."""
    def nonzero_static(self, *, size, fill_value=...) -> ShardedTensor:
        """The ``(size, ndim)`` int64 indices of the first ``size`` non-zero elements of
        ``input`` in C order, as ``torch.nonzero_static``: ``nonzero``'s rows cut to
        ``size``, or padded with rows of ``fill_value``. ``nonzero`` reads one count per
        shard."""
    def norm(self, p=..., dim=..., keepdim=..., dtype=...) -> ShardedTensor:
        """torch's ``Tensor.norm``: ``'fro'`` (default) and numbers are vector norms over
        ``dim`` (all elements by default), ``'nuc'`` the nuclear norm of matrices."""
    def normal_(self, mean=..., std=..., *, generator=...) -> ShardedTensor:
        """Fill with normal samples, in place (identical for any sharding after a seed)."""
    def not_equal(self, other) -> ShardedTensor:
        """``input != other``."""
    def not_equal_(self, other) -> ShardedTensor:
        """In-place ``ne``: writes into this tensor's shards (the result cast to its dtype) and
        returns it."""
    def numel(self) -> builtins.int: ...
    def numpy(self) -> ndarray:
        """Gather every shard into a new NumPy array (a copy: writing to it does not change the
        tensor, unlike torch's shared-memory ``numpy()`` on CPU). A tensor that requires grad
        raises, as in torch: call ``detach().numpy()``."""
    def orgqr(self, tau) -> ShardedTensor:
        """torch's older name of :func:`sharded.linalg.householder_product`."""
    def ormqr(self, tau, other, left=..., transpose=...) -> ShardedTensor:
        """``Q @ other`` for ``Q = H_0 H_1 ... H_{k-1}`` the product of the Householder
        reflectors stored below the diagonal of ``input`` (LAPACK's compact form, as
        :func:`geqrf` leaves it; ``H_i = I - tau_i v_i v_i^H``), as ``torch.ormqr`` (LAPACK's
        ormqr/unmqr): ``other @ Q`` with ``left=False``, ``Q^H`` in place of ``Q`` with
        ``transpose=True``. ``Q`` is never formed: each reflector is a rank-one update of
        ``other``, so the gradient with respect to all three inputs is that of its products
        and batch dims stay split as they are."""
    def outer(self, vec2) -> ShardedTensor:
        """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``."""
    def permute(self, *dims, **kw) -> ShardedTensor:
        """Reorder dims (a view; chunk bounds move with their dims, no data moves)."""
    def pinverse(self, *, atol=..., rtol=..., hermitian=...) -> ShardedTensor:
        """Moore-Penrose pseudo-inverse through the SVD (singular values under the tolerance of
        :func:`matrix_rank` count as zero); with ``hermitian=True`` through ``eigh``, which
        reads the lower triangle only (as torch)."""
    def placement(self) -> list:
        """One dict per shard: ``worker``, ``node`` (Ray node id), ``device``, ``offsets``,
        ``shape``."""
    def polygamma(self, n) -> ShardedTensor:
        """``x.polygamma(n)``: :func:`polygamma` ``(n, x)`` (torch's method order)."""
    def polygamma_(self, n) -> ShardedTensor:
        """In-place ``x.polygamma_(n)`` (a floating-point tensor only, as torch)."""
    def positive(self) -> ShardedTensor:
        """``+input``: the tensor itself; bool tensors raise, as in torch."""
    def pow(self, exponent) -> ShardedTensor:
        """``input ** exponent``."""
    def pow_(self, other, **kw) -> Self:
        """In-place ``pow``: writes into this tensor's shards and returns it."""
    def prelu(self, weight) -> ShardedTensor:
        """``x`` where positive, else ``weight * x``; ``weight`` holds one slope or one per
        channel (dim 1; a 1-d input has one channel)."""
    def prod(self, dim=..., keepdim=..., *, dtype=..., axis=...) -> ShardedTensor:
        """Product of elements (over all, one dim or a tuple of dims)."""
    def put(self, index, source, accumulate=...) -> ShardedTensor:
        """A copy of ``input`` with ``source`` written at the flat (row-major) positions
        ``index`` (negative ones count from the end; ``accumulate`` adds instead)."""
    def put_(self, index, source, accumulate=...) -> ShardedTensor:
        """In-place :func:`put`."""
    def qr(self, some=...) -> _QRLegacy:
        """torch's older QR: ``(Q, R)``, reduced unless ``some=False`` (then ``Q`` is square)."""
    def quantile(self, q, dim=..., keepdim=..., *, interpolation=...) -> ShardedTensor:
        """The ``q``-quantiles (a float or a 1-D tensor, in ``[0, 1]``) along ``dim`` (all
        elements when None), torch's five ``interpolation`` modes; a 1-D ``q`` adds a leading
        dim. Rows holding NaN give NaN (see :func:`nanquantile`)."""
    def rad2deg(self) -> ShardedTensor:
        """Radians to degrees, ``input * 180 / pi``."""
    def rad2deg_(self) -> ShardedTensor:
        """In-place :func:`rad2deg` (a floating-point tensor only, as torch)."""
    def random_(self, *args, generator=..., **kw) -> ShardedTensor:
        """Fill with integers uniform in ``[from, to)`` (``random_(to)`` and ``random_(from,
        to)`` as torch; with no ``to``: ``[0, 2**mantissa]`` for floating dtypes, ``[0,
        max]`` for integer ones), in place."""
    def ravel(self) -> ShardedTensor:
        """The tensor flattened to 1-d (a view when possible), as ``torch.ravel``."""
    @property
    def real(self) -> ShardedTensor:
        """The real part: a real view of a complex tensor (a real tensor itself)."""
    @real.setter
    def real(self, value) -> None: ...
    def reciprocal(self) -> ShardedTensor:
        """``1 / input``."""
    def reciprocal_(self) -> Self:
        """In-place ``reciprocal``: writes into this tensor's shards and returns it."""
    def register_hook(self, hook) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a tensor it returns
        replaces the gradient (for a leaf, before it is added to ``.grad``)."""
    def relu(self) -> ShardedTensor:
        """``max(input, 0)``."""
    def relu_(self) -> Self:
        """In-place ``relu``: writes into this tensor's shards and returns it."""
    def remainder(self, other) -> ShardedTensor:
        """``input % other`` with the sign of ``other`` (Python semantics, as torch)."""
    def remainder_(self, other, **kw) -> Self:
        """In-place ``remainder``: writes into this tensor's shards and returns it."""
    def renorm(self, p, dim, maxnorm) -> ShardedTensor:
        """Rescale each sub-tensor ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm``
        to norm ``maxnorm`` (torch's factor ``maxnorm / (norm + 1e-7)``)."""
    def renorm_(self, p, dim, maxnorm) -> ShardedTensor:
        """In-place :func:`renorm`."""
    def repeat(self, *sizes, repeats=...) -> ShardedTensor:
        """Tile the tensor ``sizes[i]`` times along dim ``i`` (extra leading sizes add dims)."""
    def repeat_interleave(self, repeats=..., dim=..., *, output_size=...) -> ShardedTensor:
        """Repeat each element ``repeats`` times (an int, or a tensor with one count per element
        along ``dim``) along ``dim`` (the flattened tensor when ``dim`` is None). With a
        tensor alone, ``repeat_interleave(r)`` repeats ``arange(len(r))``."""
    def replicate(self) -> ShardedTensor:
        """A copy held whole by every worker."""
    @property
    def requires_grad(self) -> builtins.bool: ...
    @requires_grad.setter
    def requires_grad(self, value) -> None: ...
    def requires_grad_(self, requires_grad=...) -> Self:
        """Record operations on this tensor for autograd (floating dtypes only); returns
        ``self``."""
    def reshape(self, *sizes, shape=...) -> ShardedTensor:
        """A tensor of the new shape: a view when :func:`view` can share storage, otherwise a
        copy resharded worker to worker."""
    def reshape_as(self, other) -> ShardedTensor:
        """``self.reshape(other.shape)``."""
    def reshard(self, dim=..., shards=..., layout=...) -> ShardedTensor:
        """A copy laid out anew (``dim=``/``shards=``, or ``layout=``), moved worker to worker.
        ``shards`` defaults to one per kernel thread of the session (one per worker on
        workers of one thread; a worker owning a node's cores takes one per core), at most
        the split dim's length."""
    def resolve_conj(self) -> Self:
        """``input`` itself: ``conj`` already materialises (there is no lazy conjugate bit)."""
    def resolve_neg(self) -> Self:
        """``input`` itself: sharded has no lazy negation bit (``neg`` always materialises), so
        there is nothing to resolve."""
    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on a leaf)."""
    @property
    def retains_grad(self) -> builtins.bool: ...
    def roll(self, shifts, dims=...) -> ShardedTensor:
        """Rotate elements along ``dims`` by ``shifts`` (flattened when ``dims`` is None). The
        result keeps ``x``'s layout: every shard receives the (at most two) pieces that
        rotate into it, worker to worker."""
    def rot90(self, k=..., dims=...) -> ShardedTensor:
        """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first towards the
        second)."""
    def round(self, *, decimals=...) -> ShardedTensor:
        """Rounds half to even (``decimals``: to that many decimal places), as torch."""
    def round_(self, *, decimals=...) -> ShardedTensor:
        """In-place :func:`round`."""
    def rsqrt(self) -> ShardedTensor:
        """``1 / sqrt(input)``."""
    def rsqrt_(self) -> Self:
        """In-place ``rsqrt``: writes into this tensor's shards and returns it."""
    def scatter(self, dim, index, src=..., value=..., *, reduce=...) -> ShardedTensor:
        """``input`` with ``src`` (or the scalar ``value``) written at ``index`` along ``dim``
        (``reduce='add'|'multiply'`` combines instead); routed like :func:`gather`."""
    def scatter_(self, dim, index, src=..., value=..., *, reduce=...) -> ShardedTensor:
        """In-place :func:`scatter`."""
    def scatter_add(self, dim, index, src) -> ShardedTensor:
        """``input`` with ``src`` added at ``index`` along ``dim`` (repeats accumulate)."""
    def scatter_add_(self, dim, index, src) -> ShardedTensor:
        """In-place :func:`scatter_add`."""
    def scatter_reduce(self, dim, index, src, reduce, *, include_self=...) -> ShardedTensor:
        """``input`` with ``src`` reduced into it at ``index`` along ``dim``: ``reduce`` one of
        ``sum prod mean amax amin``; ``include_self=False`` leaves the old values of the
        points written out of the reduction (integer ``mean`` rounds down, as torch)."""
    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=...) -> ShardedTensor:
        """In-place :func:`scatter_reduce`."""
    def searchsorted(
        self, input=..., *, out_int32=..., right=..., side=..., sorter=..., values=...
    ) -> ShardedTensor:
        """Indices where the values ``input`` would be inserted into ``sorted_sequence`` (sorted
        along its last dim) to keep it sorted; ``right``/``side='right'`` puts equal values
        after. The values may be passed as ``input=`` (torch's keyword) or ``values=`` (its
        docs' name)."""
    def select(self, dim, index) -> ShardedTensor:
        """The sub-tensor at ``index`` of ``dim`` (a view without that dim)."""
    def select_scatter(self, src, dim, index) -> ShardedTensor:
        """A copy of ``input`` with ``src`` written at ``input.select(dim, index)``."""
    def sgn(self) -> ShardedTensor:
        """``sign`` (torch's name that extends to complex)."""
    def sgn_(self) -> Self:
        """In-place ``sgn``: writes into this tensor's shards and returns it."""
    @property
    def shape(self) -> Size: ...
    def short(self) -> ShardedTensor:
        """``x.to(sharded.int16)``."""
    def sigmoid(self) -> ShardedTensor:
        """``1 / (1 + exp(-input))``."""
    def sigmoid_(self) -> Self:
        """In-place ``sigmoid``: writes into this tensor's shards and returns it."""
    def sign(self) -> ShardedTensor:
        """-1, 0 or 1 by sign (0 for NaN)."""
    def sign_(self) -> Self:
        """In-place ``sign``: writes into this tensor's shards and returns it."""
    def signbit(self) -> ShardedTensor:
        """True where the sign bit is set."""
    def sin(self) -> ShardedTensor:
        """Sine."""
    def sin_(self) -> Self:
        """In-place ``sin``: writes into this tensor's shards and returns it."""
    def sinc(self) -> ShardedTensor:
        """``sin(pi x) / (pi x)``, 1 at 0."""
    def sinc_(self) -> Self:
        """In-place ``sinc``: writes into this tensor's shards and returns it."""
    def sinh(self) -> ShardedTensor:
        """Hyperbolic sine."""
    def sinh_(self) -> Self:
        """In-place ``sinh``: writes into this tensor's shards and returns it."""
    @overload
    def size(self, dim: None = ...) -> Size:
        """The shape, or the size of dimension ``dim``."""
    @overload
    def size(self, dim: builtins.int) -> builtins.int:
        """The shape, or the size of dimension ``dim``."""
    def slice_scatter(self, src, dim=..., start=..., end=..., step=...) -> ShardedTensor:
        """A copy of ``input`` with ``src`` written at ``input[..., start:end:step, ...]``
        (``step`` positive, as torch)."""
    def slogdet(self) -> SlogdetResult:
        """``(sign, log|det|)`` of (a batch of) square matrices."""
    def softmax(self, dim, dtype=...) -> ShardedTensor:
        """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max for stability."""
    def sort(self, dim=..., descending=..., stable=...) -> _SortResult:
        """Sort along ``dim``: ``(values, indices)`` (a namedtuple, as torch's)."""
    def split(
        self, split_size_or_sections=..., dim=..., *, split_size=...
    ) -> tuple[ShardedTensor, ...]:
        """Views of consecutive pieces along ``dim``: pieces of a size, or of given sizes."""
    def split_with_sizes(self, split_sizes, dim=...) -> tuple[ShardedTensor, ...]:
        """Views of consecutive pieces of ``split_sizes`` along ``dim``, which must add up to
        its size exactly (``torch.split_with_sizes``)."""
    def sqrt(self) -> ShardedTensor:
        """Square root."""
    def sqrt_(self) -> Self:
        """In-place ``sqrt``: writes into this tensor's shards and returns it."""
    def square(self) -> ShardedTensor:
        """``input * input``."""
    def square_(self) -> Self:
        """In-place ``square``: writes into this tensor's shards and returns it."""
    def squeeze(self, dim=...) -> ShardedTensor:
        """Drop size-1 dims (all of them, or those in ``dim`` that have size 1); a view with the
        remaining dims' strides, as in torch."""
    def std(self, dim=..., unbiased=..., keepdim=..., *, correction=..., axis=...) -> ShardedTensor:
        """Standard deviation: ``sqrt(var(...))``."""
    def stft(
        self,
        n_fft,
        hop_length=...,
        win_length=...,
        window=...,
        center=...,
        pad_mode=...,
        normalized=...,
        onesided=...,
        return_complex=...,
        align_to_window=...,
    ) -> ShardedTensor:
        """Short-time Fourier transform of a signal ``(L,)`` or batch ``(B, L)``, as torch's
        ``stft``: ``(B?, N, T)`` with ``N = n_fft // 2 + 1`` (``onesided``) or ``n_fft``
        frequencies and ``T`` frames ``hop_length`` apart (``1 + L // hop_length`` with
        ``center``, which pads ``n_fft // 2`` on both sides with ``pad_mode``)."""
    def storage(self) -> ShardedStorage:
        """The tensor's storage in elements (a view: its base's storage)."""
    def storage_offset(self) -> builtins.int:
        """Offset of the first element in the base's storage (torch semantics)."""
    @overload
    def stride(self, dim: None = ...) -> tuple[builtins.int, ...]:
        """Strides in elements, as torch reports them for this (possibly viewed) tensor."""
    @overload
    def stride(self, dim: builtins.int) -> builtins.int:
        """Strides in elements, as torch reports them for this (possibly viewed) tensor."""
    def sub(self, other, *, alpha=...) -> ShardedTensor:
        """``input - alpha * other``."""
    def sub_(self, other, **kw) -> Self:
        """In-place ``sub``: writes into this tensor's shards and returns it."""
    def subtract(self, other, *, alpha=...) -> ShardedTensor:
        """``input - alpha * other``."""
    def subtract_(self, other, **kw) -> Self:
        """In-place ``sub``: writes into this tensor's shards and returns it."""
    def sum(self, dim=..., keepdim=..., *, dtype=..., axis=...) -> ShardedTensor:
        """Sum over all elements, one dim or a tuple of dims."""
    def sum_to_size(self, *size) -> ShardedTensor:
        """Sum this tensor down to ``size`` (to which it must broadcast): the inverse of
        ``expand``."""
    def svd(self, some=..., compute_uv=...) -> _SVDLegacy:
        """torch's older SVD: ``(U, S, V)`` with ``input = U diag(S) V^H`` (``V``, not ``V^H``);
        ``some=False`` gives square ``U`` and ``V``; ``compute_uv=False`` gives zero ``U`` (m
        x m) and ``V`` (n x n), as torch."""
    def swapaxes(self, axis0, axis1) -> ShardedTensor:
        """``transpose`` with NumPy's keyword names ``axis0``/``axis1`` (torch's alias)."""
    def swapdims(self, dim0, dim1) -> ShardedTensor:
        """Swap two dims (a view)."""
    def t(self) -> Self:
        """Transpose of a tensor of at most 2 dims (a view), as ``torch.t``."""
    def take(self, index) -> ShardedTensor:
        """Elements of the flattened ``input`` at ``index`` (any shape; negative indices count
        from the end), read through the routed gather."""
    def take_along_dim(self, indices, dim=...) -> ShardedTensor:
        """``input`` gathered along ``dim`` at ``indices`` broadcast against it (torch's
        ``take_along_dim``; ``dim=None`` reads the flattened input). With a ``dim``, an index
        in ``[-n, 0)`` counts from the end, as torch's (not with ``dim=None``, where torch
        refuses negatives too). An index outside ``[-n, n)`` raises
        :class:`~sharded.errors.IndexOutOfRange` naming the offending values (torch's CPU
        kernel does not check and returns whatever it reads)."""
    def tan(self) -> ShardedTensor:
        """Tangent."""
    def tan_(self) -> Self:
        """In-place ``tan``: writes into this tensor's shards and returns it."""
    def tanh(self) -> ShardedTensor:
        """Hyperbolic tangent."""
    def tanh_(self) -> Self:
        """In-place ``tanh``: writes into this tensor's shards and returns it."""
    def tensor_split(
        self,
        indices_or_sections=...,
        dim=...,
        *,
        sections=...,
        indices=...,
        tensor_indices_or_sections=...,
    ) -> tuple[ShardedTensor, ...]:
        """Views of ``input`` cut along ``dim``: into ``n`` nearly equal pieces (the first
        ``size % n`` one longer) for an int ``n``, or at the given indices (Python slice
        semantics: ``x[:i0], x[i0:i1], ..., x[ik:]``), as ``torch.tensor_split``."""
    def tensordot(self, b, dims=...) -> ShardedTensor:
        """Contract ``dims`` (an int: a's last and b's first dims; or two lists) as one matmul
        of the flattened free and contracted dims."""
    def tile(self, dims, *more) -> ShardedTensor:
        """``repeat`` with ``dims`` padded by leading ones when shorter than the tensor's rank."""
    def to(self, *args, **kwargs) -> ShardedTensor:
        """Convert dtype and/or device: ``x.to(st.float64)``, ``x.to("cuda")``, ``x.to("cuda:1",
        st.float16)``; returns ``x`` itself when nothing changes."""
    def to_device(self, device, /, *, stream=...) -> ShardedTensor:
        """The array moved to ``device`` (the same array if it is there already)."""
    def tolist(self) -> Any: ...
    def topk(self, k, dim=..., largest=..., sorted=...) -> _TopK:
        """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their
        indices, as ``(values, indices)``. NaN counts as larger than every number (torch)."""
    def trace(self) -> ShardedTensor:
        """The sum of the main diagonal of a matrix (integers sum in int64, as torch)."""
    def transpose(self, dim0, dim1) -> ShardedTensor:
        """Swap two dims (a view)."""
    def triangular_solve(self, A, upper=..., transpose=..., unitriangular=...) -> _TriangularSolve:
        """torch's older triangular solver: ``(solution, cloned_coefficient)`` with ``solution``
        the ``X`` of ``A X = b`` (``A^T X = b`` with ``transpose``), reading only the
        ``upper`` or lower triangle of ``A`` (its diagonal as ones with ``unitriangular``),
        and ``cloned_coefficient`` a copy of ``A``. Batch dims broadcast."""
    def tril(self, diagonal=...) -> ShardedTensor:
        """The lower triangle of the last two dims (elements with ``col - row <= diagonal``);
        the rest is zero. Each shard masks its own block: no data moves."""
    def tril_(self, diagonal=...) -> ShardedTensor:
        """In-place :func:`tril`."""
    def triu(self, diagonal=...) -> ShardedTensor:
        """The upper triangle of the last two dims (elements with ``col - row >= diagonal``)."""
    def triu_(self, diagonal=...) -> ShardedTensor:
        """In-place :func:`triu`."""
    def true_divide(self, other, *, rounding_mode=...) -> ShardedTensor:
        """True division (integers give the default float dtype); ``rounding_mode="floor"``
        floors and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay
        ints)."""
    def true_divide_(self, other, *, rounding_mode=...) -> ShardedTensor:
        """In-place :func:`div`; an int tensor takes only the rounding modes (true division
        gives floats, which it cannot hold, as torch)."""
    def trunc(self) -> ShardedTensor:
        """Rounds toward zero."""
    def trunc_(self) -> Self:
        """In-place ``trunc``: writes into this tensor's shards and returns it."""
    @overload
    def type(self, dtype: None = ...) -> str:
        """The type name (``"sharded.FloatTensor"``), or a copy converted to ``dtype``."""
    @overload
    def type(self, dtype: DType | str) -> ShardedTensor:
        """The type name (``"sharded.FloatTensor"``), or a copy converted to ``dtype``."""
    def type_as(self, other) -> ShardedTensor:
        """``self`` converted to ``other``'s dtype."""
    def unbind(self, dim=...) -> tuple[ShardedTensor, ...]:
        """All slices along ``dim``, each a view without that dim."""
    def unflatten(self, dim, sizes) -> ShardedTensor:
        """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    def unfold(self, dimension, size, step) -> ShardedTensor:
        """Windows of ``size`` elements every ``step`` along ``dimension``, as a new last dim of
        length ``size`` (``Tensor.unfold``): ``(n - size) // step + 1`` windows. Where
        windows tile the dim (``step == size``) it is a view; otherwise a gather of the
        windows' elements."""
    def uniform_(self, a=..., b=..., *, generator=..., **kw) -> ShardedTensor:
        """Fill with samples uniform in ``[a, b)`` (torch's ``from``/``to``), in place."""
    def unique(self, sorted=..., return_inverse=..., return_counts=..., dim=...) -> Any:
        """Unique values of the flattened ``input``, sorted (as torch on CPU, also for
        ``sorted=False``), with the inverse ids (shaped like ``input``) and counts if asked."""
    def unique_consecutive(self, return_inverse=..., return_counts=..., dim=...) -> Any:
        """Collapse runs of equal consecutive elements of the flattened ``input`` (or, with
        ``dim``, of equal consecutive slices along ``dim``); inverse ids (shaped like
        ``input``, or one per slice) and run lengths if asked. Any layout: runs that cross a
        shard border are joined."""
    def unsafe_chunk(self, chunks, dim=...) -> tuple[ShardedTensor, ...]:
        """``torch.unsafe_chunk``: :func:`chunk` (see :func:`unsafe_split`)."""
    def unsafe_split(self, split_size_or_sections, dim=...) -> tuple[ShardedTensor, ...]:
        """``torch.unsafe_split``: :func:`split` (torch's variant skips view tracking for
        in-place safety checks; sharded's pieces are ordinary views)."""
    def unsqueeze(self, dim) -> ShardedTensor:
        """Insert a size-1 dim at ``dim`` (a view; its stride is torch's: ``size * stride`` of
        the dim it lands before, 1 at the end)."""
    def untyped_storage(self) -> ShardedStorage:
        """The tensor's storage in bytes: per shard its worker, offset, elements and bytes."""
    def var(self, dim=..., unbiased=..., keepdim=..., *, correction=..., axis=...) -> ShardedTensor:
        """Variance with ``correction`` (default 1, Bessel's) over the given dims."""
    def vdot(self, other) -> ShardedTensor:
        """``dot(conj(input), other)``: the inner product that conjugates its first operand."""
    def view(self, *shape, size=...) -> ShardedTensor:
        """The same data with a new shape, sharing storage (like ``torch.Tensor.view``)."""
    def view_as(self, other) -> ShardedTensor:
        """``self.view(other.shape)``."""
    def visualize(self, path=..., *, file=...) -> str:
        """Print (and return) a map of which worker and node hold which block; with ``path``,
        draw it instead into a picture file and return the path."""
    def vsplit(
        self, indices_or_sections=..., *, sections=..., indices=...
    ) -> tuple[ShardedTensor, ...]:
        """``tensor_split`` along dim 0 of a tensor of at least 2 dims; an int must divide it."""
    def where(self, condition, other) -> ShardedTensor:
        """``x.where(cond, y)`` is ``st.where(cond, x, y)``."""
    def xlogy(self, other) -> ShardedTensor:
        """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    def xlogy_(self, other) -> ShardedTensor:
        """In-place ``xlogy``: writes into this tensor's shards (the result cast to its dtype)
        and returns it."""
    def zero_(self) -> ShardedTensor:
        """Set every element to zero, in place."""

class Storage:
    """The shards of one tensor: ``keys[i]`` lives on worker ``layout.workers[i]``."""

    keys: Any
    session: Any
    def __del__(self) -> None: ...
    def __init__(self, session, layout, keys, dtype=...) -> None: ...

class Size(tuple):
    """The shape of a tensor: a tuple that prints like ``torch.Size``."""

    def __repr__(self) -> str: ...
    def numel(self) -> int: ...

class _AminmaxResult(NamedTuple):
    min: ShardedTensor
    max: ShardedTensor

class _FrexpResult(NamedTuple):
    mantissa: ShardedTensor
    exponent: ShardedTensor

class _GeqrfResult(NamedTuple):
    a: ShardedTensor
    tau: ShardedTensor

class _HistogramddResult(NamedTuple):
    hist: ShardedTensor
    bin_edges: ShardedTensor

class _KthValue(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class _LUUnpackResult(NamedTuple):
    P: ShardedTensor
    L: ShardedTensor
    U: ShardedTensor

class _Median(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class _Mode(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class _NanMedian(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class _QRLegacy(NamedTuple):
    Q: ShardedTensor
    R: ShardedTensor

class _SVDLegacy(NamedTuple):
    U: ShardedTensor
    S: ShardedTensor
    V: ShardedTensor

class _TopK(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class _TriangularSolve(NamedTuple):
    solution: ShardedTensor
    cloned_coefficient: ShardedTensor

class _EigResult(NamedTuple):
    eigenvalues: ShardedTensor
    eigenvectors: ShardedTensor

class _LDLFactorResult(NamedTuple):
    LD: ShardedTensor
    pivots: ShardedTensor

class _LDLFactorExResult(NamedTuple):
    LD: ShardedTensor
    pivots: ShardedTensor
    info: ShardedTensor

class _LUResult(NamedTuple):
    P: ShardedTensor
    L: ShardedTensor
    U: ShardedTensor

class _LUFactorResult(NamedTuple):
    LU: ShardedTensor
    pivots: ShardedTensor

class _LUFactorExResult(NamedTuple):
    LU: ShardedTensor
    pivots: ShardedTensor
    info: ShardedTensor

class _SortResult(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

def check_not_published(t) -> None:
    """Raise :class:`PublishedReadOnly` if ``t`` is (a view of) a published snapshot, whose
    ``_readonly`` flag is ``("published", name, version)``."""

def contiguous_strides(shape) -> tuple:
    """Row-major strides (in elements) of ``shape``, as torch reports them."""

def is_tensor(obj) -> bool:
    """Whether ``obj`` is a sharded tensor (``torch.is_tensor``)."""

def normalize_dim(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative index; :class:`DimError` names it when out of range."""

def numel(input) -> int:
    """The number of elements of ``input`` (``torch.numel``)."""

def sharding_map(t) -> str:
    """A text map: one line per shard (block, worker, node, device), plus a 2-D grid."""

def tensor_repr(t) -> str:
    """``tensor([...], dtype=..., shards=N)`` like torch's repr."""
