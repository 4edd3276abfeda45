"""The workloads of ``sharded bench --classic``, each written three times as its users would:
NumPy, dask.array (``.compute()`` at the end) and sharded (``st.*`` and tensor methods,
``.numpy()`` or ``.item()`` where a value is read).

Where the three libraries spell a step the same (``xp.exp``, ``@``, slicing), one function
takes the namespace ``xp``; where they differ (a dtype cast, a convolution, a read inside a
loop) each library has its own lines. Each workload's ``make(scale, rng)`` returns its label,
its big inputs (row-split over the workers) and its small ones (kernels, starting points,
iteration counts) as NumPy arrays and numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import sharded as st


@dataclass(frozen=True)
class Workload:
    """One classic workload: its ``--only`` name, its inputs and its three implementations.

    ``numpy``, ``dask`` and ``sharded`` take ``(*big, *small)`` placed for their library and
    return a NumPy array or a tuple of them; ``rtol`` bounds their disagreement (relative to
    the largest magnitude of each result; 0: exact).
    """

    name: str
    make: Callable
    numpy: Callable
    dask: Callable
    sharded: Callable
    rtol: float


def _n(base: int, scale: float, lo: int) -> int:
    return max(lo, round(base * scale))


# ------------------------------------------------------------------------ Black-Scholes
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
RSQRT2PI = 1 / math.sqrt(2 * math.pi)


def _cnd(xp, d):
    """The normal CDF by Abramowitz & Stegun 26.2.17 (the classic benchmark's form)."""
    k = 1.0 / (1.0 + 0.2316419 * xp.abs(d))
    ret = RSQRT2PI * xp.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return xp.where(d > 0, 1.0 - ret, ret)


def black_scholes(xp, S, X, T, r=0.02, v=0.30):
    """European call and put prices of options with spot ``S``, strike ``X``, expiry ``T``."""
    sqrt_t = xp.sqrt(T)
    d1 = (xp.log(S / X) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    c1, c2 = _cnd(xp, d1), _cnd(xp, d2)
    disc = X * xp.exp(-r * T)
    return S * c1 - disc * c2, disc * (1.0 - c2) - S * (1.0 - c1)


def _bs_make(scale, rng):
    n = _n(8_000_000, scale, 16)
    big = (rng.uniform(5, 30, n), rng.uniform(1, 100, n), rng.uniform(0.25, 10, n))
    return f"Black-Scholes ({n:,} options)", big, ()


def _bs_dask(S, X, T):
    import dask

    return dask.compute(*black_scholes(_da(), S, X, T))


def _bs_sharded(S, X, T):
    call, put = black_scholes(st, S, X, T)
    return call.numpy(), put.numpy()


# ------------------------------------------------------------------------ logistic regression
def logistic(xp, X, y, w, iters, lr=0.5):
    """``iters`` steps of full-batch gradient descent on the logistic loss from ``w``."""
    n = X.shape[0]
    for _ in range(iters):
        p = 1.0 / (1.0 + xp.exp(-(X @ w)))
        w = w - lr * (X.T @ (p - y)) / n
    return w


def _lr_make(scale, rng):
    n, d = _n(1_000_000, scale, 16), 32
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(np.float64)
    return f"logistic regression ({n:,}x{d}, 10 iters)", (X, y), (10,)


def _lr_numpy(X, y, iters):
    return logistic(np, X, y, np.zeros(X.shape[1]), iters)


def _lr_dask(X, y, iters):
    da = _da()
    return logistic(da, X, y, da.zeros(X.shape[1]), iters).compute()


def _lr_sharded(X, y, iters):
    return logistic(st, X, y, st.zeros(X.shape[1], dtype=st.float64), iters).numpy()


# ------------------------------------------------------------------------ k-means
def _km_make(scale, rng):
    n, k = _n(1_000_000, scale, 100), 10
    centers = rng.uniform(-10, 10, (k, 2))
    X = centers[rng.integers(0, k, n)] + rng.standard_normal((n, 2))
    return f"k-means ({n:,}x2, k={k}, 4 iters)", (X,), (X[:k].copy(), 4)


def _km_numpy(X, C, iters):
    k = C.shape[0]
    for _ in range(iters):
        labels = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1).argmin(1)
        onehot = (labels[:, None] == np.arange(k)).astype(np.float64)
        C = (onehot.T @ X) / onehot.sum(0)[:, None]
    return C


def _km_dask(X, C, iters):
    da = _da()
    k = C.shape[0]
    for _ in range(iters):
        labels = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1).argmin(1)
        onehot = (labels[:, None] == da.arange(k)).astype(np.float64)
        C = (onehot.T @ X) / onehot.sum(0)[:, None]
    return C.compute()


