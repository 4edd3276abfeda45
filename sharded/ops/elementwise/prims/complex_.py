"""Complex primitives: ``real`` and ``imag`` (views), ``view_as_real`` and ``view_as_complex``
(views), ``conj`` (``conj_physical``), ``angle`` and ``complex``, with ``polar``,
``resolve_conj``, ``is_conj`` and ``is_complex`` built on them.

Each primitive is one block: kernel, rules, planner, VJP and the public names it binds. The
views work shard by shard: a complex NumPy block's ``.real``/``.imag`` and its reinterpretation
as pairs of reals are NumPy views, so ``x.real[0] = 1`` writes into ``x``'s shards where they
are (torch's semantics), and no byte moves.

Gradients follow torch's convention for the user (``.grad`` of a complex leaf is
``dL/d(re) + i dL/d(im)``). Internally the engine carries the conjugate of that (JAX's
cotangent), under which a holomorphic op's rule is the plain chain rule ``g * f'(z)`` every
real op already has; :mod:`sharded.autograd` conjugates where gradients enter and leave. The
rules below are written in that internal convention.

``conj`` makes a copy (torch sets a lazy conjugate bit instead), so ``is_conj()`` is always
False and ``resolve_conj()`` returns the tensor itself.

This module also lists the primitives torch refuses for complex operands (orderings, rounding,
clamps, ``remainder``...): :func:`~sharded.core.dispatch.apply` raises
:class:`~sharded.errors.DTypeError` for them before anything is queued.
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dataflow import Operand, as_view, map_shards
from ....core.dispatch import apply, as_tensor, is_tensor, unbroadcast
from ....core.registry import PRIMITIVES, bind, kernel, no_complex, primitive, vjp
from ....errors import ArgumentError, DTypeError
from ....layout import Layout
from ....tensor import ShardedTensor
from .. import plan as E

__all__ = [
    "angle",
    "complex",
    "conj",
    "conj_physical",
    "imag",
    "is_complex",
    "is_floating_point",
    "is_conj",
    "polar",
    "real",
    "resolve_conj",
    "resolve_neg",
    "view_as_complex",
    "view_as_real",
]

# torch raises for complex operands of these primitives (its own wording where it differs)
no_complex("lt", "le", "gt", "ge", label="ordering comparison (<, <=, >, >=)")
no_complex("amax", "amin", "max_dim", "min_dim", label="max/min")
no_complex("argmax", "argmin", "maximum", "minimum", "fmax", "fmin", "sort", "topk")
no_complex("floor", "ceil", "round", "trunc", "frac", "sign", "signbit", "copysign")
no_complex("clamp", "relu", "relu_grad", label="clamp")
no_complex("remainder", "fmod", "floor_divide", "atan2", "hypot", "xlogy", "heaviside")
no_complex("gcd", "lcm", "nextafter", "cumarg", "mode", "quantile", "searchsorted")
no_complex("histc", "histogram_edges", "bincount", "unique", "unique_consecutive")
no_complex("unique_dim", "logaddexp2", "randperm", "poisson")
no_complex("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift")
no_complex("bitwise_right_shift")


def _conj(t):
    """``conj`` of a tensor (the identity on real ones)."""
    return apply("conj", t) if t.dtype.is_complex else t


# --------------------------------------------------------------------------- real, imag
def _part_spec(x, part):
    return tuple(x.shape), D.to_real(x.dtype)


@kernel
def complex_part(xp, a, part):
    """``a.real`` or ``a.imag``: NumPy views into the complex block."""
    return a.real if part == "real" else a.imag


@primitive("complex_part", kernels=[complex_part], kind="view", out_spec=_part_spec)
def _part_plan(ex, x, part) -> Operand:
    """The real or imaginary part of every shard, a view on the same worker."""
    op = map_shards(
        ex,
        x,
        x._layout,
        range(len(x._keys)),
        "complex_part",
        lambda s, j, shp: {"part": part},
        part,
    )
    return Operand(op.layout, D.to_real(x._dtype), op.keys)


@vjp("complex_part")
def _part_vjp(gs, node):
    # internal convention: re(z) = re(1 * z) pulls back g; im(z) = re(-i z) pulls back -i g
    g = gs[0]
    return (g * (1 if node.args[1] == "real" else -1j), None)


def _part(x, part):
    x = as_tensor(x)
    if not x.dtype.is_complex:
        if part == "real":
            return x  # torch: x.real of a real tensor is x itself
        raise DTypeError(
            f"imag is not implemented for tensors with non-complex dtypes (got {x.dtype.name})"
        )
    strides = [2 * s for s in x.stride()]
    off = 2 * x.storage_offset() + (part == "imag")
    return as_view(apply("complex_part", x, part), x, strides, off)


def real(input):
    """The real part: a real view of a complex tensor (a real tensor itself).

    Examples
    --------
    >>> import sharded as st
    >>> st.real(st.tensor([1 + 2j, 3 - 1j])).tolist()
    [1.0, 3.0]
    """
    return _part(input, "real")


def imag(input):
    """The imaginary part: a real view of a complex tensor (complex tensors only).

    Examples
    --------
    >>> import sharded as st
    >>> st.imag(st.tensor([1 + 2j, 3 - 1j])).tolist()
    [2.0, -1.0]
    """
    return _part(input, "imag")


def _setter(part):
    def set_part(self, value):
        _part(self, part).copy_(value)

    return set_part


# torch's ``x.real``/``x.imag`` are properties (assignable: ``x.imag = y`` writes the part)
ShardedTensor.real = property(real, _setter("real"), doc=real.__doc__)
ShardedTensor.imag = property(imag, _setter("imag"), doc=imag.__doc__)
PRIMITIVES["complex_part"].names.extend(("real", "imag"))


# --------------------------------------------------------------------------------- conj
E.define("conj", "conjugate", E.promote)


@vjp("conj")
def _conj_vjp(gs, node):
    return (_conj(gs[0]),)  # re(g * conj(z)) = re(conj(g) * z)


@bind("conj", "conj_physical", prim="conj")
def conj(input):
    """Complex conjugate (a copy; a real tensor is returned as it is).

    Examples
    --------
    >>> import sharded as st
    >>> st.conj(st.tensor([1 + 2j])).tolist()
    [(1-2j)]
    """
    x = as_tensor(input)
    return _conj(x)


conj_physical = conj
bind("conj_physical_", prim="conj")(E.inplace_unary("conj"))


@bind("resolve_conj")
def resolve_conj(input):
    """``input`` itself: ``conj`` already materialises (there is no lazy conjugate bit).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1j])
    >>> st.resolve_conj(x) is x
    True
    """
    return input


@bind("resolve_neg")
def resolve_neg(input):
    """``input`` itself: sharded has no lazy negation bit (``neg`` always materialises), so
    there is nothing to resolve.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([1.0])
    >>> st.resolve_neg(x) is x and x.resolve_neg() is x
    True
    """
    return input


@bind("is_conj", "is_neg")
def is_conj(input):
    """Always False: ``conj`` returns a materialised tensor, never a lazy conjugate view.

    Examples
    --------
    >>> import sharded as st
    >>> st.tensor([1j]).conj().is_conj()
    False
    """
    return False


@bind("is_complex")
def is_complex(input):
    """Whether ``input``'s dtype is complex (``complex64`` or ``complex128``).

    Examples
    --------
    >>> import sharded as st
    >>> st.is_complex(st.tensor([1j])), st.tensor([1.0]).is_complex()
    (True, False)
    """
    return input.dtype.is_complex


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating-point one (not complex, as torch).

    Examples
    --------
    >>> import sharded as st
    >>> st.is_floating_point(st.tensor([1.0])), st.is_floating_point(st.tensor([1]))
    (True, False)
    """
    return input.dtype.is_floating_point


