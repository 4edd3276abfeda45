"""Containers that register their modules (``Sequential``, ``ModuleList``, ``ModuleDict``)
or their parameters (``ParameterList``, ``ParameterDict``)."""

from __future__ import annotations

import collections
import operator

from ...errors import ArgumentError
from ...tensor import ShardedTensor
from .module import Module, Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class _IndexedModules(Module):
    """Modules registered under "0", "1", ...: indexing, slicing, ``len``, iteration,
    ``append``/``extend``/``insert``/``pop``/``del`` (torch renumbers after a removal)."""

    def _index(self, i):
        i = operator.index(i)
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range")
        return str(i % n)

    def _reset(self, mods):
        for k in list(self._modules):
            delattr(self, k)
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(list(self._modules.values())[i])
        return self._modules[self._index(i)]

    def __setitem__(self, i, module):
        self.add_module(self._index(i), module)

    def __delitem__(self, i):
        mods = list(self._modules.values())
        del mods[i if isinstance(i, slice) else int(self._index(i))]
        self._reset(mods)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._reset(mods)

    def pop(self, key=-1):
        m = self[key]
        del self[key]
        return m


class Sequential(_IndexedModules):
    """Modules applied in order (also built from an ordered dict of named modules).

    Examples
    --------
    >>> import sharded as st
    >>> net = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.ReLU(), st.nn.Linear(4, 1))
    >>> net(st.ones(2, 3)).shape
    sharded.Size([2, 1])
    >>> type(net[1:]).__name__, len(net.append(st.nn.Tanh()))
    ('Sequential', 4)
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], collections.OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def __getitem__(self, i):
        if isinstance(i, slice):  # torch keeps the names in a slice of a Sequential
            return Sequential(collections.OrderedDict(list(self._modules.items())[i]))
        return super().__getitem__(i)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(_IndexedModules):
    """A list of modules whose parameters the owner sees (indexing, ``append``,
    ``extend``, ``insert``, ``len``, iteration, slicing).

    Examples
    --------
    >>> import sharded as st
    >>> layers = st.nn.ModuleList([st.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __iadd__(self, modules):
        return self.extend(modules)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(): iterate over it instead")


class ModuleDict(Module):
    """An ordered dict of modules whose parameters the owner sees.

    Examples
    --------
    >>> import sharded as st
    >>> heads = st.nn.ModuleDict({"a": st.nn.Linear(2, 1), "b": st.nn.ReLU()})
    >>> list(heads.keys()), [n for n, _ in heads.named_parameters()]
    (['a', 'b'], ['a.weight', 'a.bias'])
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        if not isinstance(key, str):
            raise ArgumentError(f"ModuleDict keys must be strings, got {type(key).__name__}")
        self.add_module(key, module)

    def __delitem__(self, key):
        delattr(self, key)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        m = self._modules[key]
        delattr(self, key)
        return m

    def clear(self):
        for k in list(self._modules):
            delattr(self, k)

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self[k] = m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(): index it instead")


def _as_param(value):
    """torch's containers wrap a plain tensor into a Parameter (None and Parameters pass)."""
    if value is None or isinstance(value, Parameter):
        return value
    if isinstance(value, ShardedTensor):
        return Parameter(value)
    raise ArgumentError(f"cannot assign {type(value).__name__} as a parameter (a tensor is needed)")


def _param_line(key, p):
    if p is None:
        return f"    ({key}): None"
    size = "x".join(str(s) for s in p.shape)
    return f"    ({key}): Parameter containing: [sharded.{p.dtype.name} of size {size}]"


class ParameterList(Module):
    """A list of parameters that the owner sees (plain tensors are wrapped in Parameters).

    Examples
    --------
    >>> import sharded as st
    >>> ps = st.nn.ParameterList([st.ones(2), st.zeros(3)])
    >>> len(ps), [n for n, _ in ps.named_parameters()], ps[0].requires_grad
    (2, ['0', '1'], True)
    """

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def _key(self, i):
        i = operator.index(i)
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range")
        return str(i % n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(list(self)[i])
        return getattr(self, self._key(i))

    def __setitem__(self, i, value):
        setattr(self, self._key(i), _as_param(value))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        setattr(self, str(len(self)), _as_param(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(_param_line(k, p) for k, p in self._parameters.items())

    def __repr__(self):
        body = self.extra_repr()
        return f"{type(self).__name__}(\n{body}\n)" if body else f"{type(self).__name__}()"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterList has no forward(): iterate over it instead")


class ParameterDict(Module):
    """An ordered dict of parameters that the owner sees (plain tensors are wrapped).

    Examples
    --------
    >>> import sharded as st
    >>> pd = st.nn.ParameterDict({"w": st.ones(2)})
    >>> list(pd.keys()), [n for n, _ in pd.named_parameters()]
    (['w'], ['w'])
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise ArgumentError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        setattr(self, key, _as_param(value))

    def __delitem__(self, key):
        if key not in self._parameters:
            raise KeyError(key)
        delattr(self, key)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def pop(self, key):
        p = self[key]
        del self[key]
        return p

    def clear(self):
        for k in list(self._parameters):
            delattr(self, k)

    def update(self, parameters):
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v

    def __repr__(self):
        body = "\n".join(_param_line(k, p) for k, p in self._parameters.items())
        return f"{type(self).__name__}(\n{body}\n)" if body else f"{type(self).__name__}()"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterDict has no forward(): index it instead")
