"""The verdict of one case as the rules decide it, before it becomes a ``judge.core.results.CaseResult``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judge.core.results import MistakeMatch
from judge.core.verdicts import Verdict, WrongAnswerReason


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    message: str
    reason: WrongAnswerReason | None = None
    error_ratio: float | None = None
    got: Any = None
    mistake: MistakeMatch | None = None


#: The wrong answers whose output a known mistake's can match (a rule, a mutation or kept state is about
#: the program, not its output).
MATCHED_REASONS = frozenset(
    {
        WrongAnswerReason.STRUCTURE,
        WrongAnswerReason.TYPE,
        WrongAnswerReason.SHAPE,
        WrongAnswerReason.DTYPE,
        WrongAnswerReason.VALUE,
    }
)
