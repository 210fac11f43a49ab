"""The judge's own exceptions. User-code failures are verdicts, never these.

JudgeError
+-- ProblemError          a problem package is invalid (names the file and field)
|   +-- ProblemNotFound   no problem with that slug
+-- InputError            a custom input or request is invalid (names the JSON path); a 4xx
+-- ReferenceFailure      the trusted reference solution failed on a case (graded internal_error)
+-- SandboxRefused        no secure sandbox and the insecure flag was not given (fail closed)
"""

from __future__ import annotations


class JudgeError(Exception):
    pass


class ProblemError(JudgeError):
    """A defect of a problem package: ``where`` is the file and the field in it (``.../problem.toml:
    limits.case_time_s``), ``file`` and ``line`` (1-based) locate it when known."""

    def __init__(self, where: str, message: str, *, file: str | None = None, line: int | None = None) -> None:
        super().__init__(f"{where}: {message}" if line is None else f"{where} (line {line}): {message}")
        self.where = where
        self.message = message
        self.file = file
        self.line = line


class ProblemNotFound(ProblemError):
    pass


class InputError(JudgeError):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ReferenceFailure(JudgeError):
    pass


class SandboxRefused(JudgeError):
    pass
