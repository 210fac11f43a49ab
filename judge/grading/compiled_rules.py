"""Rules on the compiled program itself, decided on the trusted side from the executor's summary.

The executor (which runs no user code) walks every op of each program before compiling it and reports a
summary: an op-name histogram, the custom-call targets, the host callbacks, the number of loops. Nothing the
tracer says is used here: a submission cannot hide a host callback by patching its own process, because the
summary describes the program that actually runs.

A rule is a small frozen object with ``check(summary) -> str | None`` (a message that teaches, or None). A
broken rule makes the case ``wrong_answer`` with reason ``rule``. Problems get ``rules_for(problem)``:
``NoHostCallbacks`` for every problem (a callback can never run in the judge), then the rules the problem
declares in ``[[rules]]`` (``judge.core.spec.LoopRule`` -> ``RequireLoop``, ``ForbidOpsRule`` ->
``ForbidOps``).

What "requires a loop" means, precisely: the program holds a ``stablehlo.while`` whose body (its regions
and, transitively, the functions they call) contains at least one of the declared work ops. ``lax.scan``,
``lax.fori_loop`` (static bounds included: it lowers to a scan) and ``lax.while_loop`` all give one; a
Python ``for`` loop unrolls while tracing and gives none, nor does ``jax.vmap``. StableHLO does not say
which of the three JAX loops made a ``while``, so a ``fori_loop`` that does the work passes a rule that
asks for ``lax.scan``: the rule is about the program's form (one compiled loop body rather than a copy per
step), which is what the three share. A loop that does none of the work (an empty scan beside an unrolled
Python loop) fails, because its body has no work op; a loop that does part of the work beside unrolled
copies of the rest is told apart only by the bound on steps (``LoopRule.steps``,
``judge.grading.transform_rules.unrolled_broken``).

And the loop must matter (``idle_loops_message``): the executor also runs a variant of the program it parsed
whose loops' results are perturbed (``sandbox.inside.perturb``), on the same inputs; when no output bit
changes, the loops do dummy work and a closed form outside computes the answer, so the case breaks the rule.

What "recomputes" means (``require_remat``, ``remat_message``): the program holds an optimization barrier,
one of the declared forward ops depends on a barrier's result and reaches an output, and the function's own
output does not read a barrier (``sandbox.inside.remat`` has the evidence and its limits).

What "updates in place" means (``UpdateInPlace``, ``judge.core.spec.InPlaceRule``): the judge donates the
declared arguments (the executor marks their buffers as donors, whatever the tracer's module says), and
decides from what XLA reports about the compiled program: every donated byte aliased with an output, and the
program's bytes accessed (XLA's cost analysis: every read and write of the compiled program) at most
``max_traffic`` times the donated bytes. A ``dynamic_update_slice`` or ``.at[...].set`` into a donated buffer
costs only the entries it writes; a cache rebuilt with ``concatenate``, ``pad``, a ``where`` over every
position or a one-hot multiply-add reads and writes all of it (twice its bytes), and XLA's optimizer does not
turn those into an in-place write. XLA's cost analysis counts a loop's body once, whatever its trip count, and
a custom call not at all, so a program with a ``stablehlo.while`` or a custom call breaks the rule: the judge
cannot bound what it touches. A rebuild that XLA's optimizer simplifies into an in-place write
(``cache * 1.0`` before ``.at[pos].set``) passes, because the program that runs is in place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from judge.core.problems import Problem
from judge.core.spec import ForbidOpsRule, InPlaceRule, LoopRule, ProgramRuleSpec, RematRule
from judge.grading.transform_rules import TRANSFORM_KINDS
from sandbox.session.reports import Compiled, Summary

HOST_CALLBACK_MESSAGE = (
    "the program calls back into Python on the host ({targets}); this problem needs a pure JAX computation: "
    "jax.pure_callback, io_callback and other host callbacks cannot run in the judge"
)


@dataclass(frozen=True)
class ProgramSummary:
    """What the executor saw in one program (see ``sandbox.inside.program_checks.summarize``)."""

    ops: Mapping[str, int] = field(default_factory=dict)
    custom_calls: tuple[str, ...] = ()
    host_callbacks: tuple[str, ...] = ()
    loops: int = 0
    #: Ops that run inside a loop (``sandbox.inside.program_checks.loop_ops``).
    loop_ops: Mapping[str, int] = field(default_factory=dict)
    #: Ops that depend on an optimization barrier's result and reach an output
    #: (``sandbox.inside.remat``): what the backward pass recomputes.
    recomputed_ops: Mapping[str, int] = field(default_factory=dict)
    #: Per output of the program, whether it depends on an optimization barrier's result.
    barrier_outputs: tuple[bool, ...] = ()
    #: XLA's bytes accessed of the compiled program (``sandbox.inside.executor.cost_of``), if known.
    bytes_accessed: float | None = None
    #: What donating inputs gave the compiled program (``sandbox.inside.executor.donation_of``):
    #: ``donated_bytes`` and ``aliased_bytes`` (-1: unknown); None when nothing was donated.
    donation: Mapping[str, int] | None = None

    @classmethod
    def from_compiled(cls, compiled: Compiled | None) -> ProgramSummary:
        """From the executor's ``compiled`` reply (``sandbox.session.reports``): its summary, with the
        compiled program's bytes accessed and donation."""
        if compiled is None:
            return cls()
        donation = compiled.donation
        return dataclasses.replace(
            cls.from_wire(compiled.summary),
            bytes_accessed=compiled.cost.bytes_accessed,
            donation=(
                None
                if donation is None
                else {"donated_bytes": donation.donated_bytes, "aliased_bytes": donation.aliased_bytes}
            ),
        )

    @classmethod
    def from_wire(cls, value: Summary | None) -> ProgramSummary:
        """From the executor's summary, as the monitor decoded it."""
        if value is None:
            return cls()
        return cls(
            ops=dict(value.ops),
            custom_calls=value.custom_calls,
            host_callbacks=value.host_callbacks,
            loops=value.loops,
            loop_ops=dict(value.loop_ops),
            recomputed_ops=dict(value.recomputed_ops),
            barrier_outputs=value.barrier_outputs,
        )


