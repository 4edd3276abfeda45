import builtins
from typing import Any, Literal, NamedTuple, overload

from sharded import amp as amp
from sharded import array_api as array_api
from sharded import autograd as autograd
from sharded import backend as backend
from sharded import core as core
from sharded import cuda as cuda
from sharded import devices as devices
from sharded import display as display
from sharded import display_svg as display_svg
from sharded import dtypes as dtypes
from sharded import errors as errors
from sharded import fft as fft
from sharded import grad_mode as grad_mode
from sharded import io as io
from sharded import layout as layout
from sharded import linalg as linalg
from sharded import masked as masked
from sharded import nn as nn
from sharded import ops as ops
from sharded import optim as optim
from sharded import runtime as runtime
from sharded import service as service
from sharded import signal as signal
from sharded import special as special
from sharded import storage as storage
from sharded.amp import autocast as autocast
from sharded.devices import device as device
from sharded.dtypes import DType as DType
from sharded.dtypes import finfo as finfo
from sharded.dtypes import iinfo as iinfo
from sharded.errors import ArgumentError as ArgumentError
from sharded.errors import ArgumentTypeError as ArgumentTypeError
from sharded.errors import BackendUnavailable as BackendUnavailable
from sharded.errors import CheckpointError as CheckpointError
from sharded.errors import DimError as DimError
from sharded.errors import DivisionByZero as DivisionByZero
from sharded.errors import DTypeError as DTypeError
from sharded.errors import EmptyReduction as EmptyReduction
from sharded.errors import IndexDTypeError as IndexDTypeError
from sharded.errors import IndexOutOfRange as IndexOutOfRange
from sharded.errors import LayoutMismatch as LayoutMismatch
from sharded.errors import OpFailed as OpFailed
from sharded.errors import OutOfMemory as OutOfMemory
from sharded.errors import PlacementFailed as PlacementFailed
from sharded.errors import PublishedNotFound as PublishedNotFound
from sharded.errors import PublishedReadOnly as PublishedReadOnly
from sharded.errors import SessionClosed as SessionClosed
from sharded.errors import ShapeError as ShapeError
from sharded.errors import ShardedError as ShardedError
from sharded.errors import ShardingError as ShardingError
from sharded.errors import StateDictError as StateDictError
from sharded.errors import TraceError as TraceError
from sharded.errors import UnsupportedArgument as UnsupportedArgument
from sharded.errors import UnsupportedDType as UnsupportedDType
from sharded.errors import ValueOverflow as ValueOverflow
from sharded.errors import ViewError as ViewError
from sharded.errors import WaitTimeout as WaitTimeout
from sharded.errors import WorkerLost as WorkerLost
from sharded.grad_mode import enable_grad as enable_grad
from sharded.grad_mode import inference_mode as inference_mode
from sharded.grad_mode import no_grad as no_grad
from sharded.grad_mode import set_grad_enabled as set_grad_enabled
from sharded.layout import Layout as Layout
from sharded.linalg import SlogdetResult
from sharded.ops import random as random
from sharded.runtime.driver.session import Session
from sharded.tensor import ShardedTensor as ShardedTensor
from sharded.tensor import Size as Size
from sharded.tensor import (
    _AminmaxResult,
    _FrexpResult,
    _GeqrfResult,
    _HistogramddResult,
    _KthValue,
    _LUUnpackResult,
    _Median,
    _Mode,
    _NanMedian,
    _QRLegacy,
    _SortResult,
    _SVDLegacy,
    _TopK,
    _TriangularSolve,
)

Tensor = ShardedTensor
bfloat16: DType
bool: DType
cdouble: DType
cfloat: DType
complex128: DType
complex64: DType
double: DType
dtype = DType
float: DType
float16: DType
float32: DType
float64: DType
half: DType
int: DType
int16: DType
int32: DType
int64: DType
int8: DType
long: DType
short: DType
uint8: DType
__version__: str

