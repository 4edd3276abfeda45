"""Modules with torch's API: ``Module``, the base class of layers and models, and
``Parameter``; parameters register themselves on assignment."""

from __future__ import annotations

import collections

from ... import dtypes as D
from ...autograd import no_grad
from ...devices import normalize
from ...errors import ArgumentError, DTypeError, StateDictError
from ...ops.creation.prims import empty
from ...tensor import ShardedTensor

__all__ = ["Module", "Parameter"]


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
        self._take_storage(t)
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
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
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
        elif name in self._buffers:  # reassigning a buffer keeps it a buffer (torch)
            if value is not None and not isinstance(value, ShardedTensor):
                raise ArgumentError(
                    f"cannot assign {type(value).__name__} as buffer {name!r} "
                    "(a tensor or None is expected)"
                )
            self._buffers[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for d in (self._parameters, self._modules, self._buffers):
            d.pop(name, None)
        self._non_persistent.discard(name)
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        """Register ``tensor`` (or None) as buffer ``name``: state that is not a parameter,
        such as BatchNorm's running statistics; it follows ``to()`` and, when
        ``persistent``, appears in ``state_dict``.

        Examples
        --------
        >>> import sharded as st
        >>> m = st.nn.Module()
        >>> m.register_buffer("count", st.zeros(()))
        >>> [n for n, _ in m.named_buffers()]
        ['count']
        """
        if not isinstance(name, str):
            raise DTypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if not name or "." in name:  # torch: KeyError
            raise KeyError(f"buffer name must be a non-empty string without '.', got {name!r}")
        if tensor is not None and not isinstance(tensor, ShardedTensor):
            raise DTypeError(
                f"cannot assign {type(tensor).__name__} as buffer {name!r} "
                "(a tensor or None is expected)"
            )
        if name in self._parameters or name in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)

    def register_parameter(self, name, param):
        """Register ``param`` (a :class:`Parameter` or None) under ``name``."""
        if param is not None and not isinstance(param, Parameter):
            raise ArgumentError(
                f"cannot assign {type(param).__name__} as parameter {name!r} "
                "(a Parameter or None is expected)"
            )
        if param is None:
            self._modules.pop(name, None)
            self._parameters[name] = None
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, param)

    def register_module(self, name, module):
        """Alias of :meth:`add_module` (torch's)."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` (``""`` is ``self``).

        Examples
        --------
        >>> import sharded as st
        >>> st.nn.Sequential(st.nn.Linear(2, 3)).get_submodule("0").out_features
        3
        """
        mod = self
        for item in target.split(".") if target else []:
            if item not in mod._modules or mod._modules[item] is None:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        """The parameter at dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target):
        """The buffer at dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return mod._buffers[name]

    def add_module(self, name, module):
        """Register child ``module`` under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise ArgumentError(f"{type(module).__name__} is not a Module subclass")
        if module is None:
            self._modules[name] = None
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, module)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix="", recurse=True):
        yield from self._named("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def _named(self, kind, prefix, recurse):
        """Each tensor of ``kind`` (``_parameters``/``_buffers``) once, by dotted name."""
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mname, m in mods:
            for name, t in getattr(m, kind).items():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    yield (mname + "." if mname else "") + name, t

    def named_buffers(self, prefix="", recurse=True):
        """``(name, buffer)`` pairs, dotted names as in ``state_dict``.

        Examples
        --------
        >>> import sharded as st
        >>> [n for n, _ in st.nn.Sequential(st.nn.BatchNorm1d(2)).named_buffers()]
        ['0.running_mean', '0.running_var', '0.num_batches_tracked']
        """
        yield from self._named("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix=""):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self.named_children():
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and on ``self``; returns ``self``."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter (freeze with ``False``); returns ``self``.

        Examples
        --------
        >>> import sharded as st
        >>> m = st.nn.Linear(2, 2).requires_grad_(False)
        >>> [p.requires_grad for p in m.parameters()]
        [False, False]
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

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
        """Convert every parameter (and gradient) and buffer in place, e.g.
        ``model.to(st.float64)`` or ``model.to("cuda")``. As in torch, a dtype applies to
        floating-point tensors only (an integer counter stays integer).

        Examples
        --------
        >>> import sharded as st
        >>> m = st.nn.BatchNorm1d(2).to(st.float64)
        >>> m.weight.dtype, m.running_mean.dtype, m.num_batches_tracked.dtype
        (sharded.float64, sharded.float64, sharded.int64)
        """
        dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
        if kwargs:
            raise ArgumentError(f"Module.to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, ShardedTensor):
                dtype = a.dtype
            elif isinstance(a, str) and (a == "cpu" or a.startswith("cuda")):
                device = a
            else:
                try:
                    dtype = D.as_dtype(a)
                except DTypeError:
                    if not isinstance(a, str):
                        raise
                    device = normalize(a)  # torch: a string is a device ("xla": unknown)
        if dtype is not None and not dtype.is_floating_point:
            raise DTypeError(
                f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}"
            )

        def conv(t):
            if device is not None:
                t = t.to(device)
            return t.to(dtype) if dtype is not None and t.dtype.is_floating_point else t

        return self._convert(conv)

    def _convert(self, fn):
        """Replace every parameter's data (in place: the Parameter objects stay, so
        optimizers keep them), gradient and buffer by ``fn`` of it."""
        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is None:
                        continue
                    p._set_data(fn(p.detach()))
                    if p.grad is not None:
                        p.grad = fn(p.grad)
                for name, b in list(m._buffers.items()):
                    if b is not None:
                        m._buffers[name] = fn(b)
                        object.__setattr__(m, name, m._buffers[name])
        return self

    def double(self):
        return self._convert(lambda t: t.to(D.float64) if t.dtype.is_floating_point else t)

    def float(self):
        return self._convert(lambda t: t.to(D.float32) if t.dtype.is_floating_point else t)

    def half(self):
        return self._convert(lambda t: t.to(D.float16) if t.dtype.is_floating_point else t)

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Every parameter, then every persistent buffer, by dotted name, in registration
        order (torch's ``state_dict``): detached tensors sharing the parameters' shards
        unless ``keep_vars``.

        Examples
        --------
        >>> import sharded as st
        >>> list(st.nn.Linear(3, 2).state_dict())
        ['weight', 'bias']
        """
        out = collections.OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                out[prefix + name] = b if keep_vars else b.detach()
        for mname, m in self.named_children():
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