class Rule(Protocol):
    def check(self, summary: ProgramSummary) -> str | None:
        """None when the program keeps the rule; else a message that says what to do instead."""


@dataclass(frozen=True)
class NoHostCallbacks:
    def check(self, summary: ProgramSummary) -> str | None:
        if summary.host_callbacks:
            return HOST_CALLBACK_MESSAGE.format(targets=", ".join(summary.host_callbacks))
        return None


@dataclass(frozen=True)
class ForbidOps:
    """The program must not contain these ops (e.g. ``stablehlo.sort`` for "implement it without sort")."""

    ops: frozenset[str]
    why: str

    def check(self, summary: ProgramSummary) -> str | None:
        used = sorted(op for op in self.ops if summary.ops.get(op))
        return f"the program uses {', '.join(used)}: {self.why}" if used else None


@dataclass(frozen=True)
class RequireOps:
    """The program must contain at least one of these ops (e.g. ``stablehlo.while`` for "use lax.scan")."""

    any_of: frozenset[str]
    why: str

    def check(self, summary: ProgramSummary) -> str | None:
        if any(summary.ops.get(op) for op in self.any_of):
            return None
        return f"the program has no {' or '.join(sorted(self.any_of))}: {self.why}"


@dataclass(frozen=True)
class RequireLoop:
    """The program must hold a loop whose body does some of the work (see the module docstring)."""

    asks: str
    body_has_any: frozenset[str]
    body_work: str

    def check(self, summary: ProgramSummary) -> str | None:
        if not summary.ops.get("stablehlo.while"):
            return (
                f"this problem asks you to {self.asks}; your program has no loop. A Python for loop is "
                "unrolled while jax.jit traces it (one copy of its body per step, however many steps), and "
                "jax.vmap has no loop either: write the step as a function and let jax.lax.scan run it"
            )
        if not any(summary.loop_ops.get(op) for op in self.body_has_any):
            return (
                f"this problem asks you to {self.asks}; your program has a loop, but no {self.body_work} "
                "happens inside it: the work of each step must be done in the loop body"
            )
        return None