# -------------------------------------------------------------------------------- angle
def _angle_rule(ops):
    """Complex -> its real type; floats keep theirs; integers and bool -> default float."""
    cast, out = E.floating(ops)
    return cast, D.to_real(out)


@E.named_kernel("angle")
def _angle_kernel(xp, a, cast=None, out=None):
    """``xp.angle``; for reals torch gives pi below 0 and 0 otherwise (-0.0 too), NaN kept."""
    a = E.cast(xp, a, cast)
    if a.dtype.kind == "c":
        return E.result(xp, xp.angle(a), out)
    r = xp.where(a < 0, xp.pi, 0.0)
    return E.result(xp, xp.where(xp.isnan(a), a, r), out)


E.define("angle", _angle_kernel, _angle_rule)


@vjp("angle", saves=(0,))
def _angle_vjp(gs, node):
    # d angle = re(-i conj(z) dz) / |z|^2; torch's gradient is 0 for real inputs and at 0
    (z,) = node.args
    g = gs[0]
    if not z.dtype.is_complex:
        return (g * 0,)
    a2 = z.real * z.real + z.imag * z.imag
    safe = E.call("where", a2 == 0, 1.0, a2)
    return (E.call("where", a2 == 0, 0.0, g * (-1j) * _conj(z) / safe),)


