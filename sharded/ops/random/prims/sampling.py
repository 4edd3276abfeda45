"""Sampling from distributions with tensor parameters: ``normal`` (torch's overloads),
``x.normal_``/``uniform_``/``bernoulli_``, ``bernoulli``, ``multinomial`` and ``poisson``.

All draw their randomness from the counter-based ``random`` primitive (element ``i`` of a
draw is a hash of its global position), laid out like the parameters, then transform it
locally -- so every result is identical for any shard count and layout after the same
``manual_seed``, and nothing but the parameters' own shards is read.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .... import dtypes as D
from ....core.dataflow import Operand
from ....core.dispatch import apply, as_tensor, is_tensor, placement, size_of
from ....core.registry import bind, kernel, nondiff, primitive
from ....errors import (
    ArgumentError,
    ArgumentTypeError,
    DTypeError,
    ShapeError,
    UnsupportedArgument,
    UnsupportedDType,
)
from ....runtime.commands import Key

__all__ = ["normal", "bernoulli", "multinomial", "poisson"]


def _t(x):
    return x if is_tensor(x) else as_tensor(x)


def _draw(layout, dist, dtype):
    """A fresh uniform/normal tensor on ``layout`` (values independent of the layout)."""
    return apply("random", layout, dist, dtype)


def _check_std(std):
    if is_tensor(std):
        if std.numel() and bool((~(std >= 0)).any().item()):  # NaN too; torch reads it too
            raise ArgumentError(
                f"normal expects all elements of std >= 0.0, got min {std.min().item()}"
            )
    elif not std >= 0:  # NaN too, as torch
        raise ArgumentError(f"normal expects std >= 0.0, but found std {std}")


def _floating(name, t, complex_ok=False):
    if not (t.dtype.is_floating_point or (complex_ok and t.dtype.is_complex)):
        raise UnsupportedDType(f"{name} expects a floating point tensor, got {t.dtype}")


def _no_generator(name, generator):
    if generator is not None:
        raise UnsupportedArgument(f"{name}: generator= is not supported; seed st.manual_seed")


def _keep_on_tape(out, ts):
    """torch's zero gradient of a sample with respect to its parameters: the result is on the
    tape (``requires_grad``) and the gradient is 0 (finite even for inf parameters)."""
    for t in ts:
        if is_tensor(t) and t.requires_grad:
            out = out + (t * 0).nan_to_num(0.0, 0.0, 0.0)
    return out


def _both_parts(x, dtype):
    """torch fills a complex tensor through its real view: a real shift moves both parts."""
    return x * (1 + 1j) if dtype.is_complex else x


def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator=None,
    dtype=None,
    shards=None,
    dim=None,
    layout=None,
    device="cpu",
    requires_grad=False,
):
    """Normal samples: ``normal(mean_tensor, std_tensor_or_float)``, ``normal(mean_float,
    std_tensor)`` (the tensors broadcast, the result has their dtype) or ``normal(mean,
    std, size)``. As in torch, the gradient with respect to ``mean`` and ``std`` is zero.

    Examples
    --------
    >>> import sharded as st
    >>> st.normal(st.zeros(2, 3, shards=2), 1.0).shape
    sharded.Size([2, 3])
    >>> st.normal(0.0, 1.0, (4,)).dtype
    sharded.float32
    """
    _no_generator("normal", generator)
    if is_tensor(std) and std.dtype.is_complex:
        raise DTypeError(f"normal expects standard deviation to be non-complex, got {std.dtype}")
    if not is_tensor(mean) and not is_tensor(std):
        if size is None:  # torch's parser: no overload (float, float) without size
            raise ArgumentTypeError("normal(mean: float, std: float) needs size")
        _check_std(std)
        shape = size_of((size,) if isinstance(size, numbers.Integral) else (tuple(size),))
        dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
        if not (dt.is_floating_point or dt.is_complex):
            raise UnsupportedDType(f"normal needs a floating point or complex dtype, got {dt}")
        lay = placement(shape, shards, dim, layout, device, dt)
        z = _draw(lay, "normal", dt)
        out = z * std + _both_parts(mean, dt) if (std != 1 or mean != 0) else z
        return out.requires_grad_(True) if requires_grad else out
    if size is not None:  # torch's parser: no tensor overload takes size
        raise ArgumentTypeError("normal: size is only taken with float mean and std")
    _check_std(std)
    ts = [t for t in (mean, std) if is_tensor(t)]
    for t in ts:
        _floating("normal", t, complex_ok=t is mean)
    try:
        shape = tuple(np.broadcast_shapes(*(tuple(t.shape) for t in ts)))
    except ValueError:
        raise ShapeError(
            f"normal: the shapes of mean {tuple(mean.shape)} and std {tuple(std.shape)} "
            "do not broadcast"
        ) from None
    dt = ts[0].dtype if len(ts) == 1 else D.promote_types(ts[0].dtype, ts[1].dtype)
    base = next((t for t in ts if tuple(t.shape) == shape), None)
    lay = base.layout if base is not None else placement(shape)
    z = _draw(lay, "normal", dt)
    m = mean.detach() if is_tensor(mean) else mean
    s = std.detach() if is_tensor(std) else std
    return _keep_on_tape(z * s + m, ts)  # torch's NormalBackward: zero gradients


@bind("normal_")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples, in place (identical for any sharding after a seed).

    Examples
    --------
    >>> import sharded as st
    >>> st.zeros(2, 2, shards=2).normal_(5.0, 0.0).tolist()
    [[5.0, 5.0], [5.0, 5.0]]
    """
    _no_generator("normal_", generator)
    _floating("normal_", self, complex_ok=True)
    _check_std(std)
    z = _draw(self.layout, "normal", self.dtype)  # complex: each part N(0, 1/2), as torch's
    return self.copy_(z * std + _both_parts(mean, self.dtype))


