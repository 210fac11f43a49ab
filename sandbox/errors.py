"""Exceptions of the sandbox layer (the judge's own failures, never a user's verdict).

SandboxError
+-- SandboxUnavailable   the configured backend cannot run on this host (fail closed)
+-- WorkerStartError     a worker died or hung before it reported ready
"""


class SandboxError(Exception):
    pass


class SandboxUnavailable(SandboxError):
    pass


class WorkerStartError(SandboxError):
    pass
