"""torch's calling rules for the top-level ``st`` functions: ``out=`` and tensor-only arguments.

:func:`wrap_all` wraps the names :mod:`sharded.ops` exports (``st.add``, ``st.cat``...), not
the ``ShardedTensor`` methods and operators bound to the same functions, nor the functions the
families call among themselves or :mod:`sharded.array_api` (whose standard takes Python
scalars). Two rules, each from a table of the names torch gives it:

- ``out=``: the result is computed as usual, then written into ``out`` (cast to its dtype,
  which the result's dtype must be castable to) and ``out`` is returned. An ``out`` of another
  shape is resized (a ``UserWarning`` when it had elements), as torch does.
- tensor-only arguments: torch's parser refuses a Python number where the signature says
  ``Tensor`` (``torch.eq(3, t)``); so do these, with :class:`DTypeError` (a ``TypeError``).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import warnings

from .. import dtypes as D
from ..errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, ShapeError
from ..grad_mode import is_grad_enabled
from ..tensor import ShardedTensor

# The top-level functions torch gives an ``out=`` keyword (from its operator schemas).
OUT = frozenset(
    """abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin angle
    any arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort asin
    asinh atan atan2 atanh baddbmm bernoulli bincount bitwise_and bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor block_diag bmm bucketize cat ceil
    cholesky cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip clone column_stack
    complex concat concatenate conj_physical copysign cos cosh count_nonzero cross cumprod
    cumsum deg2rad diag diag_embed diagonal_scatter diff digamma dist div divide dot dstack eq
    erf erfc erfinv exp exp2 expm1 eye fix flip float_power floor floor_divide fmax fmin fmod
    frac full gather gcd ge ger greater greater_equal gt heaviside histc hstack hypot i0 igamma
    igammac index_add index_copy index_fill index_put index_reduce index_select inner inverse
    isin isinf isnan isneginf isposinf kron lcm ldexp le lerp less less_equal lgamma linspace
    log log10 log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp logical_and logical_not
    logical_or logical_xor logit logspace logsumexp lt masked_fill masked_scatter masked_select
    matmul matrix_power max maximum mean median min minimum mm msort mul multinomial multiply
    mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow_copy ne neg negative
    nextafter nonzero norm not_equal ones outer polar polygamma pow prod put quantile rad2deg
    rand randint randn randperm reciprocal relu remainder renorm repeat_interleave roll rot90
    round row_stack rsqrt rsub scatter scatter_add scatter_reduce searchsorted select_scatter
    sgn sigmoid sign signbit sin sinc sinh slice_scatter softmax sqrt square stack std sub
    subtract sum take take_along_dim tan tanh tensordot trace tril triu true_divide trunc var
    vdot vstack where xlogy zeros sort topk kthvalue mode aminmax cummax cummin frexp
    """.split()
)

# Ops whose ``out`` must have the result's dtype exactly (torch checks it before computing),
# and ops that compute in ``out``'s dtype whatever it is (torch's sum into an int64 out).
EXACT_DTYPE = frozenset(
    """amax amin aminmax gather complex polar multinomial matmul mm bmm mv dot clamp clamp_min
    clamp_max clip index_select take masked_select""".split()
)
ANY_DTYPE = frozenset("sum prod nansum cumsum cumprod".split())

# Which leading positional arguments torch requires to be tensors (asked of torch 2.13 with a
# float and a tensor in each place): "first", "both", or "either" (one of the two suffices).
_FIRST = """allclose atleast_1d atleast_2d atleast_3d block_diag broadcast_tensors
    cartesian_prod clamp clamp_max clamp_min clip copysign eq fmod ge greater greater_equal gt
    histogram le less less_equal lt max meshgrid min nanquantile ne not_equal quantile rsub
    searchsorted trapezoid trapz cumulative_trapezoid"""
_BOTH = """complex cross dot equal ger inner isclose kron matmul outer polar slice_scatter
    vdot"""
# (maximum, fmax, gcd, heaviside, hypot, atan2, logaddexp, logical_and, nextafter, dist, ldexp,
# igamma, is_same_size... check it themselves, methods included: torch's methods refuse too)
_EITHER = """bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift
    float_power isin pow remainder xlogy xlog1py zeta"""
TENSOR_ARGS = {
    **dict.fromkeys(_FIRST.split(), "first"),
    **dict.fromkeys(_BOTH.split(), "both"),
    **dict.fromkeys(_EITHER.split(), "either"),
}

_NUMBER = (numbers.Number,)
_PLAIN = frozenset((int, float, bool, complex))


def _is_number(v) -> bool:
    t = type(v)  # the usual arguments first: isinstance against an ABC is 3x slower
    if t in _PLAIN:
        return True
    if t is ShardedTensor:
        return False
    return isinstance(v, _NUMBER) and not isinstance(v, ShardedTensor)


def _check_tensor_args(name, rule, params, args):
    lead = args[:2]
    nums = [i for i, v in enumerate(lead) if _is_number(v)]
    if rule == "first":
        nums = [i for i in nums if i == 0]
    elif rule == "either" and len(nums) < 2:
        nums = []
    if nums:
        # the message of the families' own check (elementwise.plan.require_tensors)
        i = nums[0]
        p = params[i] if i < len(params) else ("input", "other")[i]
        raise DTypeError(
            f"{name}(): argument '{p}' (position {i + 1}) must be a tensor, not "
            f"{type(lead[i]).__name__} {lead[i]!r} (Tensor methods and operators take numbers)"
        )


def _tensors_in(args, kwargs):
    for v in (*args, *kwargs.values()):
        if isinstance(v, ShardedTensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (x for x in v if isinstance(x, ShardedTensor))


def _same_view(a, b) -> bool:
    return (a.shape, a._strides, a._offset) == (b.shape, b._strides, b._offset)


def _root(t):
    while t._base is not None:
        t = t._base
    return t


def _span(t):
    """The element range ``[start, stop)`` of ``t`` in its root's storage (as torch's overlap
    check: two tensors of one storage whose ranges meet overlap)."""
    if t.numel() == 0:
        return (t._offset, t._offset)
    shape = tuple(t.shape)
    strides = t._strides
    if strides is None:  # contiguous
        strides, acc = [], 1
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= n
    lo = t._offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    hi = t._offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)
    return (lo, hi + 1)


def _overlap(a, b) -> bool:
    if a._storage is b._storage:
        return True
    if _root(a) is not _root(b):
        return False
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1


def _check_out(name, out, result, inputs, elementwise):
    """The checks torch makes on ``out`` before writing; returns ``out`` as a tuple."""
    results = result if isinstance(result, tuple) else (result,)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if isinstance(result, tuple) != isinstance(out, (tuple, list)) or len(outs) != len(results):
        want = (
            f"a tuple of {len(results)} ShardedTensors" if len(results) > 1 else "a ShardedTensor"
        )
        raise ArgumentTypeError(f"{name}(): out= must be {want}, got {type(out).__name__}")
    for o, r in zip(outs, results, strict=True):
        if not isinstance(o, ShardedTensor):
            raise ArgumentTypeError(
                f"{name}(): out= must be a ShardedTensor, got {type(o).__name__}"
            )
        exact = name in EXACT_DTYPE or isinstance(result, tuple)
        wrong = (exact and o.dtype != r.dtype) or not D.can_cast(r.dtype, o.dtype)
        if wrong and name not in ANY_DTYPE:
            raise DTypeError(
                f"{name}(): result type {r.dtype.name} can't be cast to the desired output "
                f"type {o.dtype.name}" + (" (this op needs out of the same dtype)" if exact else "")
            )
        for x in inputs:
            if _overlap(x, o) and not (elementwise and (x is o or _same_view(x, o))):
                raise ArgumentError(
                    f"{name}(): unsupported operation: out= (shape {list(o.shape)}) shares "
                    "memory with an input; some elements of the input and the written-to "
                    "tensor would refer to a single memory location. Pass a fresh tensor or "
                    "clone() the input"
                )
        if o.device != r.device:
            raise ArgumentError(
                f"{name}(): expected out tensor to have device {r.device}, got {o.device}"
            )
    return outs, results


def _write(name, o, r):
    if o.shape == r.shape:
        o.copy_(r)
        return
    if o._base is not None or o._strides is not None:
        raise ShapeError(
            f"{name}(): out= is a view of shape {list(o.shape)} and the result has shape "
            f"{list(r.shape)}; a view cannot be resized (pass a tensor of the result's shape)"
        )
    if o.numel() != 0:
        warnings.warn(
            f"{name}(): an out= tensor with elements was resized from shape {list(o.shape)} to "
            f"{list(r.shape)}; pass an out of the result's shape, or one with zero elements",
            UserWarning,
            stacklevel=3,
        )
    # torch resizes out's storage in place; sharded swaps in the result's shards (cast to
    # out's dtype), as ``x.data = y`` does, and counts it as an in-place change
    o._take_storage(r.to(o.dtype))
    o._vc[0] += 1


def wrap(name, fn, elementwise=False):
    """``fn`` with torch's top-level rules for ``name`` (``out=`` and tensor-only arguments)."""
    rule = TENSOR_ARGS.get(name)
    has_out = name in OUT
    if rule is None and not has_out:
        return fn
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = [p.name for p in sig.parameters.values() if p.kind in kinds] if sig else []

    @functools.wraps(fn)
    def top(*args, out=None, **kwargs):
        if rule is not None:
            _check_tensor_args(name, rule, params, args)
        if out is None:
            return fn(*args, **kwargs)
        inputs = list(_tensors_in(args, kwargs))
        if is_grad_enabled() and any(x.requires_grad for x in inputs):
            raise AutogradError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad"
            )
        result = fn(*args, **kwargs)
        outs, results = _check_out(name, out, result, inputs, elementwise)
        for o, r in zip(outs, results, strict=True):
            _write(name, o, r)
        return out

    if not has_out:

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            _check_tensor_args(name, rule, params, args)
            return fn(*args, **kwargs)

        return checked
    if sig is None:
        return top
    params = list(sig.parameters.values())
    if any(p.name == "out" for p in params):
        return fn
    kw = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    top.__signature__ = sig.replace(parameters=[*params[:at], kw, *params[at:]])
    return top


def wrap_all(namespace, names, elementwise_names=()):
    """Replace each of ``names`` in ``namespace`` (a module's globals) by :func:`wrap`'s; the
    aliases of one function (``st.clip`` and ``st.clamp``) stay one function."""
    ew = set(elementwise_names)
    done: dict = {}
    for n in names:
        f = namespace.get(n)
        if not callable(f) or isinstance(f, type):
            continue
        if id(f) not in done:
            # the function's own name where torch's tables know it (an alias's otherwise)
            own = getattr(f, "__name__", n)
            key = own if own in OUT or own in TENSOR_ARGS else n
            done[id(f)] = wrap(key, f, n in ew)
        namespace[n] = done[id(f)]