def _km_sharded(X, C, iters):
    k = C.shape[0]
    for _ in range(iters):
        labels = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1).argmin(1)
        onehot = (labels[:, None] == st.arange(k)).double()
        C = (onehot.T @ X) / onehot.sum(0)[:, None]
    return C.numpy()


# ------------------------------------------------------------------------ 5-point stencil
def stencil(u, steps):
    """``steps`` Jacobi sweeps of the 5-point Laplace stencil over ``u``'s interior, in place
    (the right side is evaluated whole before it is stored, so every sweep reads the last)."""
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def _st_make(scale, rng):
    m = _n(3002, math.sqrt(scale), 8)
    return f"5-point stencil ({m}x{m}, 15 steps)", (rng.random((m, m)),), (15,)


# ------------------------------------------------------------------------ Richardson-Lucy
def correlate(a, k):
    """2-D cross-correlation of ``a`` with the odd square kernel ``k``, zero-padded to
    ``a``'s shape (``conv2d(padding=r)``'s arithmetic), as a sum of shifted slices."""
    r, (h, w) = k.shape[0] // 2, a.shape
    p = np.pad(a, r)
    out = np.zeros_like(a)
    for i in range(k.shape[0]):
        for j in range(k.shape[1]):
            out += k[i, j] * p[i : i + h, j : j + w]
    return out


def _rl_make(scale, rng):
    m, r = _n(1600, math.sqrt(scale), 16), 2
    g = np.exp(-0.5 * np.arange(-r, r + 1) ** 2)
    psf = np.outer(g, g * np.linspace(0.8, 1.2, 2 * r + 1))  # not symmetric: flips matter
    psf /= psf.sum()
    image = correlate(rng.random((m, m)), psf) + 0.1
    return f"Richardson-Lucy ({m}x{m}, {2 * r + 1}x{2 * r + 1} kernel, 3 iters)", (image,), (psf, 3)


def _rl_numpy(image, psf, iters):
    psf_m = psf[::-1, ::-1]
    est = np.full_like(image, 0.5)
    for _ in range(iters):
        rel = image / correlate(est, psf_m)  # the forward blur: a convolution with psf
        est = est * correlate(rel, psf)
    return est


def _rl_dask(image, psf, iters):
    da, r = _da(), psf.shape[0] // 2
    psf_m = psf[::-1, ::-1]

    def blur(a, k):  # each block with an r-wide halo of its neighbours' rows
        return a.map_overlap(correlate, depth=r, boundary=0, dtype=a.dtype, k=k)

    est = da.full_like(image, 0.5)
    for _ in range(iters):
        rel = image / blur(est, psf_m)
        est = est * blur(rel, psf)
    return est.compute()


def _rl_sharded(image, psf, iters):
    conv2d, (h, w), r = st.nn.functional.conv2d, image.shape, psf.shape[0] // 2
    k = psf.reshape(1, 1, *psf.shape)
    k_m = k.flip((2, 3))
    image = image.reshape(1, 1, h, w)
    est = st.full_like(image, 0.5)
    for _ in range(iters):
        rel = image / conv2d(est, k_m, padding=r)
        est = est * conv2d(rel, k, padding=r)
    return est.reshape(h, w).numpy()


