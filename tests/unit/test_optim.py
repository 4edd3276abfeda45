"""Optimizers step for step against numpy implementations of torch's update formulas
(the references were checked against torch 2.13 on the same problem)."""

import numpy as np
import pytest

import sharded as st
from sharded.optim import capture

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

RNG = np.random.default_rng(5)
XS = RNG.standard_normal((48, 3))
YS = XS @ np.array([[1.5], [-2.0], [0.5]]) + 0.25


def _grad(w):
    return 2 * XS.T @ (XS @ w - YS) / len(YS)


def ref_sgd(w, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, steps=30):
    buf, out = None, []
    for _ in range(steps):
        d = _grad(w) + weight_decay * w
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        w = w - lr * d
        out.append(w)
    return out


def ref_adamw(w, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, steps=30):
    b1, b2 = betas
    m, v, vmax, out = 0 * w, 0 * w, 0 * w, []
    for t in range(1, steps + 1):
        g = _grad(w)
        w = w * (1 - lr * weight_decay)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vv = vmax if amsgrad else v
        w = w - lr / (1 - b1**t) * m / (np.sqrt(vv) / np.sqrt(1 - b2**t) + eps)
        out.append(w)
    return out


def ref_adam(w, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, steps=30):
    """Adam: weight decay is L2, added to the gradient (AdamW's shrinks the weights)."""
    b1, b2 = betas
    m, v, vmax, out = 0 * w, 0 * w, 0 * w, []
    for t in range(1, steps + 1):
        g = _grad(w) + weight_decay * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vv = vmax if amsgrad else v
        w = w - lr / (1 - b1**t) * m / (np.sqrt(vv) / np.sqrt(1 - b2**t) + eps)
        out.append(w)
    return out


def ref_rmsprop(
    w, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, steps=30
):
    sq, ga, buf, out = 0 * w, 0 * w, 0 * w, []
    for _ in range(steps):
        g = _grad(w) + weight_decay * w
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = np.sqrt(sq - ga * ga) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / avg
            w = w - lr * buf
        else:
            w = w - lr * g / avg
        out.append(w)
    return out


def ref_adagrad(
    w, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10, steps=30
):
    s, out = 0 * w + initial_accumulator_value, []
    for t in range(1, steps + 1):
        g = _grad(w) + weight_decay * w
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        w = w - clr * g / (np.sqrt(s) + eps)
        out.append(w)
    return out


