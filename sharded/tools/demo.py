"""``sharded demo``: the PyTorch tensor tutorial's examples, on a sharded tensor, then the
autograd tutorial's example, a linear solve and a short training loop.

Every step prints what it computed next to NumPy's answer, so the tour doubles as a smoke test
of a cluster (it raises if any result disagrees).
"""

from __future__ import annotations

import time

import numpy as np

import sharded as st


def _check(label, got, expected):
    ok = np.allclose(np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64))
    print(f"  {label:46} {'ok' if ok else 'MISMATCH'}")
    if not ok:
        raise AssertionError(f"{label}: got {got}, numpy says {expected}")


def tour(size: int = 2_000_000) -> None:
    """Run the tour on the current session (started by the caller or on demand)."""
    sess = st.runtime.current()
    ex = sess.executor
    print(
        f"== sharded demo: {ex.num_workers} workers on "
        f"{len({w.node for w in ex.workers})} node(s), executor '{ex.kind}'"
    )

    print("\n-- creating tensors")
    data = [[1, 2], [3, 4]]
    x = st.tensor(data)
    print(x, "dtype:", x.dtype)
    _check("st.tensor(data) == data", x.numpy(), data)
    st.manual_seed(0)
    r = st.rand(4, 3, shards=2)
    print(r)
    st.manual_seed(0)
    _check("rand is identical for 1 and 2 shards", st.rand(4, 3, shards=1).numpy(), r.numpy())
    print("st.arange(2, 10, 4) ->", st.arange(2, 10, 4).tolist(), st.arange(2, 10, 4).dtype)
    print("st.zeros(2, 3).dtype ->", st.zeros(2, 3).dtype, "(float32 by default, like torch)")

    print("\n-- views share storage (a small tensor lives whole on one worker)")
    base = st.tensor([[1, 2, 3], [4, 5, 6]])
    v = base.view(3, 2)
    v[0, 0] = 100
    print("x.view(3, 2) ->", v.tolist(), "  after v[0, 0] = 100, x =", base.tolist())
    _check("writing through the view changes x", base.numpy(), [[100, 2, 3], [4, 5, 6]])

    print("\n-- where the shards live")
    big = st.rand(6, 4, shards=ex.num_workers)
    big.visualize()

    print("\n-- arithmetic and broadcasting")
    a, b = st.tensor([[1], [2]]), st.tensor([1, 2])
    print("[[1],[2]] + [1,2] =", (a + b).tolist(), "sums to", (a + b).sum().item())
    _check("broadcast sum is 12", (a + b).sum().item(), 12)
    t = st.arange(6, dtype=st.float64, shards=3)
    tn = np.arange(6.0)
    _check("2*t + 3*t**2 - 1", (2 * t + 3 * t**2 - 1).numpy(), 2 * tn + 3 * tn**2 - 1)
    _check(
        "exp / sqrt / sigmoid",
        st.sigmoid(st.sqrt(st.exp(t))).numpy(),
        1 / (1 + np.exp(-np.sqrt(np.exp(tn)))),
    )

    print("\n-- reductions")
    m = st.from_numpy(np.arange(12.0).reshape(3, 4), shards=3)
    mn = np.arange(12.0).reshape(3, 4)
    _check(
        "sum over all / dim 0 / dim 1",
        [m.sum().item()] + m.sum(0).tolist() + m.sum(1).tolist(),
        [mn.sum()] + mn.sum(0).tolist() + mn.sum(1).tolist(),
    )
    _check(
        "mean, std, max(dim=1).indices",
        [m.mean().item(), m.std().item()] + m.max(1).indices.tolist(),
        [mn.mean(), mn.std(ddof=1)] + mn.argmax(1).tolist(),
    )
    _check("softmax(dim=1) rows sum to 1", st.softmax(m, 1).sum(1).numpy(), np.ones(3))

    print("\n-- in-place ops and NumPy interop")
    z = st.ones(5, shards=2)
    z.add_(4).mul_(2)
    z += 1
    _check("ones(5).add_(4).mul_(2) += 1", z.numpy(), np.full(5, 11.0))
    n = np.linspace(0, 1, 7)
    s = st.from_numpy(n, shards=3)
    _check("from_numpy -> numpy round trip", s.numpy(), n)
    print("np.asarray(s).sum() =", np.asarray(s).sum())

    print(f"\n-- vectorized vs Python loop (sum of squares of {size:,} elements)")
    v = st.arange(size, dtype=st.float64)
    vals = list(range(min(size, 200_000)))
    t0 = time.perf_counter()
    acc = 0.0
    for i in vals:
        acc += float(i) * float(i)
    loop_s = (time.perf_counter() - t0) * size / len(vals)
    t0 = time.perf_counter()
    total = (v * v).sum().item()
    vec_s = time.perf_counter() - t0
    expected = float(np.sum(np.arange(size, dtype=np.float64) ** 2))
    _check("vectorized sum of squares", total, expected)
    print(
        f"  python loop (extrapolated): {loop_s:.3f} s   sharded vectorized: {vec_s:.4f} s"
        f"   speed-up x{loop_s / vec_s:.0f}"
    )

    _autograd()
    _linalg(ex.num_workers)
    _training(ex.num_workers)

    stats = st.stats()
    print(
        f"\n== done: {stats['live_shards']} live shards on {len(stats['workers'])} workers, "
        f"{stats['bytes_moved']} bytes moved between workers"
    )


def _autograd() -> None:
    print("\n-- autograd (the tutorial's example)")
    x = st.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    print("out =", out.item(), "  x.grad =", x.grad.tolist())
    _check("d(mean(3 (x+2)^2))/dx = 4.5", x.grad.numpy(), np.full((2, 2), 4.5))


def _linalg(workers: int) -> None:
    print(f"\n-- linear algebra: solve A x = b, A 256 x 256 split over {workers} workers")
    st.manual_seed(1)
    n = 256
    a = st.rand(n, n, dtype=st.float64, shards=workers) + st.eye(n, dtype=st.float64) * n
    b = st.rand(n, 1, dtype=st.float64, shards=workers)
    x = st.linalg.solve(a, b)
    ok = st.allclose(a @ x, b)
    print("allclose(A @ x, b) ->", ok, "  |x| =", round(st.linalg.norm(x).item(), 6))
    _check("A @ solve(A, b) == b", float(ok), 1.0)


def _training(workers: int) -> None:
    print(f"\n-- training an MLP on rows split over {workers} workers")
    st.manual_seed(2)
    rows = 512
    inputs = st.randn(rows, 8, shards=workers)
    w_true = st.randn(8, 1)
    target = (inputs @ w_true).tanh() + 0.01 * st.randn(rows, 1, shards=workers)
    model = st.nn.Sequential(st.nn.Linear(8, 32), st.nn.GELU(), st.nn.Linear(32, 1))
    opt = st.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = st.nn.MSELoss()
    losses = []
    for epoch in range(40):
        opt.zero_grad()
        loss = loss_fn(model(inputs), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if epoch % 8 == 0 or epoch == 39:
            print(f"  epoch {epoch:2d}  loss {losses[-1]:.5f}")
    _check("loss fell to under a tenth", float(losses[-1] < losses[0] / 10), 1.0)