@bind("angle", prim="angle")
def angle(input):
    """The argument (phase) of each element in radians; real result.

    Examples
    --------
    >>> import sharded as st
    >>> st.angle(st.tensor([-1.0, 2.0])).tolist()
    [3.1415927410125732, 0.0]
    """
    return E.call("angle", input)


# ------------------------------------------------------------------------------ complex
def _complex_rule(ops):
    """torch: both parts one real floating dtype (no promotion), result its complex type."""
    dts = [o._dtype if E._sharded(o) else None for o in ops]
    if None in dts:
        raise DTypeError("complex(): real and imag must be tensors")
    a, b = dts
    if not (a.is_floating_point and b.is_floating_point):
        raise DTypeError(
            f"complex(): expected both inputs to be float16, float32 or float64 tensors "
            f"but got {a.name} and {b.name}"
        )
    if a != b:
        raise DTypeError(f"complex(): expected real and imag of one dtype, got {a.name}, {b.name}")
    if a == D.bfloat16:  # torch has no complex bfloat16
        raise DTypeError("complex(): expected float16, float32 or float64 tensors, got bfloat16")
    return a, D.to_complex(a)


@E.named_kernel("complex")
def _complex_kernel(xp, a, b, cast=None, out=None):
    """``a + i b`` in the complex dtype ``out``."""
    r = xp.empty(xp.broadcast_shapes(a.shape, b.shape), dtype=out)
    r.real, r.imag = a, b
    return r


E.define("complex", _complex_kernel, _complex_rule)


@vjp("complex")
def _complex_vjp(gs, node):
    # z = a + i b: re(g dz) = re(g) da - im(g) db
    re, im = node.args
    g = gs[0]
    return (
        unbroadcast(g.real, re),
        unbroadcast(-g.imag, im),
    )


def complex(real, imag):
    """The complex tensor ``real + i * imag`` (two tensors of one floating dtype).

    Examples
    --------
    >>> import sharded as st
    >>> st.complex(st.tensor([1.0]), st.tensor([2.0])).tolist()
    [(1+2j)]
    """
    if not (is_tensor(real) and is_tensor(imag)):
        raise DTypeError(
            f"complex(): real and imag must be tensors, got {type(real).__name__} and "
            f"{type(imag).__name__}"
        )
    return apply("complex", real, imag)


