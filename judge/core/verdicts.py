"""The closed set of verdicts, for one case and for a whole submission."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    WRONG_ANSWER = "wrong_answer"
    TRACE_ERROR = "trace_error"
    RUNTIME_ERROR = "runtime_error"
    COMPILE_ERROR = "compile_error"
    TIME_LIMIT_EXCEEDED = "time_limit_exceeded"
    MEMORY_LIMIT_EXCEEDED = "memory_limit_exceeded"
    OUTPUT_LIMIT_EXCEEDED = "output_limit_exceeded"
    INTERNAL_ERROR = "internal_error"
    # Only ever a case's status: the case was not run because an earlier case stopped the run
    # (time or memory limit) or the submission did not load. A submission never gets it.
    NOT_RUN = "not_run"


class WrongAnswerReason(StrEnum):
    STRUCTURE = "structure"
    TYPE = "type"
    SHAPE = "shape"
    DTYPE = "dtype"
    VALUE = "value"
    MUTATION = "mutation"
    #: The program breaks a rule checked on the program itself (a host callback, a declared op rule).
    RULE = "rule"
    #: A second call, traced through a fresh jit, gave another result: state kept across calls.
    STATE = "state"
    #: An output leaf lives elsewhere on the device mesh than the reference's (``[sandbox] devices`` > 1).
    SHARDING = "sharding"


#: Verdicts that stop the run: later cases are reported as not run.
STOPS_RUN = frozenset({Verdict.TIME_LIMIT_EXCEEDED, Verdict.MEMORY_LIMIT_EXCEEDED})