@dataclass(frozen=True)
class UpdateInPlace:
    """The donated arguments must be updated in place (see the module docstring)."""

    asks: str
    donate: tuple[str, ...]
    max_traffic: float

    def check(self, summary: ProgramSummary) -> str | None:
        names = " and ".join(f"`{n}`" for n in self.donate)
        intro = f"this problem asks you to {self.asks}"
        if summary.ops.get("stablehlo.while"):
            return (
                f"{intro}; your program has a loop, and the judge cannot tell how much of {names} a loop "
                "touches (XLA's cost analysis counts its body once): write the new entries with one "
                "jax.lax.dynamic_update_slice or .at[...].set, without a loop"
            )
        calls = sorted(c for c in summary.custom_calls if c not in _ANNOTATIONS)
        if calls:
            return (
                f"{intro}; your program makes a custom call ({', '.join(calls)}), whose memory traffic XLA "
                "does not count: update the buffers with jax.lax.dynamic_update_slice or .at[...].set"
            )
        donation, accessed = summary.donation, summary.bytes_accessed
        if donation is None or accessed is None or donation.get("aliased_bytes", -1) < 0:
            return f"{intro}; the judge could not see how the compiled program uses {names}, so it fails"
        donated = donation.get("donated_bytes", 0)
        if donation["aliased_bytes"] < donated:
            return (
                f"{intro}; the compiled program does not reuse the donated buffers of {names} for its "
                "outputs: return each updated buffer with the shape and dtype it came in"
            )
        if donated > 0 and accessed > self.max_traffic * donated:
            return (
                f"{intro}; the compiled program reads and writes {accessed / donated:.2g} times the bytes "
                f"of {names}, and an update in place touches only the entries it writes (at most "
                f"{self.max_traffic:g} times here). Rebuilding the buffer (jnp.concatenate, jnp.pad, "
                "jnp.where over every position, a one-hot multiply-add) reads and writes all of it: write "
                "the new entries with jax.lax.dynamic_update_slice or .at[...].set"
            )
        return None


#: Custom-call targets that are partitioning annotations (no work, no memory traffic).
_ANNOTATIONS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})


def declared_rule(spec: ProgramRuleSpec) -> Rule:
    """The rule object for one ``[[rules]]`` entry of a problem spec."""
    if isinstance(spec, LoopRule):
        return RequireLoop(spec.asks, frozenset(spec.body_has_any), spec.body_work)
    if isinstance(spec, InPlaceRule):
        return UpdateInPlace(spec.asks, tuple(spec.donate), spec.max_traffic)
    assert isinstance(spec, ForbidOpsRule)
    return ForbidOps(frozenset(spec.ops), f"this problem asks you to {spec.asks}, without {spec.what}")


def donated_args(problem: Problem) -> frozenset[str]:
    """The arguments the problem's in-place rules donate to the program (``donate_argnames``)."""
    return frozenset(
        name for rule in problem.spec.rules if isinstance(rule, InPlaceRule) for name in rule.donate
    )


def rules_for(problem: Problem) -> list[Rule]:
    """The rules a problem's programs are checked against: no host callbacks, then the declared ones."""
    # ``require_autodiff`` and ``require_batched`` need more than one program's summary: the grader decides
    # them with ``judge.grading.transform_rules``; ``require_remat`` needs the output's leaf count
    # (``remat_message``).
    return [
        NoHostCallbacks(),
        *(
            declared_rule(rule)
            for rule in problem.spec.rules
            if rule.kind not in TRANSFORM_KINDS and not isinstance(rule, RematRule)
        ),
    ]