@bind("uniform_")
def uniform_(self, a=0.0, b=1.0, *, generator=None, **kw):
    """Fill with samples uniform in ``[a, b)`` (torch's ``from``/``to``), in place.

    Examples
    --------
    >>> import sharded as st
    >>> x = st.zeros(100, shards=3).uniform_(2.0, 3.0)
    >>> 2.0 <= x.min().item() and x.max().item() < 3.0
    True
    """
    a, b = kw.pop("from", a), kw.pop("to", b)
    if kw:
        raise TypeError(f"uniform_() got unexpected keyword arguments {sorted(kw)}")
    _no_generator("uniform_", generator)
    _floating("uniform_", self, complex_ok=True)  # complex: each part in [a, b), as torch
    if a > b:
        raise ArgumentError(
            f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}"
        )
    u = _draw(self.layout, "uniform", self.dtype)
    return self.copy_(u * (b - a) + _both_parts(a, self.dtype))


def _check_p(name, p):
    if not 0 <= p <= 1:
        raise ArgumentError(f"{name} expects p to be in [0, 1], but got p={p}")


def _check_p_tensor(p):
    """torch: ``Expected p_in >= 0 && p_in <= 1`` (NaN fails it too)."""
    if p.numel() and bool((~((p >= 0) & (p <= 1))).any().item()):
        raise ArgumentError(
            f"bernoulli expects every probability in [0, 1], got values from "
            f"{p.min().item()} to {p.max().item()}"
        )


@bind("bernoulli")
def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability ``input[i]`` (or ``p`` for every element), in the
    input's dtype.

    Examples
    --------
    >>> import sharded as st
    >>> st.bernoulli(st.tensor([0.0, 1.0, 1.0], shards=2)).tolist()
    [0.0, 1.0, 1.0]
    """
    _no_generator("bernoulli", generator)
    x = _t(input)
    if x.dtype.is_complex or (p is None and not x.dtype.is_floating_point):
        raise UnsupportedDType(f"bernoulli is not implemented for {x.dtype} probabilities")
    if p is not None:
        _check_p("bernoulli_", p)
    else:
        _check_p_tensor(x)
    u = _draw(x.layout, "uniform", D.float64)
    prob = p if p is not None else x.detach().to(D.float64)
    return _keep_on_tape((u < prob).to(x.dtype), [x])


@bind("bernoulli_")
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a float or a tensor), in place.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(3).bernoulli_(0.0).tolist()
    [0.0, 0.0, 0.0]
    """
    _no_generator("bernoulli_", generator)
    if self.dtype.is_complex:
        raise UnsupportedDType(f"bernoulli_ is not implemented for {self.dtype}")
    if not is_tensor(p):
        _check_p("bernoulli_", p)
    else:
        if not p.dtype.is_floating_point:  # torch: not implemented for 'Long' probabilities
            raise UnsupportedDType(
                f"bernoulli_ expects floating point probabilities, got {p.dtype}"
            )
        _check_p_tensor(p.detach())
    u = _draw(self.layout, "uniform", D.float64)
    return self.copy_(u < (p.to(D.float64) if is_tensor(p) else p))