CASES = [
    (st.optim.SGD, ref_sgd, dict(lr=0.05)),
    (st.optim.SGD, ref_sgd, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    (st.optim.SGD, ref_sgd, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    (st.optim.Adam, ref_adam, dict(lr=0.05)),
    (st.optim.Adam, ref_adam, dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    (st.optim.AdamW, ref_adamw, dict(lr=0.05)),
    (st.optim.AdamW, ref_adamw, dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    (st.optim.RMSprop, ref_rmsprop, dict(lr=0.01)),
    (st.optim.RMSprop, ref_rmsprop, dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    (st.optim.Adagrad, ref_adagrad, dict(lr=0.1)),
    (
        st.optim.Adagrad,
        ref_adagrad,
        dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5),
    ),
]


def _run(cls, kw, steps, shards=3, w0=None):
    X = st.from_numpy(XS, shards=shards)
    y = st.from_numpy(YS, shards=shards)
    w0 = np.full((3, 1), 0.3) if w0 is None else w0
    w = st.nn.Parameter(st.from_numpy(w0.copy(), layout=st.Layout.replicated()))
    opt = cls([w], **kw)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        ((X @ w - y) ** 2).mean().backward()
        opt.step()
        out.append(w.detach().numpy())
    return out, opt, w


@pytest.mark.parametrize("cls,ref,kw", CASES, ids=[f"{c.__name__}{i}" for i, (c, _, _) in
                                                   enumerate(CASES)])  # fmt: skip
def test_optimizer_matches_torch_formula_step_for_step(cls, ref, kw):
    got, _, w = _run(cls, kw, 30)
    want = ref(np.full((3, 1), 0.3), steps=30, **kw)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert w.layout.is_replicated


def test_first_steps_equal_torchs_values():
    # torch 2.13, w0 = [1, -1], loss = sum(w**2 * [1, 3]), 3 steps each
    cases = {
        "AdamW": (
            dict(lr=0.1, weight_decay=0.1, amsgrad=True),
            [0.6751012216400697, -0.6751012206073158],
        ),
        "Adam": (
            dict(lr=0.1, weight_decay=0.1, amsgrad=True),
            [0.7015862728718214, -0.7015862718985914],
        ),
        "RMSprop": (
            dict(lr=0.01, momentum=0.9, centered=True),
            [0.5496501653165234, -0.5496501524761682],
        ),
        "Adagrad": (dict(lr=0.5, lr_decay=0.1), [0.18983970694396776, -0.18983970692873933]),
    }
    for name, (kw, want) in cases.items():
        w = st.nn.Parameter(st.tensor([1.0, -1.0], dtype=st.float64))
        opt = getattr(st.optim, name)([w], **kw)
        for _ in range(3):
            opt.zero_grad()
            (w * w * st.tensor([1.0, 3.0], dtype=st.float64)).sum().backward()
            opt.step()
        np.testing.assert_allclose(w.detach().numpy(), want, rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("cls,ref,kw", CASES[3:], ids=lambda v: getattr(v, "__name__", ""))
def test_state_dict_resume_equals_uninterrupted_run(cls, ref, kw):
    full, _, _ = _run(cls, kw, 10)
    first, opt, w = _run(cls, kw, 4)
    sd = opt.state_dict()
    w2 = st.nn.Parameter(st.from_numpy(w.detach().numpy(), shards=2))  # another layout
    opt2 = cls([w2], **kw)
    opt2.load_state_dict(sd)
    X, y = st.from_numpy(XS, shards=2), st.from_numpy(YS, shards=2)
    for step in range(4, 10):
        opt2.zero_grad()
        ((X @ w2 - y) ** 2).mean().backward()
        opt2.step()
        np.testing.assert_allclose(w2.detach().numpy(), full[step], rtol=1e-10, atol=1e-12)


def test_bad_hyper_parameters_are_typed_errors():
    p = [st.nn.Parameter(st.ones(2))]
    with pytest.raises(st.ArgumentError, match="lr=-1"):
        st.optim.AdamW(p, lr=-1)
    with pytest.raises(st.ArgumentError, match=r"betas \(0.9, 1.0\)"):
        st.optim.AdamW(p, betas=(0.9, 1.0))
    with pytest.raises(st.ArgumentError, match="momentum=-0.5"):
        st.optim.RMSprop(p, momentum=-0.5)
    with pytest.raises(st.ArgumentError, match="lr_decay=-1"):
        st.optim.Adagrad(p, lr_decay=-1)
    with pytest.raises(st.ArgumentError, match="Nesterov"):
        st.optim.SGD(p, lr=0.1, nesterov=True)
    assert st.optim.AdamW(p).defaults["weight_decay"] == 0.01
    assert st.optim.Adagrad(p).state[id(p[0])]["sum"].tolist() == [0.0, 0.0]


CAPTURABLE = [c for c in CASES if c[0] is not st.optim.SGD]


@pytest.mark.parametrize("cls,ref,kw", CAPTURABLE, ids=lambda v: getattr(v, "__name__", ""))
def test_a_step_tensor_equals_a_python_step_count(cls, ref, kw):
    # capturable=True (torch's flag: the count is a tensor, the bias corrections tensor ops)
    # gives the formula's values too; Adagrad has no flag (as in torch): a tensor count put in
    # its state is kept, as after a step traced by st.jit
    X, y = st.from_numpy(XS, shards=3), st.from_numpy(YS, shards=3)
    w = st.nn.Parameter(st.from_numpy(np.full((3, 1), 0.3), shards=2))
    if cls is st.optim.Adagrad:
        opt = cls([w], **kw)
        opt.state[id(w)]["step"] = capture.step_tensor(w)
    else:
        opt = cls([w], **kw, capturable=True)
    want = ref(np.full((3, 1), 0.3), steps=6, **kw)
    for i in range(6):
        opt.zero_grad()
        ((X @ w - y) ** 2).mean().backward()
        opt.step()
        np.testing.assert_allclose(w.detach().numpy(), want[i], rtol=1e-10, atol=1e-12)
    step = opt.state[id(w)]["step"]
    assert isinstance(step, st.Tensor) and step.shape == () and step.dtype == st.float64
    assert step.item() == 6.0 and step.layout.is_replicated
    assert step.layout.workers == tuple(sorted(set(w.layout.workers)))  # where w's shards are


def _steps(opt, w, n, shards=2):
    X, y = st.from_numpy(XS, shards=shards), st.from_numpy(YS, shards=shards)
    for _ in range(n):
        opt.zero_grad()
        ((X @ w - y) ** 2).mean().backward()
        opt.step()


def test_step_tensors_save_load_and_convert(tmp_path):
    # torch saves ``step`` as a tensor; a capturable optimizer's saved step tensor loads as
    # an int into a default one, and an int as a step tensor on the parameter's workers
    kw = dict(lr=0.05, betas=(0.8, 0.99), amsgrad=True)
    full, _, _ = _run(st.optim.Adam, dict(kw, capturable=True), 9)
    _, opt, w = _run(st.optim.Adam, dict(kw, capturable=True), 3)
    st.save(opt.state_dict(), tmp_path / "o")
    sd = st.load(tmp_path / "o")
    assert isinstance(sd["state"][0]["step"], st.Tensor) and sd["state"][0]["step"].item() == 3
    assert sd["param_groups"][0]["capturable"] is True
    # into a capturable optimizer: the saved tensor is copied next to a parameter kept whole
    w1 = st.nn.Parameter(st.from_numpy(w.detach().numpy(), shards=1))
    cap1 = st.optim.Adam([w1], **kw)
    cap1.load_state_dict(sd)
    assert cap1.state[id(w1)]["step"].layout.workers == w1.layout.workers
    _steps(cap1, w1, 6)
    np.testing.assert_allclose(w1.detach().numpy(), full[8], rtol=1e-12)
    assert cap1.state[id(w1)]["step"].item() == 9.0 and sd["state"][0]["step"].item() == 3
    w2 = st.nn.Parameter(st.from_numpy(w.detach().numpy(), shards=2))
    sd["param_groups"][0]["capturable"] = False
    plain = st.optim.Adam([w2], **kw)
    plain.load_state_dict(sd)
    assert plain.state[id(w2)]["step"] == 3
    _steps(plain, w2, 3)
    np.testing.assert_allclose(w2.detach().numpy(), full[5], rtol=1e-12)
    sd = plain.state_dict()
    del sd["param_groups"][0]["capturable"]  # as saved before the flag existed
    w3 = st.nn.Parameter(st.from_numpy(w2.detach().numpy(), layout=st.Layout.replicated()))
    cap = st.optim.Adam([w3], **kw, capturable=True)
    cap.load_state_dict(sd)
    step = cap.state[id(w3)]["step"]
    assert cap.param_groups[0]["capturable"] is True  # the optimizer's default fills it in
    assert step.item() == 6.0 and step.layout.workers == w3.layout.workers
    _steps(cap, w3, 3)
    np.testing.assert_allclose(w3.detach().numpy(), full[8], rtol=1e-12)
    assert cap.state[id(w3)]["step"].item() == 9.0


# ------------------------------------------- torch 2.13's keywords (values from torch, float64)
_G = [[0.5, -1.0], [0.25, 2.0], [-1.5, 0.75]]
_OPT_CASES = [
    (st.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True),
     [0.8695767360000001, -1.4981784720000002]),
    (st.optim.Adam, dict(lr=0.1, amsgrad=True, weight_decay=0.1, maximize=True),
     [1.1432119092198607, -1.994976166452233]),
    (st.optim.Adam, dict(lr=0.1, weight_decay=0.5, decoupled_weight_decay=True),
     [0.713290288679309, -1.706434287491327]),
    (st.optim.RMSprop, dict(lr=0.1, maximize=True, momentum=0.5, centered=True),
     [2.4993108435976836, -2.0938379337242083]),
    (st.optim.Adagrad, dict(lr=0.1, maximize=True, lr_decay=0.1),
     [1.0625689004423893, -1.9921884901764266]),
]  # fmt: skip


@pytest.mark.parametrize("cls,kw,want", _OPT_CASES)
def test_maximize_and_decoupled_weight_decay_match_torch(cls, kw, want):
    p = st.nn.Parameter(st.tensor([1.0, -2.0], dtype=st.float64, shards=2))
    opt = cls([p], foreach=None, **kw)  # foreach= is accepted (and ignored), as torch
    for g in _G:
        p.grad = st.tensor(g, dtype=st.float64)
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-12)
    assert opt.param_groups[0]["maximize"] == kw.get("maximize", False)


def test_sgd_without_momentum_keeps_no_state_as_torch():
    p = st.nn.Parameter(st.ones(2))
    opt = st.optim.SGD([p], lr=0.1)
    p.grad = st.ones(2)
    opt.step()
    assert opt.state_dict()["state"] == {}
