"""What the service needs of ``judge.core.engine.Engine`` (tests of the HTTP layer may pass a fake)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from judge.core.problems import Problem
from judge.core.progress import RunProgress
from judge.core.results import CaseResult, GradeResult


class GradingEngine(Protocol):
    """What the service needs of ``judge.core.engine.Engine`` (tests of the HTTP layer may pass a fake)."""

    def grade(
        self, problem: Problem, code: str, *, on_case: Callable[[CaseResult], None] | None = None
    ) -> GradeResult: ...

    def run(
        self,
        problem: Problem,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        dtype: str | None = None,
        on_case: Callable[[CaseResult], None] | None = None,
        on_progress: Callable[[RunProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> GradeResult: ...

    def readiness(self) -> str | None: ...

    def warm_within(self, seconds: float) -> RunProgress | None: ...

    def warming(self) -> RunProgress | None: ...

    def stats(self) -> dict[str, int | str | None]: ...

    def close(self) -> None: ...
