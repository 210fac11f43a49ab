"""Rules on the compiled program itself, decided on the trusted side from the executor's summary.

The executor (which runs no user code) walks every op of each program before compiling it and reports a
summary: an op-name histogram, the custom-call targets, the host callbacks, the number of loops. Nothing the
tracer says is used here: a submission cannot hide a host callback by patching its own process, because the
summary describes the program that actually runs.

A rule is a small frozen object with ``check(summary) -> str | None`` (a message that teaches, or None). A
broken rule makes the case ``wrong_answer`` with reason ``rule``. Problems get ``rules_for(problem)``: today
``NoHostCallbacks`` for every problem (a callback can never run in the judge); ``ForbidOps`` and
``RequireOps`` are the building blocks a problem-level rule spec ("requires a loop", "forbids sort") will
declare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from judge.problems import Problem

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


def rules_for(problem: Problem) -> list[Rule]:
    """The rules a problem's programs are checked against."""
    return [NoHostCallbacks()]


def broken_rule(rules: Sequence[Rule], summary: ProgramSummary) -> str | None:
    """The message of the first rule the program breaks, or None."""
    for rule in rules:
        message = rule.check(summary)
        if message is not None:
            return message
    return None
