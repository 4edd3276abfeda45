"""VJPs of the linear-algebra primitives (registered into the one gradient table)."""

from __future__ import annotations

from .gradients import unbroadcast, vjp  # noqa: F401
