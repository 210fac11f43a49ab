"""Exceptions of the sandbox layer (the judge's own failures, never a user's verdict).

SandboxError
+-- SandboxUnavailable   the configured backend cannot run on this host (fail closed)
+-- ProcessStartError     a worker died or hung before it reported ready
+-- HostOverloaded       the machine kept a grading waiting far past its limits (not the learner's fault)

Cancelled (not a SandboxError: nothing failed) the caller asked the grading to stop, and it stopped
"""


class SandboxError(Exception):
    pass


class SandboxUnavailable(SandboxError):
    pass


class ProcessStartError(SandboxError):
    pass


class HostOverloaded(SandboxError):
    """A case (or the job) was still short of its time limit in charged time when the overload cap came: the
    machine, not the program, made it slow. The grading is the judge's failure, to be retried."""


class Cancelled(Exception):
    """The grading was cancelled (``run_session``'s ``cancel`` was set): its workers were stopped and are
    replaced, and there is no result."""
