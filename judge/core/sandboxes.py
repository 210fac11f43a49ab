"""Choose the sandbox backend from configuration, failing closed.

``auto`` takes the first secure backend that works on this host (bwrap, then docker). The ``process``
backend isolates nothing: it is refused unless the caller passes an explicit insecure flag, and then a
loud warning is printed on every run.
"""

from __future__ import annotations

import os
import sys

from judge.core.errors import SandboxRefused
from sandbox.backends import BACKENDS, get_backend
from sandbox.backends.base import Backend, GradingProcesses
from sandbox.host.resource_limits import SandboxLimits

AUTO_ORDER = ("bwrap", "docker")
INSECURE_WARNING = (
    "WARNING: INSECURE SANDBOX. The 'process' backend runs submissions as a plain subprocess with rlimits "
    "only: no namespaces, no seccomp, no uid drop. Use it for development on trusted code only."
)


def configured_name(name: str | None = None) -> str:
    return name or os.environ.get("JUDGE_SANDBOX") or "auto"


def choose_backend(name: str | None = None, *, allow_insecure: bool = False) -> Backend:
    """The backend to grade with. Raises SandboxRefused with every reason when none is acceptable."""
    name = configured_name(name)
    if name == "auto":
        reasons = []
        for candidate in AUTO_ORDER:
            if candidate not in BACKENDS:
                reasons.append(f"{candidate}: not built into this judge")
                continue
            backend = get_backend(candidate)
            why = backend.available()
            if why is None:
                return backend
            reasons.append(f"{candidate}: {why}")
        raise SandboxRefused(
            "no secure sandbox is available on this host (" + "; ".join(reasons) + "). "
            "For development only, use --sandbox process --insecure."
        )
    try:
        backend = get_backend(name)
    except KeyError as exc:
        raise SandboxRefused(str(exc.args[0])) from None
    if backend.insecure and not allow_insecure:
        raise SandboxRefused(
            f"the {name!r} backend isolates nothing; refusing to grade with it without the insecure flag "
            "(--insecure, or JUDGE_INSECURE=1)"
        )
    why = backend.available()
    if why is not None:
        raise SandboxRefused(f"the {name!r} sandbox is not available on this host: {why}")
    if backend.insecure:
        print(INSECURE_WARNING, file=sys.stderr, flush=True)
    return backend


def insecure_from_env() -> bool:
    return os.environ.get("JUDGE_INSECURE", "") in ("1", "true", "yes")


class Prestarted:
    """A tracer and an executor started before the problem is known, so their JAX imports overlap the
    judge's own start-up (a one-shot ``judge grade``: no zygote, no pool).

    Called as a pair source (``judge.core.grader.ProcessesSource``): hands out the early pair once when the
    limits baked into its processes at start (CPU time, memory, processes) are the ones asked for, and starts
    a fresh pair otherwise (an executor's device count is baked in too). Time and output limits are
    enforced on the judge's side per job.
    """

    def __init__(self, backend: Backend, limits: SandboxLimits | None = None) -> None:
        self.backend = backend
        self.limits = limits or SandboxLimits()
        self._pair: GradingProcesses | None = backend.start_pair(self.limits)

    def __call__(self, limits: SandboxLimits) -> GradingProcesses:
        """One-shot executors only: a hidden case runs after every shown one, in a process that then exits."""
        pair, self._pair = self._pair, None
        if pair is not None:
            if _baked(self.limits) == _baked(limits) and pair.tracer.alive() and pair.executor.alive():
                return pair
            pair.close()
        return self.backend.start_pair(limits)

    def close(self) -> None:
        """Release the early pair if nobody took it, and whatever the backend keeps running."""
        if self._pair is not None:
            self._pair.close()
            self._pair = None
        self.backend.close()


def _baked(limits: SandboxLimits) -> tuple[float, int, int, int]:
    return (limits.cpu_time_s, limits.memory_mb, limits.processes, limits.devices)
