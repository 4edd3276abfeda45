"""Run one OpInfo's samples through torch and sharded and record each comparison.

A record is a dict ``{op, cat, dtype, placement, status, msg}``: ``cat`` is ``forward``,
``grad`` or ``error``; ``status`` is ``pass``, ``fail``, ``known`` (a failure that is a
documented difference or an answer torch leaves unspecified: ``names.known``) or ``skip``
(torch itself refuses the sample, or it holds something sharded has no counterpart for, or
the op's time budget ran out). Every sample runs inside its own ``try``: one failure never
stops the run.
"""

from __future__ import annotations

import itertools
import time

import torch

from sharded.errors import ShardedError
from sharded.tensor import ShardedTensor

from .convert import (
    Frozen,
    Mismatch,
    Unconvertible,
    compare,
    freeze,
    leaves,
    rounding_only,
    splittable,
    to_numpy_tree,
    to_sharded,
    widened,
)
from .names import caller, is_random, known, transplant

DTYPES = (torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64)
# Builtin classes that count as a typed refusal when they are the class torch raises too.
BUILTIN_TYPED = (TypeError, ValueError, IndexError, RuntimeError, NotImplementedError)


def label(info) -> str:
    """``name`` or ``name.variant`` (the OpInfo's ``variant_test_name``)."""
    return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")


