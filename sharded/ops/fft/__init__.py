"""Discrete Fourier transforms (``st.fft`` is :mod:`sharded.fft`).

Fixed roles: ``prims`` (each primitive one block: kernels, rules, planner, VJP,
bound names), ``kernels`` (worker code only), ``plan`` (planning shared by the
family's primitives), ``derived`` (compositions of other ops). This ``__init__`` names
the family's top-level ``st`` functions (``__all__``).
"""

from . import (
    derived,  # noqa: F401  (registers its primitives)
    prims,  # noqa: F401  (registers its primitives)
)

__all__ = []
