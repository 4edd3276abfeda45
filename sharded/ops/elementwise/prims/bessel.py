"""torch.special's Bessel functions (``bessel_j0``, ``bessel_j1``, ``bessel_y0``, ``bessel_y1``,
``modified_bessel_i0/i1/k0/k1``, ``scaled_modified_bessel_k0/k1``, ``spherical_bessel_j0``),
``airy_ai`` and ``erfcx``, elementwise, and the regularized incomplete gamma functions
``igamma``/``igammac`` (``st.special.gammainc``/``gammaincc``) with their methods.

The kernels compute in float64 (:mod:`..kernels`: SciPy's routines, with torch's special
values) and return the result dtype: integers and bools give the default float dtype. As in
torch, only float32 and float64 results have a kernel (half and complex raise), and the
Bessel functions and ``airy_ai`` have no derivative: their results never require grad.
``erfcx`` and ``igamma``/``igammac`` (in ``x``) do; ``igamma``'s derivative in ``a`` raises.
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dispatch import needs, unbroadcast
from ....core.registry import bind, nondiff, vjp
from ....errors import AutogradError, UnsupportedDType
from .. import kernels as K
from .. import plan as E

__all__ = ["igamma", "igammac"]


def single_double(name):
    """:func:`.plan.floating` for op ``name``, whose kernel torch has for float32 and float64
    only ("bessel_j0_cpu" not implemented for 'Half' or 'ComplexFloat')."""

    def rule(ops):
        rt = E.operand_dtypes(ops)
        out = rt if D.category(rt) >= 2 else D.get_default_dtype()
        if out not in (D.float32, D.float64):
            raise UnsupportedDType(f"{name} is not implemented for {out.name}")
        return out, out

    rule.__name__ = "single_double"
    return rule


def _f64(name, f):
    """The kernel ``name``: ``f(xp, float64 array)``, cast to the output dtype."""

    def k(xp, a, cast=None, out=None):
        return E.result(xp, f(xp, xp.asarray(a).astype(xp.float64, copy=False)), out)

    return E.named_kernel(name)(k)


def _unary(name, f, doc, example, result):
    """The public function ``st.special.<name>(input)`` (a tensor only, as torch)."""
    E.define(name, _f64(name, f), single_double(name))
    ex = f"st.tensor({example}, dtype=st.float64)"

    def fn(input):
        E.require_tensors(name, (input,), ("input",))
        return E.call(name, input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{doc}

    Examples
    --------
    >>> import sharded as st
    >>> [round(v, 12) for v in st.special.{name}({ex}).tolist()]
    {result}
    """
    return fn


def _bessel(name):
    return lambda xp, x: K.bessel(xp, name, x)


# ------------------------------------------------------------------ the Bessel functions
bessel_j0 = _unary(
    "bessel_j0",
    _bessel("j0"),
    "The Bessel function of the first kind of order 0.",
    "[0.0, 1.0]",
    "[1.0, 0.765197686558]",
)
bessel_j1 = _unary(
    "bessel_j1",
    _bessel("j1"),
    "The Bessel function of the first kind of order 1.",
    "[0.0, 1.0]",
    "[0.0, 0.440050585745]",
)
bessel_y0 = _unary(
    "bessel_y0",
    _bessel("y0"),
    "The Bessel function of the second kind of order 0 (-inf at 0, nan below).",
    "[1.0]",
    "[0.088256964216]",
)
bessel_y1 = _unary(
    "bessel_y1",
    _bessel("y1"),
    "The Bessel function of the second kind of order 1 (-inf at 0, nan below).",
    "[1.0]",
    "[-0.7812128213]",
)
modified_bessel_i0 = _unary(
    "modified_bessel_i0",
    _bessel("i0"),
    "The modified Bessel function of the first kind of order 0 (as :func:`sharded.i0`).",
    "[0.0, 1.0]",
    "[1.0, 1.266065877752]",
)
modified_bessel_i1 = _unary(
    "modified_bessel_i1",
    _bessel("i1"),
    "The modified Bessel function of the first kind of order 1.",
    "[0.0, 1.0]",
    "[0.0, 0.565159103992]",
)
modified_bessel_k0 = _unary(
    "modified_bessel_k0",
    _bessel("k0"),
    "The modified Bessel function of the second kind of order 0 (inf at 0, nan below).",
    "[1.0]",
    "[0.421024438241]",
)
modified_bessel_k1 = _unary(
    "modified_bessel_k1",
    _bessel("k1"),
    "The modified Bessel function of the second kind of order 1 (inf at 0, nan below).",
    "[1.0]",
    "[0.601907230197]",
)
scaled_modified_bessel_k0 = _unary(
    "scaled_modified_bessel_k0",
    _bessel("k0e"),
    "``exp(x) K0(x)``, the scaled modified Bessel function of the second kind of order 0.",
    "[1.0]",
    "[1.144463079807]",
)
scaled_modified_bessel_k1 = _unary(
    "scaled_modified_bessel_k1",
    _bessel("k1e"),
    "``exp(x) K1(x)``, the scaled modified Bessel function of the second kind of order 1.",
    "[1.0]",
    "[1.636153486263]",
)
spherical_bessel_j0 = _unary(
    "spherical_bessel_j0",
    _bessel("sj0"),
    "The spherical Bessel function of the first kind of order 0, ``sin(x) / x`` (1 at 0).",
    "[0.0, 1.0]",
    "[1.0, 0.841470984808]",
)
airy_ai = _unary(
    "airy_ai",
    K.airy_ai,
    "The Airy function ``Ai`` (0 past 103.892, nan at +-inf, as torch).",
    "[0.0, 1.0]",
    "[0.355028053888, 0.135292416313]",
)
# torch defines no derivative for these: their results do not require grad
nondiff(
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
    "airy_ai",
)


