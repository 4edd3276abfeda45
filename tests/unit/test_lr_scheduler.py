"""Learning-rate schedulers against torch's values (recorded from torch 2.13, step by step:
the (lr, momentum) pair before each ``opt.step(); sched.step()``)."""

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

L = st.optim.lr_scheduler

TORCH = {
    "step": [1.0] * 3 + [0.5] * 3 + [0.25] * 3 + [0.125] * 3,
    "multistep": [1.0, 1.0, 0.3, 0.3, 0.3] + [0.027] * 4 + [0.0081] * 3,
    "exp": [0.8**k for k in range(12)],
    "cos": [1.0, 0.8681980515339464, 0.55, 0.23180194846605368, 0.1, 0.2318019484660536, 0.55,
            0.8681980515339467, 1.0000000000000004, 0.8681980515339468, 0.5500000000000004,
            0.2318019484660541],
    "lambda": [1 / (1 + e) for e in range(12)],
    "onecycle": [0.08000000000000007, 0.6995793084391662, 1.7585703182442574, 1.9888308709018234,
                 1.8660259396828234, 1.623491307899526, 1.2947579953902066, 0.9252742053339501,
                 0.5661219964173985, 0.2669550603776612, 0.06913397485079044, 8e-06],
    "onecycle3": [0.08, 1.04, 2.0, 1.04, 0.08000000000000007, 0.06857257142857143,
                  0.05714514285714286, 0.045717714285714285, 0.03429028571428572,
                  0.022862857142857136, 0.011435428571428569, 7.999999999994123e-06],
}  # fmt: skip
TORCH_MOMENTUM = {
    "onecycle": [0.95, 0.9177302443521267, 0.8625744625914449, 0.8505584586887436,
                 0.856698729810778, 0.8688255099070633, 0.8852622412794547, 0.9037365046793212,
                 0.9216941869558779, 0.9366525935914912, 0.9465436874322102, 0.95],
    "onecycle3": [0.95, 0.9, 0.85, 0.9] + [0.95] * 8,
}  # fmt: skip

CASES = {
    "step": lambda o: L.StepLR(o, 3, 0.5),
    "multistep": lambda o: L.MultiStepLR(o, [2, 5, 5, 9], 0.3),
    "exp": lambda o: L.ExponentialLR(o, 0.8),
    "cos": lambda o: L.CosineAnnealingLR(o, 4, 0.1),
    "lambda": lambda o: L.LambdaLR(o, lambda e: 1 / (1 + e)),
    "onecycle": lambda o: L.OneCycleLR(o, 2.0, total_steps=12),
    "onecycle3": lambda o: L.OneCycleLR(
        o, 2.0, total_steps=12, three_phase=True, anneal_strategy="linear", pct_start=0.25
    ),
}


def _run(make, n=12, opt=None):
    opt = opt or st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0, momentum=0.9)
    sched = make(opt)
    lrs, moms = [], []
    for _ in range(n):
        g = opt.param_groups[0]
        lrs.append(sched.get_last_lr()[0])
        moms.append(g["momentum"] if "momentum" in g else g["betas"][0])
        opt.step()
        sched.step()
    return lrs, moms, sched, opt


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_matches_torch(name):
    lrs, moms, _, opt = _run(CASES[name])
    assert lrs == pytest.approx(TORCH[name], rel=1e-13, abs=1e-15)
    assert moms == pytest.approx(TORCH_MOMENTUM.get(name, [0.9] * 12), rel=1e-13)
    assert opt.param_groups[0]["initial_lr"] == pytest.approx(
        TORCH[name][0] if "one" in name else 1
    )


def test_one_cycle_cycles_adams_beta1():
    w = st.nn.Parameter(st.ones(2))
    opt = st.optim.Adam([w], lr=0.1)
    make = lambda o: L.OneCycleLR(o, 0.5, epochs=2, steps_per_epoch=3)  # noqa: E731
    lrs, moms, sched, _ = _run(make, 6, opt)
    assert lrs == pytest.approx(
        [0.02, 0.49720771772545586, 0.4058728269748815, 0.23131855133348753,
         0.0667387650944153, 2e-06], rel=1e-13)  # fmt: skip
    assert moms == pytest.approx(
        [0.95, 0.8505584586887436, 0.8688255099070633, 0.9037365046793212,
         0.9366525935914912, 0.95], rel=1e-13)  # fmt: skip
    assert opt.param_groups[0]["betas"][1] == 0.999
    with pytest.raises(st.ArgumentError, match="Tried to step 7 times"):
        sched.step()


def test_state_dict_round_trip_resumes_the_schedule():
    full, _, _, _ = _run(CASES["cos"], 12)
    opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    s = CASES["cos"](opt)
    for _ in range(5):
        opt.step()
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 5 and sd["T_max"] == 4
    opt2 = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    s2 = L.CosineAnnealingLR(opt2, 4, 0.1)
    s2.load_state_dict(sd)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    rest = []
    for _ in range(7):
        rest.append(s2.get_last_lr()[0])
        opt2.step()
        s2.step()
    assert rest == pytest.approx(full[5:], rel=1e-13)


