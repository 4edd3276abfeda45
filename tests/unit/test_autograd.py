import numpy as np
import pytest

import sharded as st
from sharded.autograd import AutogradError, gradcheck
from tests.helpers import assert_matches_numpy

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

rng = np.random.default_rng(0)


def leaf(a, **place):
    return st.from_numpy(np.asarray(a, dtype=np.float64), requires_grad=True, **place)


def test_tutorial_examples():
    x = st.tensor([1.0], requires_grad=True)
    y = -(x * x)
    y.backward()
    assert x.grad.tolist() == [-2.0]
    a = st.ones(6, shards=3, requires_grad=True)
    (a * 5).sum().backward()
    assert a.grad.tolist() == [5.0] * 6
    assert y.grad_fn.name() == "NegBackward0" and not y.is_leaf and x.is_leaf
    d = a.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.add_(1)  # shares storage with a
    assert a.tolist() == [2.0] * 6
    with st.no_grad():
        z = a * 2
    assert not z.requires_grad and (a * 2).requires_grad
    with st.no_grad():
        with st.enable_grad():
            assert (a * 2).requires_grad
    assert st.is_grad_enabled()


def test_accumulation_retain_graph_and_retain_grad():
    x = leaf([1.0, 2.0, 3.0], shards=2)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_matches_numpy(x.grad, 2 * 2 * np.array([1.0, 2.0, 3.0]))
    with pytest.raises(AutogradError, match="second time"):
        y.backward()
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    assert_matches_numpy(h.grad, 2 * 3 * np.array([1.0, 2.0, 3.0]))


def test_backward_with_gradient_and_grad_function():
    x = leaf(rng.standard_normal((4, 3)), shards=2)
    y = x * x
    g = st.from_numpy(np.ones((4, 3)) * 2, shards=3)
    y.backward(gradient=g)
    assert_matches_numpy(x.grad, 4 * x.detach().numpy())
    (gx,) = st.autograd.grad((x**3).sum(), x)
    assert_matches_numpy(gx, 3 * x.detach().numpy() ** 2)
    # second derivative through create_graph
    z = leaf([2.0])
    (g1,) = st.autograd.grad((z**3).sum(), z, create_graph=True)
    (g2,) = st.autograd.grad(g1.sum(), z)
    assert g1.tolist() == [12.0] and g2.tolist() == [12.0]


def test_bad_input_errors():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        st.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        st.autograd.grad((x * 2).sum(), st.ones(2))
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(gradient=st.ones(3, dtype=st.float64))
    with pytest.raises(RuntimeError, match="in-place"):
        x.add_(1)
    assert x.tolist() == [1.0, 2.0]
    y = x * 1
    s = y.exp()  # exp saves its output
    s.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        s.sum().backward()
    with pytest.raises(RuntimeError, match="not have been used"):
        st.autograd.grad((x * 2).sum(), [x, leaf([1.0])])
    with pytest.raises(st.ArgumentError):
        st.zeros(2, dtype=st.int64).requires_grad_()


def test_inplace_on_non_leaf_is_recorded():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    y.add_(1)
    y.mul_(x)  # d/dx (2x + 1) * x = 4x + 1
    y.sum().backward()
    assert_matches_numpy(x.grad, 4 * np.array([1.0, 2.0, 3.0]) + 1)


