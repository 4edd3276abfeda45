"""torch's top-level in-place functions (``st.abs_(x)``, ``st.clamp_(x, 0, 1)``,
``st.fill_(x, v)``...) and ``st.detach``: each calls the tensor method of the same name, so
the method stays the one implementation (generated here from one table).

Examples
--------
>>> import sharded as st
>>> x = st.tensor([-1.0, 4.0])
>>> st.abs_(x) is x, x.tolist()
(True, [1.0, 4.0])
>>> st.sqrt_(x).tolist(), st.fill_(x, 2.0).tolist(), st.zero_(x).tolist()
([1.0, 2.0], [2.0, 2.0], [0.0, 0.0])
"""

from __future__ import annotations

from ....core.dispatch import is_tensor
from ....errors import DTypeError

# the in-place methods torch also offers as ``torch.<name>(input, ...)``
_NAMES = (
    "abs_ acos_ acosh_ asin_ asinh_ atan_ atanh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ "
    "arctanh_ ceil_ clamp_ clamp_min_ clamp_max_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ exp_ "
    "exp2_ expm1_ fix_ floor_ frac_ gcd_ lcm_ i0_ log_ log10_ log1p_ log2_ logit_ nan_to_num_ "
    "neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ "
    "square_ tan_ tanh_ trunc_ xlogy_ zero_ fill_ detach detach_"
).split()


def _forward(name):
    """``st.<name>(input, *args, **kwargs)``: ``input.<name>(*args, **kwargs)``."""

    def f(input, *args, **kwargs):
        if not is_tensor(input):
            raise DTypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__module__ = __name__
    kind = "" if name in ("detach",) else "in place "
    f.__doc__ = (
        f"``input.{name}(*args, **kwargs)``: torch's top-level form of the tensor method "
        f"``{name}`` ({kind}see that method)."
    )
    return f


for _n in _NAMES:
    globals()[_n] = _forward(_n)

__all__ = list(_NAMES)