def test_lambda_state_dict_follows_torch():
    class Warm:
        def __init__(self):
            self.k = 2

        def __call__(self, e):
            return self.k * e

    opt = st.optim.SGD([{"params": [st.nn.Parameter(st.ones(1))]},
                        {"params": [st.nn.Parameter(st.ones(1))], "lr": 0.5}], lr=1.0)  # fmt: skip
    w = Warm()
    s = L.LambdaLR(opt, [lambda e: 1.0, w])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [None, {"k": 2}]
    sd["lr_lambdas"][1]["k"] = 3
    s.load_state_dict(sd)
    assert w.k == 3
    opt.step()
    s.step()
    assert s.get_last_lr() == [1.0, 1.5]
    with pytest.raises(st.ArgumentError, match="Expected 2 lr_lambdas, but got 1"):
        L.LambdaLR(opt, [lambda e: 1.0])


def test_closed_form_step_with_epoch_and_errors():
    opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    s = L.StepLR(opt, 2, 0.5)
    s.step(5)
    assert s.get_last_lr() == [0.25] and opt.param_groups[0]["lr"] == 0.25
    m = L.MultiStepLR(st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0), [1, 3], 0.5)
    m.step(4)
    assert m.get_last_lr() == [0.25]
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        L.StepLR([], 2)
    with pytest.raises(st.ArgumentError, match="momentum or beta1"):
        L.OneCycleLR(st.optim.Adagrad([st.nn.Parameter(st.ones(1))]), 1.0, total_steps=3)
    with pytest.raises(st.ArgumentError, match="total_steps OR"):
        L.OneCycleLR(opt, 1.0)
    with pytest.raises(st.ArgumentError, match="pct_start, but got 2"):
        L.OneCycleLR(opt, 1.0, total_steps=3, pct_start=2)
    with pytest.raises(KeyError, match="initial_lr"):
        L.ExponentialLR(st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0), 0.5, last_epoch=3)


# ---------------------------------------------- schedulers added by the audit (torch 2.13 values)
def _lr_sequence(make, n=8, metrics=None):
    opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    s = make(opt)
    out = [opt.param_groups[0]["lr"]]
    for i in range(n):
        opt.step()
        s.step(metrics[i]) if metrics else s.step()
        out.append(opt.param_groups[0]["lr"])
    return out


M = st.optim.lr_scheduler
_METRICS = [1.0, 0.9, 0.95, 0.95, 0.94, 0.96, 0.5, 0.5]
_SCHED_CASES = [
    (lambda o: M.LinearLR(o, start_factor=0.5, end_factor=0.9, total_iters=4), None,
     [0.5, 0.6, 0.7, 0.8, 0.9, 0.9, 0.9, 0.9, 0.9]),
    (lambda o: M.ConstantLR(o, factor=0.5, total_iters=3), None,
     [0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    (lambda o: M.PolynomialLR(o, total_iters=4, power=2.0), None,
     [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0, 0.0, 0.0, 0.0]),
    (lambda o: M.MultiplicativeLR(o, lambda e: 0.9), None, [0.9**k for k in range(9)]),
    (lambda o: M.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.1), None,
     [1.0, 0.55, 1.0, 0.868198051534, 0.55, 0.231801948466, 1.0, 0.96574578963,
      0.868198051534]),
    (lambda o: M.SequentialLR(o, [M.LinearLR(o, start_factor=0.25, total_iters=3),
                                  M.StepLR(o, 2, 0.5)], milestones=[3]), None,
     [0.25, 0.5, 0.75, 1.0, 1.0, 0.5, 0.5, 0.25, 0.25]),
    (lambda o: M.ChainedScheduler([M.ConstantLR(o, factor=0.5, total_iters=2),
                                   M.ExponentialLR(o, gamma=0.9)]), None,
     [0.5, 0.45] + [0.9**k for k in range(2, 9)]),
    (lambda o: M.ReduceLROnPlateau(o, patience=1, factor=0.5, cooldown=1, min_lr=0.2), _METRICS,
     [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5]),
    (lambda o: M.ReduceLROnPlateau(o, mode="max", patience=0, threshold=0.1,
                                   threshold_mode="abs"), _METRICS,
     [1.0, 1.0, 0.1, 0.01, 0.001, 0.0001, 1e-05, 1e-06, 1e-07]),
]  # fmt: skip


@pytest.mark.parametrize("make,metrics,want", _SCHED_CASES)
def test_more_schedulers_follow_torchs_lr_sequences(make, metrics, want):
    np.testing.assert_allclose(_lr_sequence(make, metrics=metrics), want, rtol=1e-10)


def test_scheduler_argument_errors_as_torch():
    opt = st.optim.SGD([st.nn.Parameter(st.ones(1))], lr=1.0)
    with pytest.raises(ValueError):
        M.LinearLR(opt, start_factor=0.0)
    with pytest.raises(ValueError):
        M.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(TypeError):
        M.LambdaLR(opt, lr_lambda=0.5)
    with pytest.raises(ValueError):
        M.SequentialLR(opt, [M.ConstantLR(opt)], milestones=[1])
