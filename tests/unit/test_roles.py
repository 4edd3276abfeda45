"""The op families' fixed roles. ``sharded/ops`` holds one package per family, listed once in
``sharded.ops.FAMILIES``; inside a family every module has one role: ``__init__`` (the
family's top-level ``st`` names, ``__all__``), ``prims`` (each primitive one block: kernels,
rules, planner, VJP, bound names), ``kernels`` (worker code only), ``plan`` (planning shared by
the family's primitives) or ``derived`` (ops composed from other ops), each role a module or a
package."""

import ast
import importlib
import importlib.util
import re
import types
from pathlib import Path

import pytest

import sharded as st
from sharded import ops
from sharded.core.registry import PRIMITIVES

OPS = Path(ops.__file__).parent
ROLES = ("prims", "kernels", "plan", "derived")
DIRS = sorted(p for p in OPS.rglob("*") if p.is_dir() and p.name != "__pycache__")
MODULES = sorted(p.relative_to(OPS) for p in OPS.rglob("*.py"))
KERNEL_MODULES = [
    m for m in MODULES if len(m.parts) > 1 and m.parts[1] in ("kernels", "kernels.py")
]

# Where driver code lives: the executor and sessions, and ``apply``, the one dispatch point.
DRIVER = ("sharded.runtime.driver", "sharded.core.dispatch")
# The executor's methods that queue or read worker commands.
EXECUTOR_API = {
    "submit",
    "submit_group",
    "submit_tree",
    "fetch",
    "export",
    "new_key",
    "new_keys",
    "free",
    "free_group",
    "free_pairs",
    "flush_all",
}


def _name(rel: Path) -> str:
    """The module name of the file ``rel`` (relative to sharded/ops)."""
    parts = rel.with_suffix("").parts
    return ".".join(("sharded.ops", *parts[: -1 if parts[-1] == "__init__" else None]))


def test_families_are_the_packages_of_ops():
    families = [f.__name__.removeprefix("sharded.ops.") for f in ops.FAMILIES]
    assert len(set(families)) == len(families), families
    assert sorted(families) == [d.name for d in DIRS if d.parent == OPS]


def test_every_directory_is_a_package():
    assert [d for d in DIRS if not (d / "__init__.py").is_file()] == []


def test_every_module_has_a_role():
    def has_role(rel):
        family, *rest = rel.with_suffix("").parts
        if not rest:  # a module at the top of ops/: only the package's own __init__
            return family == "__init__"
        if rest == ["__init__"]:
            return True
        if (OPS / family / f"{rest[0]}.py").exists() and (OPS / family / rest[0]).is_dir():
            return False  # a role both a module and a package: one of them is never imported
        return rest[0] in ROLES

    assert [str(m) for m in MODULES if not has_role(m)] == []


@pytest.mark.parametrize("family", ops.FAMILIES, ids=lambda f: f.__name__.rsplit(".", 1)[1])
def test_family_init_names_its_st_functions(family):
    # st's function is the family's, or its wrapper with torch's top-level rules
    # (sharded.core.toplevel: out=, tensor-only arguments)
    def named(n):
        f = getattr(st, n, None)
        return getattr(family, n) in (f, getattr(f, "__wrapped__", None))

    assert [n for n in family.__all__ if not named(n)] == []


def test_every_planner_is_in_its_familys_prims():
    prims = re.compile(r"sharded\.ops\.(\w+)\.prims(\.\w+)?")

    def module(prim):
        # the elementwise factory records the module that called it; other primitives are
        # defined where their planner is
        return getattr(prim, "module", None) or prim.plan.__module__

    families = {f.__name__.rsplit(".", 1)[1] for f in ops.FAMILIES}
    misplaced = {}
    for name, prim in PRIMITIVES.items():
        m = prims.fullmatch(module(prim))
        if m is None or m.group(1) not in families:
            misplaced[name] = module(prim)
    assert misplaced == {}


def _origin(obj) -> str:
    """The module an imported object is defined in (a module: itself)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return getattr(obj, "__module__", None) or ""


def _takes_executor(fn) -> bool:
    """Whether ``fn`` is planner-side code: a function whose first parameter is the executor."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_argcount > 0 and code.co_varnames[0] == "ex"


def _imports(package: str, tree: ast.Module):
    """``(line, dotted name, object)`` for every module and name imported in ``tree`` (relative
    imports from ``package``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, importlib.import_module(a.name)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            mod = importlib.import_module(base)
            yield node.lineno, base, mod
            for a in node.names:
                if a.name != "*":
                    obj = getattr(mod, a.name, None)
                    if obj is None:  # a submodule its package does not import
                        obj = importlib.import_module(f"{base}.{a.name}")
                    yield node.lineno, f"{base}.{a.name}", obj


def _driver_code(package: str, source: str) -> list:
    """Lines of ``source`` (a module of ``package``) that import driver code, define a function
    taking the executor, or call the executor's command methods."""
    tree = ast.parse(source)
    found = []
    for line, what, obj in _imports(package, tree):
        origin = _origin(obj)
        if any(origin == d or origin.startswith(d + ".") for d in DRIVER):
            found.append(f"{line}: imports {what} (driver code, {origin})")
        elif _takes_executor(obj):
            found.append(f"{line}: imports {what} (a function of the executor)")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.args.args and node.args.args[0].arg == "ex":
                found.append(f"{node.lineno}: defines {node.name}(ex, ...) (planner code)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            recv = node.func.value
            on_executor = (isinstance(recv, ast.Name) and recv.id in ("ex", "executor")) or (
                isinstance(recv, ast.Attribute) and recv.attr == "executor"
            )
            if on_executor and node.func.attr in EXECUTOR_API:
                found.append(f"{node.lineno}: calls the executor's {node.func.attr}")
    return sorted(found, key=lambda f: (int(f.split(":")[0]), f))


@pytest.mark.parametrize("rel", KERNEL_MODULES, ids=str)
def test_kernels_hold_worker_code_only(rel):
    package = _name(rel) if rel.name == "__init__.py" else _name(rel).rsplit(".", 1)[0]
    found = _driver_code(package, (OPS / rel).read_text())
    assert not found, "\n".join([f"worker code only, but in ops/{rel}:", *found])


def test_the_driver_code_check():
    worker = """
import numpy as np
from ...core.dataflow import even_bounds
from ...core.registry import kernel

@kernel
def put_block(xp, a, idx, v):
    xp.put(a, idx, v)  # an array function, not the executor's
    return a
"""
    assert _driver_code("sharded.ops.shape", worker) == []
    driver = """
from ...core.dispatch import apply
from ...core.dataflow import map_shards
from ...runtime import current

def submit_local(ex, lay, args):
    return [ex.submit(w, "k", a, (ex.new_key(),)) for w, a in args]

def twice(x):
    current().executor.fetch([])
    return apply("mul", x, 2)
"""
    assert _driver_code("sharded.ops.shape", driver) == [
        "2: imports sharded.core.dispatch (driver code, sharded.core.dispatch)",
        "2: imports sharded.core.dispatch.apply (driver code, sharded.core.dispatch)",
        "3: imports sharded.core.dataflow.map_shards (a function of the executor)",
        "4: imports sharded.runtime.current (driver code, sharded.runtime.driver.session)",
        "6: defines submit_local(ex, ...) (planner code)",
        "7: calls the executor's new_key",
        "7: calls the executor's submit",
        "10: calls the executor's fetch",
    ]
