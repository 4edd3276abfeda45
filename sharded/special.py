"""``st.special``: torch.special's functions that sharded has (the same objects as the
top-level ``st.erf``... ), plus ``ndtri`` derived from ``erfinv``.

Examples
--------
>>> import sharded as st
>>> st.special.gammaln(st.tensor([4.0], dtype=st.float64)).tolist()  # log(3!)
[1.791759469228055]
"""

from __future__ import annotations

import math

from .functional import log_softmax, logsumexp, softmax
from .ops.binary_math import sinc, xlogy
from .ops.exp_log import exp2, expm1
from .ops.rounding import round
from .ops.special import digamma, erf, erfc, erfinv, lgamma, polygamma
from .ops.unary import log1p, sigmoid

gammaln = lgamma
psi = digamma
expit = sigmoid


def ndtri(input):
    """The inverse of the standard normal CDF, ``sqrt(2) * erfinv(2p - 1)``.

    Examples
    --------
    >>> import sharded as st
    >>> st.special.ndtri(st.tensor([0.5, 0.975], dtype=st.float64)).tolist()
    [0.0, 1.959963984540054]
    """
    return erfinv(input * 2 - 1) * math.sqrt(2)


__all__ = [
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammaln",
    "log1p",
    "log_softmax",
    "logsumexp",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlogy",
]
