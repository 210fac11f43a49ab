"""Transformation rules (``[[rules]]`` kinds ``require_autodiff`` and ``require_batched``), decided on the
trusted side from what the executor computed and what it saw in the programs.

**require_autodiff** ("the gradient must come from autodiff"). A hand-written derivative that is right has
the same values as ``jax.grad``'s, so no comparison of values can tell them apart, and the lowered program
does not say either (``jax.grad`` leaves no mark in a jaxpr: it has already become the ops of the backward
pass). What autodiff has and a hand-written formula lacks is a *seed*: reverse mode starts from a cotangent
(``jax.grad`` from 1.0), forward mode from a tangent, and everything it returns is linear in that seed. So
the tracer's wrapper (``sandbox.inside.autodiff``, installed before user code loads) makes ONE program that
returns ``(output, output_again)``: the user's function called twice in the same trace, the second time with
every autodiff seed of ``jax.vjp`` (hence ``grad``, ``value_and_grad``, ``jacrev``, ``hessian``) and
``jax.jvp`` (hence ``jacfwd``) multiplied by a factor, inside a jit-cache context of its own (so a
``jax.jit`` inside the user's code traces again instead of reusing the first trace). The factor (a power of
two of ``AUTODIFF_SCALES``, so scaling is exact) and whether the scaled call comes first are drawn by the
judge for each signature (``autodiff_plan``), so user code that keeps state between calls (a call counter
returning twice its hand-written gradient every second call) cannot tell which call to scale or by how
much without reading the judge's own code in its process. The executor runs that program; the judge
compares ``output`` with the reference as usual, then checks that each declared output of ``output_again``
is the signature's factor times the same output of ``output``. A gradient written by hand, or
a ``jax.grad`` of something else while the returned gradient is written by hand, does not scale and breaks
the rule; ``jax.value_and_grad``'s value does not scale either, and is not asked to.

Limits, on purpose: the seed scaling is done by code in the tracer, which runs user code, so a submission
that tampers with the judge's code in its own process, or that passes a hand-written gradient through
autodiff of a linear surrogate (``jax.grad(lambda p: vdot(p, stop_gradient(g)))``: autodiff, of a function
built to have that gradient), is not told apart. What the judge checks itself is what the executor
computed: a gradient that scales with the seed is linear in it, as only a derivative taken by
autodiff of the function the program runs is, short of those two tricks. ``jax.linearize``'s linear
function and ``jax.linear_transpose`` are not scaled: a gradient made with them breaks the rule (fail
closed; the statement names the functions that work).

**require_batched** ("the result must come from a ``vmap`` over the ensemble axis"). ``jax.vmap`` leaves no
mark either: a vmapped function lowers to the same batched ops as the equivalent ``einsum`` formulation,
so what is decidable is the substance of vmap, *one batched computation*, against its lookalikes: a Python
loop (or comprehension) over members, which unrolls into one copy of the work per member (a dummy
``vmap`` beside it changes nothing), and ``jax.lax.map``/``scan``/``fori_loop`` over members, which run
them one after another in a loop. The executor's summary of each program (trusted: it parses the module
itself) gives both: a program with a ``stablehlo.while`` breaks the rule, and the programs of one grading
must have the same number of ops whatever the size of the batch axis, since unrolled copies grow with it
and a batched program does not. A case is compared with the programs of every earlier signature (public
first, then hidden, in the order the judge sends them), so its verdict does not depend on timing. Limits:
a single program (a custom Run input alone) has nothing to be compared with and passes this part; a
program padded with dead ops to the count of an unrolled one at one other size is not told apart (it is
batched at every other size); a model that needs a loop of its own cannot use this rule.

**require_loop's bound on steps** (``steps = {arg, axis}``: where a case's number of steps is). The loop
rule itself (``judge.grading.compiled_rules.RequireLoop``) asks for a loop whose body does some of the work
and whose results matter; a program that runs one step in a ``lax.scan`` and unrolls the others with a Python
loop beside it passes that. The bound compares the programs of one grading the way ``require_batched`` does:
the ops outside loops (the program's op count less its loops' bodies) must not grow by one op or more per
step between two programs whose numbers of steps differ by 2 or more (``unrolled_broken``). Limits: the
hidden cases must hold numbers of steps at least 2 apart; a single program (a Run input alone) has
nothing to compare with; a program that unrolls a fixed number of steps whatever the trip count (the
first step peeled off) passes, as it should.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judge.core.compare import Checker, CompareResult
from judge.core.problems import Problem
from judge.core.spec import AutodiffRule, BatchedRule, ForbidOpsRule, LoopRule, ProblemSpec
from judge.kinds.registry import kind_of

#: What the scaled call's autodiff seeds may be multiplied by: powers of two, so that scaling is exact,
#: none the inverse of another, so a stateful guess of (factor, order) matches one plan in eight.
AUTODIFF_SCALES = (2.0, 4.0, 8.0, 16.0)

#: The ``[[rules]]`` kinds decided here rather than from one program's summary
#: (``judge.grading.compiled_rules``).
TRANSFORM_KINDS = frozenset({"require_autodiff", "require_batched"})


def autodiff_rule(spec: ProblemSpec) -> AutodiffRule | None:
    return next((r for r in spec.rules if isinstance(r, AutodiffRule)), None)


def batched_rule(spec: ProblemSpec) -> BatchedRule | None:
    return next((r for r in spec.rules if isinstance(r, BatchedRule)), None)


def autodiff_plan(problem: Problem, sigs: Iterable[int]) -> dict[str, Any] | None:
    """The tracer's instructions (``sandbox.session.monitor.SessionJob.autodiff``): per signature, the factor
    and whether the scaled call comes first, drawn at random; None when the problem has no such rule."""
    if autodiff_rule(problem.spec) is None:
        return None
    draw = secrets.SystemRandom()
    return {
        "sigs": {
            str(sig): {"scale": draw.choice(AUTODIFF_SCALES), "scaled_first": draw.random() < 0.5}
            for sig in sigs
        }
    }


def autodiff_scale(plan: Mapping[str, Any] | None, sig: int) -> float:
    """The factor a signature's second output must be its first times (``autodiff_plan``)."""
    if plan is None or str(sig) not in plan.get("sigs", {}):
        raise KeyError(f"no autodiff plan for signature {sig}")
    return float(plan["sigs"][str(sig)]["scale"])


