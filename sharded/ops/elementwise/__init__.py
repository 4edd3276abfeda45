"""Elementwise ops: arithmetic, math functions, comparisons, rounding, special functions,
complex parts, clamp/where.

- ``prims``: the primitives by kind: ``arithmetic``, ``binary_math``, ``complex_``,
  ``exp_log``, ``logical`` (comparisons, logical and bitwise ops), ``rounding``,
  ``selection`` (clamp, where), ``special`` (erf, lgamma...), ``bessel`` (torch.special's
  Bessel functions, airy_ai, erfcx, igamma), ``orthopoly`` (the orthogonal polynomials),
  ``trig``, ``unary``;
- ``plan``: the planner, broadcasting and dtype rules shared by the primitives (``plan.halo``:
  operands a few rows off the output's cuts read their halo rows, no assembled copy);
- ``kernels``: the worker math of the special functions;
- ``derived``: ``compare`` (isclose, allclose, equal, isinf..., is_nonzero, is_signed),
  ``combine`` (positive, lerp, addcmul, addcdiv), ``inplace`` (torch's top-level in-place
  functions, ``st.abs_``...).

This ``__init__`` names the family's top-level ``st`` functions: ``__all__`` is the union of
its modules' (the roles are described in :mod:`sharded.ops`).
"""

from .derived import combine as _combine
from .derived import compare as _compare
from .derived import inplace as _inplace
from .derived.combine import *  # noqa: F403
from .derived.compare import *  # noqa: F403
from .derived.inplace import *  # noqa: F403
from .prims import arithmetic as _arithmetic
from .prims import bessel as _bessel
from .prims import binary_math as _binary_math
from .prims import complex_ as _complex_
from .prims import exp_log as _exp_log
from .prims import logical as _logical
from .prims import orthopoly as _orthopoly
from .prims import rounding as _rounding
from .prims import selection as _selection
from .prims import special as _special
from .prims import trig as _trig
from .prims import unary as _unary
from .prims.arithmetic import *  # noqa: F403
from .prims.bessel import *  # noqa: F403
from .prims.binary_math import *  # noqa: F403
from .prims.complex_ import *  # noqa: F403
from .prims.exp_log import *  # noqa: F403
from .prims.logical import *  # noqa: F403
from .prims.rounding import *  # noqa: F403
from .prims.selection import *  # noqa: F403
from .prims.special import *  # noqa: F403
from .prims.trig import *  # noqa: F403
from .prims.unary import *  # noqa: F403

__all__ = [
    *_arithmetic.__all__,
    *_bessel.__all__,
    *_binary_math.__all__,
    *_complex_.__all__,
    *_exp_log.__all__,
    *_logical.__all__,
    *_orthopoly.__all__,
    *_rounding.__all__,
    *_selection.__all__,
    *_special.__all__,
    *_trig.__all__,
    *_unary.__all__,
    *_compare.__all__,
    *_combine.__all__,
    *_inplace.__all__,
]