# ------------------------------------------------------------------------------- erfcx
erfcx = _unary(
    "erfcx",
    K.erfcx,
    "The scaled complementary error function ``exp(x^2) erfc(x)``.",
    "[0.0, 1.0]",
    "[1.0, 0.427583576156]",
)


@vjp("erfcx", saves=(0,), save_out=True)
def _erfcx_vjp(gs, node):  # d erfcx = 2 x erfcx(x) - 2 / sqrt(pi)
    x, out = node.args[0], node.saved["out"][0]
    return (gs[0] * (2 * x * out - K.TWO_OVER_SQRT_PI),)


# ------------------------------------------------------------------------ igamma, igammac
def _igamma_rule(name):
    """torch's promotion for ``name``, floating results only ("igamma_cpu" not implemented
    for 'Long'; half precision is allowed)."""

    def rule(ops):
        rt = E.operand_dtypes(ops)
        if not rt.is_floating_point:
            raise UnsupportedDType(f"{name} is not implemented for {rt.name}")
        return rt, rt

    rule.__name__ = "floating_only"
    return rule


for _name, _upper in (("igamma", False), ("igammac", True)):

    def _k(xp, a, x, cast=None, out=None, upper=_upper):
        return E.result(xp, K.igamma(xp, a, x, upper), out)

    E.define(_name, E.named_kernel(_name)(_k), _igamma_rule(_name))


@vjp("igamma", "igammac", saves=(0, 1))
def _igamma_vjp(gs, node):
    """d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a) (torch's formula; Q = 1 - P); torch has no
    derivative in ``a``."""
    a, x = node.args
    if needs(a):
        raise AutogradError(
            f"{node.prim}: the derivative for 'input' (a) is not implemented (as torch)"
        )
    if not needs(x):
        return None, None
    d = ((a - 1) * x.log() - x - E.call("lgamma", a)).exp()
    return None, unbroadcast(gs[0] * (d if node.prim == "igamma" else -d), x)


def igamma(input, other):
    """The regularized lower incomplete gamma function ``P(input, other)``: ``int_0^other
    t^(input-1) e^-t dt / Gamma(input)`` (``torch.igamma``, ``st.special.gammainc``); both
    tensors, of a floating result dtype. The gradient flows to ``other`` only.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.tensor([1.0, 2.0], dtype=st.float64)
    >>> [round(v, 12) for v in st.igamma(a, st.tensor([1.0, 1.0], dtype=st.float64)).tolist()]
    [0.632120558829, 0.264241117657]
    """
    E.require_tensors("igamma", (input, other), ("input", "other"))
    return E.call("igamma", input, other)


def igammac(input, other):
    """The regularized upper incomplete gamma function ``Q = 1 - P`` (``torch.igammac``,
    ``st.special.gammaincc``), accurate where ``P`` is near 1.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.tensor([1.0], dtype=st.float64)
    >>> round(st.igammac(a, st.tensor([1.0], dtype=st.float64)).item(), 12)  # exp(-1)
    0.367879441171
    """
    E.require_tensors("igammac", (input, other), ("input", "other"))
    return E.call("igammac", input, other)


def _inplace(name):
    def op(self, other):
        E.require_tensors(name + "_", (self, other), ("self", "other"))
        return E.call_(name, self, other)

    op.__name__ = op.__qualname__ = name + "_"
    op.__doc__ = f"In-place :func:`{name}`: writes into this tensor's shards and returns it."
    return op


for _name, _f in (("igamma", igamma), ("igammac", igammac)):
    bind(_name, prim=_name)(_f)
    bind(_name + "_", prim=_name)(_inplace(_name))