# ------------------------------------------------------------------------------------- require_autodiff


def split_autodiff(got: Any) -> tuple[Any, Any] | None:
    """``(output, output_again)`` from a program's result, or None when it is not such a pair (only a
    forged tracer sends another shape)."""
    if isinstance(got, tuple) and len(got) == 2:
        return got[0], got[1]
    return None


def _scaled(tree: Any, factor: float) -> Any:
    if isinstance(tree, dict):
        return {k: _scaled(v, factor) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_scaled(v, factor) for v in tree]
    if isinstance(tree, tuple):
        return tuple(_scaled(v, factor) for v in tree)
    array = np.asarray(tree)
    if not np.issubdtype(array.dtype, np.inexact) and array.dtype.name != "bfloat16":
        return array
    return np.asarray(array.astype(np.float64) * factor).astype(array.dtype)


def autodiff_broken(
    rule: AutodiffRule,
    spec: ProblemSpec,
    checker: Checker,
    output: Any,
    again: Any,
    *,
    hidden: bool,
    scale: float,
    magnitude: Any = None,
) -> str | None:
    """None when every declared output of ``again`` is ``scale`` times the same output of ``output``
    (within the problem's tolerance); else the message. ``output`` already matched the reference, so it
    has the declared structure. ``magnitude``: the case's output magnitudes (``[compare] magnitude``), or
    None; scaled like the output, they widen the bound as for the reference, since the second call may be
    compiled into another order of additions."""
    part = Checker(tolerance=checker.tolerance, root_names=(), tuple_as_list=checker.tuple_as_list)
    for name in rule.outputs:
        index = spec.output.names.index(name)
        if not isinstance(again, tuple) or len(again) != len(spec.output.names):
            result = CompareResult(False, None, None, "the second call returned another structure", np.inf)
        else:
            terms = None
            if isinstance(magnitude, tuple | list) and len(magnitude) == len(spec.output.names):
                terms = _scaled(magnitude[index], abs(scale))
            result = part(_scaled(output[index], scale), again[index], scale=terms)
        if not result.ok:
            detail = "" if hidden else f" ({result.message})"
            return (
                f"this problem asks you to {rule.asks}; `{name}` does not come from autodiff of your "
                f"function: the judge called your function a second time in the same program with every "
                f"autodiff seed (the cotangent jax.grad and jax.vjp start from, the tangent of jax.jvp) "
                f"multiplied by {scale:g}, and a derivative taken by autodiff is multiplied with "
                f"it, but `{name}` was not{detail}. A derivative written out by hand, or jax.grad of "
                "something other than what you return, breaks this rule even when its values are right"
            )
    return None


