"""Write the ``.pyi`` stubs of sharded's public surface, read from the live objects.

``ShardedTensor`` gets its ~580 methods at import time (``registry.bind`` setattr's them) and
``sharded/__init__.py`` star-imports the op families, so neither an editor nor a type checker
can read the surface from the source. This tool imports ``sharded`` and writes a stub beside
each public module's file (``x.pyi`` by ``x.py``, ``__init__.pyi`` for a package): every public
name with its ``inspect.signature``, the source's annotations and its docstring's summary; a
return the source does not annotate gets a rule's (:meth:`Stub.returns`). It reads objects, not
files, so after a re-layout a new run writes correct stubs (and deletes those of moved modules).
``python -m sharded.tools.stubgen`` writes them; ``--check`` exits 1 when one is stale.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections.abc
import dis
import functools
import inspect
import sys
import textwrap
import types
import typing
from pathlib import Path

import numpy as np

import sharded as st

# The stubbed modules, as attribute paths from ``sharded`` ("" is the package); the module
# that defines ShardedTensor comes first, so the classes it defines live in its stub.
SURFACE = ("", "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "linalg", "fft")
SURFACE += ("special", "signal", "signal.windows", "masked")
SURFACE += ("random", "optim", "optim.lr_scheduler", "autograd")
OUTSIDE = "sharded.tools"  # tools sit outside the library (``import sharded`` never loads them)
LIMIT = 100  # ruff's line length: the stubs pass ``ruff check`` and ``ruff format --check``
SELF = object()  # stands for ``typing_extensions.Self`` in the rules below

# A function whose first parameter has one of these names takes a tensor.
_TENSOR_PARAMS = {"input", "x", "a", "A", "tensor", "tensors", "y", "x1"}
# Return types by name (the source's own annotation wins), for every function and method...
_BY_NAME = dict.fromkeys(("__init__", "__setitem__", "__delitem__", "backward", "step"), "None")
_BY_NAME |= {"zero_grad": "None", "__bool__": "bool", "__contains__": "bool", "__len__": "int"}
_BY_NAME |= {"__int__": "int", "__index__": "int", "__float__": "float", "__repr__": "str"}
_BY_NAME |= {"__str__": "str", "__complex__": "complex"}
# ... and for the tensor's methods and the functions of tensors (torch's return types).
_TUPLE = "tuple[ShardedTensor, ...]"
_TENSOR_BY_NAME = {"item": "bool | int | float | complex", "numpy": "ndarray", "shape": "Size"}
_TENSOR_BY_NAME |= {"__array__": "ndarray", "__iter__": "Iterator[ShardedTensor]"}
_TENSOR_BY_NAME |= {"broadcast_shapes": "Size", "layout": "Layout", "retains_grad": "bool"}
_TENSOR_BY_NAME |= {"grad": "ShardedTensor | None", "__dlpack_device__": "tuple[int, int]"}
_TENSOR_BY_NAME |= dict.fromkeys(("std_mean", "var_mean"), "tuple[ShardedTensor, ShardedTensor]")
_TENSOR_BY_NAME |= dict.fromkeys(("dim", "numel", "nelement", "ndimension", "element_size"), "int")
_TENSOR_BY_NAME |= dict.fromkeys(("get_device", "storage_offset", "get_num_threads"), "int")
_TUPLES = "split chunk unbind tensor_split hsplit vsplit dsplit broadcast_tensors meshgrid"
_TUPLES += " unravel_index unsafe_split unsafe_chunk split_with_sizes"
_TENSOR_BY_NAME |= dict.fromkeys(_TUPLES.split(), _TUPLE)
# values, or a tensor or a tuple by the flags or the number of arguments: no one type
_TENSOR_BY_NAME |= dict.fromkeys(("tolist", "__dlpack__", "__array_namespace__"), "Any")
_TENSOR_BY_NAME |= dict.fromkeys(("register_hook", "unique", "unique_consecutive"), "Any")
_TENSOR_BY_NAME |= dict.fromkeys(("atleast_1d", "atleast_2d", "atleast_3d"), "Any")
# Ops whose result's type depends on one argument, as torch's stubs overload them:
# name -> (parameter, ((its type, return type), ...)); ``R`` is the op's named tuple.
_BY_DIM = ("dim", (("None", "ShardedTensor"), ("int", "R")))
_POOL = ("return_indices", (("Literal[False]", "ShardedTensor"), ("Literal[True]", _TUPLE)))
_OVERLOADS = {
    "size": ("dim", (("None", "Size"), ("int", "int"))),
    "stride": ("dim", (("None", "tuple[int, ...]"), ("int", "int"))),
    "type": ("dtype", (("None", "str"), ("DType | str", "ShardedTensor"))),
    "nonzero": ("as_tuple", (("Literal[False]", "ShardedTensor"), ("Literal[True]", _TUPLE))),
    "where": ("input", (("None", _TUPLE), ("ShardedTensor | complex", "ShardedTensor"))),
    **dict.fromkeys(("max", "min", "median", "nanmedian"), _BY_DIM),
    **dict.fromkeys(("max_pool1d", "max_pool2d", "max_pool3d"), _POOL),
}
# Class members that are Python's bookkeeping, not API.
_SKIP = {"__module__", "__doc__", "__dict__", "__weakref__", "__slots__", "__qualname__"}
_SKIP |= {"__annotations__", "__firstlineno__", "__static_attributes__", "__orig_bases__"}
_SKIP |= {"__init_subclass__", "__subclasshook__", "__class_getitem__", "__parameters__"}


def _rule_names():
    """The names the rules above use, bound to live objects (so a moved class stays found)."""
    live = (st.ShardedTensor, st.Size, st.Layout, st.DType, np.ndarray, collections.abc.Iterator)
    return {c.__name__: c for c in live} | dict(Any=typing.Any, Literal=typing.Literal, Self=SELF)


def _is_result(obj) -> bool:
    """Whether ``obj`` is a named-tuple class (torch's ``return_types``: tensor fields)."""
    return isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields")


def _summary(obj) -> str:
    """The first paragraph of ``obj``'s own docstring, on one line ('' if none)."""
    doc = inspect.cleandoc(getattr(obj, "__doc__", None) or "")
    return " ".join(doc.split("\n\n", 1)[0].split())


def _unwrap(fn):
    """The function a decorator made with ``functools.wraps`` wraps (``via_float32``): its
    code says what it returns."""
    return inspect.unwrap(fn) if callable(fn) else fn


def _pairs(fn) -> list:
    """``(previous, instruction, whether the previous loads the first argument)`` for the
    bytecode of ``fn`` (3.13's LOAD_FAST_LOAD_FAST loads two locals at once)."""
    code = getattr(_unwrap(fn), "__code__", None)
    ins = list(dis.get_instructions(code)) if code is not None else []
    first, out = code.co_varnames[0] if ins and code.co_argcount else None, []
    for a, b in zip(ins, ins[1:]):
        loaded = a.argval if a.opname.startswith("LOAD_FAST") else None
        loaded = loaded[-1] if isinstance(loaded, tuple) and loaded else loaded
        out.append((a, b, first is not None and loaded == first))
    return out


def _returns(fn) -> set:
    """What the ``return`` statements of ``fn`` give, read from its bytecode: 'self' (its
    first argument), 'none' or 'other' (none of them when it never returns)."""
    kinds = set() if getattr(_unwrap(fn), "__code__", None) else {"other"}
    for prev, ins, loads_self in _pairs(fn):
        if ins.opname == "RETURN_CONST":  # Python >= 3.12
            kinds.add("none" if ins.argval is None else "other")
        elif ins.opname == "RETURN_VALUE":
            none = prev.opname == "LOAD_CONST" and prev.argval is None
            kinds.add("self" if loads_self else "none" if none else "other")
    return kinds


def _init_attrs(init) -> list:
    """The attribute names ``__init__`` assigns on ``self`` (``self.x = ...``), in order."""
    names = [ins.argval for _, ins, me in _pairs(init) if me and ins.opname == "STORE_ATTR"]
    return list(dict.fromkeys(names))


def _public(mod) -> list:
    """``(name, object)`` of a module's public names, sorted: its ``__all__``, or else the
    names that :func:`_exported` keeps; and its ``__version__``."""
    listed = getattr(mod, "__all__", None)
    names = listed if listed is not None else [n for n in dir(mod) if _exported(n, mod)]
    version = getattr(mod, "__version__", None)
    version = [("__version__", version)] if isinstance(version, str) else []
    return [(n, getattr(mod, n)) for n in sorted(names)] + version


def _exported(name, mod) -> bool:
    """Whether ``name`` is public in ``mod`` (which has no ``__all__``): it has no underscore
    and is sharded's (no foreign import, no module alias such as ``D``, no tools) or data."""
    obj = getattr(mod, name)
    if isinstance(obj, types.ModuleType):
        origin = obj.__name__ if obj.__name__.endswith("." + name) else ""
    elif inspect.isfunction(obj) or isinstance(obj, type):
        origin = obj.__module__
    else:
        origin = "sharded" if type(obj).__module__ == "builtins" else type(obj).__module__
    ours = origin.split(".")[0] == "sharded" and not origin.startswith(OUTSIDE)
    return ours and not name.startswith("_")


def _owned(cls, mod) -> bool:
    """Whether ``mod``'s stub defines class ``cls``: it is defined in ``mod``, or in one of
    its submodules that ``mod.__all__`` hides (``nn.Linear`` from ``nn/modules``)."""
    listed, here, origin = getattr(mod, "__all__", None), mod.__name__, cls.__module__
    hidden = listed is not None and origin.startswith(here + ".")
    return origin == here or (hidden and origin[len(here) + 1 :].split(".")[0] not in listed)


class Surface:
    """The stubbed modules, their public names and the stub that defines each class."""

    def __init__(self):
        first = sys.modules[st.ShardedTensor.__module__]
        mods = [first]
        for path in SURFACE:
            mod = functools.reduce(getattr, filter(None, path.split(".")), st)
            if mod not in mods:
                mods.append(mod)
        self.modules, self.tensor_module = mods, first.__name__
        self.names = {m.__name__: _public(m) for m in mods}
        self.homes: dict = {}  # class -> (module name, name): the stub that defines it
        for m in mods:
            for name, obj in self.names[m.__name__]:
                if not isinstance(obj, type) or obj in self.homes:
                    continue
                if _is_result(obj) or (name == obj.__name__ and _owned(obj, m)):
                    self.homes[obj] = (m.__name__, name)
        self.extra: list = []  # named tuples no stubbed module exports: the tensor stub's
        # the functions bound as tensor methods (``registry.bind``), for the rules
        self.bound = {getattr(v, "fget", v) for v in vars(st.ShardedTensor).values()}

    def home(self, cls):
        """Where ``cls`` is defined in the stubs (None: in its own source module)."""
        if cls not in self.homes and _is_result(cls):  # returned but not exported
            found = (k for k, v in vars(sys.modules[cls.__module__]).items() if v is cls)
            var = next(found, cls.__name__)
            self.homes[cls] = (self.tensor_module, "_" + var)
            self.extra.append(cls)
        return self.homes.get(cls)

    def render(self) -> dict:
        """``{path of the stub: its text}`` for every stubbed module."""
        mods = sorted(self.modules, key=lambda m: m.__name__ == self.tensor_module)
        return {Path(m.__file__).with_suffix(".pyi"): Stub(self, m).render() for m in mods}


class Stub:
    """The stub of one module: its imports and definitions, rendered as ruff formats them.

    Examples
    --------
    >>> from sharded.tools.stubgen import Stub, Surface
    >>> import sharded as st
    >>> text = Stub(Surface(), st.fft).render()
    >>> "def fft(" in text and "-> ShardedTensor" in text
    True
    """

    def __init__(self, surface, mod):
        self.s, self.here = surface, mod.__name__
        self.public = dict(surface.names[self.here])
        self.imports: dict = {}  # (module, name, alias) -> None: the import lines
        self.rules = _rule_names()

    # ------------------------------------------------------------------ names
    def ref(self, obj, scope=frozenset()) -> str:
        """The text naming class (or typing form) ``obj`` here, importing it as needed;
        ``scope``: the names a class body defines (which shadow the module's)."""
        if obj is None or obj is type(None):
            return "None"
        if obj is SELF:
            return self._import("typing_extensions", "Self", obj, scope)
        home = self.s.home(obj) if isinstance(obj, type) else None
        if home is not None and home[0] == self.here:
            return home[1]
        module, name = home or (obj.__module__, getattr(obj, "_name", None) or obj.__qualname__)
        if module == "builtins":
            shadowed = name in scope or name in self.public
            if shadowed:
                self.imports[("builtins", None, None)] = None
            return f"builtins.{name}" if shadowed else name
        return self._import(module, name, obj, scope)

    def _import(self, module, name, obj, scope) -> str:
        top = name.split(".")[0]
        if self.public.get(top) is obj and top not in scope:  # re-exported here already
            return name
        taken = {a or n for (m, n, a) in self.imports if n and (m, n) != (module, top)}
        if top in scope or top in taken or (top in self.public and self.public[top] is not obj):
            alias = "_" + module.replace(".", "_") + "_" + top  # a clash: an aliased import
            self.imports[(module, top, alias)] = None
            return alias + name[len(top) :]
        self.imports[(module, top, None)] = None
        return name

    def annotation(self, ann, names, scope=frozenset()) -> str | None:
        """Render annotation ``ann`` (text or object) with its names looked up in ``names``
        (a function's globals); None if a name cannot be found."""
        if ann is inspect.Parameter.empty:
            return None
        text = ann if isinstance(ann, str) else inspect.formatannotation(ann)
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            return None
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Name | ast.Attribute)]
        inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        spaces = (names, vars(builtins), vars(typing), sys.modules)
        for n in sorted((n for n in nodes if id(n) not in inner), key=lambda n: -n.col_offset):
            head, *parts = ast.unparse(n).split(".")  # a dotted name: from the right, in place
            obj = next((s[head] for s in spaces if head in s), None)
            for part in parts:
                obj = getattr(obj, part, None)
            if not (isinstance(obj, type) or obj is SELF or hasattr(obj, "_name")):
                return None  # not a class or a typing form (a module, a variable)
            text = text[: n.col_offset] + self.ref(obj, scope) + text[n.end_col_offset :]
        return text

    def rule(self, text, scope, result=None) -> str:
        """Render one of the rule tables' return types."""
        return self.annotation(text, {**self.rules, "R": result}, scope)

    # ------------------------------------------------------------------ returns
    def returns(self, name, fn, owner=None, scope=frozenset()) -> str:
        """The return type of ``fn`` (public name ``name``; ``owner``: its class, if a
        method): the source's annotation, else the first rule that applies."""
        g = getattr(fn, "__globals__", {})
        ann = self.annotation(inspect.signature(fn).return_annotation, g, scope)
        if ann is not None:
            return ann
        if owner is not None and name in ("forward", "__call__") and hasattr(owner, "forward"):
            return self.rule("ShardedTensor", scope)  # a layer (nn.Module) gives a tensor
        table = {**_BY_NAME, **(_TENSOR_BY_NAME if self._tensorish(fn, owner) else {})}
        if name in table:
            return self.rule(table[name], scope)
        if name.startswith("is_"):
            return self.rule("bool", scope)
        result = self._result(fn) if self._tensorish(fn, owner) else None
        if result is not None:
            return self.ref(result, scope)
        if inspect.isgeneratorfunction(fn):
            return self.rule("Iterator[Any]", scope)
        kinds = _returns(fn)
        if owner is not None and kinds == {"self"}:
            return self.rule("Self", scope)
        if kinds == {"none"}:
            return "None"
        return self.rule("ShardedTensor" if self._tensorish(fn, owner) else "Any", scope)

    def _tensorish(self, fn, owner) -> bool:
        """A method of the tensor (or a function bound as one), an op of a family module, or
        a function of a tensor."""
        if owner is not None:
            return issubclass(owner, st.ShardedTensor)
        first = next(iter(inspect.signature(fn).parameters), None)
        ours = fn in self.s.bound or fn.__module__.startswith("sharded.ops.")
        return ours or first in _TENSOR_PARAMS

    @staticmethod
    def _result(fn):
        """The named tuple ``fn`` returns: one its code names, or one of its module named
        after it (``collections.namedtuple("max", ...)`` for ``max``)."""
        fn = _unwrap(fn)
        g, code = getattr(fn, "__globals__", {}), getattr(fn, "__code__", None)
        named = [g.get(n) for n in (code.co_names if code else ())]
        named += [v for v in g.values() if _is_result(v) and v.__name__ == fn.__name__]
        return next((v for v in named if _is_result(v)), None)

    # ------------------------------------------------------------------ definitions
    def function(self, name, fn, owner=None, scope=frozenset(), deco=(), ret=None) -> list:
        """The lines of ``def name`` (or of its overloads), with its docstring's summary;
        ``owner``: the class of a method, ``ret``: a return type that overrides the rules."""
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        method = owner is not None and "@staticmethod" not in deco
        first = params[0] if params else None
        if method and "@classmethod" not in deco:
            if first is None or first.kind in (first.VAR_POSITIONAL, first.KEYWORD_ONLY):
                params.insert(0, inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY))
            elif first.kind is not first.VAR_KEYWORD and "self" not in sig.parameters:
                params[0] = first.replace(name="self")  # x.add(y) binds ``input`` to x
        over = _OVERLOADS.get(name) if ret is None and self._tensorish(fn, owner) else None
        if over is None or over[0] not in sig.parameters:
            ret = ret or self.returns(name, fn, owner, scope)
            return self._def(name, fn, params, ret, scope, owner, deco)
        self.imports[("typing", "overload", None)] = None
        lines, result = [], self._result(fn)
        for i, (typ, out) in enumerate(over[1]):  # only the first keeps the default
            forced = {over[0]: (self.rule(typ, scope), i == 0)}
            ret_i = self.rule(out, scope, result)
            ps = params if i == 0 else _keyword_if_needed(params, over[0])
            if lines and owner is None and lines[-1].endswith('"""'):
                lines.append("")  # ruff: a blank line after a top-level body
            lines += self._def(name, fn, ps, ret_i, scope, owner, (*deco, "@overload"), forced)
        return lines

    def _def(self, name, fn, params, ret, scope, owner, deco, forced=None) -> list:
        """One ``def`` (``forced``: {parameter: (its type, whether it keeps its default)})."""
        method = owner is not None and "@staticmethod" not in deco
        forced, out, star, slash, g = forced or {}, [], False, False, getattr(fn, "__globals__", {})
        for i, p in enumerate(params):
            if slash and p.kind is not p.POSITIONAL_ONLY:
                out.append("/")
            slash = p.kind is p.POSITIONAL_ONLY
            if p.kind is p.KEYWORD_ONLY and not star:
                out.append("*")
            star = star or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
            ann = None if method and i == 0 else self.annotation(p.annotation, g, scope)
            default = p.default is not p.empty
            if p.name in forced:
                ann, default = forced[p.name][0], default and forced[p.name][1]
            prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
            text = prefix + p.name + (f": {ann}" if ann else "")
            out.append(text + ((" = ..." if ann else "=...") if default else ""))
        if slash:
            out.append("/")
        note = ""  # torch's comparisons give tensors, ReduceLROnPlateau.step takes a metric
        if method and (name in ("__eq__", "__ne__") and "bool" not in ret or _narrows(owner, fn)):
            note = "  # type: ignore[override]"
        indent = "    " if owner is not None else ""
        doc = _summary(fn)
        tail = f") -> {ret}:" + ("" if doc else " ...") + note
        lines = [indent + d for d in deco]
        args = ", ".join(out)
        if len(f"{indent}def {name}({args}{tail}") <= LIMIT:
            lines.append(f"{indent}def {name}({args}{tail}")
        elif len(indent) + 4 + len(args) <= LIMIT:  # ruff: the parameters on a line of their own
            lines += [f"{indent}def {name}(", f"{indent}    {args}", indent + tail]
        else:  # ruff: one parameter a line, with a trailing comma
            lines += [f"{indent}def {name}("] + [f"{indent}    {o}," for o in out] + [indent + tail]
        return lines + (_docstring(doc, indent + "    ") if doc else [])

    def klass(self, name, cls) -> list:
        """The lines of ``class name``: bases, attributes, methods and properties."""
        if _is_result(cls):
            self.imports[("typing", "NamedTuple", None)] = None
            t = self.rule("ShardedTensor", frozenset(cls._fields))
            return [f"class {name}(NamedTuple):"] + [f"    {f}: {t}" for f in cls._fields]
        bases, merged, todo = [], [cls], list(cls.__bases__)
        while todo:  # private bases (``_IndexedModules``) are folded into the class
            b = todo.pop(0)
            if b.__name__.startswith("_") and b.__module__.startswith("sharded"):
                merged.append(b)
                todo[:0] = b.__bases__
            elif b is not object:
                bases.append(b)
        members = {n: v for k in reversed(merged) for n, v in vars(k).items()}
        members = {n: v for n, v in members.items() if n not in _SKIP and not _private(n)}
        scope = frozenset(members)
        listed = ", ".join(self.ref(b, scope) for b in bases)
        head = f"class {name}({listed})" if bases else f"class {name}"
        attrs = {}  # name -> type: annotated class attributes, then what __init__ assigns
        table = _TENSOR_BY_NAME if issubclass(cls, st.ShardedTensor) else {}
        for k in merged:
            g = vars(sys.modules[k.__module__])
            for n, a in vars(k).get("__annotations__", {}).items():
                attrs.setdefault(n, self.annotation(a, g, scope))
            for n in _init_attrs(vars(k).get("__init__")):
                attrs.setdefault(n, self.rule(table.get(n, "Any"), scope))
        lines = [  # not those a base defines (Parameter's ``requires_grad`` is a property)
            f"    {n}: {t or self.rule('Any', scope)}"
            for n, t in attrs.items()
            if not _private(n) and n not in members and not hasattr(cls, n)
        ]
        defs = []
        for n, v in sorted(members.items()):
            if isinstance(v, staticmethod | classmethod):
                d = "@staticmethod" if isinstance(v, staticmethod) else "@classmethod"
                defs += self.function(n, v.__func__, cls, scope, (d,))
            elif isinstance(v, property) and v.fget is not None:
                defs += self.function(n, v.fget, cls, scope, ("@property",))
                if v.fset is not None:
                    defs += self.function(n, v.fset, cls, scope, (f"@{n}.setter",), "None")
            elif inspect.isfunction(v):
                defs += self.function(n, v, cls, scope)
            elif n == "__hash__" and v is None:  # a class with __eq__ and no __hash__
                self.imports[("typing", "ClassVar", None)] = None
                lines.append("    __hash__: ClassVar[None]  # type: ignore[assignment]")
            elif isinstance(v, types.MemberDescriptorType):  # a __slots__ attribute
                lines.append(f"    {n}: {self.rule('Any', scope)}")
            elif not callable(v):
                lines.append(f"    {n}: {self.ref(type(v), scope)}")
        doc = _summary(cls)
        body = _docstring(doc, "    ") + ([""] if lines or defs else []) if doc else []
        body += lines + defs
        return [head + ":", *body] if body else [head + ": ..."]

    # ------------------------------------------------------------------ the file
    def render(self) -> str:
        """The stub's text."""
        items = []  # (kind, lines, its class or ``object``); ruff's blank lines between
        for name, obj in self.s.names[self.here]:
            home = self.s.home(obj) if isinstance(obj, type) else None
            if isinstance(obj, types.ModuleType):
                parent, _, last = obj.__name__.rpartition(".")
                self.imports[(parent, last, name)] = None
            elif home == (self.here, name):
                items.append(("class", self.klass(name, obj), obj))
            elif isinstance(obj, type) and (home or (0, obj.__name__))[1] == name:
                self.imports[(home[0] if home else obj.__module__, name, name)] = None
            elif isinstance(obj, type):  # an alias: ``Tensor = ShardedTensor``
                items.append(("var", [f"{name} = {self.ref(obj)}"], object))
            elif inspect.isroutine(obj):
                items.append(("def", self.function(name, obj), object))
            else:
                items.append(("var", [f"{name}: {self.ref(type(obj))}"], object))
        if self.here == self.s.tensor_module:  # rendered last: the other stubs' named tuples
            items += [("class", self.klass(self.s.homes[c][1], c), c) for c in self.s.extra]
        # stable: in name order within a kind, and a class after those it derives from
        items.sort(key=lambda it: (("var", "class", "def").index(it[0]), len(it[2].__mro__)))
        lines = []
        for i, (kind, text, _) in enumerate(items):
            prev = items[i - 1] if i else None
            if prev and (kind != prev[0] or kind == "class" or prev[1][-1].endswith('"""')):
                lines.append("")
            lines += text
        body = [""] + lines if lines else []  # a module of submodules only: imports alone
        return "\n".join(self._import_lines() + body) + "\n"

    def _import_lines(self) -> list:
        """The import block, sorted as ruff's isort does (stdlib, third party, sharded)."""
        sections: dict = {0: [], 1: [], 2: []}
        froms: dict = {}
        for module, name, alias in self.imports:
            top = module.split(".")[0]
            sec = 2 if top == "sharded" else 0 if top in sys.stdlib_module_names else 1
            if name is None:
                sections[sec].append(((0, module), f"import {module}"))
            elif alias:
                line = f"from {module} import {name} as {alias}"
                sections[sec].append(((1, module, _member_key(name)), line))
            else:
                froms.setdefault((sec, module), []).append(name)
        for (sec, module), names in froms.items():
            names.sort(key=_member_key)
            line = f"from {module} import {', '.join(names)}"
            if len(line) > LIMIT:
                line = f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"
            sections[sec].append(((1, module, _member_key(names[0])), line))
        out = []
        for sec in (0, 1, 2):
            if sections[sec]:
                out += ([""] if out else []) + [text for _, text in sorted(sections[sec])]
        return out