# ------------------------------------------------------------------------ sort + bincount + unique
def _su_make(scale, rng):
    n = _n(8_000_000, scale, 64)
    m = max(16, n // 8)
    return f"sort+bincount+unique ({n:,} ints < {m:,})", (rng.integers(0, m, n),), (m,)


def _su_numpy(x, m):
    return np.sort(x), np.bincount(x, minlength=m), np.unique(x)


def _su_dask(x, m):
    import dask

    da = _da()
    # dask.array has no sort: its users sort the gathered array
    xs, counts, uniq = dask.compute(x, da.bincount(x, minlength=m), da.unique(x))
    return np.sort(xs), counts, uniq


def _su_sharded(x, m):
    return x.sort().values.numpy(), st.bincount(x, minlength=m).numpy(), st.unique(x).numpy()


# ------------------------------------------------------------------------ Jacobi
def jacobi(xp, A, b, iters):
    """``iters`` Jacobi iterations for ``A x = b`` from ``x = 0``."""
    D = xp.diagonal(A)
    R = A - xp.diag(D)
    x = xp.zeros_like(b)
    for _ in range(iters):
        x = (b - R @ x) / D
    return x


def _ja_make(scale, rng):
    n = _n(4000, math.sqrt(scale), 8)
    A = rng.random((n, n)) + n * np.eye(n)  # diagonally dominant: the iteration converges
    return f"Jacobi ({n}x{n} dense, 100 iters)", (A, rng.random(n)), (100,)


# ------------------------------------------------------------------------ conjugate gradient
TOL = 1e-10  # relative residual that ends CG early (reached only at small scales)


def _cg_make(scale, rng):
    m = max(3, round(64 * scale**0.25))
    T = 2 * np.eye(m) - np.eye(m, k=1) - np.eye(m, k=-1)
    A = np.kron(np.eye(m), T) + np.kron(T, np.eye(m))  # the 5-point Laplacian on m x m
    n = m * m
    return f"conjugate gradient ({n}x{n} dense, 100 iters)", (A, rng.random(n)), (100,)


def _cg_numpy(A, b, iters):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = float(r @ r)
    stop = TOL * TOL * rs
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / float(p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = float(r @ r)
        if rs_new < stop:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def _cg_dask(A, b, iters):
    # every read computes its graph: persist what the next iterations reuse
    x = _da().zeros_like(b)
    r = (b - A @ x).persist()
    p = r
    rs = float((r @ r).compute())
    stop = TOL * TOL * rs
    for _ in range(iters):
        Ap = (A @ p).persist()
        alpha = rs / float((p @ Ap).compute())
        x = x + alpha * p
        r = (r - alpha * Ap).persist()
        rs_new = float((r @ r).compute())
        if rs_new < stop:
            break
        p = (r + (rs_new / rs) * p).persist()
        rs = rs_new
    return x.compute()


def _cg_sharded(A, b, iters):
    x = st.zeros_like(b)
    r = b - A @ x
    p = r.clone()
    rs = (r @ r).item()
    stop = TOL * TOL * rs
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / (p @ Ap).item()
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = (r @ r).item()
        if rs_new < stop:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x.numpy()


def _da():
    import dask.array

    return dask.array


WORKLOADS = (
    Workload(
        "black_scholes",
        _bs_make,
        lambda S, X, T: black_scholes(np, S, X, T),
        _bs_dask,
        _bs_sharded,
        1e-9,
    ),
    Workload("logistic", _lr_make, _lr_numpy, _lr_dask, _lr_sharded, 1e-9),
    Workload("kmeans", _km_make, _km_numpy, _km_dask, _km_sharded, 1e-9),
    Workload(
        "stencil",
        _st_make,
        lambda u, steps: stencil(u.copy(), steps),
        lambda u, steps: stencil(u.copy(), steps).compute(),
        lambda u, steps: stencil(u.clone(), steps).numpy(),
        1e-9,
    ),
    Workload("richardson_lucy", _rl_make, _rl_numpy, _rl_dask, _rl_sharded, 1e-9),
    Workload("sort_unique", _su_make, _su_numpy, _su_dask, _su_sharded, 0.0),
    Workload(
        "jacobi",
        _ja_make,
        lambda A, b, iters: jacobi(np, A, b, iters),
        lambda A, b, iters: jacobi(_da(), A, b, iters).compute(),
        lambda A, b, iters: jacobi(st, A, b, iters).numpy(),
        1e-9,
    ),
    Workload("cg", _cg_make, _cg_numpy, _cg_dask, _cg_sharded, 1e-6),
)