class CummaxResult(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class CumminResult(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class HistogramResult(NamedTuple):
    hist: ShardedTensor
    bin_edges: ShardedTensor

class MaxResult(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

class MinResult(NamedTuple):
    values: ShardedTensor
    indices: ShardedTensor

def abs(input, *, out=...) -> ShardedTensor:
    """Absolute value."""

def abs_(input, *args, **kwargs) -> ShardedTensor:
    """``input.abs_(*args, **kwargs)``: torch's top-level form of the tensor method ``abs_`` (in
    place see that method)."""

def absolute(input, *, out=...) -> ShardedTensor:
    """Absolute value."""

def acos(input, *, out=...) -> ShardedTensor:
    """Inverse cosine."""

def acos_(input, *args, **kwargs) -> ShardedTensor:
    """``input.acos_(*args, **kwargs)``: torch's top-level form of the tensor method ``acos_``
    (in place see that method)."""

def acosh(input, *, out=...) -> ShardedTensor:
    """Inverse hyperbolic cosine."""

def acosh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.acosh_(*args, **kwargs)``: torch's top-level form of the tensor method ``acosh_``
    (in place see that method)."""

def adaptive_avg_pool1d(input, output_size) -> ShardedTensor:
    """Average pooling to a fixed length."""

def adaptive_max_pool1d(input, output_size) -> ShardedTensor:
    """torch's top-level ``adaptive_max_pool1d``: the maxima over torch's adaptive bins and
    their positions, always both (``st.adaptive_max_pool1d``; the ``nn.functional`` form
    returns the indices only with ``return_indices=True``)."""

def add(input, other, *, alpha=..., out=...) -> ShardedTensor:
    """``input + alpha * other`` with broadcasting."""

def addbmm(input, batch1, batch2, *, beta=..., alpha=..., out=...) -> ShardedTensor:
    """``beta * input + alpha * sum_b (batch1[b] @ batch2[b])``."""

def addcdiv(input, tensor1, tensor2, *, value=..., out=...) -> ShardedTensor:
    """``input + value * tensor1 / tensor2``, as torch (integer tensor1 and tensor2 raise)."""

def addcmul(input, tensor1, tensor2, *, value=..., out=...) -> ShardedTensor:
    """``input + value * tensor1 * tensor2``, as torch."""

def addmm(input, mat1, mat2, *, beta=..., alpha=..., out=...) -> ShardedTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1``, ``mat2``."""

def addmv(input, mat, vec, *, beta=..., alpha=..., out=...) -> ShardedTensor:
    """``beta * input + alpha * (mat @ vec)`` for a 2-D ``mat`` and 1-D ``vec``."""

def addr(input, vec1, vec2, *, beta=..., alpha=..., out=...) -> ShardedTensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""

def adjoint(x) -> ShardedTensor:
    """The conjugate transpose of the last two dims (``x.mH``; ``x.mT`` for a real tensor)."""

def affine_grid_generator(theta, size, align_corners) -> Any:
    """torch's ``affine_grid_generator``: ``affine_grid`` with ``align_corners`` given."""

def all(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """True if every element is non-zero."""

def allclose(input, other, rtol=..., atol=..., equal_nan=...) -> builtins.bool:
    """Whether every element pair is close (:func:`isclose`), as a Python bool."""

def alpha_dropout(input, p, train) -> ShardedTensor:
    """``torch.alpha_dropout(input, p, train)``: :func:`alpha_dropout` with torch's top-level
    signature (``st.alpha_dropout``; ``p`` and ``train`` are required)."""

def amax(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """Maximum over all elements, a dim or a tuple of dims (values only)."""

def amin(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """Minimum over all elements, a dim or a tuple of dims (values only)."""

def aminmax(input, *, dim=..., keepdim=..., out=...) -> _AminmaxResult:
    """``(min, max)`` over all elements or one ``dim``, a named tuple as torch's."""

def angle(input, *, out=...) -> ShardedTensor:
    """The argument (phase) of each element in radians; real result."""

def any(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """True if any element is non-zero."""

def arange(
    start=...,
    end=...,
    step=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    out=...,
) -> ShardedTensor:
    """Values ``start, start+step, ...`` below ``end``; int64 when all arguments are ints."""

def arccos(input, *, out=...) -> ShardedTensor:
    """Inverse cosine."""

def arccos_(input, *args, **kwargs) -> ShardedTensor:
    """``input.arccos_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``arccos_`` (in place see that method)."""

def arccosh(input, *, out=...) -> ShardedTensor:
    """Inverse hyperbolic cosine."""

def arccosh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.arccosh_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``arccosh_`` (in place see that method)."""

def arcsin(input, *, out=...) -> ShardedTensor:
    """Inverse sine."""

def arcsin_(input, *args, **kwargs) -> ShardedTensor:
    """``input.arcsin_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``arcsin_`` (in place see that method)."""

def arcsinh(input, *, out=...) -> ShardedTensor:
    """Inverse hyperbolic sine."""

def arcsinh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.arcsinh_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``arcsinh_`` (in place see that method)."""

def arctan(input, *, out=...) -> ShardedTensor:
    """Inverse tangent."""

def arctan2(input, other, *, out=...) -> ShardedTensor:
    """Angle of the point ``(other, input)``, in ``[-pi, pi]``."""

def arctan_(input, *args, **kwargs) -> ShardedTensor:
    """``input.arctan_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``arctan_`` (in place see that method)."""

def arctanh(input, *, out=...) -> ShardedTensor:
    """Inverse hyperbolic tangent."""

def arctanh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.arctanh_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``arctanh_`` (in place see that method)."""

def argmax(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """Index of the maximum (into the flattened tensor when ``dim`` is None)."""

def argmin(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """Index of the minimum (into the flattened tensor when ``dim`` is None)."""

def argsort(input, dim=..., descending=..., stable=..., *, out=...) -> ShardedTensor:
    """Indices that sort ``input`` along ``dim`` (``sort(...).indices``: along the split dim of
    a 1-d tensor the sorted values are not kept)."""

def argwhere(input) -> ShardedTensor:
    """``nonzero(input)``: the ``(n, ndim)`` indices of the non-zero elements."""

def as_tensor(
    data, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """A sharded tensor from nested lists, scalars, a NumPy array or a tensor (always a copy)."""

def asin(input, *, out=...) -> ShardedTensor:
    """Inverse sine."""

def asin_(input, *args, **kwargs) -> ShardedTensor:
    """``input.asin_(*args, **kwargs)``: torch's top-level form of the tensor method ``asin_``
    (in place see that method)."""

def asinh(input, *, out=...) -> ShardedTensor:
    """Inverse hyperbolic sine."""

def asinh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.asinh_(*args, **kwargs)``: torch's top-level form of the tensor method ``asinh_``
    (in place see that method)."""

def atan(input, *, out=...) -> ShardedTensor:
    """Inverse tangent."""

def atan2(input, other, *, out=...) -> ShardedTensor:
    """Angle of the point ``(other, input)``, in ``[-pi, pi]``."""

def atan_(input, *args, **kwargs) -> ShardedTensor:
    """``input.atan_(*args, **kwargs)``: torch's top-level form of the tensor method ``atan_``
    (in place see that method)."""

def atanh(input, *, out=...) -> ShardedTensor:
    """Inverse hyperbolic tangent."""

def atanh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.atanh_(*args, **kwargs)``: torch's top-level form of the tensor method ``atanh_``
    (in place see that method)."""

def atleast_1d(*tensors) -> Any:
    """Each tensor with at least 1 dim (a scalar becomes shape (1,))."""

def atleast_2d(*tensors) -> Any:
    """Each tensor with at least 2 dims (a vector becomes a row)."""

def atleast_3d(*tensors) -> Any:
    """Each tensor with at least 3 dims (a vector ``n`` becomes (1, n, 1), a matrix gets a
    trailing dim)."""

def avg_pool1d(
    input, kernel_size, stride=..., padding=..., ceil_mode=..., count_include_pad=...
) -> ShardedTensor:
    """1-D average pooling of an (N, C, L) or (C, L) input."""

def baddbmm(input, batch1, batch2, *, beta=..., alpha=..., out=...) -> ShardedTensor:
    """``beta * input + alpha * bmm(batch1, batch2)`` (3-D batches)."""

def bartlett_window(
    window_length,
    periodic=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Bartlett (triangular) window ``1 - |2 n / (N - 1) - 1|``, as ``torch.bartlett_window``."""

def bernoulli(input, p=..., *, generator=..., out=...) -> ShardedTensor:
    """0/1 samples, 1 with probability ``input[i]`` (or ``p`` for every element), in the input's
    dtype."""

def bincount(input, weights=..., minlength=..., *, out=...) -> ShardedTensor:
    """Count occurrences of each value of a 1-D non-negative integer tensor (``weights``: sum
    those instead). The length is ``max(max(input) + 1, minlength)``: the planner reads the
    global min and max first (a driver wait)."""

def bitwise_and(input, other, *, out=...) -> ShardedTensor:
    """Bitwise AND (logical on bool)."""

def bitwise_left_shift(input, other, *, out=...) -> ShardedTensor:
    """``input << other`` (also the operators ``<<``, ``<<=``)."""

def bitwise_not(input, *, out=...) -> ShardedTensor:
    """Bitwise NOT (logical NOT on bool)."""

def bitwise_or(input, other, *, out=...) -> ShardedTensor:
    """Bitwise OR (logical on bool)."""

def bitwise_right_shift(input, other, *, out=...) -> ShardedTensor:
    """``input >> other``, arithmetic (also the operators ``>>``, ``>>=``)."""

def bitwise_xor(input, other, *, out=...) -> ShardedTensor:
    """Bitwise XOR (logical on bool)."""

def blackman_window(
    window_length,
    periodic=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``, as
    ``torch.blackman_window``."""

def block_diag(*tensors, out=...) -> ShardedTensor:
    """The tensors as blocks on the diagonal of a matrix, zeros elsewhere (a 0-d tensor is a 1 x
    1 block, a vector a row; dtypes promote), as ``torch.block_diag``."""

def bmm(input, mat2, *, out=...) -> ShardedTensor:
    """Batched product of two 3-D tensors with equal batch sizes."""

def broadcast_shapes(*shapes) -> Size:
    """The shape that ``shapes`` broadcast to (ints are 1-d shapes), as
    ``torch.broadcast_shapes``; :class:`ShapeError` if they do not."""

def broadcast_tensors(*tensors) -> tuple[ShardedTensor, ...]:
    """The tensors expanded to their common broadcast shape (views)."""

def broadcast_to(x, size) -> ShardedTensor:
    """``x`` expanded to ``shape`` (a view), as ``torch.broadcast_to``."""

def bucketize(input, boundaries, *, out_int32=..., right=..., out=...) -> ShardedTensor:
    """Index of the bucket of every element of ``input`` given 1-D sorted ``boundaries``
    (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``)."""

def can_cast(from_, to) -> builtins.bool:
    """``torch.can_cast``: whether a same-kind cast is allowed (no float to integer, complex to
    real, or non-bool to bool; any width within a kind)."""

def cartesian_prod(*tensors) -> ShardedTensor:
    """Cartesian product of 1-D tensors (one dtype), one row per combination; a single tensor is
    returned as it is."""

def cat(tensors, dim=..., *, out=...) -> ShardedTensor:
    """Concatenate along ``dim`` (dtypes promote as in torch)."""

def cdist(x1, x2, p=..., compute_mode=...) -> ShardedTensor:
    """p-norm distances between each row of ``x1`` (``B x P x M``) and each row of ``x2`` (``B x
    R x M``), batch dims broadcast; ``p`` in ``[0, inf]``. ``compute_mode`` is accepted for
    torch's signature: the distances are always computed directly (exact, not through ``|a|^2
    + |b|^2 - 2ab``)."""

def ceil(input, *, out=...) -> ShardedTensor:
    """Smallest integer >= input."""

def ceil_(input, *args, **kwargs) -> ShardedTensor:
    """``input.ceil_(*args, **kwargs)``: torch's top-level form of the tensor method ``ceil_``
    (in place see that method)."""

def celu(input, alpha=..., inplace=...) -> ShardedTensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

def celu_(input, alpha=...) -> ShardedTensor:
    """In-place :func:`celu`."""

def channel_shuffle(input, groups) -> ShardedTensor:
    """(N, C, *) with the channels regrouped: seen as (groups, C / groups), transposed."""

def cholesky(input, upper=..., *, out=...) -> ShardedTensor:
    """torch's older Cholesky: ``L`` (``upper=True``: ``U = L^H``) of positive-definite
    matrices."""

def cholesky_inverse(L, upper=..., *, out=...) -> ShardedTensor:
    """The inverse of ``A = L L^H`` (``U^H U`` with ``upper``) from its Cholesky factor, as
    ``torch.cholesky_inverse``."""

def cholesky_solve(B, L, upper=..., *, out=...) -> ShardedTensor:
    """Solution of ``A X = B`` for ``A = L L^H`` (``U^H U`` with ``upper``) given its Cholesky
    factor, as ``torch.cholesky_solve``."""

def chunk(x, chunks, dim=...) -> tuple[ShardedTensor, ...]:
    """Split into ``chunks`` views of ``ceil(n / chunks)`` along ``dim`` (fewer if it runs out,
    as ``torch.chunk``; an empty dim gives ``chunks`` empty views)."""

def clamp(input, min=..., max=..., *, out=...) -> ShardedTensor:
    """Clamp into ``[min, max]`` (either may be a tensor)."""

def clamp_(input, *args, **kwargs) -> ShardedTensor:
    """``input.clamp_(*args, **kwargs)``: torch's top-level form of the tensor method ``clamp_``
    (in place see that method)."""

def clamp_max(input, max, *, out=...) -> ShardedTensor:
    """:func:`clamp` with an upper bound only (torch's ``clamp_max``)."""

def clamp_max_(input, *args, **kwargs) -> ShardedTensor:
    """``input.clamp_max_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``clamp_max_`` (in place see that method)."""

def clamp_min(input, min, *, out=...) -> ShardedTensor:
    """:func:`clamp` with a lower bound only (torch's ``clamp_min``)."""

def clamp_min_(input, *args, **kwargs) -> ShardedTensor:
    """``input.clamp_min_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``clamp_min_`` (in place see that method)."""

def clip(input, min=..., max=..., *, out=...) -> ShardedTensor:
    """Clamp into ``[min, max]`` (either may be a tensor)."""

def clip_(input, *args, **kwargs) -> ShardedTensor:
    """``input.clip_(*args, **kwargs)``: torch's top-level form of the tensor method ``clip_``
    (in place see that method)."""

def clone(x, *, out=...) -> ShardedTensor:
    """A copy with its own storage (same layout)."""

def column_stack(tensors, *, out=...) -> ShardedTensor:
    """Concatenate along dim 1, vectors (and scalars) as columns."""

def combinations(input, r=..., with_replacement=...) -> ShardedTensor:
    """Length-``r`` combinations of the elements of a 1-D tensor, as rows (the order of Python's
    ``itertools.combinations``; with ``with_replacement``, of
    ``combinations_with_replacement``)."""

def complex(real, imag, *, out=...) -> ShardedTensor:
    """The complex tensor ``real + i * imag`` (two tensors of one floating dtype)."""

def concat(tensors, dim=..., *, out=...) -> ShardedTensor:
    """Concatenate along ``dim`` (dtypes promote as in torch)."""

def concatenate(tensors, dim=..., *, out=...) -> ShardedTensor:
    """Concatenate along ``dim`` (dtypes promote as in torch)."""

def conj(input) -> ShardedTensor:
    """Complex conjugate (a copy; a real tensor is returned as it is)."""

def conj_physical(input) -> ShardedTensor:
    """Complex conjugate (a copy; a real tensor is returned as it is)."""

def constant_pad_nd(input, pad_, value=...) -> ShardedTensor:
    """``torch.constant_pad_nd``: pad (or, with negative amounts, crop) the last ``len(pad) //
    2`` dims with ``value``, ``pad = (left_last, right_last, left_prev, ...)``."""

def conv1d(
    input, weight, bias=..., stride=..., padding=..., dilation=..., groups=...
) -> ShardedTensor:
    """1-D cross-correlation of an (N, C, L) or (C, L) input with an (O, C/groups, k) weight, as
    ``torch.nn.functional.conv1d``."""

def conv2d(
    input, weight, bias=..., stride=..., padding=..., dilation=..., groups=...
) -> ShardedTensor:
    """2-D cross-correlation of an (N, C, H, W) or (C, H, W) input with an (O, C/groups, kH, kW)
    weight, as ``torch.nn.functional.conv2d``."""

def conv3d(
    input, weight, bias=..., stride=..., padding=..., dilation=..., groups=...
) -> ShardedTensor:
    """3-D cross-correlation of an (N, C, D, H, W) or (C, D, H, W) input with an (O, C/groups,
    kD, kH, kW) weight, as ``torch.nn.functional.conv3d``."""

def conv_transpose1d(
    input, weight, bias=..., stride=..., padding=..., output_padding=..., groups=..., dilation=...
) -> ShardedTensor:
    """1-D transposed convolution of an (N, C, L) or (C, L) input with a (C, O/groups, k)
    weight, as ``torch.nn.functional.conv_transpose1d``."""

def conv_transpose2d(
    input, weight, bias=..., stride=..., padding=..., output_padding=..., groups=..., dilation=...
) -> ShardedTensor:
    """2-D transposed convolution ("deconvolution") of an (N, C, H, W) or (C, H, W) input with a
    (C, O/groups, kH, kW) weight, as ``torch.nn.functional.conv_transpose2d``: the output is
    ``(H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1`` high."""

def conv_transpose3d(
    input, weight, bias=..., stride=..., padding=..., output_padding=..., groups=..., dilation=...
) -> ShardedTensor:
    """3-D transposed convolution of an (N, C, D, H, W) or (C, D, H, W) input with a (C,
    O/groups, kD, kH, kW) weight, as ``torch.nn.functional.conv_transpose3d``."""

def copysign(input, other, *, out=...) -> ShardedTensor:
    """``abs(input)`` with the sign of ``other``."""

def corrcoef(input) -> ShardedTensor:
    """Pearson correlation coefficients of the variables in the rows of ``input``."""

def cos(input, *, out=...) -> ShardedTensor:
    """Cosine."""

def cos_(input, *args, **kwargs) -> ShardedTensor:
    """``input.cos_(*args, **kwargs)``: torch's top-level form of the tensor method ``cos_`` (in
    place see that method)."""

def cosh(input, *, out=...) -> ShardedTensor:
    """Hyperbolic cosine."""

def cosh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.cosh_(*args, **kwargs)``: torch's top-level form of the tensor method ``cosh_``
    (in place see that method)."""

def count_nonzero(input, dim=..., *, out=...) -> ShardedTensor:
    """Number of non-zero elements (over all, a dim or a tuple of dims), int64."""

def cov(input, *, correction=..., fweights=..., aweights=...) -> ShardedTensor:
    """Covariance matrix of the variables in the rows of ``input`` (observations in the columns;
    a 1-D input is one variable), with frequency weights ``fweights`` (integers) and
    observation weights ``aweights`` (floats), as torch's."""

def cross(input, other, dim=..., *, out=...) -> ShardedTensor:
    """The 3-D cross product along ``dim`` (inputs broadcast; ``dim=None`` takes the first dim
    of size 3, as torch's deprecated default)."""

def cummax(input, dim, *, out=...) -> CummaxResult:
    """Running maximum along ``dim``: ``(values, indices)``; on ties and NaN the index is the
    last one reaching the value, as torch."""

def cummin(input, dim, *, out=...) -> CumminResult:
    """Running minimum along ``dim``: ``(values, indices)`` (ties: the last index)."""

def cumprod(input, dim, *, dtype=..., out=...) -> ShardedTensor:
    """Cumulative product along ``dim`` (integer and bool inputs give int64, as torch)."""

def cumsum(input, dim, *, dtype=..., out=...) -> ShardedTensor:
    """Cumulative sum along ``dim`` (integer and bool inputs give int64, as torch)."""

def cumulative_trapezoid(y, x=..., *, dx=..., dim=...) -> ShardedTensor:
    """Running trapezoidal integral along ``dim`` (one element fewer than ``y`` there)."""

def deg2rad(input, *, out=...) -> ShardedTensor:
    """Degrees to radians, ``input * pi / 180``."""

def deg2rad_(input, *args, **kwargs) -> ShardedTensor:
    """``input.deg2rad_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``deg2rad_`` (in place see that method)."""

def det(A) -> ShardedTensor:
    """Determinant of (a batch of) square matrices (a big split matrix: from its block LU)."""

def detach(input, *args, **kwargs) -> ShardedTensor:
    """``input.detach(*args, **kwargs)``: torch's top-level form of the tensor method ``detach``
    (see that method)."""

def detach_(input, *args, **kwargs) -> ShardedTensor:
    """``input.detach_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``detach_`` (in place see that method)."""

def diag(input, diagonal=..., *, out=...) -> ShardedTensor:
    """A 1-D input: the square matrix with it on diagonal ``diagonal``; a 2-D input: that
    diagonal of it."""

def diag_embed(input, offset=..., dim1=..., dim2=..., *, out=...) -> ShardedTensor:
    """Matrices (in dims ``dim1``, ``dim2`` of the result) whose diagonal ``offset`` is the last
    dim of ``input``; zero elsewhere."""

def diagflat(input, offset=...) -> ShardedTensor:
    """A 2-D tensor with the flattened ``input`` on diagonal ``offset``."""

def diagonal(input, offset=..., dim1=..., dim2=...) -> ShardedTensor:
    """The diagonal ``offset`` of the planes ``(dim1, dim2)``, as the last dim: a view of
    ``input`` when neither dim is split across shards (a tensor held whole, replicated, or
    split along other dims); otherwise a strided slice of the flattened planes, a view when
    they flatten in place (a matrix split by rows), else a copy."""

def diagonal_scatter(input, src, offset=..., dim1=..., dim2=..., *, out=...) -> ShardedTensor:
    """A copy of ``input`` with ``src`` written at ``input.diagonal(offset, dim1, dim2)`` (the
    diagonal's dim last in ``src``, as ``diagonal`` returns it)."""

def diff(input, n=..., dim=..., prepend=..., append=..., *, out=...) -> ShardedTensor:
    """``n``-th forward difference along ``dim`` (``prepend``/``append`` are concatenated first;
    bool tensors use xor, as torch)."""

def digamma(input, *, out=...) -> ShardedTensor:
    """``d/dx lgamma(x)`` (torch's values at the poles: -inf at 0, nan at the negative
    integers)."""

def dist(input, other, p=..., *, out=...) -> ShardedTensor:
    """``norm(input - other, p)`` (broadcast), a 0-d tensor; floating or complex only."""

def div(input, other, *, rounding_mode=..., out=...) -> ShardedTensor:
    """True division (integers give the default float dtype); ``rounding_mode="floor"`` floors
    and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay ints)."""

def divide(input, other, *, rounding_mode=..., out=...) -> ShardedTensor:
    """True division (integers give the default float dtype); ``rounding_mode="floor"`` floors
    and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay ints)."""

def dot(input, other, *, out=...) -> ShardedTensor:
    """Inner product of two 1-D tensors (a 0-d tensor)."""

def dropout(input, p, train) -> ShardedTensor:
    """``torch.dropout(input, p, train)``: :func:`dropout` with torch's top-level signature
    (``st.dropout``; ``p`` and ``train`` are required)."""

def dropout_(input, p, train) -> ShardedTensor:
    """``torch.dropout_(input, p, train)``: in-place ``st.dropout``."""

def dsplit(
    input, indices_or_sections=..., *, sections=..., indices=...
) -> tuple[ShardedTensor, ...]:
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims; an int must divide it."""

def dstack(tensors, *, out=...) -> ShardedTensor:
    """Concatenate along dim 2 after :func:`atleast_3d`."""

def einsum(equation, *operands) -> ShardedTensor:
    """Einstein summation, reduced to diagonals, transposes, sums and (batched) matmuls:
    repeated indices of one operand take its diagonal, lone indices are summed, operands
    contract pairwise left to right (each pair one batched matmul), then permute to the
    output order."""

def empty(
    *size, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=..., **kw
) -> ShardedTensor:
    """A tensor of the given size filled by ``empty`` (default dtype float32)."""

def empty_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``empty`` with the shape, dtype and layout of ``input`` (values are undefined)."""

def eq(input, other, *, out=...) -> ShardedTensor:
    """``input == other``."""

def equal(input, other) -> builtins.bool:
    """Whether both tensors have the same shape and elements (NaN differs from NaN), as a Python
    bool; dtypes may differ (``ones(2)`` equals ``ones(2, dtype=int64)``, as torch)."""

def erf(input, *, out=...) -> ShardedTensor:
    """The error function ``2/sqrt(pi) * int_0^x exp(-t^2) dt``."""

def erf_(input, *args, **kwargs) -> ShardedTensor:
    """``input.erf_(*args, **kwargs)``: torch's top-level form of the tensor method ``erf_`` (in
    place see that method)."""

def erfc(input, *, out=...) -> ShardedTensor:
    """``1 - erf(input)``, accurate where it is tiny (``erfc(10)`` ~ 2e-45)."""

def erfc_(input, *args, **kwargs) -> ShardedTensor:
    """``input.erfc_(*args, **kwargs)``: torch's top-level form of the tensor method ``erfc_``
    (in place see that method)."""

def erfinv(input, *, out=...) -> ShardedTensor:
    """The inverse of ``erf`` on [-1, 1] (+-inf at +-1, nan outside)."""

def exp(input, *, out=...) -> ShardedTensor:
    """``e ** input``."""

def exp2(input, *, out=...) -> ShardedTensor:
    """``2 ** input``."""

def exp2_(input, *args, **kwargs) -> ShardedTensor:
    """``input.exp2_(*args, **kwargs)``: torch's top-level form of the tensor method ``exp2_``
    (in place see that method)."""

def exp_(input, *args, **kwargs) -> ShardedTensor:
    """``input.exp_(*args, **kwargs)``: torch's top-level form of the tensor method ``exp_`` (in
    place see that method)."""

def expm1(input, *, out=...) -> ShardedTensor:
    """``exp(input) - 1``, accurate near 0."""

def expm1_(input, *args, **kwargs) -> ShardedTensor:
    """``input.expm1_(*args, **kwargs)``: torch's top-level form of the tensor method ``expm1_``
    (in place see that method)."""

def eye(
    n, m=..., *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=..., out=...
) -> ShardedTensor:
    """The ``n x m`` identity matrix."""

def feature_alpha_dropout(input, p, train) -> ShardedTensor:
    """``torch.feature_alpha_dropout(input, p, train)``: :func:`feature_alpha_dropout` with
    torch's top-level signature (``st.feature_alpha_dropout``)."""

def fill(input, value) -> ShardedTensor:
    """A new tensor of ``input``'s shape, dtype and layout with every element ``value`` (a
    number or a one-element tensor), as ``torch.fill``: the out-of-place ``fill_``, so the
    gradient is zero for ``input`` and the summed output gradient for a tensor ``value``."""

def fill_(input, *args, **kwargs) -> ShardedTensor:
    """``input.fill_(*args, **kwargs)``: torch's top-level form of the tensor method ``fill_``
    (in place see that method)."""

def fix(input, *, out=...) -> ShardedTensor:
    """Rounds toward zero."""

def fix_(input, *args, **kwargs) -> ShardedTensor:
    """``input.fix_(*args, **kwargs)``: torch's top-level form of the tensor method ``fix_`` (in
    place see that method)."""

def flatten(x, start_dim=..., end_dim=...) -> ShardedTensor:
    """Merge dims ``start_dim..end_dim`` into one (a view when possible)."""

def flip(x, dims, *more, out=...) -> ShardedTensor:
    """A copy with the order of elements reversed along ``dims`` (``x.flip(0, 1)`` too)."""

def fliplr(x) -> ShardedTensor:
    """Reverse dim 1 (a copy); ``x`` must be at least 2-d, as ``torch.fliplr``."""

def flipud(x) -> ShardedTensor:
    """Reverse dim 0 (a copy); ``x`` must be at least 1-d, as ``torch.flipud``."""

def float_power(input, exponent, *, out=...) -> ShardedTensor:
    """``input ** exponent`` computed in double precision (float64, complex128 if complex)."""

def floor(input, *, out=...) -> ShardedTensor:
    """Largest integer <= input."""

def floor_(input, *args, **kwargs) -> ShardedTensor:
    """``input.floor_(*args, **kwargs)``: torch's top-level form of the tensor method ``floor_``
    (in place see that method)."""

def floor_divide(input, other, *, out=...) -> ShardedTensor:
    """``input // other`` (floor, like torch and Python)."""

def fmax(input, other, *, out=...) -> ShardedTensor:
    """Elementwise maximum that ignores NaN (NaN only where both are)."""

def fmin(input, other, *, out=...) -> ShardedTensor:
    """Elementwise minimum that ignores NaN (NaN only where both are)."""

def fmod(input, other, *, out=...) -> ShardedTensor:
    """C's remainder: the sign of ``input`` (compare :func:`remainder`)."""

def frac(input, *, out=...) -> ShardedTensor:
    """``input - trunc(input)``."""

def frac_(input, *args, **kwargs) -> ShardedTensor:
    """``input.frac_(*args, **kwargs)``: torch's top-level form of the tensor method ``frac_``
    (in place see that method)."""

def frexp(input, *, out=...) -> _FrexpResult:
    """Split ``input`` into ``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``,
    ``0.5 <= |mantissa| < 1`` (0, inf and NaN keep themselves with exponent 0); the exponent
    is int32, as torch's."""

def from_numpy(
    a, *, shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """A sharded copy of NumPy array ``a`` (its dtype is kept)."""

def full(
    size,
    fill_value,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    out=...,
) -> ShardedTensor:
    """A tensor filled with ``fill_value``; its dtype follows the value (int -> int64)."""

def full_like(
    input, fill_value, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``full`` with the shape, dtype and layout of ``input``."""

def gather(input, dim, index, *, sparse_grad=..., out=...) -> ShardedTensor:
    """Values of ``input`` along ``dim`` at ``index`` (torch's ``gather``): ``out[i][j] =
    input[index[i][j]][j]`` for ``dim=0``. The result is laid out like ``index``; index
    blocks are routed to the workers owning the rows they name and the values routed back
    (the driver reads per-block counts: one wait). An out-of-range index raises
    :class:`~sharded.errors.IndexOutOfRange` naming it."""

def gcd(input, other, *, out=...) -> ShardedTensor:
    """Greatest common divisor."""

def gcd_(input, *args, **kwargs) -> ShardedTensor:
    """``input.gcd_(*args, **kwargs)``: torch's top-level form of the tensor method ``gcd_`` (in
    place see that method)."""

def ge(input, other, *, out=...) -> ShardedTensor:
    """``input >= other``."""

def geqrf(input) -> _GeqrfResult:
    """The QR factorization of (a batch of) ``m x n`` matrices in LAPACK's compact form (geqrf):
    ``(a, tau)``, ``a`` holding ``R`` on and above the diagonal and the Householder vectors
    below it (their unit heads implied), ``tau`` (``min(m, n)``) their scalars, so that ``Q =
    householder_product(a, tau)``. Batch dims may be split; a split matrix is gathered on one
    worker. Not differentiable (as torch; :func:`sharded.linalg.qr` is)."""

def ger(input, vec2, *, out=...) -> ShardedTensor:
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``."""

def get(name: str) -> ShardedTensor:
    """The current version of ``name``: a read-only tensor (in-place ops raise
    :class:`~sharded.errors.PublishedReadOnly`) that keeps its version while it lives."""

def get_autocast_dtype(device_type: str) -> Any:
    """The dtype the lower-precision ops cast to inside a ``device_type`` block (the default
    outside one: bfloat16 on CPU, float16 on CUDA)."""

def get_default_device() -> device:
    """The device creation functions use without ``device=``: always the CPU workers here."""

def get_default_dtype() -> DType:
    """The dtype of floating tensors created from Python floats (float32 unless changed)."""

def get_device(self) -> builtins.int:
    """The CUDA ordinal of the tensor's device, -1 on the CPU (as torch)."""

def get_num_threads() -> builtins.int:
    """The number of threads each worker's BLAS uses: the last :func:`set_num_threads`, else
    this process's BLAS pool size."""

def get_rng_state() -> ShardedTensor:
    """The generator's state as a uint8 tensor (16 bytes: seed and counter, little-endian);
    ``set_rng_state`` of it replays the same draws."""

def gradient(input, *, spacing=..., dim=..., edge_order=...) -> ShardedTensor:
    """Estimate the gradient of the function sampled by ``input`` along each dim of ``dim`` (all
    by default) as ``torch.gradient``: central differences inside, ``edge_order`` 1 or 2
    differences at the ends. ``spacing`` is a number (the step of every dim), a list of
    numbers (one per dim), or a list of 1-D tensors (the sample coordinates along each dim)."""

def greater(input, other, *, out=...) -> ShardedTensor:
    """``input > other``."""

def greater_equal(input, other, *, out=...) -> ShardedTensor:
    """``input >= other``."""

def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) -> ShardedTensor:
    """``grid_sample`` with torch's integer modes: ``interpolation_mode`` 0 bilinear, 1 nearest,
    2 bicubic; ``padding_mode`` 0 zeros, 1 border, 2 reflection."""

def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) -> ShardedTensor:
    """``grid_sampler`` of a 4-D input (N, C, H, W) only."""

def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners) -> ShardedTensor:
    """``grid_sampler`` of a 5-D input (N, C, D, H, W) only (no bicubic mode)."""

def gt(input, other, *, out=...) -> ShardedTensor:
    """``input > other``."""

def hamming_window(
    window_length,
    periodic=...,
    alpha=...,
    beta=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` of ``window_length`` samples
    (``periodic``: ``N = window_length + 1``), as ``torch.hamming_window``."""

def hann_window(
    window_length,
    periodic=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` of ``window_length`` samples
    (``periodic``: ``N = window_length + 1``), as ``torch.hann_window``."""

def hardshrink(input, lambd=...) -> ShardedTensor:
    """``x`` where ``|x| > lambd``, else 0."""

def heaviside(input, other, *, out=...) -> ShardedTensor:
    """Step function: 0 below zero, ``values`` at zero, 1 above."""

def histc(input, bins=..., min=..., max=..., *, out=...) -> ShardedTensor:
    """Histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both are
    equal; elements outside are ignored; the max lands in the last bin)."""

def histogram(input, bins, *, range=..., weight=..., density=...) -> HistogramResult:
    """Histogram with ``bins`` equal bins (over ``range`` or the data's range) or between the
    given sorted edges: ``(hist, bin_edges)``. ``density`` divides by the total and the bin
    widths."""

def histogramdd(input, bins, *, range=..., weight=..., density=...) -> _HistogramddResult:
    """Histogram of the points of ``input`` (..., D): ``(hist, bin_edges)`` with ``hist`` of
    shape (B0, ..., B(D-1)) in the input's dtype and ``bin_edges`` a tuple of D tensors, as
    ``torch.histogramdd``. ``bins``: an int (every dim), D ints (equal bins over ``range``,
    ``(min0, max0, min1, max1, ...)``, or the data's range) or D tensors of sorted edges. A
    point on a dim's last edge falls in its last bin; points outside are not counted.
    ``weight`` (the input's shape without its last dim) sums weights instead of counts;
    ``density`` divides by the total and the bins' volumes. No gradient (as torch's)."""

def hsplit(
    input, indices_or_sections=..., *, sections=..., indices=...
) -> tuple[ShardedTensor, ...]:
    """``tensor_split`` along dim 1 (dim 0 of a vector); an int must divide that dim."""

def hstack(tensors, *, out=...) -> ShardedTensor:
    """Concatenate along dim 1 (dim 0 for vectors)."""

def hypot(input, other, *, out=...) -> ShardedTensor:
    """``sqrt(input**2 + other**2)`` without overflow."""

def i0(input, *, out=...) -> ShardedTensor:
    """The modified Bessel function of the first kind of order 0."""

def i0_(input, *args, **kwargs) -> ShardedTensor:
    """``input.i0_(*args, **kwargs)``: torch's top-level form of the tensor method ``i0_`` (in
    place see that method)."""

def igamma(input, other, *, out=...) -> ShardedTensor:
    """The regularized lower incomplete gamma function ``P(input, other)``: ``int_0^other
    t^(input-1) e^-t dt / Gamma(input)`` (``torch.igamma``, ``st.special.gammainc``); both
    tensors, of a floating result dtype. The gradient flows to ``other`` only."""

def igammac(input, other, *, out=...) -> ShardedTensor:
    """The regularized upper incomplete gamma function ``Q = 1 - P`` (``torch.igammac``,
    ``st.special.gammaincc``), accurate where ``P`` is near 1."""

def imag(input) -> ShardedTensor:
    """The imaginary part: a real view of a complex tensor (complex tensors only)."""

def index_add(input, dim, index, source, *, alpha=..., out=...) -> ShardedTensor:
    """``input`` with ``alpha * source`` added at the rows ``index`` along ``dim`` (repeated
    rows accumulate)."""

def index_copy(input, dim, index, source, *, out=...) -> ShardedTensor:
    """``input`` with the rows ``index`` along ``dim`` replaced by ``source``'s rows."""

def index_fill(input, dim, index, value, *, out=...) -> ShardedTensor:
    """``input`` with the rows ``index`` along ``dim`` set to the scalar ``value``."""

def index_put(input, indices, values, accumulate=..., *, out=...) -> ShardedTensor:
    """``input`` with ``input[indices] = values`` (or ``+=`` with ``accumulate=True``, where
    repeated points accumulate), ``indices`` a tuple of integer tensors routed worker to
    worker (negative indices count from the end). Other keys (bool masks, ``None``) take the
    ``__setitem__`` path, which reads them on the driver. ``values`` must be a tensor, as in
    torch (:class:`~sharded.errors.DTypeError` otherwise; ``x[key] = 1.0`` takes scalars)."""

def index_reduce(input, dim, index, source, reduce, *, include_self=..., out=...) -> ShardedTensor:
    """``input`` with the slices of ``source`` reduced into ``input.select(dim, index[i])``
    (``reduce`` one of ``prod mean amax amin``; ``include_self=False`` leaves the old values
    of the slices written out; integer ``mean`` rounds down, as torch)."""

def index_select(input, dim, index, *, out=...) -> ShardedTensor:
    """The rows ``index`` of ``input`` along ``dim`` (torch's ``index_select``)."""

def info() -> dict:
    """The session: executor kind, nodes (with their resources), ``memory_bytes`` (the memory
    the workers have in all: no tensor larger is made, see :class:`st.OutOfMemory
    <sharded.errors.OutOfMemory>`; None if unknown), ``namespace`` (the Ray namespace of the
    workers, which tags the session's Ray metrics: see the README's "Monitoring"; None in
    process) and workers with stats."""

def init(
    address=...,
    num_workers=...,
    executor=...,
    devices=...,
    gpu_workers=...,
    gpu_fraction=...,
    namespace=...,
    min_shard_bytes=...,
    fusion=...,
    recovery=...,
    timeout=...,
    tls=...,
    workers_per_node=...,
) -> Session:
    """Start or connect the workers; idempotent (a second call returns the live session)."""

def initial_seed() -> builtins.int:
    """The seed of the generator (the last ``manual_seed``, else torch's default)."""

def inner(input, other, *, out=...) -> ShardedTensor:
    """Sum of products over the last dim of both: one matmul of the flattened free dims."""

def inverse(A, *, out=...) -> ShardedTensor:
    """The inverse of (a batch of) square matrices; singular ones raise :class:`LinAlgError`."""

def is_autocast_enabled(device_type: str = ...) -> builtins.bool:
    """Whether an enabled :class:`autocast` block of ``device_type`` is active in this thread
    (no argument: CUDA, as torch's)."""

def is_complex(input) -> builtins.bool:
    """Whether ``input``'s dtype is complex (``complex64`` or ``complex128``)."""

def is_conj(input) -> builtins.bool:
    """Always False: ``conj`` returns a materialised tensor, never a lazy conjugate view."""

def is_floating_point(input) -> builtins.bool:
    """Whether ``input``'s dtype is a floating-point one (not complex, as torch)."""

def is_grad_enabled() -> builtins.bool:
    """Whether ops are being recorded for backward."""

def is_inference_mode_enabled() -> builtins.bool:
    """Whether an ``inference_mode()`` block is active."""

def is_initialized() -> builtins.bool:
    """Whether a live session exists."""

def is_nonzero(input) -> builtins.bool:
    """Whether a one-element tensor is not zero (more or fewer elements: RuntimeError)."""

def is_same_size(input, other) -> builtins.bool:
    """Whether two tensors have the same shape."""

def is_signed(input) -> builtins.bool:
    """Whether the dtype is signed (bool and uint8: False; floats and complex: True)."""

def is_tensor(obj) -> builtins.bool:
    """Whether ``obj`` is a sharded tensor (``torch.is_tensor``)."""

def isclose(input, other, rtol=..., atol=..., equal_nan=...) -> ShardedTensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities are close; NaN
    is close to NaN only with ``equal_nan``). Both operands must have the same dtype, as in
    torch."""

def isfinite(input) -> ShardedTensor:
    """True where the element is neither inf nor NaN."""

def isin(elements, test_elements, *, assume_unique=..., invert=..., out=...) -> ShardedTensor:
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number);
    the values compare in their promoted dtype, NaN is in nothing."""

def isinf(input, *, out=...) -> ShardedTensor:
    """Whether each element is +inf or -inf (always False for integers and bools)."""

def isnan(input, *, out=...) -> ShardedTensor:
    """True where the element is NaN."""

def isneginf(input, *, out=...) -> ShardedTensor:
    """Whether each element is -inf."""

def isposinf(input, *, out=...) -> ShardedTensor:
    """Whether each element is +inf."""

def isreal(input) -> ShardedTensor:
    """Whether each element is real: its imaginary part is 0 (always True for real dtypes)."""

def istft(
    input,
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
    zero-pads the result; ``return_complex=True`` inverts a two-sided spectrum of a complex
    signal."""

def jit(fn=..., *, fallback: builtins.bool = ...) -> Any:
    """Compile ``fn`` (tensors in, tensors out) into a replayable program of worker commands."""

def kaiser_window(
    window_length,
    periodic=...,
    beta=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Kaiser window ``I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)`` with ``N`` the
    window length less one (``periodic``: the length), as ``torch.kaiser_window``."""

def kron(input, other, *, out=...) -> ShardedTensor:
    """The Kronecker product: block ``(i, j, ...)`` of the result is ``input[i, j, ...] *
    other``."""

def kthvalue(input, k, dim=..., keepdim=..., *, out=...) -> _KthValue:
    """The ``k``-th smallest element along ``dim`` (1-based) and its index, as ``(values,
    indices)``; NaN counts as the largest value."""

def lcm(input, other, *, out=...) -> ShardedTensor:
    """Least common multiple."""

def lcm_(input, *args, **kwargs) -> ShardedTensor:
    """``input.lcm_(*args, **kwargs)``: torch's top-level form of the tensor method ``lcm_`` (in
    place see that method)."""

def ldexp(input, other, *, out=...) -> ShardedTensor:
    """``input * 2**other`` (torch's definition: integers give the default float dtype)."""

def ldexp_(self, other) -> ShardedTensor:
    """In-place :func:`ldexp` (an integer tensor cannot hold the float result, as torch)."""

def le(input, other, *, out=...) -> ShardedTensor:
    """``input <= other``."""

def lerp(input, end, weight, *, out=...) -> ShardedTensor:
    """Linear interpolation ``input + weight * (end - input)``, as torch."""

def less(input, other, *, out=...) -> ShardedTensor:
    """``input < other``."""

def less_equal(input, other, *, out=...) -> ShardedTensor:
    """``input <= other``."""

def lgamma(input, *, out=...) -> ShardedTensor:
    """``log|Gamma(input)|`` (+inf at 0, -1, -2, ...)."""

def linspace(
    start,
    end,
    steps,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    out=...,
) -> ShardedTensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""

def list_published(namespace: str | None = ..., *, address: str | None = ...) -> list:
    """Names published in this session's namespace, or in ``namespace``, sorted."""

def load(path, *, shards=..., dim=..., layout=..., device=..., progress=...) -> Any:
    """Load what :func:`save` wrote to ``path``: the same structure, with new tensors."""

def log(input, *, out=...) -> ShardedTensor:
    """Natural logarithm."""

def log10(input, *, out=...) -> ShardedTensor:
    """Base-10 logarithm."""

def log10_(input, *args, **kwargs) -> ShardedTensor:
    """``input.log10_(*args, **kwargs)``: torch's top-level form of the tensor method ``log10_``
    (in place see that method)."""

def log1p(input, *, out=...) -> ShardedTensor:
    """``log(1 + input)``, accurate for small inputs."""

def log1p_(input, *args, **kwargs) -> ShardedTensor:
    """``input.log1p_(*args, **kwargs)``: torch's top-level form of the tensor method ``log1p_``
    (in place see that method)."""

def log2(input, *, out=...) -> ShardedTensor:
    """Base-2 logarithm."""

def log2_(input, *args, **kwargs) -> ShardedTensor:
    """``input.log2_(*args, **kwargs)``: torch's top-level form of the tensor method ``log2_``
    (in place see that method)."""

def log_(input, *args, **kwargs) -> ShardedTensor:
    """``input.log_(*args, **kwargs)``: torch's top-level form of the tensor method ``log_`` (in
    place see that method)."""

def log_softmax(input, dim, dtype=..., *, out=...) -> ShardedTensor:
    """``x - logsumexp(x, dim)``: log-probabilities without overflow (shifted by the max)."""

def logaddexp(input, other, *, out=...) -> ShardedTensor:
    """``log(exp(input) + exp(other))`` without overflow."""

def logaddexp2(input, other, *, out=...) -> ShardedTensor:
    """``log2(2**input + 2**other)`` without overflow."""

def logcumsumexp(input, dim, *, out=...) -> ShardedTensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably (floating and complex dtypes;
    complex ones fold one slice at a time, as torch)."""

def logdet(A) -> ShardedTensor:
    """``log(det(A))`` (NaN for a negative real determinant, as torch; the principal log
    ``log|det| + i arg(det)`` of a complex one)."""

def logical_and(input, other, *, out=...) -> ShardedTensor:
    """Elementwise logical AND."""

def logical_not(input, *, out=...) -> ShardedTensor:
    """Elementwise logical NOT."""

def logical_or(input, other, *, out=...) -> ShardedTensor:
    """Elementwise logical OR."""

def logical_xor(input, other, *, out=...) -> ShardedTensor:
    """Elementwise logical XOR."""

def logit(input, eps=..., *, out=...) -> ShardedTensor:
    """``log(p / (1 - p))``; a non-negative ``eps`` clamps ``p`` to ``[eps, 1 - eps]`` first
    (the gradient is 0 outside it, as torch's)."""

def logit_(input, *args, **kwargs) -> ShardedTensor:
    """``input.logit_(*args, **kwargs)``: torch's top-level form of the tensor method ``logit_``
    (in place see that method)."""

def logspace(
    start,
    end,
    steps,
    base=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    out=...,
) -> ShardedTensor:
    """``base ** linspace(start, end, steps)``."""

def logsumexp(input, dim=..., keepdim=..., *, out=...) -> ShardedTensor:
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow."""

def lt(input, other, *, out=...) -> ShardedTensor:
    """``input < other``."""

def lu(A, pivot=..., get_infos=...) -> tuple:
    """torch's older LU: ``(LU, pivots)`` packed as ``st.linalg.lu_factor``'s (int32 pivots),
    plus the int32 ``infos`` with ``get_infos=True``; singular matrices factor without
    raising either way (their ``infos`` name the first zero pivot)."""

def lu_solve(b, LU_data, LU_pivots) -> ShardedTensor:
    """torch's older ``lu_solve(b, LU_data, LU_pivots)``: the solution of ``A X = b`` from
    :func:`lu`'s factorization of ``A`` (``st.linalg.lu_solve`` with the arguments in torch's
    old order)."""

def lu_unpack(LU_data, LU_pivots, unpack_data=..., unpack_pivots=...) -> _LUUnpackResult:
    """``(P, L, U)`` with ``A = P L U`` from :func:`~sharded.linalg.lu_factor`'s packed
    ``LU_data`` (m x n) and ``LU_pivots``: ``P`` m x m, ``L`` m x k unit lower, ``U`` k x n
    upper (``k = min(m, n)``). ``unpack_data=False`` gives empty ``L`` and ``U``,
    ``unpack_pivots=False`` an empty ``P``. ``L`` and ``U`` are differentiable."""

def manual_seed(seed: builtins.int) -> None:
    """Seed the generator: later random tensors are reproducible for any sharding."""

def masked_fill(input, mask, value, *, out=...) -> ShardedTensor:
    """``input`` with ``value`` (a scalar or 0-d tensor) where ``mask`` is true; the mask
    broadcasts to ``input``. Shard-local."""

def masked_scatter(input, mask, source, *, out=...) -> ShardedTensor:
    """``input`` with its elements where ``mask`` is true replaced, in order, by the first
    elements of ``source`` (the driver reads one count per shard)."""

def masked_select(input, mask, *, out=...) -> ShardedTensor:
    """The elements of ``input`` where ``mask`` is true, as a 1-D tensor (both broadcast; the
    driver reads one count per shard)."""

def matmul(input, other, *, out=...) -> ShardedTensor:
    """Matrix product with torch's rules for 1-D and batched (broadcast) operands."""

def matrix_exp(A) -> ShardedTensor:
    """The matrix exponential: scaling and squaring of an order-18 Taylor polynomial (the
    largest 1-norm of the batch sets the scaling: one short read)."""

def matrix_power(A, n, *, out=...) -> ShardedTensor:
    """``A`` to the integer power ``n`` by repeated squaring; ``n = 0`` gives the identity, ``n
    < 0`` powers ``inv(A)`` (floating point only), as ``torch.linalg.matrix_power``."""

@overload
def max(input, dim: None = ..., keepdim=..., *, other=..., out=...) -> ShardedTensor:
    """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)`` along ``dim``;
    ``max(x, y)``: elementwise maximum."""

@overload
def max(input, dim: builtins.int, keepdim=..., *, other=..., out=...) -> MaxResult:
    """``max(x)``: the largest element; ``max(x, dim)``: ``(values, indices)`` along ``dim``;
    ``max(x, y)``: elementwise maximum."""

@overload
def max_pool1d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    return_indices: Literal[False] = ...,
) -> ShardedTensor:
    """1-D max pooling of an (N, C, L) or (C, L) input."""

@overload
def max_pool1d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    *,
    return_indices: Literal[True],
) -> tuple[ShardedTensor, ...]:
    """1-D max pooling of an (N, C, L) or (C, L) input."""

@overload
def max_pool2d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    return_indices: Literal[False] = ...,
) -> ShardedTensor:
    """2-D max pooling of an (N, C, H, W) or (C, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat H*W positions of the maxima)."""

@overload
def max_pool2d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    *,
    return_indices: Literal[True],
) -> tuple[ShardedTensor, ...]:
    """2-D max pooling of an (N, C, H, W) or (C, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat H*W positions of the maxima)."""

@overload
def max_pool3d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    return_indices: Literal[False] = ...,
) -> ShardedTensor:
    """3-D max pooling of an (N, C, D, H, W) or (C, D, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat D*H*W positions of the maxima)."""

@overload
def max_pool3d(
    input,
    kernel_size,
    stride=...,
    padding=...,
    dilation=...,
    ceil_mode=...,
    *,
    return_indices: Literal[True],
) -> tuple[ShardedTensor, ...]:
    """3-D max pooling of an (N, C, D, H, W) or (C, D, H, W) input (``stride`` defaults to
    ``kernel_size``; with ``return_indices`` also the flat D*H*W positions of the maxima)."""

def maximum(input, other, *, out=...) -> ShardedTensor:
    """Elementwise maximum (NaN propagates); both operands tensors, as torch (for a number use
    :func:`clamp`)."""

def mean(input, dim=..., keepdim=..., *, dtype=..., axis=..., out=...) -> ShardedTensor:
    """Arithmetic mean; floating inputs only (or give ``dtype=``), like torch."""

@overload
def median(input, dim: None = ..., keepdim=..., *, out=...) -> ShardedTensor:
    """torch's *lower* median: of all elements (a 0-d tensor) or along ``dim`` as ``(values,
    indices)``. A NaN in a row makes its median NaN (see :func:`nanmedian`)."""

@overload
def median(input, dim: builtins.int, keepdim=..., *, out=...) -> _Median:
    """torch's *lower* median: of all elements (a 0-d tensor) or along ``dim`` as ``(values,
    indices)``. A NaN in a row makes its median NaN (see :func:`nanmedian`)."""

def meshgrid(*tensors, indexing=...) -> tuple[ShardedTensor, ...]:
    """Coordinate grids: output ``i`` holds ``tensors[i]`` along dim ``i`` (``indexing="ij"``,
    the default) or with the first two dims swapped (``"xy"``)."""

@overload
def min(input, dim: None = ..., keepdim=..., *, other=..., out=...) -> ShardedTensor:
    """Like :func:`max`, for the minimum."""

@overload
def min(input, dim: builtins.int, keepdim=..., *, other=..., out=...) -> MinResult:
    """Like :func:`max`, for the minimum."""

def minimum(input, other, *, out=...) -> ShardedTensor:
    """Elementwise minimum (NaN propagates); both operands tensors, as torch (for a number use
    :func:`clamp`)."""

def mm(input, mat2, *, out=...) -> ShardedTensor:
    """Product of two 2-D tensors."""

def mode(input, dim=..., keepdim=..., *, out=...) -> _Mode:
    """The most frequent value along ``dim`` (the smallest on ties) and the index of its last
    occurrence, as ``(values, indices)``."""

def moveaxis(input, source, destination) -> ShardedTensor:
    """Move dims ``source`` to positions ``destination``; the others keep their order."""

def movedim(input, source, destination) -> ShardedTensor:
    """Move dims ``source`` to positions ``destination``; the others keep their order."""

def msort(input, *, out=...) -> ShardedTensor:
    """Values sorted along the first dim (``sort(input, dim=0).values``)."""

def mul(input, other, *, out=...) -> ShardedTensor:
    """Elementwise product."""

def multinomial(input, num_samples, replacement=..., *, generator=..., out=...) -> ShardedTensor:
    """``num_samples`` category indices per row of non-negative weights ``input`` (1-D or 2-D).
    Without replacement: the Gumbel top-k trick (the largest ``log w - log(-log u)``); with
    replacement: inverse-CDF search of uniforms in the rows' cumulative weights."""

def multiply(input, other, *, out=...) -> ShardedTensor:
    """Elementwise product."""

def mv(input, vec, *, out=...) -> ShardedTensor:
    """Matrix-vector product."""

def mvlgamma(input, p, *, out=...) -> ShardedTensor:
    """The multivariate log-gamma ``sum_i lgamma(input - i/2) + p(p-1)/4 log(pi)`` over ``i <
    p`` (``torch.special.multigammaln``); integers give the default float dtype."""

def nan_to_num(input, nan=..., posinf=..., neginf=..., *, out=...) -> ShardedTensor:
    """Replaces NaN with ``nan``, +inf with ``posinf`` and -inf with ``neginf`` (None: the
    dtype's largest / lowest finite value); integer and bool tensors come back unchanged."""

def nan_to_num_(input, *args, **kwargs) -> ShardedTensor:
    """``input.nan_to_num_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``nan_to_num_`` (in place see that method)."""

def nanmean(input, dim=..., keepdim=..., *, dtype=..., out=...) -> ShardedTensor:
    """Mean of the non-NaN elements (NaN where all are NaN); floating inputs only, as torch."""

@overload
def nanmedian(input, dim: None = ..., keepdim=..., *, out=...) -> ShardedTensor:
    """Like :func:`median`, ignoring NaN (an all-NaN row gives NaN)."""

@overload
def nanmedian(input, dim: builtins.int, keepdim=..., *, out=...) -> _NanMedian:
    """Like :func:`median`, ignoring NaN (an all-NaN row gives NaN)."""

def nanquantile(input, q, dim=..., keepdim=..., *, interpolation=..., out=...) -> ShardedTensor:
    """Like :func:`quantile`, ignoring NaN."""

def nansum(input, dim=..., keepdim=..., *, dtype=..., out=...) -> ShardedTensor:
    """Sum treating NaN as zero (integers and bools sum in int64, as :func:`sum`)."""

def narrow(x, dim, start, length) -> ShardedTensor:
    """The slice ``start:start+length`` of ``dim`` (a view)."""

def narrow_copy(input, dim, start, length, *, out=...) -> ShardedTensor:
    """``narrow`` as a new tensor (no storage shared), as ``torch.narrow_copy``."""

def ne(input, other, *, out=...) -> ShardedTensor:
    """``input != other``."""

def neg(input, *, out=...) -> ShardedTensor:
    """``-input``."""

def neg_(input, *args, **kwargs) -> ShardedTensor:
    """``input.neg_(*args, **kwargs)``: torch's top-level form of the tensor method ``neg_`` (in
    place see that method)."""

def negative(input, *, out=...) -> ShardedTensor:
    """``-input``."""

def negative_(input, *args, **kwargs) -> ShardedTensor:
    """``input.negative_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``negative_`` (in place see that method)."""

def nextafter(input, other, *, out=...) -> ShardedTensor:
    """The next representable value after ``input`` towards ``other``."""

@overload
def nonzero(input, *, as_tuple: Literal[False] = ..., out=...) -> ShardedTensor:
    """Indices of the non-zero elements of ``input`` in C order: an ``(n, ndim)`` int64 tensor,
    or with ``as_tuple=True`` one 1-D tensor per dim. Each shard finds its own; the driver
    reads one count per shard (a tensor split along a later dim is resharded by rows first,
    so that shard order is C order)."""

@overload
def nonzero(input, *, as_tuple: Literal[True], out=...) -> tuple[ShardedTensor, ...]:
    """Indices of the non-zero elements of ``input`` in C order: an ``(n, ndim)`` int64 tensor,
    or with ``as_tuple=True`` one 1-D tensor per dim. Each shard finds its own; the driver
    reads one count per shard (a tensor split along a later dim is resharded by rows first,
    so that shard order is C order)."""

def nonzero_static(input, *, size, fill_value=...) -> ShardedTensor:
    """The ``(size, ndim)`` int64 indices of the first ``size`` non-zero elements of ``input``
    in C order, as ``torch.nonzero_static``: ``nonzero``'s rows cut to ``size``, or padded
    with rows of ``fill_value``. ``nonzero`` reads one count per shard."""

def norm(self, p=..., dim=..., keepdim=..., dtype=..., *, out=...) -> ShardedTensor:
    """torch's ``Tensor.norm``: ``'fro'`` (default) and numbers are vector norms over ``dim``
    (all elements by default), ``'nuc'`` the nuclear norm of matrices."""

def normal(
    mean,
    std=...,
    size=...,
    *,
    generator=...,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """Normal samples: ``normal(mean_tensor, std_tensor_or_float)``, ``normal(mean_float,
    std_tensor)`` (the tensors broadcast, the result has their dtype) or ``normal(mean, std,
    size)``. As in torch, the gradient with respect to ``mean`` and ``std`` is zero."""

def not_equal(input, other, *, out=...) -> ShardedTensor:
    """``input != other``."""

def numel(input) -> builtins.int:
    """The number of elements of ``input`` (``torch.numel``)."""

def ones(
    *size, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=..., out=..., **kw
) -> ShardedTensor:
    """A tensor of the given size filled by ``ones`` (default dtype float32)."""

def ones_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``ones`` with the shape, dtype and layout of ``input``."""

def orgqr(input, tau) -> ShardedTensor:
    """torch's older name of :func:`sharded.linalg.householder_product`."""

def ormqr(input, tau, other, left=..., transpose=...) -> ShardedTensor:
    """``Q @ other`` for ``Q = H_0 H_1 ... H_{k-1}`` the product of the Householder reflectors
    stored below the diagonal of ``input`` (LAPACK's compact form, as :func:`geqrf` leaves
    it; ``H_i = I - tau_i v_i v_i^H``), as ``torch.ormqr`` (LAPACK's ormqr/unmqr): ``other @
    Q`` with ``left=False``, ``Q^H`` in place of ``Q`` with ``transpose=True``. ``Q`` is
    never formed: each reflector is a rank-one update of ``other``, so the gradient with
    respect to all three inputs is that of its products and batch dims stay split as they
    are."""

def outer(input, vec2, *, out=...) -> ShardedTensor:
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``."""

def pca_lowrank(A, q=..., center=..., niter=...) -> ShardedTensor:
    """Principal component analysis of (a batch of) ``m x n`` data matrices (``m`` samples,
    ``n`` features): :func:`svd_lowrank` of ``A`` less its column means (``center=False``: of
    ``A``), ``(U, S, V)`` with the principal directions in ``V``'s columns, as
    ``torch.pca_lowrank``. ``q`` defaults to ``min(6, m, n)`` and must not exceed ``min(m,
    n)``."""

def pdist(input, p=...) -> ShardedTensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of an (N, M) input, in
    row-major order of the pairs: ``N (N - 1) / 2`` values."""

def permute(x, *dims, **kw) -> ShardedTensor:
    """Reorder dims (a view; chunk bounds move with their dims, no data moves)."""

def pinverse(A, *, atol=..., rtol=..., hermitian=...) -> ShardedTensor:
    """Moore-Penrose pseudo-inverse through the SVD (singular values under the tolerance of
    :func:`matrix_rank` count as zero); with ``hermitian=True`` through ``eigh``, which reads
    the lower triangle only (as torch)."""

def poisson(input, generator=...) -> ShardedTensor:
    """Poisson samples with rates ``input`` (same shape and dtype), exact in distribution for
    every rate: CDF inversion below 10, Hoermann's PTRS rejection sampler from there on."""

def polar(abs, angle, *, out=...) -> ShardedTensor:
    """The complex tensor with modulus ``abs`` and argument ``angle``."""

def polygamma(n, input, *, out=...) -> ShardedTensor:
    """The ``n``-th derivative of ``digamma``: ``digamma`` for ``n = 0``, trigamma for 1,
    ``(-1)^(n+1) n! zeta(n + 1, input)`` above (torch's formula)."""

def positive(input) -> ShardedTensor:
    """``+input``: the tensor itself; bool tensors raise, as in torch."""

def pow(input, exponent, *, out=...) -> ShardedTensor:
    """``input ** exponent``."""

def prelu(input, weight) -> ShardedTensor:
    """``x`` where positive, else ``weight * x``; ``weight`` holds one slope or one per channel
    (dim 1; a 1-d input has one channel)."""

def prod(input, dim=..., keepdim=..., *, dtype=..., axis=..., out=...) -> ShardedTensor:
    """Product of elements (over all, one dim or a tuple of dims)."""

def promote_types(a: DType, b: DType) -> DType:
    """Promotion of two tensor dtypes, as ``torch.promote_types``."""

def publish(name: str, x: ShardedTensor) -> None:
    """Publish an immutable snapshot of ``x`` under ``name``, replacing any earlier version."""

def published_entries(namespace: str | None = ..., *, address: str | None = ...) -> list:
    """Every live version (current or still held): name, version, shape, dtype, nbytes, holders
    (client numbers), publisher. ``namespace`` and ``address`` read another namespace's
    registry, as in :func:`list_published` (no workers are started)."""

def put(input, index, source, accumulate=..., *, out=...) -> ShardedTensor:
    """A copy of ``input`` with ``source`` written at the flat (row-major) positions ``index``
    (negative ones count from the end; ``accumulate`` adds instead)."""

def qr(input, some=...) -> _QRLegacy:
    """torch's older QR: ``(Q, R)``, reduced unless ``some=False`` (then ``Q`` is square)."""

def quantile(input, q, dim=..., keepdim=..., *, interpolation=..., out=...) -> ShardedTensor:
    """The ``q``-quantiles (a float or a 1-D tensor, in ``[0, 1]``) along ``dim`` (all elements
    when None), torch's five ``interpolation`` modes; a 1-D ``q`` adds a leading dim. Rows
    holding NaN give NaN (see :func:`nanquantile`)."""

def rad2deg(input, *, out=...) -> ShardedTensor:
    """Radians to degrees, ``input * 180 / pi``."""

def rad2deg_(input, *args, **kwargs) -> ShardedTensor:
    """``input.rad2deg_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``rad2deg_`` (in place see that method)."""

def rand(
    *size,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    generator=...,
    out=...,
    **kw,
) -> ShardedTensor:
    """A tensor of the given size drawn by ``rand`` (default dtype float32), identical for every
    sharding after the same ``manual_seed``."""

def rand_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``rand`` with the shape, dtype and layout of ``input``."""

def randint(
    low=...,
    high=...,
    size=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    generator=...,
    out=...,
) -> ShardedTensor:
    """Integers uniform in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high,
    size)``."""

def randint_like(
    input,
    low=...,
    high=...,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
) -> ShardedTensor:
    """``randint`` with the shape, dtype and layout of ``input``: ``randint_like(x, high)`` or
    ``randint_like(x, low, high)``."""

def randn(
    *size,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    generator=...,
    out=...,
    **kw,
) -> ShardedTensor:
    """A tensor of the given size drawn by ``randn`` (default dtype float32), identical for
    every sharding after the same ``manual_seed``."""

def randn_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``randn`` with the shape, dtype and layout of ``input``."""

def randperm(
    n,
    *,
    dtype=...,
    shards=...,
    dim=...,
    layout=...,
    device=...,
    requires_grad=...,
    generator=...,
    out=...,
) -> ShardedTensor:
    """A random permutation of ``0 .. n-1`` (identical for any sharding)."""

def ravel(input) -> ShardedTensor:
    """The tensor flattened to 1-d (a view when possible), as ``torch.ravel``."""

def real(input) -> ShardedTensor:
    """The real part: a real view of a complex tensor (a real tensor itself)."""

def reciprocal(input, *, out=...) -> ShardedTensor:
    """``1 / input``."""

def reciprocal_(input, *args, **kwargs) -> ShardedTensor:
    """``input.reciprocal_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``reciprocal_`` (in place see that method)."""

def relu(input, *, out=...) -> ShardedTensor:
    """``max(input, 0)``."""

def relu_(input, *args, **kwargs) -> ShardedTensor:
    """``input.relu_(*args, **kwargs)``: torch's top-level form of the tensor method ``relu_``
    (in place see that method)."""

def remainder(input, other, *, out=...) -> ShardedTensor:
    """``input % other`` with the sign of ``other`` (Python semantics, as torch)."""

def renorm(input, p, dim, maxnorm, *, out=...) -> ShardedTensor:
    """Rescale each sub-tensor ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` to
    norm ``maxnorm`` (torch's factor ``maxnorm / (norm + 1e-7)``)."""

def repeat_interleave(input, repeats=..., dim=..., *, output_size=..., out=...) -> ShardedTensor:
    """Repeat each element ``repeats`` times (an int, or a tensor with one count per element
    along ``dim``) along ``dim`` (the flattened tensor when ``dim`` is None). With a tensor
    alone, ``repeat_interleave(r)`` repeats ``arange(len(r))``."""

def reshape(x, *sizes, shape=...) -> ShardedTensor:
    """A tensor of the new shape: a view when :func:`view` can share storage, otherwise a copy
    resharded worker to worker."""

def resolve_conj(input) -> ShardedTensor:
    """``input`` itself: ``conj`` already materialises (there is no lazy conjugate bit)."""

def resolve_neg(input) -> ShardedTensor:
    """``input`` itself: sharded has no lazy negation bit (``neg`` always materialises), so
    there is nothing to resolve."""

def result_type(tensor, other) -> DType:
    """``torch.result_type``: the dtype an arithmetic op on ``tensor`` and ``other`` (tensors or
    Python numbers) gives."""

def roll(x, shifts, dims=..., *, out=...) -> ShardedTensor:
    """Rotate elements along ``dims`` by ``shifts`` (flattened when ``dims`` is None). The
    result keeps ``x``'s layout: every shard receives the (at most two) pieces that rotate
    into it, worker to worker."""

def rot90(input, k=..., dims=..., *, out=...) -> ShardedTensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first towards the
    second)."""

def round(input, *, decimals=..., out=...) -> ShardedTensor:
    """Rounds half to even (``decimals``: to that many decimal places), as torch."""

def round_(input, *args, **kwargs) -> ShardedTensor:
    """``input.round_(*args, **kwargs)``: torch's top-level form of the tensor method ``round_``
    (in place see that method)."""

def row_stack(tensors, *, out=...) -> ShardedTensor:
    """Concatenate along dim 0 after :func:`atleast_2d` (vectors become rows)."""

def rrelu(input, lower=..., upper=..., training=..., inplace=...) -> ShardedTensor:
    """Leaky ReLU whose negative slope is drawn uniformly from ``[lower, upper]`` per element
    when ``training`` (from the counter-based generator), else ``(lower + upper) / 2``."""

def rrelu_(input, lower=..., upper=..., training=...) -> ShardedTensor:
    """In-place :func:`rrelu`."""

def rsqrt(input, *, out=...) -> ShardedTensor:
    """``1 / sqrt(input)``."""

def rsqrt_(input, *args, **kwargs) -> ShardedTensor:
    """``input.rsqrt_(*args, **kwargs)``: torch's top-level form of the tensor method ``rsqrt_``
    (in place see that method)."""

def rsub(input, other, *, alpha=..., out=...) -> ShardedTensor:
    """``other - alpha * input`` (``sub`` with its operands swapped)."""

def save(obj, path, *, progress=..., mode=...) -> None:
    """Save a tensor, or nested dicts/lists/tuples of tensors and plain values, to the directory
    ``path`` (a msgpack manifest plus one raw file per shard; see
    :mod:`sharded.io.checkpoint`)."""

def scalar_tensor(
    s, *, dtype=..., layout=..., device=..., pin_memory=..., requires_grad=...
) -> ShardedTensor:
    """A 0-d tensor holding the number ``s``, of ``dtype`` (default: the default float dtype,
    whatever the type of ``s``, as torch)."""

def scatter(input, dim, index, src=..., value=..., *, reduce=..., out=...) -> ShardedTensor:
    """``input`` with ``src`` (or the scalar ``value``) written at ``index`` along ``dim``
    (``reduce='add'|'multiply'`` combines instead); routed like :func:`gather`."""

def scatter_add(input, dim, index, src, *, out=...) -> ShardedTensor:
    """``input`` with ``src`` added at ``index`` along ``dim`` (repeats accumulate)."""

def scatter_reduce(input, dim, index, src, reduce, *, include_self=..., out=...) -> ShardedTensor:
    """``input`` with ``src`` reduced into it at ``index`` along ``dim``: ``reduce`` one of
    ``sum prod mean amax amin``; ``include_self=False`` leaves the old values of the points
    written out of the reduction (integer ``mean`` rounds down, as torch)."""

def searchsorted(
    sorted_sequence,
    input=...,
    *,
    out_int32=...,
    right=...,
    side=...,
    sorter=...,
    values=...,
    out=...,
) -> ShardedTensor:
    """Indices where the values ``input`` would be inserted into ``sorted_sequence`` (sorted
    along its last dim) to keep it sorted; ``right``/``side='right'`` puts equal values
    after. The values may be passed as ``input=`` (torch's keyword) or ``values=`` (its docs'
    name)."""

def seed() -> builtins.int:
    """Seed the generator with a non-deterministic number and return it (torch's ``seed``)."""

def select(x, dim, index) -> ShardedTensor:
    """The sub-tensor at ``index`` of ``dim`` (a view without that dim)."""

def select_scatter(input, src, dim, index, *, out=...) -> ShardedTensor:
    """A copy of ``input`` with ``src`` written at ``input.select(dim, index)``."""

def selu(input, inplace=...) -> ShardedTensor:
    """Scaled ELU with torch's fixed ``alpha`` and ``scale`` (self-normalizing)."""

def selu_(input) -> ShardedTensor:
    """In-place :func:`selu`."""

def set_default_dtype(dt) -> None:
    """Set the default floating dtype, like ``torch.set_default_dtype``."""

def set_num_threads(n) -> None:
    """Set the BLAS/OpenMP threads of every worker of the session (queued after the work before
    it) and of this process."""

def set_printoptions(
    precision=..., threshold=..., edgeitems=..., linewidth=..., profile=..., sci_mode=...
) -> None:
    """Set how tensors print, as torch's: ``precision`` (digits after the point), ``threshold``
    (more elements than this print summarized), ``edgeitems`` (elements shown at each end of
    a summarized dim), ``linewidth`` (kept for torch's signature), ``profile``
    (``"default"``, ``"short"`` or ``"full"``) and ``sci_mode`` (None: automatic)."""

def set_rng_state(new_state) -> None:
    """Restore a state returned by :func:`get_rng_state`."""

def sgn(input, *, out=...) -> ShardedTensor:
    """``sign`` (torch's name that extends to complex)."""

def shutdown() -> None:
    """Free every worker (and their shards); stop Ray if :func:`init` started it."""

def sigmoid(input, *, out=...) -> ShardedTensor:
    """``1 / (1 + exp(-input))``."""

def sigmoid_(input, *args, **kwargs) -> ShardedTensor:
    """``input.sigmoid_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``sigmoid_`` (in place see that method)."""

def sign(input, *, out=...) -> ShardedTensor:
    """-1, 0 or 1 by sign (0 for NaN)."""

def signbit(input, *, out=...) -> ShardedTensor:
    """True where the sign bit is set."""

def sin(input, *, out=...) -> ShardedTensor:
    """Sine."""

def sin_(input, *args, **kwargs) -> ShardedTensor:
    """``input.sin_(*args, **kwargs)``: torch's top-level form of the tensor method ``sin_`` (in
    place see that method)."""

def sinc(input, *, out=...) -> ShardedTensor:
    """``sin(pi x) / (pi x)``, 1 at 0."""

def sinc_(input, *args, **kwargs) -> ShardedTensor:
    """``input.sinc_(*args, **kwargs)``: torch's top-level form of the tensor method ``sinc_``
    (in place see that method)."""

def sinh(input, *, out=...) -> ShardedTensor:
    """Hyperbolic sine."""

def sinh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.sinh_(*args, **kwargs)``: torch's top-level form of the tensor method ``sinh_``
    (in place see that method)."""

def slice_scatter(input, src, dim=..., start=..., end=..., step=..., *, out=...) -> ShardedTensor:
    """A copy of ``input`` with ``src`` written at ``input[..., start:end:step, ...]`` (``step``
    positive, as torch)."""

def slogdet(A) -> SlogdetResult:
    """``(sign, log|det|)`` of (a batch of) square matrices."""

def softmax(input, dim, dtype=..., *, out=...) -> ShardedTensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max for stability."""

def sort(input, dim=..., descending=..., stable=..., *, out=...) -> _SortResult:
    """Sort along ``dim``: ``(values, indices)`` (a namedtuple, as torch's)."""

def split(x, split_size_or_sections=..., dim=..., *, split_size=...) -> tuple[ShardedTensor, ...]:
    """Views of consecutive pieces along ``dim``: pieces of a size, or of given sizes."""

def split_with_sizes(input, split_sizes, dim=...) -> tuple[ShardedTensor, ...]:
    """Views of consecutive pieces of ``split_sizes`` along ``dim``, which must add up to its
    size exactly (``torch.split_with_sizes``)."""

def sqrt(input, *, out=...) -> ShardedTensor:
    """Square root."""

def sqrt_(input, *args, **kwargs) -> ShardedTensor:
    """``input.sqrt_(*args, **kwargs)``: torch's top-level form of the tensor method ``sqrt_``
    (in place see that method)."""

def square(input, *, out=...) -> ShardedTensor:
    """``input * input``."""

def square_(input, *args, **kwargs) -> ShardedTensor:
    """``input.square_(*args, **kwargs)``: torch's top-level form of the tensor method
    ``square_`` (in place see that method)."""

def squeeze(x, dim=...) -> ShardedTensor:
    """Drop size-1 dims (all of them, or those in ``dim`` that have size 1); a view with the
    remaining dims' strides, as in torch."""

def stack(tensors, dim=..., *, out=...) -> ShardedTensor:
    """Join equal-shaped tensors along a new dim: ``cat`` of their ``unsqueeze(dim)``."""

def stats() -> dict:
    """Per-worker live shards and memory, bytes moved between workers, and recoveries from lost
    workers (``recoveries``: count, seconds, workers replaced, batches replayed, shards
    rebuilt; see the guide's "Fault tolerance"). The dict is a :class:`Stats`, which a
    notebook shows as a bar chart of the bytes on every worker."""

def std(
    input, dim=..., unbiased=..., keepdim=..., *, correction=..., axis=..., out=...
) -> ShardedTensor:
    """Standard deviation: ``sqrt(var(...))``."""

def std_mean(
    input, dim=..., unbiased=..., keepdim=..., *, correction=...
) -> tuple[ShardedTensor, ShardedTensor]:
    """``(std, mean)`` over the same dims, a tuple as torch's (``correction`` default 1)."""

def stft(
    input,
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

def sub(input, other, *, alpha=..., out=...) -> ShardedTensor:
    """``input - alpha * other``."""

def subtract(input, other, *, alpha=..., out=...) -> ShardedTensor:
    """``input - alpha * other``."""

def sum(input, dim=..., keepdim=..., *, dtype=..., axis=..., out=...) -> ShardedTensor:
    """Sum over all elements, one dim or a tuple of dims."""

def svd(input, some=..., compute_uv=...) -> _SVDLegacy:
    """torch's older SVD: ``(U, S, V)`` with ``input = U diag(S) V^H`` (``V``, not ``V^H``);
    ``some=False`` gives square ``U`` and ``V``; ``compute_uv=False`` gives zero ``U`` (m x
    m) and ``V`` (n x n), as torch."""

def svd_lowrank(A, q=..., niter=..., M=...) -> ShardedTensor:
    """A rank-``q`` approximate SVD ``(U, S, V)`` of (a batch of) ``m x n`` matrices ``A`` (of
    ``A - M`` when ``M`` is given, broadcast to ``A``'s shape), ``A ~ U diag(S) V^H``, by
    randomized subspace iteration (``niter`` rounds), as ``torch.svd_lowrank``. ``q=None``
    means 6. The test matrix is drawn from sharded's generator (seed it with
    ``st.manual_seed`` to repeat a result); the results are close to torch's, not equal."""

def swapaxes(x, axis0, axis1) -> ShardedTensor:
    """``transpose`` with NumPy's keyword names ``axis0``/``axis1`` (torch's alias)."""

def swapdims(x, dim0, dim1) -> ShardedTensor:
    """Swap two dims (a view)."""

def synchronize() -> None:
    """Wait until every queued op has run on every worker; raise the first op error."""

def t(x) -> ShardedTensor:
    """Transpose of a tensor of at most 2 dims (a view), as ``torch.t``."""

def take(input, index, *, out=...) -> ShardedTensor:
    """Elements of the flattened ``input`` at ``index`` (any shape; negative indices count from
    the end), read through the routed gather."""

def take_along_dim(input, indices, dim=..., *, out=...) -> ShardedTensor:
    """``input`` gathered along ``dim`` at ``indices`` broadcast against it (torch's
    ``take_along_dim``; ``dim=None`` reads the flattened input). With a ``dim``, an index in
    ``[-n, 0)`` counts from the end, as torch's (not with ``dim=None``, where torch refuses
    negatives too). An index outside ``[-n, n)`` raises
    :class:`~sharded.errors.IndexOutOfRange` naming the offending values (torch's CPU kernel
    does not check and returns whatever it reads)."""

def tan(input, *, out=...) -> ShardedTensor:
    """Tangent."""

def tan_(input, *args, **kwargs) -> ShardedTensor:
    """``input.tan_(*args, **kwargs)``: torch's top-level form of the tensor method ``tan_`` (in
    place see that method)."""

def tanh(input, *, out=...) -> ShardedTensor:
    """Hyperbolic tangent."""

def tanh_(input, *args, **kwargs) -> ShardedTensor:
    """``input.tanh_(*args, **kwargs)``: torch's top-level form of the tensor method ``tanh_``
    (in place see that method)."""

def tensor(
    data, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """A sharded tensor from nested lists, scalars, a NumPy array or a tensor (always a copy)."""

def tensor_split(
    input,
    indices_or_sections=...,
    dim=...,
    *,
    sections=...,
    indices=...,
    tensor_indices_or_sections=...,
) -> tuple[ShardedTensor, ...]:
    """Views of ``input`` cut along ``dim``: into ``n`` nearly equal pieces (the first ``size %
    n`` one longer) for an int ``n``, or at the given indices (Python slice semantics:
    ``x[:i0], x[i0:i1], ..., x[ik:]``), as ``torch.tensor_split``."""

def tensordot(a, b, dims=..., *, out=...) -> ShardedTensor:
    """Contract ``dims`` (an int: a's last and b's first dims; or two lists) as one matmul of
    the flattened free and contracted dims."""

def threshold(input, threshold, value, inplace=...) -> ShardedTensor:
    """``x`` where ``x > threshold``, else ``value``."""

def threshold_(input, threshold, value) -> ShardedTensor:
    """In-place :func:`threshold`."""

def tile(input, dims, *more) -> ShardedTensor:
    """``repeat`` with ``dims`` padded by leading ones when shorter than the tensor's rank."""

def topk(input, k, dim=..., largest=..., sorted=..., *, out=...) -> _TopK:
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their indices,
    as ``(values, indices)``. NaN counts as larger than every number (torch)."""

def trace(input, *, out=...) -> ShardedTensor:
    """The sum of the main diagonal of a matrix (integers sum in int64, as torch)."""

def trace_memory(on: builtins.bool = ..., *, received: builtins.bool = ...) -> None:
    """Start (zeroing the peaks) or stop tracing each worker's new allocations; while on,
    ``st.stats()["workers"][i]["traced_peak_bytes"]`` is the most extra memory worker ``i``
    held since the start (its live shards before the start do not count). Starting a trace
    empties the workers' pools of freed blocks (their caps kept), so that a block a kernel
    would take from them counts as the allocation it is."""

def transpose(x, dim0, dim1) -> ShardedTensor:
    """Swap two dims (a view)."""

def trapezoid(y, x=..., *, dx=..., dim=...) -> ShardedTensor:
    """Trapezoidal rule along ``dim``: sample points ``x`` (a tensor) or a constant spacing
    ``dx`` (default 1)."""

def trapz(y, x=..., *, dx=..., dim=...) -> ShardedTensor:
    """Alias of :func:`trapezoid` (torch's older name)."""

def triangular_solve(b, A, upper=..., transpose=..., unitriangular=...) -> _TriangularSolve:
    """torch's older triangular solver: ``(solution, cloned_coefficient)`` with ``solution`` the
    ``X`` of ``A X = b`` (``A^T X = b`` with ``transpose``), reading only the ``upper`` or
    lower triangle of ``A`` (its diagonal as ones with ``unitriangular``), and
    ``cloned_coefficient`` a copy of ``A``. Batch dims broadcast."""

def tril(input, diagonal=..., *, out=...) -> ShardedTensor:
    """The lower triangle of the last two dims (elements with ``col - row <= diagonal``); the
    rest is zero. Each shard masks its own block: no data moves."""

def tril_indices(
    row, col, offset=..., *, dtype=..., device=..., shards=..., dim=...
) -> ShardedTensor:
    """The (2, N) coordinates of the lower triangle of a ``row x col`` matrix, row-major."""

def triu(input, diagonal=..., *, out=...) -> ShardedTensor:
    """The upper triangle of the last two dims (elements with ``col - row >= diagonal``)."""

def triu_indices(
    row, col, offset=..., *, dtype=..., device=..., shards=..., dim=...
) -> ShardedTensor:
    """The (2, N) coordinates of the upper triangle of a ``row x col`` matrix, row-major."""

def true_divide(input, other, *, rounding_mode=..., out=...) -> ShardedTensor:
    """True division (integers give the default float dtype); ``rounding_mode="floor"`` floors
    and ``"trunc"`` rounds toward zero, both in the promoted dtype (ints stay ints)."""

def trunc(input, *, out=...) -> ShardedTensor:
    """Rounds toward zero."""

def trunc_(input, *args, **kwargs) -> ShardedTensor:
    """``input.trunc_(*args, **kwargs)``: torch's top-level form of the tensor method ``trunc_``
    (in place see that method)."""

def unbind(x, dim=...) -> tuple[ShardedTensor, ...]:
    """All slices along ``dim``, each a view without that dim."""

def unflatten(input, dim, sizes) -> ShardedTensor:
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""

def unique(input, sorted=..., return_inverse=..., return_counts=..., dim=...) -> Any:
    """Unique values of the flattened ``input``, sorted (as torch on CPU, also for
    ``sorted=False``), with the inverse ids (shaped like ``input``) and counts if asked."""

def unique_consecutive(input, return_inverse=..., return_counts=..., dim=...) -> Any:
    """Collapse runs of equal consecutive elements of the flattened ``input`` (or, with ``dim``,
    of equal consecutive slices along ``dim``); inverse ids (shaped like ``input``, or one
    per slice) and run lengths if asked. Any layout: runs that cross a shard border are
    joined."""

def unpublish(name: str) -> None:
    """Remove ``name``; its shards are freed once no client holds a tensor of it."""

def unravel_index(indices, shape) -> tuple[ShardedTensor, ...]:
    """The coordinates, one int64 tensor per dim of ``shape``, of flat ``indices`` into a
    C-ordered array of that shape (out-of-range indices wrap, as torch's arithmetic does)."""

def unsafe_chunk(x, chunks, dim=...) -> tuple[ShardedTensor, ...]:
    """``torch.unsafe_chunk``: :func:`chunk` (see :func:`unsafe_split`)."""

def unsafe_split(x, split_size_or_sections, dim=...) -> tuple[ShardedTensor, ...]:
    """``torch.unsafe_split``: :func:`split` (torch's variant skips view tracking for in-place
    safety checks; sharded's pieces are ordinary views)."""

def unsqueeze(x, dim) -> ShardedTensor:
    """Insert a size-1 dim at ``dim`` (a view; its stride is torch's: ``size * stride`` of the
    dim it lands before, 1 at the end)."""

def vander(x, N=..., increasing=...) -> ShardedTensor:
    """The Vandermonde matrix of a 1-D ``x``: column ``j`` is ``x ** (N - 1 - j)`` (or ``x **
    j`` when ``increasing``); integer and bool inputs give int64, as torch."""

def var(
    input, dim=..., unbiased=..., keepdim=..., *, correction=..., axis=..., out=...
) -> ShardedTensor:
    """Variance with ``correction`` (default 1, Bessel's) over the given dims."""

def var_mean(
    input, dim=..., unbiased=..., keepdim=..., *, correction=...
) -> tuple[ShardedTensor, ShardedTensor]:
    """``(var, mean)`` over the same dims, a tuple as torch's (``correction`` default 1)."""

def vdot(input, other, *, out=...) -> ShardedTensor:
    """``dot(conj(input), other)``: the inner product that conjugates its first operand."""

def view_as_complex(input) -> ShardedTensor:
    """A complex view of a float tensor whose last dim holds (real, imaginary) pairs."""

def view_as_real(input) -> ShardedTensor:
    """A real view of a complex tensor with a trailing dim of 2 (real, imaginary)."""

def vsplit(
    input, indices_or_sections=..., *, sections=..., indices=...
) -> tuple[ShardedTensor, ...]:
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims; an int must divide it."""

def vstack(tensors, *, out=...) -> ShardedTensor:
    """Concatenate along dim 0 after :func:`atleast_2d` (vectors become rows)."""

@overload
def where(condition, input: None = ..., other=..., *, out=...) -> tuple[ShardedTensor, ...]:
    """``input`` where ``condition`` is true, else ``other``; ``where(condition)`` alone is
    ``condition.nonzero(as_tuple=True)`` (as torch)."""

@overload
def where(
    condition, input: ShardedTensor | builtins.complex, other=..., *, out=...
) -> ShardedTensor:
    """``input`` where ``condition`` is true, else ``other``; ``where(condition)`` alone is
    ``condition.nonzero(as_tuple=True)`` (as torch)."""

def xlogy(input, other, *, out=...) -> ShardedTensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""

def xlogy_(input, *args, **kwargs) -> ShardedTensor:
    """``input.xlogy_(*args, **kwargs)``: torch's top-level form of the tensor method ``xlogy_``
    (in place see that method)."""

def zero_(input, *args, **kwargs) -> ShardedTensor:
    """``input.zero_(*args, **kwargs)``: torch's top-level form of the tensor method ``zero_``
    (in place see that method)."""

def zeros(
    *size, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=..., out=..., **kw
) -> ShardedTensor:
    """A tensor of the given size filled by ``zeros`` (default dtype float32)."""

def zeros_like(
    input, *, dtype=..., shards=..., dim=..., layout=..., device=..., requires_grad=...
) -> ShardedTensor:
    """``zeros`` with the shape, dtype and layout of ``input``."""
