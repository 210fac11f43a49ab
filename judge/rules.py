"""Rules on the compiled program itself, decided on the trusted side from the executor's summary.

The executor (which runs no user code) walks every op of each program before compiling it and reports a
summary: an op-name histogram, the custom-call targets, the host callbacks, the number of loops. Nothing the
tracer says is used here: a submission cannot hide a host callback by patching its own process, because the
summary describes the program that actually runs.

A rule is a small frozen object with ``check(summary) -> str | None`` (a message that teaches, or None). A
broken rule makes the case ``wrong_answer`` with reason ``rule``. Problems get ``rules_for(problem)``:
``NoHostCallbacks`` for every problem (a callback can never run in the judge), then the rules the problem
declares in ``[[rules]]`` (``judge.spec.LoopRule`` -> ``RequireLoop``, ``ForbidOpsRule`` -> ``ForbidOps``).

What "requires a loop" means, precisely: the program holds a ``stablehlo.while`` whose body (its regions
and, transitively, the functions they call) contains at least one of the declared work ops. ``lax.scan``,
``lax.fori_loop`` (static bounds included: it lowers to a scan) and ``lax.while_loop`` all give one; a
Python ``for`` loop unrolls while tracing and gives none, nor does ``jax.vmap``. StableHLO does not say
which of the three JAX loops made a ``while``, so a ``fori_loop`` that does the work passes a rule that
asks for ``lax.scan``: the rule is about the program's form (one compiled loop body rather than a copy per
step), which is what the three share. A loop that does none of the work (an empty scan beside an unrolled
Python loop) fails, because its body has no work op; a loop that does part of the work beside unrolled
copies of the rest is not told apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from judge.problems import Problem
from judge.spec import ForbidOpsRule, LoopRule, ProgramRuleSpec

HOST_CALLBACK_MESSAGE = (
    "the program calls back into Python on the host ({targets}); this problem needs a pure JAX computation: "
    "jax.pure_callback, io_callback and other host callbacks cannot run in the judge"
)


@dataclass(frozen=True)
class ProgramSummary:
    """What the executor saw in one program (see ``sandbox.inside.executor.Executor.summarize``)."""

    ops: Mapping[str, int] = field(default_factory=dict)
    custom_calls: tuple[str, ...] = ()
    host_callbacks: tuple[str, ...] = ()
    loops: int = 0
    #: Ops that run inside a loop (``sandbox.inside.executor.Executor.loop_ops``).
    loop_ops: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_wire(cls, value: Mapping[str, Any] | None) -> ProgramSummary:
        """From the monitor's bounded copy of the executor's summary."""
        if not value:
            return cls()
        return cls(
            ops=dict(value.get("ops") or {}),
            custom_calls=tuple(value.get("custom_calls") or ()),
            host_callbacks=tuple(value.get("host_callbacks") or ()),
            loops=int(value.get("loops") or 0),
            loop_ops=dict(value.get("loop_ops") or {}),
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


def declared_rule(spec: ProgramRuleSpec) -> Rule:
    """The rule object for one ``[[rules]]`` entry of a problem spec."""
    if isinstance(spec, LoopRule):
        return RequireLoop(spec.asks, frozenset(spec.body_has_any), spec.body_work)
    assert isinstance(spec, ForbidOpsRule)
    return ForbidOps(frozenset(spec.ops), f"this problem asks you to {spec.asks}, without {spec.what}")


def rules_for(problem: Problem) -> list[Rule]:
    """The rules a problem's programs are checked against: no host callbacks, then the declared ones."""
    return [NoHostCallbacks(), *(declared_rule(rule) for rule in problem.spec.rules)]


def precheck_for(problem: Problem) -> dict[str, list[str]]:
    """The declared op rules in the executor's terms (``sandbox.monitor.SessionJob.precheck``), so that it
    refuses a program that breaks one before compiling it: an unrolled loop can take long to compile, and
    the verdict must not depend on that."""
    required: set[str] = set()
    forbidden: set[str] = set()
    for rule in problem.spec.rules:
        if isinstance(rule, LoopRule):
            required |= set(rule.body_has_any)
        else:
            forbidden |= set(rule.ops)
    # Sound for several rules too: a program with no loop holding any op of the union breaks every loop
    # rule, and one using any forbidden op breaks the rule that forbids it. The judge words the verdict.
    out: dict[str, list[str]] = {}
    if required:
        out["require_loop_any"] = sorted(required)
    if forbidden:
        out["forbid_ops"] = sorted(forbidden)
    return out


def broken_rule(rules: Sequence[Rule], summary: ProgramSummary) -> str | None:
    """The message of the first rule the program breaks, or None."""
    for rule in rules:
        message = rule.check(summary)
        if message is not None:
            return message
    return None
