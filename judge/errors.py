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
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


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
