"""Unary math primitives: exp, log, log1p, sqrt, sin, cos, tanh, sigmoid, relu (and its
backward relu_grad), isnan and isfinite, with their methods and in-place methods.

Each primitive is one block: a call of the family's factory :func:`..plan.define` (kernel, the
shared planner with its dtype rule, the public function and the names it binds), then its VJP.
Integer inputs of the float functions give the default float dtype, as torch.
"""

from __future__ import annotations

from .... import dtypes as D
from ....core.dispatch import apply
from ....core.registry import nondiff, vjp
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


def _out(node):
    return node.saved["out"][0]


_T0 = "st.tensor([0.0])"  # the examples' input


# ------------------------------------------------------------------------------ exp
exp = E.define("exp", "exp", E.floating, "``e ** input``.", _T0, "[1.0]")


@vjp("exp", save_out=True)
def _exp_vjp(gs, node):
    return (gs[0] * _out(node),)


# ------------------------------------------------------------------------------ log
log = E.define("log", "log", E.floating, "Natural logarithm.", "st.tensor([1.0])", "[0.0]")


@vjp("log", saves=(0,))
def _log_vjp(gs, node):
    return (gs[0] / node.args[0],)


# ---------------------------------------------------------------------------- log1p
log1p = E.define(
    "log1p", "log1p", E.floating, "``log(1 + input)``, accurate for small inputs.", _T0, "[0.0]"
)


@vjp("log1p", saves=(0,))
def _log1p_vjp(gs, node):
    return (gs[0] / (node.args[0] + 1),)


# ----------------------------------------------------------------------------- sqrt
sqrt = E.define("sqrt", "sqrt", E.floating, "Square root.", "st.tensor([1.0, 4.0])", "[1.0, 2.0]")


@vjp("sqrt", save_out=True)
def _sqrt_vjp(gs, node):
    return (gs[0] / (2 * _out(node)),)


# ------------------------------------------------------------------------------ sin
sin = E.define("sin", "sin", E.floating, "Sine.", _T0, "[0.0]")


@vjp("sin", saves=(0,))
def _sin_vjp(gs, node):
    return (gs[0] * cos(node.args[0]),)


# ------------------------------------------------------------------------------ cos
cos = E.define("cos", "cos", E.floating, "Cosine.", _T0, "[1.0]")


@vjp("cos", saves=(0,))
def _cos_vjp(gs, node):
    return (-gs[0] * sin(node.args[0]),)


# ----------------------------------------------------------------------------- tanh
tanh = E.define("tanh", "tanh", E.floating, "Hyperbolic tangent.", _T0, "[0.0]")


@vjp("tanh", save_out=True)
def _tanh_vjp(gs, node):
    y = _out(node)
    return (gs[0] * (1 - y * y),)


# -------------------------------------------------------------------------- sigmoid
@E.named_kernel("sigmoid")
def _sigmoid_kernel(xp, a, cast=None, out=None):
    a = E.cast(xp, a, cast)
    return E.cast(xp, 1 / (1 + xp.exp(-a)), out)


sigmoid = E.define(
    "sigmoid", _sigmoid_kernel, E.floating, "``1 / (1 + exp(-input))``.", _T0, "[0.5]"
)


@vjp("sigmoid", save_out=True)
def _sigmoid_vjp(gs, node):
    y = _out(node)
    return (gs[0] * y * (1 - y),)


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


relu = E.define(
    "relu", _relu_kernel, _relu_rule, "``max(input, 0)``.", "st.tensor([-1.0, 2.0])", "[0.0, 2.0]"
)


@vjp("relu", saves=(0,))
def _relu_vjp(gs, node):
    return (apply("relu_grad", gs[0], node.args[0]),)


# ------------------------------------------------------------------------ relu_grad
@E.named_kernel("relu_grad")
def _relu_grad_kernel(xp, g, a, cast=None, out=None):
    """``g`` where ``a > 0``, else 0: the ReLU backward in one pass."""
    return E.cast(xp, g * (a > 0), out)


E.define("relu_grad", _relu_grad_kernel, E.promote)  # relu_grad(g, a): g masked by a > 0


@vjp("relu_grad", saves=(1,))
def _relu_grad_vjp(gs, node):  # linear in g; zero almost everywhere in a
    return apply("relu_grad", gs[0], node.args[1]), None


# ------------------------------------------------------------------- isnan, isfinite
isnan = E.define(
    "isnan",
    "isnan",
    E.logical,
    "True where the element is NaN.",
    "st.tensor([1.0, float('nan')])",
    "[False, True]",
    inplace=False,
)
isfinite = E.define(
    "isfinite",
    "isfinite",
    E.logical,
    "True where the element is neither inf nor NaN.",
    "st.tensor([1.0, float('inf')])",
    "[True, False]",
    inplace=False,
)
nondiff("isnan", "isfinite")  # bool results: no gradient
