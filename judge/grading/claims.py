"""What a sandbox says of its own failures: the tracer's claims (trusted only within the verdicts it may
claim, and for hidden cases told only as data composed here), its load error, and the executor's refusals."""

from __future__ import annotations

from collections.abc import Sequence

from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.compiled_rules import ProgramSummary, Rule, broken_rule
from judge.grading.outcome import Outcome
from sandbox.session.reports import Load, Refused, TraceFailure
from sandbox.shared.wire import ADVICE

#: Verdicts the tracer may claim for its own failures; anything else from it is not trusted.
_CLAIMABLE = frozenset(
    {Verdict.TRACE_ERROR, Verdict.RUNTIME_ERROR, Verdict.MEMORY_LIMIT_EXCEEDED, Verdict.WRONG_ANSWER}
)
_LOAD_VERDICTS = frozenset({Verdict.COMPILE_ERROR, Verdict.RUNTIME_ERROR, Verdict.MEMORY_LIMIT_EXCEEDED})
_CLAIMABLE_REASONS = frozenset({WrongAnswerReason.STRUCTURE, WrongAnswerReason.TYPE})


def claim(failure: TraceFailure, hidden: bool, lines: Sequence[str]) -> Outcome:
    """A failure the tracer reports for its own case: trusted only within the claimable verdicts, and
    for hidden cases shown only as data composed here (line, its own copy of the line, advice). ``lines``:
    the submission's source lines."""
    try:
        verdict = Verdict(failure.verdict)
    except ValueError:
        verdict = Verdict.RUNTIME_ERROR
    if verdict not in _CLAIMABLE:
        verdict = Verdict.RUNTIME_ERROR
    reason = None
    if verdict is Verdict.WRONG_ANSWER:
        try:
            reason = WrongAnswerReason(str(failure.reason))
        except ValueError:
            reason = WrongAnswerReason.TYPE
        if reason not in _CLAIMABLE_REASONS:
            reason = WrongAnswerReason.TYPE
    if not hidden:
        return Outcome(verdict, failure.message[:4000], reason)
    return Outcome(verdict, composed(failure, lines), reason)


def composed(failure: TraceFailure, lines: Sequence[str]) -> str:
    line = failure.line
    where = ""
    if 1 <= line <= len(lines):
        text = lines[line - 1].strip()[:200]
        where = f"line {line}: `{text}`\n" if text else f"line {line}\n"
    advice = failure.advice
    if advice is not None and advice in ADVICE:
        return where + ADVICE[advice]
    error = failure.error
    name = error if error is not None and error.isidentifier() and len(error) <= 60 else "an exception"
    return f"{where}{name} was raised (details are not shown for hidden cases)"


def refused(refusal: Refused, rules: Sequence[Rule], max_output_bytes: int) -> Outcome:
    """The executor would not compile the program: a rule, a leaked tracer, the output cap, or junk."""
    kind = refusal.kind
    message = refusal.message[:500]
    if kind in ("host_callback", "custom_call", "op", "rule"):
        summary = ProgramSummary.from_wire(refusal.summary)
        text = broken_rule(rules, summary) or f"{message}: this problem needs a pure JAX computation"
        return Outcome(Verdict.WRONG_ANSWER, text, WrongAnswerReason.RULE)
    if kind == "extra_inputs":
        return Outcome(Verdict.TRACE_ERROR, f"{ADVICE['leak']} ({message})")
    if kind == "output_limit":
        return Outcome(
            Verdict.OUTPUT_LIMIT_EXCEEDED,
            f"{message}, more than the {max_output_bytes}-byte limit",
        )
    return Outcome(Verdict.RUNTIME_ERROR, f"the program could not be compiled: {message}")


def load_failure(load: Load) -> tuple[Verdict, str]:
    """The tracer's load error: its verdict when it may claim it (else ``runtime_error``), its message."""
    try:
        verdict = Verdict(load.verdict)
    except ValueError:
        verdict = Verdict.RUNTIME_ERROR
    return (verdict if verdict in _LOAD_VERDICTS else Verdict.RUNTIME_ERROR), load.message
