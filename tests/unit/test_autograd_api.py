"""The autograd API against torch's contracts: grad modes (context managers and decorators),
tensor hooks, retain_grad, ``.data``, ``backward(inputs=)``, ``grad(materialize_grads=)``
and second derivatives through saved outputs (expected values are torch's)."""

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def leaf(a, **kw):
    return st.tensor(a, requires_grad=True, shards=2, **kw)


@pytest.mark.parametrize(
    "f, d2",
    [  # second derivatives: rules that read their saved output (exp, tanh, sigmoid, sqrt)
        (lambda x: x.sin() * x.exp(), lambda x: 2 * np.cos(x) * np.exp(x)),
        (lambda x: x.exp(), np.exp),
        (lambda x: x * x.exp(), lambda x: (x + 2) * np.exp(x)),
        (lambda x: x.tanh(), lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
        (lambda x: x.sqrt(), lambda x: -0.25 * x**-1.5),
        (lambda x: x**3, lambda x: 6 * x),
    ],
)
def test_second_derivative_through_create_graph(f, d2):
    a = np.array([1.0, 2.0, 0.5])
    x = leaf(a, dtype=st.float64)
    (g,) = st.autograd.grad(f(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (g2,) = st.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.detach().numpy(), d2(a), rtol=1e-10)


def test_grad_modes_as_context_managers_and_decorators():
    x = leaf([1.0, 2.0])

    @st.no_grad
    def bare(a):
        return a * 2

    @st.no_grad()
    def called(a):
        return a * 2

    @st.enable_grad
    def on(a):
        return a * 2

    assert not bare(x).requires_grad and not called(x).requires_grad
    with st.no_grad():
        assert on(x).requires_grad and not st.is_grad_enabled()

    @st.set_grad_enabled(False)
    def off(a):
        return a * 2

    assert st.is_grad_enabled()  # decorating changes nothing until the function runs
    assert not off(x).requires_grad and st.is_grad_enabled()
    st.set_grad_enabled(False)  # a plain call switches at once, as torch's
    assert not st.is_grad_enabled() and not (x * 2).requires_grad
    st.set_grad_enabled(True)
    assert st.is_grad_enabled() and st.autograd.no_grad is st.no_grad


def test_inference_mode():
    x = leaf([1.0, 2.0])
    assert not st.is_inference_mode_enabled()
    with st.inference_mode():
        assert st.is_inference_mode_enabled() and not st.is_grad_enabled()
        assert not (x * 2).requires_grad
    with st.no_grad(), st.inference_mode(False):  # torch: mode=False turns recording on
        assert not st.is_inference_mode_enabled() and st.is_grad_enabled()

    @st.inference_mode
    def f(a):
        return a * 2

    assert not f(x).requires_grad and st.is_grad_enabled()


def test_leaf_hooks_see_the_summed_gradient_and_may_replace_it():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3 + x * x).sum().backward()
    assert seen == [[5.0, 7.0]] and x.grad.tolist() == [5.0, 7.0]  # one call, the total
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g + 1)
    h = x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]  # in registration order
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]
    assert st.autograd.grad((x * 3).sum(), x)[0].tolist() == [4.0, 4.0]  # grad() runs them too
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        st.ones(2).register_hook(lambda g: g)


def test_non_leaf_hooks_and_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    # the hook changes what flows on; retain_grad keeps the hooked value (torch >= 2.0)
    assert x.grad.tolist() == [80.0, 160.0] and y.grad.tolist() == [40.0, 80.0]
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 2)
    assert st.autograd.grad((y * 3).sum(), y, retain_graph=True)[0].tolist() == [6.0, 6.0]
    assert st.autograd.grad((y * 3).sum(), x)[0].tolist() == [12.0, 12.0]


def test_retain_grad_on_a_root_and_its_errors():
    x = leaf([1.0, 2.0])
    y = (x * 2).sum()
    y.retain_grad()
    y.backward()
    assert y.grad.item() == 1.0 and y.retains_grad and not x.retains_grad
    x.retain_grad()  # a no-op on a leaf
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        st.ones(2).retain_grad()
    h = x * 2
    h.retain_grad()
    h.add_(1)  # retain_grad follows the tensor to its new version
    (h * h).sum().backward()
    assert h.grad.tolist() == [6.0, 10.0]


def test_requires_grad_flag_rules():
    with pytest.raises(RuntimeError, match="floating point and complex"):
        st.tensor([1, 2]).requires_grad = True
    with pytest.raises(RuntimeError, match="floating point and complex"):
        st.tensor([1, 2]).requires_grad_()
    i = st.tensor([1, 2])
    i.requires_grad = False
    y = leaf([1.0, 2.0]) * 2
    y.requires_grad_(True)
    for set_false in (lambda: y.requires_grad_(False), lambda: setattr(y, "requires_grad", False)):
        with pytest.raises(RuntimeError, match="leaf variables"):
            set_false()
    with pytest.raises(RuntimeError, match="detach views in-place"):
        leaf([1.0, 2.0]).view(2).detach_()
    z = leaf([1.0, 2.0]) * 2
    assert z.detach_() is z and not z.requires_grad and z.is_leaf


def test_numpy_of_a_tensor_that_requires_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 2.0] and x.tolist() == [1.0, 2.0]
    assert (x * 2)[0].item() == 2.0


def test_data_and_version():
    x = leaf([1.0, 2.0])
    assert not x.data.requires_grad and x.data.is_leaf
    x.data.add_(1)  # changes x without recording
    assert x.tolist() == [2.0, 3.0] and x.requires_grad and x._version == 0  # not counted
    x.data = st.tensor([5.0, 6.0, 7.0])
    assert x.tolist() == [5.0, 6.0, 7.0] and x.requires_grad
    with pytest.raises(RuntimeError, match="floating point or complex"):
        x.data = st.tensor([1, 2])
    y = st.zeros(2)
    y.add_(1)
    y.mul_(2)
    assert y._version == 2


def test_backward_inputs_and_materialize_grads():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[x])
    assert x.grad.tolist() == [3.0, 4.0] and w.grad is None
    st.autograd.backward((x * w).sum(), inputs=[w])
    assert w.grad.tolist() == [1.0, 2.0] and x.grad.tolist() == [3.0, 4.0]
    z = leaf([1.0])
    gx, gz = st.autograd.grad((x * x).sum(), [x, z], materialize_grads=True)
    assert gx.tolist() == [2.0, 4.0] and gz.tolist() == [0.0]
    with pytest.raises(ValueError, match="allow_unused"):
        st.autograd.grad((x * x).sum(), [x, z], allow_unused=False, materialize_grads=True)