def brief(e: BaseException) -> str:
    """``Type: first line of the message``, at most 200 characters."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def is_typed(e: BaseException, torch_type: type) -> bool:
    """A typed refusal: one of sharded's errors, or the very builtin class torch raises (a
    ``ValueError`` where torch raises ``ValueError``). An ``AttributeError`` or ``KeyError``
    from inside sharded, or a builtin torch would not raise, is not typed."""
    if isinstance(e, ShardedError):
        return True
    return type(e) in BUILTIN_TYPED and isinstance(e, torch_type)


class OpRun:
    """The records of one OpInfo; ``budget`` seconds bound the time spent starting samples."""

    def __init__(self, info, limit: int | None, budget: float, placements=("whole", "split")):
        self.info, self.limit, self.budget, self.placements = info, limit, budget, placements
        self.op = label(info)
        self.call = caller(info)
        self.records: list[dict] = []
        self.start = time.monotonic()

    def add(self, cat, dtype, placement, status, msg=""):
        dtype = str(dtype).removeprefix("torch.") if dtype is not None else "-"
        self.records.append(
            dict(op=self.op, cat=cat, dtype=dtype, placement=placement, status=status, msg=msg)
        )

    def over_budget(self) -> bool:
        return time.monotonic() - self.start > self.budget

    def samples(self, make):
        """At most ``limit`` items of a sample generator; a generator that fails gives none."""
        try:
            return list(itertools.islice(make(), self.limit))
        except Exception:
            return []

    def placements_of(self, frozen):
        return [p for p in self.placements if p == "whole" or splittable(frozen)]

    def run(self) -> list[dict]:
        """All records of this OpInfo (none when sharded lacks the op: see ``names``)."""
        if self.call is None:
            return []
        supported = self.info.supported_dtypes("cpu")
        for dtype in (d for d in DTYPES if d in supported):
            for sample in self.samples(lambda d=dtype: self.info.sample_inputs("cpu", d)):
                self.forward(sample, dtype)
        if self.info.supports_autograd and torch.float64 in supported:
            make = lambda: self.info.sample_inputs("cpu", torch.float64, requires_grad=True)  # noqa: E731
            for sample in self.samples(make):
                self.grad(sample)
        for err in self.samples(lambda: self.info.error_inputs("cpu")):
            self.error(err)
        return self.records

    def _frozen(self, cat, dtype, sample):
        if self.over_budget():
            self.add(cat, dtype, "-", "skip", "op time budget spent")
            return None
        try:
            return freeze(sample)
        except Unconvertible as e:
            self.add(cat, dtype, "-", "skip", f"unconvertible: {e}")
            return None

    def forward(self, sample, dtype):
        frozen = self._frozen("forward", dtype, sample)
        if frozen is None:
            return
        try:
            with torch.no_grad():
                expected = self.info.op(sample.input, *sample.args, **sample.kwargs)
        except Exception as e:
            return self.add("forward", dtype, "-", "skip", f"torch raises {brief(e)}")
        for placement in self.placements_of(frozen):
            try:
                inp, args, kwargs = to_sharded(frozen, placement == "split")[0]
                got = to_numpy_tree(self.call(inp, *args, **kwargs))
                compare(got, expected, values=not is_random(self.info.name, sample))
                self.add("forward", dtype, placement, "pass")
            except Mismatch as e:
                msg = f"wrong: {e}"[:200]
                name, dt = self.info.name, str(dtype).removeprefix("torch.")
                why = None  # a known difference stays one, whatever its rounding
                if known(name, dt, placement, msg, sample) is None:
                    why = self.rounding(sample, dtype, got, expected)
                if why is not None:
                    self.add("forward", dtype, placement, "pass", why)
                    self.records[-1]["rounding"] = True
                    continue
                self.failed("forward", dtype, placement, msg, sample)
            except Exception as e:
                self.failed("forward", dtype, placement, brief(e), sample)

    def rounding(self, sample, dtype, got, expected):
        """The reason a float32/complex64 value mismatch is rounding only (see
        ``convert.rounding_only``), else None; torch runs the sample again in float64."""
        if dtype not in (torch.float32, torch.complex64) or is_random(self.info.name, sample):
            return None
        try:
            wide = sample.transform(widened)
            with torch.no_grad():
                want = self.info.op(wide.input, *wide.args, **wide.kwargs)
            return rounding_only(got, expected, want)
        except Exception:  # no float64 form, or a larger error than torch's own
            return None

    def failed(self, cat, dtype, placement, msg, sample):
        """A failure, or a known difference (``names.known``) recorded with its reason."""
        why = known(self.info.name, str(dtype).removeprefix("torch."), placement, msg, sample)
        if why is None:
            return self.add(cat, dtype, placement, "fail", msg)
        self.add(cat, dtype, placement, "known", f"{why}: {msg}"[:200])

    def grad(self, sample):
        dtype = torch.float64
        frozen = self._frozen("grad", dtype, sample)
        if frozen is None:
            return
        if not any(isinstance(f, Frozen) and f.requires_grad for f in leaves(frozen)):
            return self.add("grad", dtype, "-", "skip", "no input requires grad")
        post = sample.output_process_fn_grad
        try:
            out = leaves(post(self.info.op(sample.input, *sample.args, **sample.kwargs)))
            picks = [
                i
                for i, t in enumerate(out)
                if isinstance(t, torch.Tensor) and t.requires_grad and t.dtype.is_floating_point
            ]
            if not picks:
                return self.add("grad", dtype, "-", "skip", "no differentiable output")
        except Exception as e:
            return self.add("grad", dtype, "-", "skip", f"torch raises {brief(e)}")
        post_st = transplant(post) or post
        values = not is_random(self.info.name, sample)
        for placement in self.placements_of(frozen):
            try:
                (inp, args, kwargs), pairs = to_sharded(frozen, placement == "split", grad=True)
                expected = self._torch_grads(sample, post, pairs)
                got_out = leaves(post_st(self.call(inp, *args, **kwargs)))
                if len(got_out) != len(out):
                    raise Mismatch(f"{len(got_out)} outputs where torch has {len(out)}")
                chosen = [got_out[i] for i in picks]
                if not all(isinstance(t, ShardedTensor) for t in chosen):
                    raise Mismatch("an output torch differentiates is not a tensor")
                total = chosen[0].sum()
                for t in chosen[1:]:
                    total = total + t.sum()
                total.backward()
                for k, ((src, leaf), want) in enumerate(zip(pairs, expected)):
                    want = torch.zeros_like(src) if want is None else want
                    grad = leaf.grad
                    got = ("tensor", "float64", src.new_zeros(src.shape).numpy())
                    if grad is not None:
                        got = to_numpy_tree(grad)
                    compare(got, want, values=values, where=f"grad of input {k}: ")
                self.add("grad", dtype, placement, "pass")
            except Mismatch as e:
                self.failed("grad", dtype, placement, f"wrong: {e}"[:200], sample)
            except Exception as e:
                self.failed("grad", dtype, placement, brief(e), sample)

    def _torch_grads(self, sample, post, pairs):
        """torch's gradient of the sum of the differentiable outputs, for each sharded leaf."""
        out = leaves(post(self.info.op(sample.input, *sample.args, **sample.kwargs)))
        chosen = [
            t
            for t in out
            if isinstance(t, torch.Tensor) and t.requires_grad and t.dtype.is_floating_point
        ]
        total = sum(t.sum() for t in chosen)
        return torch.autograd.grad(total, [src for src, _ in pairs], allow_unused=True)

    def error(self, err):
        sample = err.sample_input
        frozen = self._frozen("error", None, sample)
        if frozen is None:
            return
        try:
            self.info.op(sample.input, *sample.args, **sample.kwargs)
            return self.add("error", None, "-", "skip", "torch does not raise")
        except Exception:
            pass
        for placement in self.placements_of(frozen):
            try:
                inp, args, kwargs = to_sharded(frozen, placement == "split")[0]
            except Exception as e:  # sharded refuses to make the input: not the op's check
                self.add("error", None, placement, "skip", f"input: {brief(e)}")
                continue
            try:
                to_numpy_tree(self.call(inp, *args, **kwargs))  # a deferred error shows on read
                self.add("error", None, placement, "fail", f"no error (torch: {err.error_regex})")
            except Exception as e:
                if is_typed(e, err.error_type):
                    self.add("error", None, placement, "pass", brief(e))
                    self.records[-1]["same_class"] = isinstance(e, err.error_type)
                else:
                    self.add("error", None, placement, "fail", f"untyped {brief(e)}")
