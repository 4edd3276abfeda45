"""Modules with torch's API: parameters register themselves on assignment."""

from __future__ import annotations

import collections
import math

from .. import dtypes as D
from ..autograd import no_grad
from ..errors import StateDictError
from ..layout import Layout
from ..ops.creation import empty
from ..ops.random import rand
from ..tensor import ShardedTensor
from . import functional as F


class Parameter(ShardedTensor):
    """A tensor that a :class:`Module` registers as a parameter (a leaf requiring grad). It
    shares the shards of ``data``.

    Examples
    --------
    >>> import sharded as st
    >>> p = st.nn.Parameter(st.zeros(3))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        super().__init__(
            data._storage.session, data._layout, data._dtype, data._keys, storage=data._storage
        )
        self._vc = data._vc
        self.requires_grad = requires_grad

    def _set_data(self, t: ShardedTensor) -> None:
        """Point this parameter at ``t``'s shards (used by ``Module.to``)."""
        self._storage, self._layout, self._dtype, self._keys = (
            t._storage,
            t._layout,
            t._dtype,
            t._keys,
        )
        self._vc[0] += 1

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


IncompatibleKeys = collections.namedtuple("IncompatibleKeys", "missing_keys unexpected_keys")


def _size(t) -> str:
    return f"sharded.Size({list(getattr(t, 'shape', ()))})"


def _quoted(keys) -> str:
    return ", ".join(f'"{k}"' for k in keys)


class Module:
    """Base class of layers and models: assign Parameters and Modules as attributes.

    Examples
    --------
    >>> import sharded as st
    >>> class Net(st.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.a = st.nn.Parameter(st.ones(()))
    ...     def forward(self, x):
    ...         return self.a * x
    >>> [n for n, _ in Net().named_parameters()]
    ['a']
    """

    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix="", recurse=True):
        seen = set()
        for name, p in self._parameters.items():
            if id(p) not in seen:
                seen.add(id(p))
                yield prefix + name, p
        if recurse:
            for mname, m in self._modules.items():
                for name, p in m.named_parameters(prefix + mname + ".", True):
                    if id(p) not in seen:
                        seen.add(id(p))
                        yield name, p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def children(self):
        return iter(self._modules.values())

    def modules(self):
        yield self
        for m in self._modules.values():
            yield from m.modules()

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = p.grad.detach().zero_()

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def to(self, *args, **kwargs):
        """Convert every parameter (and gradient) in place, e.g. ``model.to(st.float64)``."""
        with no_grad():
            for p in self.parameters():
                p._set_data(p.detach().to(*args, **kwargs))
                if p.grad is not None:
                    p.grad = p.grad.to(*args, **kwargs)
        return self

    def double(self):
        return self.to(D.float64)

    def float(self):
        return self.to(D.float32)

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Every parameter by its dotted name, in registration order (torch's
        ``state_dict``): detached tensors sharing the parameters' shards unless ``keep_vars``.

        Examples
        --------
        >>> import sharded as st
        >>> list(st.nn.Linear(3, 2).state_dict())
        ['weight', 'bias']
        """
        out = collections.OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            out[prefix + name] = p if keep_vars else p.detach()
        for mname, m in self._modules.items():
            m.state_dict(out, prefix + mname + ".", keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copy ``state_dict``'s tensors into the parameters of the same names, in place
        (each keeps its own layout, device and dtype). Returns ``(missing_keys,
        unexpected_keys)``; with ``strict`` either is a :class:`StateDictError`, and so is a
        shape mismatch always, raised before any parameter changes.

        Examples
        --------
        >>> import sharded as st
        >>> a, b = st.nn.Linear(3, 2), st.nn.Linear(3, 2)
        >>> b.load_state_dict(a.state_dict())
        IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        >>> (a.weight == b.weight).all().item()
        True
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = [
            f"size mismatch for {k}: copying a param with shape {_size(v)} from checkpoint, "
            f"the shape in current model is {_size(own[k])}."
            for k, v in state_dict.items()
            if k in own and tuple(getattr(v, "shape", ())) != tuple(own[k].shape)
        ]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + _quoted(unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + _quoted(missing) + ". ")
        if errors:
            raise StateDictError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        with no_grad():
            for k, p in own.items():
                if k in state_dict:
                    p.copy_(state_dict[k])
        return IncompatibleKeys(missing, unexpected)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        inner = [f"  ({n}): " + repr(m).replace("\n", "\n  ") for n, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ("\n" + "\n".join(inner) + "\n)" if inner else ")")


class Linear(Module):
    """``y = x @ W.T + b`` with ``W`` (out, in) and ``b`` (out,) initialised uniformly in
    ``±1/sqrt(in_features)`` (torch's default), replicated on every worker unless ``layout=``
    says otherwise.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.Linear(3, 2)(st.ones(5, 3)).shape
    sharded.Size([5, 2])
    """

    def __init__(self, in_features, out_features, bias=True, dtype=None, layout=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features) if in_features else 0.0
        lay = layout if layout is not None else Layout.replicated()
        with no_grad():
            w = rand(out_features, in_features, dtype=dtype, layout=lay) * (2 * bound) - bound
            self.weight = Parameter(w)
            if bias:
                b = (
                    rand(out_features, dtype=dtype, layout=Layout.replicated()) * (2 * bound)
                    - bound
                )
                self.bias = Parameter(b)
            else:
                self.bias = None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Sequential(Module):
    """Modules applied in order.

    Examples
    --------
    >>> import sharded as st
    >>> net = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.ReLU(), st.nn.Linear(4, 1))
    >>> net(st.ones(2, 3)).shape
    sharded.Size([2, 1])
    """

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)


class ReLU(Module):
    """``max(x, 0)``."""

    def forward(self, x):
        return F.relu(x)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, x):
        return F.tanh(x)


class MSELoss(Module):
    """Mean squared error (``reduction`` 'mean', 'sum' or 'none')."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class CrossEntropyLoss(Module):
    """Cross entropy of logits against class indices or probabilities (stable)."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.reduction)
