"""Unary math primitives: exp, log, log1p, sqrt, sin, cos, tanh, sigmoid, relu (and its
backward relu_grad), isnan and isfinite, with their methods and in-place methods.

Each primitive is one block: its kernel (named like the primitive), its planner (the shared
elementwise rule of :mod:`.elementwise`, the one op module this family imports), its VJP and
the public function with the names it binds. Integer inputs of the float functions give the
default float dtype, as torch.
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dispatch import apply
from ....core.registry import bind, nondiff, primitive, vjp
from ....errors import DTypeError
from .. import plan as E

__all__ = [
    "cos",
    "exp",
    "isfinite",
    "isnan",
    "log",
    "log1p",
    "relu",
    "sigmoid",
    "sin",
    "sqrt",
    "tanh",
]


def _unary(name, fn, rule=E.floating, kernel=None):
    """Register unary primitive ``name``: kernel ``xp.<fn>`` (or ``kernel``), the shared
    planner with ``rule``."""
    k = kernel if kernel is not None else fn

    def plan(ex, x, target=None):
        return E.plan_rule(ex, name, rule, (x,), target)

    return E.register(name, k, rule, plan)


def _public(name, doc, example, result, inplace=True):
    """The public function ``name`` (also the method ``x.name()``; ``x.name_()`` in place)."""

    def f(input):
        return E.call(name, input)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{doc}

    Examples
    --------
    >>> import sharded as st
    >>> st.{name}(st.tensor({example})).tolist()
    {result}
    """
    bind(name, prim=name)(f)
    if inplace:
        bind(name + "_", prim=name)(E.inplace_unary(name))
    return f


def _out(node):
    return node.saved["out"][0]


# ------------------------------------------------------------------------------ exp
_unary("exp", "exp")


@vjp("exp", save_out=True)
def _exp_vjp(gs, node):
    return (gs[0] * _out(node),)


exp = _public("exp", "``e ** input``.", "[0.0]", "[1.0]")


# ------------------------------------------------------------------------------ log
_unary("log", "log")


@vjp("log", saves=(0,))
def _log_vjp(gs, node):
    return (gs[0] / node.args[0],)


log = _public("log", "Natural logarithm.", "[1.0]", "[0.0]")


# ---------------------------------------------------------------------------- log1p
_unary("log1p", "log1p")


@vjp("log1p", saves=(0,))
def _log1p_vjp(gs, node):
    return (gs[0] / (node.args[0] + 1),)


log1p = _public("log1p", "``log(1 + input)``, accurate for small inputs.", "[0.0]", "[0.0]")


# ----------------------------------------------------------------------------- sqrt
_unary("sqrt", "sqrt")


@vjp("sqrt", save_out=True)
def _sqrt_vjp(gs, node):
    return (gs[0] / (2 * _out(node)),)


sqrt = _public("sqrt", "Square root.", "[1.0, 4.0]", "[1.0, 2.0]")


# ------------------------------------------------------------------------------ sin
_unary("sin", "sin")


@vjp("sin", saves=(0,))
def _sin_vjp(gs, node):
    return (gs[0] * cos(node.args[0]),)


sin = _public("sin", "Sine.", "[0.0]", "[0.0]")


# ------------------------------------------------------------------------------ cos
_unary("cos", "cos")


@vjp("cos", saves=(0,))
def _cos_vjp(gs, node):
    return (-gs[0] * sin(node.args[0]),)


cos = _public("cos", "Cosine.", "[0.0]", "[1.0]")


# ----------------------------------------------------------------------------- tanh
_unary("tanh", "tanh")


@vjp("tanh", save_out=True)
def _tanh_vjp(gs, node):
    y = _out(node)
    return (gs[0] * (1 - y * y),)


tanh = _public("tanh", "Hyperbolic tangent.", "[0.0]", "[0.0]")


# -------------------------------------------------------------------------- sigmoid
@E.named_kernel("sigmoid")
def _sigmoid_kernel(xp, a, cast=None, out=None):
    a = E.cast(xp, a, cast)
    return E.cast(xp, 1 / (1 + xp.exp(-a)), out)


_unary("sigmoid", None, kernel=_sigmoid_kernel)


@vjp("sigmoid", save_out=True)
def _sigmoid_vjp(gs, node):
    y = _out(node)
    return (gs[0] * y * (1 - y),)


sigmoid = _public("sigmoid", "``1 / (1 + exp(-input))``.", "[0.0]", "[0.5]")


# ----------------------------------------------------------------------------- relu
@E.named_kernel("relu")
def _relu_kernel(xp, a, cast=None, out=None):
    # maximum(0, a), zero first: where the two compare equal it returns a, so -0.0 stays
    # -0.0 (and NaN stays NaN), as torch; a third of the time of where(a < 0, 0, a)
    return E.cast(xp, xp.maximum(a.dtype.type(0), a), out)


def _relu_rule(ops):
    """:func:`.elementwise.promote` without bool (torch: "Boolean inputs not supported")."""
    rt = E.operand_dtypes(ops)
    if rt == D.bool_:
        raise DTypeError("relu: Boolean inputs not supported for relu")
    return rt, rt


_unary("relu", None, _relu_rule, kernel=_relu_kernel)


@vjp("relu", saves=(0,))
def _relu_vjp(gs, node):
    return (apply("relu_grad", gs[0], node.args[0]),)


relu = _public("relu", "``max(input, 0)``.", "[-1.0, 2.0]", "[0.0, 2.0]")


# ------------------------------------------------------------------------ relu_grad
@E.named_kernel("relu_grad")
def _relu_grad_kernel(xp, g, a, cast=None, out=None):
    """``g`` where ``a > 0``, else 0: the ReLU backward in one pass."""
    return E.cast(xp, g * (a > 0), out)


@primitive(
    "relu_grad",
    kernels=[_relu_grad_kernel],
    out_spec=E.spec(E.promote),
    kind="elementwise",
)
def _relu_grad_plan(ex, g, a, target=None):
    """Elementwise ``relu_grad`` planner (promote): the gradient ``g`` masked by ``a > 0``."""
    return E.plan_rule(ex, "relu_grad", E.promote, (g, a), target)


@vjp("relu_grad", saves=(1,))
def _relu_grad_vjp(gs, node):  # linear in g; zero almost everywhere in a
    return apply("relu_grad", gs[0], node.args[1]), None


# ------------------------------------------------------------------- isnan, isfinite
_unary("isnan", "isnan", E.logical)
_unary("isfinite", "isfinite", E.logical)
nondiff("isnan", "isfinite")  # bool results: no gradient

isnan = _public(
    "isnan", "True where the element is NaN.", "[1.0, float('nan')]", "[False, True]", inplace=False
)
isfinite = _public(
    "isfinite",
    "True where the element is neither inf nor NaN.",
    "[1.0, float('inf')]",
    "[True, False]",
    inplace=False,
)