# ------------------------------------------------------------------------------------- require_batched


def _leaves(tree: Any) -> Iterator[Any]:
    if isinstance(tree, Mapping):
        for value in tree.values():
            yield from _leaves(value)
    elif isinstance(tree, list | tuple):
        for value in tree:
            yield from _leaves(value)
    else:
        yield tree


def batch_size(rule: BatchedRule, spec: ProblemSpec, inputs: Sequence[Any]) -> int | None:
    """The size of the rule's axis in one case's inputs (its argument's first leaf), or None without one."""
    value = inputs[[a.name for a in spec.args].index(rule.arg)]
    for leaf in _leaves(value):
        shape = np.shape(leaf)
        return int(shape[rule.axis]) if len(shape) > rule.axis else None
    return None


def held_key(rule: BatchedRule, spec: ProblemSpec, inputs: Sequence[Any]) -> str | None:
    """Everything of one case's signature that the program's form may depend on, except the size of the
    rule's axis: per argument its leaves' shapes and dtypes (the batched argument's with that axis left
    out) or its static value. Two cases with the same key are the same computation at two batch sizes (or
    at one). None when the batched argument has no leaf with the axis."""
    parts: list[Any] = []
    for arg, value in zip(spec.args, inputs, strict=True):
        if arg.name == rule.arg:
            shapes = []
            for leaf in _leaves(value):
                shape = list(np.shape(leaf))
                if len(shape) <= rule.axis:
                    return None
                shape[rule.axis] = -1
                shapes.append([shape, _dtype_name(leaf)])
            parts.append(["batched", shapes])
        elif arg.traced and not kind_of(arg.kind).weak_scalar:
            parts.append(["traced", [[list(np.shape(x)), _dtype_name(x)] for x in _leaves(value)]])
        elif arg.traced:
            parts.append(["number"])
        else:
            parts.append(["static", repr(value)])
    return json.dumps(parts)


def _dtype_name(leaf: Any) -> str:
    dtype = getattr(leaf, "dtype", None)
    return str(dtype) if dtype is not None else type(leaf).__name__


@dataclass(frozen=True)
class Peer:
    """Another program of the same grading: its batch size, its op histogram, what it holds fixed
    (``held_key``) and a case that used it."""

    size: int
    ops: Mapping[str, int]
    held: str
    case: str


def op_count(ops: Mapping[str, int]) -> int:
    return sum(int(n) for n in ops.values())


def _histogram_difference(ops: Mapping[str, int], other: Mapping[str, int]) -> str:
    """The ops whose counts differ, for the message (at most three)."""
    names = sorted(n for n in set(ops) | set(other) if int(ops.get(n, 0)) != int(other.get(n, 0)))
    shown = ", ".join(
        f"{n.removeprefix('stablehlo.')} {other.get(n, 0)} -> {ops.get(n, 0)}" for n in names[:3]
    )
    return shown + (", ..." if len(names) > 3 else "")


def batched_broken(
    rule: BatchedRule, size: int | None, held: str | None, ops: Mapping[str, int], peers: Sequence[Peer]
) -> str | None:
    """None when the program (``ops``, its op histogram, at batch size ``size`` with everything else
    ``held``) keeps the rule against the earlier programs ``peers``; else the message. Only a peer that
    holds everything else the same is compared: the same computation at another batch size."""
    member = rule.member
    if ops.get("stablehlo.while"):
        return (
            f"this problem asks you to {rule.asks}; your program has a loop: jax.lax.map, jax.lax.scan and "
            f"jax.lax.fori_loop compute one {member} after another. jax.vmap computes every {member} at once "
            "in one batched program"
        )
    if size is None or held is None:
        return None
    for peer in peers:
        if peer.held != held or peer.size == size or _same_histogram(peer.ops, ops):
            continue
        return (
            f"this problem asks you to {rule.asks}; the judge compiled your function for {peer.size} and for "
            f"{size} {member}s with every other size the same (case {peer.case} and this one), and the "
            f"programs differ ({_histogram_difference(ops, peer.ops)}; {op_count(peer.ops)} and "
            f"{op_count(ops)} operations in all): a program built with jax.vmap is the same program whatever "
            f"the number of {member}s, only its shapes change, so yours computes each {member} separately (a "
            f"Python loop or comprehension over them is unrolled into one copy per {member}, even beside a "
            f"jax.vmap). Write the computation for one {member} and map it over axis {rule.axis} with "
            "jax.vmap(..., in_axes=...)"
        )
    return None