# polar = complex(abs * cos(angle), abs * sin(angle))
def polar(abs, angle):
    """The complex tensor with modulus ``abs`` and argument ``angle``.

    Examples
    --------
    >>> import sharded as st
    >>> st.polar(st.tensor([2.0]), st.tensor([0.0])).tolist()
    [(2+0j)]
    """
    _complex_rule((abs, angle))  # torch's dtype checks, before anything is queued
    return complex(abs * angle.cos(), abs * angle.sin())


# ------------------------------------------------------------------- view_as_real/complex
@kernel
def complex_view(xp, a, to):
    """Reinterpret a block: complex (...) -> real pairs (..., 2), or back."""
    if to == "real":
        return a[..., None].view(a.real.dtype)  # the size-1 axis makes any strides viewable
    return a.view(xp.result_type(a.dtype, 1j))[..., 0]


def _view_spec(x, to):
    if to == "real":
        return tuple(x.shape) + (2,), D.to_real(x.dtype)
    return tuple(x.shape)[:-1], D.to_complex(x.dtype)


@primitive("complex_view", kernels=[complex_view], kind="view", out_spec=_view_spec)
def _complex_view_plan(ex, x, to) -> Operand:
    """Each shard reinterpreted where it is: a trailing unsplit dim of 2 appears or goes."""
    lay = x._layout
    shape, dt = _view_spec(x, to)
    bounds = lay.bounds + ((0, 2),) if to == "real" else lay.bounds[:-1]
    out = Layout.from_bounds(shape, bounds, lay.workers, replicated=lay.is_replicated)
    op = map_shards(ex, x, out, range(len(x._keys)), "complex_view", lambda s, j, p: {"to": to}, to)
    return Operand(out, dt, op.keys)


@vjp("complex_view")
def _complex_view_vjp(gs, node):
    # pairs (a, b) of z = a + i b: the same pull-back as complex(a, b) and its inverse
    g = gs[0]
    if node.args[1] == "real":
        return (apply("complex", g[..., 0], -g[..., 1]), None)
    return (view_as_real(_conj(g)), None)


def view_as_real(input):
    """A real view of a complex tensor with a trailing dim of 2 (real, imaginary).

    Examples
    --------
    >>> import sharded as st
    >>> st.view_as_real(st.tensor([1 + 2j])).tolist()
    [[1.0, 2.0]]
    """
    if not input.dtype.is_complex:
        raise DTypeError(
            f"view_as_real is only supported for complex tensors, got {input.dtype.name}"
        )
    strides = [2 * s for s in input.stride()] + [1]
    return as_view(apply("complex_view", input, "real"), input, strides, 2 * input.storage_offset())


def view_as_complex(input):
    """A complex view of a float tensor whose last dim holds (real, imaginary) pairs.

    Examples
    --------
    >>> import sharded as st
    >>> st.view_as_complex(st.tensor([[1.0, 2.0]])).tolist()
    [(1+2j)]
    """
    dt = input.dtype
    if not dt.is_floating_point or dt in (D.float16, D.bfloat16):
        raise DTypeError(
            f"view_as_complex is only supported for float and double tensors, got {dt.name}"
        )
    if input.ndim == 0 or input.shape[-1] != 2:
        raise ArgumentError(
            f"view_as_complex: tensor must have a last dimension of size 2, got shape "
            f"{tuple(input.shape)}"
        )
    st_ = input.stride()
    if st_[-1] != 1 or any(s % 2 for s in st_[:-1]) or input.storage_offset() % 2:
        raise ArgumentError(
            f"view_as_complex: tensor must have a last dimension with stride 1 and even "
            f"strides otherwise, got strides {st_}"
        )
    if input._layout.bounds[-1] != (0, 2):
        raise ArgumentError(
            "view_as_complex: the last dim is split between shards; reshard it first "
            "(x.reshard(dim=0))"
        )
    strides = [s // 2 for s in st_[:-1]]
    out = apply("complex_view", input, "complex")
    return as_view(out, input, strides, input.storage_offset() // 2)
