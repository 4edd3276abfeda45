"""``ctc_loss`` of ``st.nn.functional``: the connectionist temporal classification loss.

The forward (alpha) recursion of CTC in log space over the targets extended with blanks,
one step per time step, all batch entries and extended positions at once; composed from
sharded ops, so its gradient comes from theirs (autograd through the recursion, in place of
the beta recursion). The lengths are read on the driver: they fix the masks. Impossible
alignments carry a large finite negative log-likelihood inside the recursion (an exact
``-inf`` would make the log-sum-exp gradients NaN) and come out as ``inf`` (0 with
``zero_infinity``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as D
from ..amp import keep_float32
from ..core.dispatch import as_tensor, is_tensor
from ..errors import ArgumentError, DTypeError, ShapeError
from ..ops.creation.prims import full
from ..ops.elementwise.prims.selection import where
from ..ops.index.prims.index_ops import index_select
from ..ops.reduce.derived.moments import logsumexp
from ..ops.shape.prims.joining import cat, stack

__all__ = ["ctc_loss"]

_NEG = -1e30  # log(0) inside the recursion: finite, so no NaN gradients
_IMPOSSIBLE = 1e29  # a loss above this came from _NEG: no alignment exists


def _lengths(v, name, n):
    if is_tensor(v):
        vals = v.reshape(-1).tolist()
    elif isinstance(v, numbers.Integral):
        vals = [v]
    else:
        vals = list(v)
    vals = [int(i) for i in vals]
    if len(vals) != n:
        raise ShapeError(f"{name} must be of size batch_size ({n}), got {len(vals)} values")
    if any(i < 0 for i in vals):
        raise ArgumentError(f"{name} must be non-negative, got {vals}")
    return np.array(vals, dtype=np.int64)


def _padded_targets(targets, tl, n):
    """(N, max target length) int64 targets (entries past a target's length are unused)."""
    smax = int(tl.max()) if n else 0
    if targets.ndim == 2:
        if targets.shape[0] != n:
            raise ShapeError(f"ctc_loss: targets of size {list(targets.shape)} for a batch of {n}")
        if targets.shape[1] < smax:
            raise ShapeError(
                f"Expected tensor to have size at least {smax} at dimension 1, but got size "
                f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for "
                "ctc_loss)"
            )
        return targets.narrow(1, 0, smax).to(D.int64), smax
    if targets.ndim != 1:
        raise ShapeError(f"ctc_loss: targets must be 1-D or 2-D, got {targets.ndim} dims")
    if targets.shape[0] < int(tl.sum()):
        raise ShapeError(
            f"Expected tensor to have size at least {int(tl.sum())} at dimension 0, but got "
            f"size {targets.shape[0]} for argument #2 'targets' (while checking arguments for "
            "ctc_loss)"
        )
    if smax == 0:
        return full((n, 0), 0, dtype=D.int64), 0
    starts = np.concatenate([[0], np.cumsum(tl)[:-1]])
    k = np.arange(smax)
    pos = np.where(k[None, :] < tl[:, None], starts[:, None] + k[None, :], 0)
    flat = index_select(targets, 0, as_tensor(pos.reshape(-1)))
    return flat.reshape(n, smax).to(D.int64), smax


def _lse3(a, b, c):
    """Elementwise log(e^a + e^b + e^c), shifted by the (constant) maximum."""
    m = a.maximum(b).maximum(c).detach()
    return m + ((a - m).exp() + (b - m).exp() + (c - m).exp()).log()


def _torch_grad_term(lp, il):
    """Zero per batch entry, whose gradient is ``exp(log_probs)`` over its first
    ``input_lengths`` steps. torch's CTC backward returns ``exp(lp) - exp(lcab + nll - lp)``:
    the true derivative plus ``exp(lp)``, i.e. the gradient of the logits when ``lp`` is
    ``log_softmax(logits)`` (through log_softmax the added term sums to zero and the result
    is exact). Adding this term gives torch's gradient for any ``log_probs``."""
    e = lp.exp()
    steps = as_tensor((np.arange(lp.shape[0])[:, None] < il[None, :])[:, :, None])
    return where(steps, e - e.detach(), 0.0).sum((0, 2))


@keep_float32
def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    """The CTC loss of (T, N, C) or (T, C) log-probabilities against targets, as
    ``torch.nn.functional.ctc_loss``: ``-log`` of the summed probability of every
    alignment of each target (padded (N, S) or concatenated 1-D, with ``target_lengths``)
    to the first ``input_lengths`` steps, blanks between repeats. ``reduction='mean'``
    divides each loss by its target length, then averages.

    Examples
    --------
    >>> import sharded as st
    >>> lp = st.full((2, 1, 2), 0.5).log()  # two steps, classes {blank, a}, uniform
    >>> f = st.nn.functional.ctc_loss
    >>> round(f(lp, st.tensor([[1]]), [2], [1], reduction="sum").item(), 6)  # -log(3/4)
    0.287682
    """
    lp, targets = (t if is_tensor(t) else as_tensor(t) for t in (log_probs, targets))
    if lp.ndim not in (2, 3):
        raise ShapeError(
            f"ctc_loss: log_probs must be (T, N, C) or (T, C), got size {list(lp.shape)}"
        )
    if not lp.dtype.is_floating_point:
        raise DTypeError(f"ctc_loss: log_probs must be floating point, got {lp.dtype.name}")
    if targets.dtype.is_floating_point or targets.dtype == D.bool_:
        raise DTypeError(f"ctc_loss: targets must be integers, got {targets.dtype.name}")
    if reduction not in ("none", "mean", "sum"):
        raise ArgumentError(f"{reduction} is not a valid value for reduction")
    unbatched = lp.ndim == 2
    if unbatched:
        lp, targets = lp.unsqueeze(1), targets.unsqueeze(0)
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise ArgumentError(f"blank must be in label range: blank={blank}, classes={c}")
    il = _lengths(input_lengths, "input_lengths", n)
    tl = _lengths(target_lengths, "target_lengths", n)
    if n and il.max() > t_max:
        raise ArgumentError(
            f"Expected input_lengths to have value at most {t_max}, but got value "
            f"{int(il.max())} (while checking arguments for ctc_loss)"
        )
    tg, smax = _padded_targets(targets, tl, n)
    width = 2 * smax + 1
    # extended targets: blank, y1, blank, y2, ..., blank
    blanks = full((n, smax), blank, dtype=D.int64)
    ext = cat([stack([blanks, tg], 2).reshape(n, 2 * smax), full((n, 1), blank, dtype=D.int64)], 1)
    s = np.arange(width)
    valid = as_tensor(s[None, :] < 2 * tl[:, None] + 1)
    # a label may be reached from two positions back unless it is a blank or a repeat
    before = cat([full((n, 2), blank, dtype=D.int64), ext.narrow(1, 0, width - 2)], 1)
    skip = (ext != blank) & (ext != before) & as_tensor(s >= 2)
    rows = (ext + as_tensor(np.arange(n, dtype=np.int64)[:, None] * c)).reshape(-1)
    lpe = index_select(lp.reshape(t_max, n * c), 1, rows).reshape(t_max, n, width)
    neg1 = full((n, 1), _NEG, dtype=lp.dtype)
    neg2 = full((n, 2), _NEG, dtype=lp.dtype)
    started = as_tensor((il >= 1)[:, None])
    first = where(valid & as_tensor(s < 2), lpe[0], _NEG) if t_max else None
    empty = as_tensor(np.where(s == 0, 0.0, _NEG).astype(lp.dtype.np)[None, :])
    # a zero-length input aligns only an empty target (probability 1 at the first blank)
    alpha = where(started, first, empty) if t_max else empty.expand(n, width)
    for t in range(1, t_max):
        a1 = cat([neg1, alpha.narrow(1, 0, width - 1)], 1)
        a2 = where(skip, cat([neg2, alpha.narrow(1, 0, width - 2)], 1), _NEG)
        step = where(valid, _lse3(alpha, a1, a2) + lpe[t], _NEG)
        alpha = where(as_tensor((il > t)[:, None]), step, alpha)
    ends = (s[None, :] == 2 * tl[:, None]) | (s[None, :] == 2 * tl[:, None] - 1)
    loss = -logsumexp(where(as_tensor(ends), alpha, _NEG), 1)
    if lp.requires_grad:
        loss = loss + _torch_grad_term(lp, il)
    impossible = loss > _IMPOSSIBLE
    loss = where(impossible, 0.0 if zero_infinity else float("inf"), loss)
    if reduction == "mean":
        per = as_tensor(np.maximum(tl, 1).astype(lp.dtype.np))
        return (loss / per).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