@bind("multinomial")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices per row of non-negative weights ``input`` (1-D or
    2-D). Without replacement: the Gumbel top-k trick (the largest ``log w - log(-log u)``);
    with replacement: inverse-CDF search of uniforms in the rows' cumulative weights.

    Examples
    --------
    >>> import sharded as st
    >>> st.multinomial(st.tensor([0.0, 1.0, 0.0]), 1).tolist()
    [1]
    """
    _no_generator("multinomial", generator)
    w = _t(input)
    _floating("multinomial", w)
    if w.ndim not in (1, 2):
        raise ShapeError(f"prob_dist must be 1 or 2 dim, got {w.ndim}")
    n = w.shape[-1]
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral):
        raise ArgumentTypeError(f"multinomial: num_samples must be an int, got {num_samples!r}")
    if num_samples <= 0:
        raise ArgumentError(f"cannot sample n_sample <= 0 samples, got {num_samples}")
    if not replacement and num_samples > n:
        raise ArgumentError(
            f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
            f"({num_samples} > {n})"
        )
    w = w.detach().to(D.float64)
    bad = ~w.isfinite() | (w < 0)
    if bool(bad.any().item()):
        raise ArgumentError("probability tensor contains either `inf`, `nan` or element < 0")
    total = w.sum(-1, keepdim=True)
    if bool((total <= 0).any().item()):
        raise ArgumentError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows = tuple(w.shape[:-1])
    if not replacement:
        u = _draw(w.layout, "uniform", D.float64)
        # 1 - u in (0, 1]: the Gumbel noise stays finite
        keys = w.log() - (-(1.0 - u).log()).log()
        return keys.topk(num_samples, dim=-1).indices
    cdf = (w / total).cumsum(-1)
    u = _draw(placement(rows + (num_samples,)), "uniform", D.float64)
    return cdf.searchsorted(u, right=True).clamp(max=n - 1)


# ------------------------------------------------------------------------------ poisson
# Every element draws from its own stream: SplitMix64 seeded with a 62-bit key that the
# counter-based ``random`` primitive gives it (a pure function of its global position), so a
# rejection sampler may take as many uniforms as it needs and the samples stay identical for
# any shard count. (The mixer repeats :mod:`.counter`'s: op modules never import each other.)
_PTRS_FROM = 10.0  # rates from here on: PTRS (valid for rate >= 10); below: CDF inversion
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_LOG_FACT = np.array([math.lgamma(k + 1.0) for k in range(16)])  # log(k!), k < 16
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _uniform(xp, key, j: int):
    """The ``j``-th uniform in [0, 1) of the streams seeded by ``key`` (SplitMix64)."""
    with np.errstate(over="ignore"):
        x = key + np.uint64(j + 1) * _GOLDEN
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _log_factorial(xp, k):
    """``log(k!)`` for integral floats ``k >= 0``: a table below 16, Stirling's series above
    (its first omitted term, ``1 / (1188 (k+1)^9)``, is below 1e-13 there)."""
    x = k + 1.0
    x2 = x * x
    series = 1 / (12 * x) * (1 - 1 / (30 * x2) * (1 - 2 / (7 * x2) * (1 - 0.75 / x2)))
    big = (x - 0.5) * xp.log(x) - x + _HALF_LOG_2PI + series
    table = xp.asarray(_LOG_FACT)[xp.clip(k, 0, 15).astype(np.int64)]
    return xp.where(k < 16, table, big)


def _invert(xp, rate, key):
    """Exact samples for small rates: the first uniform of each stream through the CDF."""
    u = _uniform(xp, key, 0)
    p = xp.exp(-rate)
    cdf = p.copy()
    k = xp.zeros(rate.shape, dtype=np.float64)
    active = u > cdf
    i = 0
    while bool(active.any()):  # p underflows to 0 after a few hundred terms at most
        i += 1
        p = p * rate / i
        cdf = cdf + p
        k = k + active
        active = active & (u > cdf) & (p > 0)
    return k


def _ptrs(xp, rate, key):
    """Exact samples for rates >= 10: Hoermann's transformed rejection with squeeze (PTRS,
    1993; NumPy's ``random_poisson_ptrs``), vectorised: each round draws the next two
    uniforms of every pending stream and settles the accepted ones (about 1.15 rounds each)."""
    out = xp.empty(rate.shape, dtype=np.float64)
    pend = xp.arange(rate.shape[0])
    j = 1
    while pend.shape[0]:
        lam, ky = rate[pend], key[pend]
        slam, loglam = xp.sqrt(lam), xp.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        U = _uniform(xp, ky, j) - 0.5
        V = _uniform(xp, ky, j + 1)
        j += 2
        us = 0.5 - xp.abs(U)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            k = xp.floor((2 * a / us + b) * U + lam + 0.43)
            fast = (us >= 0.07) & (V <= vr)
            reject = (k < 0) | ~xp.isfinite(k) | ((us < 0.013) & (V > us))
            kk = xp.where(reject, 0.0, k)
            lhs = xp.log(V) + xp.log(invalpha) - xp.log(a / (us * us) + b)
            rhs = -lam + kk * loglam - _log_factorial(xp, kk)
        done = fast | (~reject & (lhs <= rhs))
        out[pend[done]] = k[done]
        pend = pend[~done]
    return out


@kernel
def poisson_block(xp, lam, key):
    """Poisson samples for rates ``lam``, exact in distribution: CDF inversion below rate 10,
    PTRS from there (``key``: each element's stream seed; non-finite rates come back as they
    are)."""
    rate = lam.astype(np.float64).ravel()
    key = key.astype(np.uint64).ravel()
    out = rate.copy()
    finite = xp.isfinite(rate)
    for pick, sampler in (
        (finite & (rate < _PTRS_FROM), _invert),
        (finite & (rate >= _PTRS_FROM), _ptrs),
    ):
        idx = xp.nonzero(pick)[0]
        if idx.shape[0]:
            out[idx] = sampler(xp, rate[idx], key[idx])
    return out.reshape(lam.shape).astype(lam.dtype)


@primitive(
    "poisson",
    kernels=[poisson_block],
    kind="op",
    out_spec=lambda lam, key: (tuple(lam.shape), lam.dtype),
)
def _poisson_plan(ex, lam, key):
    """Each shard transforms its own rates with the stream keys laid out like them."""
    keys = []
    for s, (w, _, _) in enumerate(lam._layout.shards()):
        k = ex.new_key()
        args = tuple(Key(t._keys[s], None) for t in (lam, key))
        ex.submit(w, "poisson_block", args, (k,), {}, ("poisson", s))
        keys.append(k)
    return Operand(lam._layout, lam._dtype, keys)


nondiff("poisson")  # torch: the samples are not differentiable in the rates


def poisson(input, generator=None):
    """Poisson samples with rates ``input`` (same shape and dtype), exact in distribution for
    every rate: CDF inversion below 10, Hoermann's PTRS rejection sampler from there on.

    Examples
    --------
    >>> import sharded as st
    >>> st.poisson(st.zeros(3, shards=2)).tolist()
    [0.0, 0.0, 0.0]
    """
    _no_generator("poisson", generator)
    src = _t(input)
    lam = src.detach().contiguous()
    _floating("poisson", lam)
    if lam.numel() and bool((~(lam >= 0)).any().item()):  # NaN too, as torch
        raise ArgumentError(
            f"invalid Poisson rate, expected rate to be non-negative, got {lam.min().item()}"
        )
    key = apply("random", lam.layout, "integers", D.int64, 0, 2**62)
    return _keep_on_tape(apply("poisson", lam, key), [src])