def precheck_for(problem: Problem) -> dict[str, list[str]]:
    """The declared op rules in the executor's terms (``sandbox.session.monitor.SessionJob.precheck``), so
    that it refuses a program that breaks one before compiling it: an unrolled loop can take long to compile,
    and the verdict must not depend on that."""
    required: set[str] = set()
    forbidden: set[str] = set()
    for rule in problem.spec.rules:
        if isinstance(rule, LoopRule):
            required |= set(rule.body_has_any)
        elif isinstance(rule, ForbidOpsRule):
            forbidden |= set(rule.ops)
    # Sound for several rules too: a program with no loop holding any op of the union breaks every loop
    # rule, and one using any forbidden op breaks the rule that forbids it. The judge words the verdict.
    out: dict[str, list[str]] = {}
    if required:
        out["require_loop_any"] = sorted(required)
        # The executor also runs the program with its loops' results perturbed: ``idle_loops_message``.
        out["loops_matter"] = []
    if forbidden:
        out["forbid_ops"] = sorted(forbidden)
    return out


def idle_loops_message(problem: Problem, loops_matter: Sequence[bool] | None, leaves: int) -> str | None:
    """The ``require_loop`` rule on one case's run: the message when perturbing the loops' results left
    every bit of the first ``leaves`` output leaves (the function's own output; a gradient or a second
    output follows it) as it was (``sandbox.inside.perturb``); None when they mattered, when the problem
    has no loop rule, or when the executor did not check (several devices)."""
    rule = next((r for r in problem.spec.rules if isinstance(r, LoopRule)), None)
    if rule is None or loops_matter is None or any(loops_matter[:leaves]):
        return None
    return (
        f"this problem asks you to {rule.asks}; your program has a loop, but its output does not depend "
        "on what the loop computes (the judge changed the loop's results and got the same output): the "
        "answer must come out of the loop, not from a formula beside it"
    )


def remat_message(problem: Problem, summary: ProgramSummary, leaves: int) -> str | None:
    """The ``require_remat`` rule on one program (``sandbox.inside.remat`` has the evidence): the message
    when the gradient is not computed with rematerialisation, else None (also without such a rule).
    ``leaves`` is the number of the function's own output leaves, which come first; a gradient follows."""
    rule = next((r for r in problem.spec.rules if isinstance(r, RematRule)), None)
    if rule is None:
        return None
    intro = f"this problem asks you to {rule.asks}"
    if not summary.ops.get("stablehlo.optimization_barrier"):
        return (
            f"{intro}; your program recomputes nothing: its backward pass reads the activations the forward "
            "pass stored. Wrap the function whose activations should not be stored in jax.checkpoint "
            "(jax.remat), keeping its default prevent_cse=True: the gradient then computes it again from its "
            "inputs"
        )
    if any(summary.barrier_outputs[:leaves]):
        return (
            f"{intro}; your function's own output is computed from an optimization barrier's results. "
            "jax.checkpoint leaves the forward pass as it is and recomputes only for the gradient: a barrier "
            "inside the forward computation is not rematerialisation"
        )
    if not any(summary.recomputed_ops.get(op) for op in rule.recompute_any):
        return (
            f"{intro}; your program has an optimization barrier, but the gradient does not compute "
            f"{rule.what} again from it (nothing the barrier passes on is used, or only stored values are): "
            "a barrier beside stored activations saves nothing. Wrap the computation in jax.checkpoint so "
            "that the backward pass recomputes it"
        )
    return None


def broken_rule(rules: Sequence[Rule], summary: ProgramSummary) -> str | None:
    """The message of the first rule the program breaks, or None."""
    for rule in rules:
        message = rule.check(summary)
        if message is not None:
            return message
    return None
