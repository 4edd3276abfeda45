"""Checks of tensor values that run in the workers: a planner never reads data to validate
it (a read would cost a round trip per call and could not be traced by ``st.jit``), so an
op whose arguments are valid only for some *values* routes them through a check here. A
failed check raises in the kernel and surfaces at the next read as
:class:`~sharded.errors.OpFailed`, which is also the builtin class of the failure
(``IndexError`` for an index out of range, as torch raises at the call).
"""

from __future__ import annotations

from ....core.registry import nondiff, primitive
from ...elementwise import plan as E


# ------------------------------------------------------------------------ check_indices
@E.named_kernel("check_indices")
def _check_indices_kernel(xp, a, lo, hi, skip, what):
    """A copy of the block ``a`` when every element is in ``[lo, hi)`` (or equals ``skip``)."""
    bad = (a < lo) | (a >= hi)
    if skip is not None:
        bad &= a != skip
    if bool(xp.any(bad)):
        v = int(a[bad].reshape(-1)[0])
        raise IndexError(f"{what} {v} is out of bounds (valid: {lo} to {hi - 1})")
    return xp.array(a, copy=True)


@primitive(
    "check_indices",
    kernels=[_check_indices_kernel],
    out_spec=lambda x, lo, hi, skip=None, what="index": (x.shape, x.dtype),
    kind="elementwise",
)
def _check_indices_plan(ex, x, lo, hi, skip=None, what="index"):
    """``x`` itself, each worker checking its blocks: integers in ``[lo, hi)`` (elements equal
    to ``skip`` pass too; ``what`` names them in the error, e.g. ``"Target"``). Use the
    result in place of ``x`` so that the check runs before what consumes it.

    Examples
    --------
    >>> import sharded as st
    >>> from sharded.core.dispatch import apply
    >>> apply("check_indices", st.tensor([0, 2, -100]), 0, 3, -100, "Target").tolist()
    [0, 2, -100]
    """
    params = {
        "lo": int(lo),
        "hi": int(hi),
        "skip": None if skip is None else int(skip),
        "what": what,
    }
    return E.plan(ex, "check_indices", (x,), params, x._dtype, "check_indices")


nondiff("check_indices")