# ------------------------------------------------------------------------ require_loop's bound on steps


def loop_steps(rule: LoopRule | ForbidOpsRule, spec: ProblemSpec, inputs: Sequence[Any]) -> int | None:
    """The number of steps of one case (``LoopRule.steps``): the length of the declared axis of the
    argument's first leaf, or the value of an int argument; None without a bound or such an axis."""
    if rule.steps is None:
        return None
    value = inputs[[a.name for a in spec.args].index(rule.steps.arg)]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    for leaf in _leaves(value):
        shape = np.shape(leaf)
        return int(shape[rule.steps.axis]) if len(shape) > rule.steps.axis else None
    return None


def outside_loops(ops: Mapping[str, int], loop_ops: Mapping[str, int]) -> int:
    """The program's op count less the ops in its loops' bodies (``sandbox.inside.program_checks.loop_ops``):
    what an unrolled copy per step adds to, and what a loop's body, however many times it runs, does not."""
    return op_count(ops) - op_count(loop_ops)


@dataclass(frozen=True)
class StepPeer:
    """Another program of the same grading, for ``require_loop``'s bound on steps: its number of steps,
    its ops outside loops and a case that used it."""

    size: int
    ops: int
    case: str


def unrolled_broken(
    rule: LoopRule | ForbidOpsRule, steps: int | None, outside: int, peers: Sequence[StepPeer]
) -> str | None:
    """None when the program (``outside``: its ops outside loops, at ``steps`` steps) keeps the rule's bound
    against the earlier programs ``peers`` (their ``size`` is their number of steps, their ``ops`` their ops
    outside loops); else the message.

    Without ``per_doubling``, the bound is linear: between two programs whose numbers of steps differ by 2
    or more, the ops outside loops must not grow with the steps by at least one op per step, which an
    unrolled Python loop does (each copy of the step adds its ops, a call of a jitted step at least one)
    and a loop does not (its body is one copy whatever the trip count). A difference of a few ops that a
    shape can cause (a dimension of 1 taking a shortcut) stays under one op per step of a wider gap.
    With ``per_doubling = d``, the bound is logarithmic: from fewer steps s to more steps S, the ops may
    grow by at most ``d * (log2(S / s) + 1)`` (one doubling's worth of slack for shapes that take
    shortcuts), which ``jax.lax.associative_scan``'s levels of combines keep and an unrolled loop, whose
    growth is linear, breaks once S is large enough."""
    if steps is None or rule.steps is None:
        return None
    per_doubling = rule.steps.per_doubling
    for peer in peers:
        gap = steps - peer.size
        grown = outside - peer.ops
        if gap * grown <= 0:
            continue
        if per_doubling is None:
            broken = abs(gap) >= 2 and abs(grown) >= abs(gap)
            limit = "one operation per step"
        else:
            few, many = sorted((max(steps, 1), max(peer.size, 1)))
            broken = abs(grown) > per_doubling * (math.log2(many / few) + 1)
            limit = f"{per_doubling} operations each time the number of steps doubles"
        if broken:
            return (
                f"this problem asks you to {rule.asks}; your program for {steps} steps has {outside} "
                f"operations outside its loops and the one for {peer.size} steps (case {peer.case}) has "
                f"{peer.ops}: the program grows with the number of steps by more than {limit}, so the "
                "steps are unrolled (a Python for loop makes one copy of its body per step while jax.jit "
                "traces it). Write the step once and let a JAX primitive apply it: the program then "
                "keeps its size whatever the number of steps"
                + ("" if per_doubling is None else " (or grows by one level per doubling)")
            )
    return None


def _same_histogram(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    return {k: int(v) for k, v in a.items() if int(v)} == {k: int(v) for k, v in b.items() if int(v)}
