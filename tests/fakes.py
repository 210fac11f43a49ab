"""The one fake grading engine of the tests: what the service, the dispatcher and a grading node need of
``judge.core.engine.Engine``, graded instantly.

``FakeEngine`` subclasses the service's ``GradingEngine`` protocol (which ``Engine`` satisfies, and of which
the dispatcher's and the node's engine protocols are parts), so mypy checks that every method keeps the real
engine's signature: a fake that drifts from the engine fails the type check, not a test at run time."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from judge.core.problems import Problem
from judge.core.progress import RunProgress
from judge.core.results import CaseResult, GradeResult
from judge.core.verdicts import Verdict
from judge.service.state import GradingEngine

#: What a grading reports each case to (``Engine.grade``'s and ``Engine.run``'s ``on_case``).
CaseCallback = Callable[[CaseResult], None]


class FakeEngine(GradingEngine):
    """Grades instantly: every case ``verdict`` (default accepted), once ``delay`` returns (a test holds a
    grading with it). For HTTP-layer and dispatch tests only; the real engine is tested through the same app
    in test_service_api.py."""

    def __init__(
        self, verdict: Verdict = Verdict.ACCEPTED, delay: Callable[[], object] | None = None
    ) -> None:
        self.verdict = verdict
        self.delay = delay
        self.graded: list[str] = []

    def _result(self, problem: Problem, names: list[str], on_case: CaseCallback | None) -> GradeResult:
        if self.delay is not None:
            self.delay()
        cases = [CaseResult(name=n, visibility="public", verdict=self.verdict, message="fake") for n in names]
        for case in cases:
            if on_case is not None:
                on_case(case)
        return GradeResult(
            problem=problem.slug,
            verdict=self.verdict,
            passed=len(cases) if self.verdict is Verdict.ACCEPTED else 0,
            total=len(cases),
            cases=cases,
            backend="fake",
            elapsed_ms=0.0,
        )

    def grade(self, problem: Problem, code: str, *, on_case: CaseCallback | None = None) -> GradeResult:
        self.graded.append(code)
        return self._result(problem, [c.name for c in problem.cases], on_case)

    def run(
        self,
        problem: Problem,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        dtype: str | None = None,
        on_case: CaseCallback | None = None,
        on_progress: Callable[[RunProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> GradeResult:
        if inputs is not None:
            problem.custom_case(dict(inputs), dtype=dtype)
            return self._result(problem, ["custom"], on_case)
        return self._result(problem, [c.name for c in problem.public_cases], on_case)

    def readiness(self) -> str | None:
        return None

    def warm_within(self, seconds: float) -> RunProgress | None:
        return None

    def warming(self) -> RunProgress | None:
        return None

    def stats(self) -> dict[str, int | str | None]:
        return {"size": 0, "idle": 0}

    def close(self) -> None:
        pass
