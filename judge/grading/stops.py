"""Why a run stopped without a result for the case it is charged to: its verdict and message, from the
stop the monitor recorded (``sandbox.session.reports.Stop``) and the limits the run had."""

from __future__ import annotations

import signal

from judge.core.compile_failure import compile_crash, size_advice
from judge.core.verdicts import Verdict
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.reports import RawRun, Stop

MEMORY_WORDS = ("bad_alloc", "Out of memory", "RESOURCE_EXHAUSTED", "MemoryError", "Cannot allocate memory")


def stopped(raw: RawRun, stop: Stop, limits: SandboxLimits, *, hidden: bool = False) -> tuple[Verdict, str]:
    """Why the run stopped without a result for the case it is charged to (``hidden``: a hidden case,
    told without XLA's own words, which may print the program's shapes)."""
    # A program's size is blamed only where it can be the cause (``judge.core.compile_failure``).
    advice = size_advice(stop.program_bytes)
    phase = {
        "load": "while loading the code",
        "trace": "while tracing the function",
        "print": "while running the function on the public cases to show its jax.debug output",
        "retrace": "while tracing the function a second time",
        "compile": "while compiling the program",
        "run": "while running the compiled program",
    }.get(stop.phase, "before returning a result for this case")
    if stop.protocol_error is not None:
        who = "the process that runs your code" if stop.party == "tracer" else "the program's execution"
        return Verdict.RUNTIME_ERROR, (
            f"{who} sent malformed data on the judge's result channel ({stop.protocol_error[:300]}) {phase}"
        )
    if stop.timeout == "wall":
        return (
            Verdict.TIME_LIMIT_EXCEEDED,
            f"the submission used up its total time limit of {limits.wall_time_s:g} s",
        )
    if stop.timeout == "case":
        if stop.phase == "load":
            return Verdict.TIME_LIMIT_EXCEEDED, (
                f"loading the code took longer than the {limits.case_time_s:g} s limit; no case was run"
            )
        if stop.phase == "compile":
            return Verdict.TIME_LIMIT_EXCEEDED, (
                f"compiling the program, not running it, took longer than the {limits.case_time_s:g} s "
                "limit for one case (with every compiler setting the judge tries); the remaining cases "
                f"were not run.{advice}"
            )
        return Verdict.TIME_LIMIT_EXCEEDED, (
            f"took longer than the {limits.case_time_s:g} s limit for one case {phase}; "
            "the remaining cases "
            "were not run"
        )
    rc = stop.returncode
    sig = signal_of(rc)
    if stop.oom_killed or (
        sig is not None and any(w in raw.output.decode(errors="replace") for w in MEMORY_WORDS)
    ):
        return (
            Verdict.MEMORY_LIMIT_EXCEEDED,
            f"used more than the {limits.memory_mb} MiB memory limit {phase}",
        )
    if stop.party == "executor" and sig == signal.SIGKILL:
        # An executor's CPU limit is its soft RLIMIT_CPU (SIGXCPU); its hard one is a lifetime far above
        # any job's. A SIGKILL the judge did not send came from outside: the judge's failure.
        return Verdict.INTERNAL_ERROR, (
            f"the process that runs the compiled program was killed from outside the judge {phase}; "
            "this is not a fault of your code (submit again)"
        )
    if sig in (signal.SIGXCPU, signal.SIGKILL):
        # Our own kills are reported as timeouts above; the kernel sends SIGXCPU at the CPU rlimit and
        # SIGKILL at its hard limit.
        return (
            Verdict.TIME_LIMIT_EXCEEDED,
            f"used more than the {limits.cpu_time_s:g} s CPU time limit {phase}",
        )
    if stop.party == "executor" and stop.phase == "compile":
        if any(w in note for note in stop.notes for w in MEMORY_WORDS):
            return Verdict.MEMORY_LIMIT_EXCEEDED, (
                f"compiling the program, not running it, used more than the {limits.memory_mb} MiB "
                f"memory limit.{advice}"
            )
        what = f"signal {sig.name}" if sig is not None else f"exit code {rc}"
        return Verdict.RUNTIME_ERROR, compile_crash(stop.notes, what, stop.program_bytes, hidden=hidden)
    if stop.party == "executor":
        what = f"signal {sig.name}" if sig is not None else f"exit code {rc}"
        return Verdict.RUNTIME_ERROR, f"the compiled program crashed ({what}) {phase}"
    if sig is not None:
        return Verdict.RUNTIME_ERROR, f"the process was killed by signal {sig.name} {phase}"
    return Verdict.RUNTIME_ERROR, (
        f"the process exited (code {rc}) {phase}; do not call sys.exit(), os._exit() or exit the interpreter"
    )


def signal_of(rc: int | None) -> signal.Signals | None:
    """The signal that ended a process: negative return codes, or 128+N from a wrapper such as bwrap."""
    if rc is None or rc == 0:
        return None
    number = -rc if rc < 0 else rc - 128 if rc > 128 else 0
    try:
        return signal.Signals(number)
    except ValueError:
        return None