A = rng.uniform(0.5, 1.5, (5, 4))
B = rng.uniform(0.5, 1.5, (5, 4))
UNARY = {
    "exp": st.exp,
    "log": st.log,
    "log1p": st.log1p,
    "sqrt": st.sqrt,
    "sin": st.sin,
    "cos": st.cos,
    "tanh": st.tanh,
    "sigmoid": st.sigmoid,
    "neg": st.neg,
    "abs": lambda t: st.abs(t - 1),
    "relu": lambda t: st.relu(t - 1),
    "clamp": lambda t: st.clamp(t, 0.8, 1.2),
    "pow_scalar": lambda t: t**3,
    "rpow": lambda t: 2**t,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
    "maximum": st.maximum,
    "minimum": st.minimum,
    "where": lambda a, b: st.where(a > 1, a, b),
    "remainder": lambda a, b: a % (b + 2),
    "clamp_t": lambda a, b: st.clamp(a, max=b),
    "matmul": lambda a, b: a @ b.t(),
    "broadcast": lambda a, b: a * b[0] + b[:, :1],
}
REDUCE = {
    "sum": lambda t: t.sum(),
    "sum0": lambda t: t.sum(0),
    "mean1": lambda t: t.mean(1, True),
    "prod": lambda t: t.prod(1),
    "amax": lambda t: t.amax(0),
    "amin": lambda t: t.amin(),
    "max_dim": lambda t: t.max(1).values,
    "min_dim": lambda t: t.min(0, True).values,
    "var": lambda t: t.var(0),
    "std": lambda t: t.std(),
    "logsumexp": lambda t: t.logsumexp(1),
    "softmax": lambda t: st.softmax(t, 0),
    "log_softmax": lambda t: st.log_softmax(t, 1),
}
VIEWS = {
    "t": lambda t: t.t() * 1,
    "view": lambda t: t.view(5, 4, 1),
    "reshape": lambda t: t.reshape(-1),
    "permute": lambda t: t.unsqueeze(0).permute(2, 0, 1),
    "squeeze": lambda t: t[None].squeeze(0),
    "expand": lambda t: t[:, :1].expand(5, 3) * 1,
    "index": lambda t: t[1:4:2, ::3],
    "int_index": lambda t: t[-1],
    "gather": lambda t: t[[0, 0, 3], [1, 1, 2]],
    "mask": lambda t: t[t > 1],
    "cat": lambda t: st.cat([t, t * 2], 1),
    "stack": lambda t: st.stack([t, t], 0),
    "flip": lambda t: st.flip(t, [0]),
    "roll": lambda t: st.roll(t, 2, 1),
    "split": lambda t: st.split(t, 2)[1],
    "reshard": lambda t: t.reshard(dim=1) * 1,
    "contiguous": lambda t: t.t().contiguous(),
}
PLACES = [dict(shards=2), dict(shards=3, dim=1), dict(layout=st.Layout.replicated())]


@pytest.mark.ray_mirror(False)  # on Ray a subset: tests/ray/test_autograd.py
@pytest.mark.parametrize("place", PLACES, ids=["rows", "cols", "repl"])
@pytest.mark.parametrize("name", sorted(UNARY) + sorted(REDUCE) + sorted(VIEWS))
def test_gradcheck_unary(name, place):
    f = {**UNARY, **REDUCE, **VIEWS}[name]
    assert gradcheck(f, (leaf(A, **place),))


@pytest.mark.ray_mirror(False)  # on Ray a subset: tests/ray/test_autograd.py
@pytest.mark.parametrize(
    "pa, pb",
    [(PLACES[0], PLACES[0]), (PLACES[0], PLACES[1]), (PLACES[2], PLACES[0])],
    ids=["same", "mixed", "repl"],
)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_gradcheck_binary(name, pa, pb):
    assert gradcheck(BINARY[name], (leaf(A, **pa), leaf(B, **pb)))


def test_replicated_parameter_gradient_is_aggregated_and_replicated():
    x = st.from_numpy(A, shards=3)
    w = leaf(rng.standard_normal((4, 1)), layout=st.Layout.replicated())
    ((x @ w) ** 2).sum().backward()
    assert w.grad.layout == w.layout and w.grad.layout.is_replicated
    ref = 2 * A.T @ (A @ w.detach().numpy())
    assert_matches_numpy(w.grad, ref, rtol=1e-12)
    bias = leaf([0.5], layout=st.Layout.replicated())
    (x * bias).sum().backward()
    assert bias.grad.layout.is_replicated and bias.grad.item() == pytest.approx(A.sum())


def test_dtype_conversion_gradient_keeps_primal_dtype():
    x = st.tensor([1.0, 2.0], dtype=st.float64, requires_grad=True)
    (x.float() * 3).sum().backward()
    assert x.grad.dtype == st.float64 and x.grad.tolist() == [3.0, 3.0]


def test_inplace_on_views_routes_gradients_through_the_base():
    x = leaf(np.arange(1.0, 6.0), shards=2)
    y = x * 1
    y[0] = 5.0
    y[1:3].mul_(2)
    (y * y).sum().backward()
    v = np.arange(1.0, 6.0)
    ref = 2 * v * np.array([0, 4, 4, 1, 1])
    assert_matches_numpy(x.grad, ref)
    with pytest.raises(RuntimeError, match="view of one"):
        x[0:2].add_(1)
    src = leaf([1.0, 2.0])
    buf = st.zeros(4, dtype=st.float64)
    buf[1:3] = src * 3
    (buf * buf).sum().backward()
    assert_matches_numpy(src.grad, 2 * 9 * np.array([1.0, 2.0]))
