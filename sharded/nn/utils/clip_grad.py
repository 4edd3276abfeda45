"""Gradient clipping (``st.nn.utils.clip_grad_norm_``)."""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...errors import ArgumentError, AutogradError
from ...ops.creation.prims import tensor as _tensor
from ...ops.elementwise.prims.selection import clamp
from ...tensor import ShardedTensor

__all__ = ["clip_grad_norm_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their joint ``norm_type``-norm
    is at most ``max_norm`` (by ``max_norm / (total + 1e-6)`` when above); returns the total
    norm (a 0-d tensor), as ``torch.nn.utils.clip_grad_norm_``.

    Examples
    --------
    >>> import sharded as st
    >>> w = st.nn.Parameter(st.zeros(2))
    >>> w.grad = st.tensor([3.0, 4.0])
    >>> st.nn.utils.clip_grad_norm_([w], 1.0).item()
    5.0
    >>> [round(v, 4) for v in w.grad.tolist()]
    [0.6, 0.8]
    """
    if isinstance(parameters, ShardedTensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if norm_type <= 0 and not math.isinf(norm_type):
        raise ArgumentError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type}")
    if not grads:
        return _tensor(0.0)
    with no_grad():
        if math.isinf(norm_type):
            total = grads[0].abs().max()
            for g in grads[1:]:
                total = total.maximum(g.abs().max())
        else:
            total = None
            for g in grads:
                part = (g.abs() ** norm_type).sum() if norm_type != 2 else (g * g).sum()
                total = part if total is None else total + part
            total = total ** (1.0 / norm_type)
        if error_if_nonfinite:
            t = total.item()
            if math.isnan(t) or math.isinf(t):
                raise AutogradError(
                    f"The total norm of order {norm_type} for gradients from `parameters` is "
                    "non-finite, so it cannot be clipped. To disable this error and scale the "
                    "gradients by the non-finite norm anyway, set "
                    "`error_if_nonfinite=False`"
                )
        coef = clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total