def _keyword_if_needed(params, name) -> list:
    """``params`` where parameter ``name`` (to lose its default) becomes keyword-only if a
    positional parameter before it has a default (``max_pool1d``'s ``return_indices``)."""
    i = next(i for i, p in enumerate(params) if p.name == name)
    p = params[i]
    if p.kind is not p.POSITIONAL_OR_KEYWORD or all(q.default is q.empty for q in params[:i]):
        return params
    ps = params[:i] + params[i + 1 :]  # it goes before the first keyword-only (or **kwargs)
    at = next((j for j, q in enumerate(ps) if q.kind in (q.KEYWORD_ONLY, q.VAR_KEYWORD)), len(ps))
    return ps[:at] + [p.replace(kind=p.KEYWORD_ONLY)] + ps[at:]


def _narrows(owner, fn) -> bool:
    """Whether method ``fn`` of class ``owner`` accepts fewer calls than the one it overrides
    (an argument more to pass, or one the base takes that it lacks): mypy's [override] error."""
    base = next((vars(k)[fn.__name__] for k in owner.__mro__[1:] if fn.__name__ in vars(k)), 0)
    if fn.__name__ in ("__init__", "__new__") or not inspect.isfunction(base):
        return False
    P = inspect.Parameter
    (ra, pa, na, va), (rb, pb, nb, vb) = (_shape(f) for f in (fn, base))
    if vb == {P.VAR_POSITIONAL, P.VAR_KEYWORD}:  # the base takes anything: so may the override
        return False
    more = ra > rb or (pa < pb and P.VAR_POSITIONAL not in va)
    return more or (not nb <= na and P.VAR_KEYWORD not in va) or not vb <= va


