"""One primitive, one block: its planner, and (once autograd registers it) its VJP.

``PRIMITIVES[name]`` holds every primitive; :func:`defvjp` attaches a gradient rule, and the
autograd engine names the primitive when a rule is missing. Derived ops (``sub`` of scalars,
``mean``, ``softmax``...) are compositions of primitives and register nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Result:
    """What a planner produced: a bound layout, a dtype and one key per shard."""

    layout: object
    dtype: object
    keys: tuple


@dataclass
class Primitive:
    """A named primitive: ``impl(ex, *args, **params) -> Result | tuple[Result, ...]``."""

    name: str
    impl: object
    vjp: object = None
    meta: dict = field(default_factory=dict)


PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str, **meta):
    """Register the decorated planner as primitive ``name``."""
    def deco(fn):
        PRIMITIVES[name] = Primitive(name, fn, meta=meta)
        return fn
    return deco


def defvjp(name: str, vjp) -> None:
    """Attach the gradient rule of primitive ``name``."""
    if name not in PRIMITIVES:
        raise KeyError(f"no primitive named {name!r}")
    PRIMITIVES[name].vjp = vjp