def _shape(fn) -> tuple:
    """A method's required and positional parameter counts, names and ``*``/``**`` kinds."""
    ps = list(inspect.signature(fn).parameters.values())[1:]
    var = {p.kind for p in ps if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    required = sum(p.default is p.empty and p.kind not in var for p in ps)
    positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps)
    named = {p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return required, positional, named, var


def _private(name) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _member_key(name):
    """isort's order of imported names: CONSTANTS, then Classes, then the rest."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)


def _docstring(text, indent) -> list:
    """``text`` as a docstring at ``indent``, wrapped to the line length."""
    raw = "r" if "\\" in text else ""
    text = text.replace('"""', "'''") + (" " if text.endswith('"') else "")
    width = LIMIT - len(indent) - 7
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    lines[0] = f'{raw}"""{lines[0]}'
    lines[-1] += '"""'
    return [indent + line for line in lines]


# ---------------------------------------------------------------------------- the command
def generate() -> dict:
    """Render every stub in memory: ``{path: text}`` (nothing is written).

    Examples
    --------
    >>> from sharded.tools.stubgen import generate
    >>> sorted(p.name for p in generate())[:2]
    ['__init__.pyi', '__init__.pyi']
    """
    return Surface().render()


def stale(stubs) -> list:
    """The paths where the files differ from ``stubs`` (missing or changed), and the
    package's ``.pyi`` files that ``stubs`` no longer has."""
    root = Path(st.__file__).parent
    out = [p for p, t in stubs.items() if not p.is_file() or p.read_text("utf-8") != t]
    return out + sorted(p for p in root.rglob("*.pyi") if p not in stubs)


def main(argv=None) -> int:
    """``python -m sharded.tools.stubgen [--check]``: write the stubs, or check them."""
    ap = argparse.ArgumentParser(prog="python -m sharded.tools.stubgen", description=__doc__)
    ap.add_argument("--check", action="store_true", help="exit 1 if a stub is stale")
    check, stubs = ap.parse_args(argv).check, generate()
    paths, root = stale(stubs), Path(st.__file__).parent.parent
    for p in paths:
        action = "stale" if check else "wrote" if p in stubs else "deleted"
        if action == "wrote":
            p.write_text(stubs[p], encoding="utf-8")  # docstrings hold non-ASCII
        elif action == "deleted":
            p.unlink()
        print(f"{action}: {p.relative_to(root)}")
    if check and paths:
        print("the .pyi stubs are stale: run `python -m sharded.tools.stubgen`")
    return int(check and bool(paths))


if __name__ == "__main__":
    sys.exit(main())
