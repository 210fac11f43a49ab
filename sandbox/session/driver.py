"""Drive one grading through a tracer and an executor, for every backend alike.

    raw = run_session(pair, job, limits, progress=callback)

The tracer gets the job (code, argument specs, the ABSTRACT public signatures, the public values for its
prints); each program it exports is forwarded to the executor as soon as it arrives, so the tracer traces
signature k+1 while the executor compiles k. The executor then runs every case of the program on its
concrete inputs, lowest case first. Just before the tracer reports ``public_done`` it writes the session's
mark into its output (``sandbox.shared.output_mark``); the judge cuts the output there (nothing printed after
it is shown to the user) and only once it has seen the mark does the tracer receive the hidden signatures,
still abstract. Hidden cases run last, in the same executor, once the tracer is closed and every shown
result is in (``Lanes.may_run``); the executor is then spent: nothing a learner is shown is computed in
a process that has held a hidden value. At the end one signature is traced again through a fresh jit and
run on the same case (unless it is the very same program: the same bytes, or the same text once the
executor reads it).

What the judge trusts: the executor's outputs, timings and program summaries (it runs no user code). What it
does not: anything the tracer says beyond "here is a program for signature s", which is checked against the
plan (each step once, in order) and bounded; a claimed failure only hurts the claimant.

Bounds, so the judge survives any bytes: frame size, JSON size and depth, frame count and total bytes per
channel and run (``FrameLimits``); each select round reads at most ``READ_CHUNK`` per channel before the
deadlines are checked again (a writer that never pauses cannot starve them); the tracer's deadline moves
only when it completes an expected step (a forged progress frame cannot clear it); the executor's when it
answers the current request; the whole run has a wall deadline. Output is kept up to the cap and the rest
counted and dropped. The result is raw: verdicts are the judge's job (``judge.core.grader.interpret``).

The units (``sandbox.session``): the tracer protocol (``tracer``), the executor's lanes (``lanes``) and
replies (``replies``), the output (``output``), the channels (``channel``) and the deadlines
(``deadlines``); this module is the loop that serves them.
"""

from __future__ import annotations

import contextlib
import selectors
import threading
import time

from sandbox.backends.base import GradingProcesses
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.channel import Writes
from sandbox.session.deadlines import WallClock, request_expired
from sandbox.session.lanes import ExecutorState, Lanes
from sandbox.session.monitor import Progress, RawRun, SessionJob, Stop
from sandbox.session.output import OutputCapture
from sandbox.session.replies import Replies
from sandbox.session.tracer import TracerProtocol


class Session:
    """One session: the units composed, and the select loop that serves them until the executor ends the
    job, fails, or the job's time runs out."""

    def __init__(
        self,
        pair: GradingProcesses,
        job: SessionJob,
        limits: SandboxLimits,
        progress: Progress | None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.pair, self.job, self.limits, self.progress, self.cancel = pair, job, limits, progress, cancel
        self.raw = RawRun()
        hidden = any(s.secret for s in job.sigs) or any(c.secret for c in job.cases)
        self.output = OutputCapture(
            pair.tracer, self.raw, limits.output_bytes, hidden=hidden, on_cut=self._public_output_cut
        )
        self.executor = ExecutorState(pair.executor, job)
        self.tracer = TracerProtocol(
            pair.tracer,
            job,
            limits,
            self.raw,
            self.output,
            on_program=self._program,
            on_retrace=self._retrace,
            on_stop=self._tracer_failed,
            notify=self._notify,
        )
        self.lanes = Lanes(self.executor, self.tracer, job, limits, self.raw, self._notify)
        self.replies = Replies(self.lanes)
        self.wall = WallClock(limits.wall_time_s)

    def run(self) -> RawRun:
        self.wall.start()
        executor, tracer = self.executor, self.tracer
        executor.worker.drain_output()
        executor.channel.send({"type": "begin", "cpu_time_s": self.limits.cpu_time_s})
        tracer.send_job()
        self.wall.mark([tracer.clock.clock, executor.clock])
        tracer.clock.restart()
        self._notify()  # the job is sent: the tracer loads the code
        tracer.feed_leftover()
        self.replies.feed_leftover()
        with selectors.DefaultSelector() as sel:
            tracer.selector = sel
            sel.register(self.pair.tracer.result_fd, selectors.EVENT_READ, "tracer")
            sel.register(self.pair.tracer.output_fd, selectors.EVENT_READ, "output")
            sel.register(executor.worker.result_fd, selectors.EVENT_READ, "executor")
            writes = Writes(sel)
            while not self._finished():
                if self.cancel is not None and self.cancel.is_set():
                    self._cancelled()
                    break
                self.lanes.schedule()
                writes.flush((tracer.channel, executor.channel))
                now = time.monotonic()
                if self.wall.expired(now):
                    self._wall_timeout()
                    break
                if self._deadlines(now):
                    continue
                wake = min(
                    d
                    for d in (
                        self.wall.deadline,
                        tracer.clock.deadline,
                        self.output.mark_deadline,
                        executor.deadline(),
                    )
                    if d is not None
                )
                for key, _ in sel.select(timeout=max(0.0, min(wake - now, 0.5))):
                    self._event(str(key.data), sel, key.fd)
                    if self._finished():
                        break
            writes.close()
            tracer.stopped()
            tracer.selector = None
        self.output.finish()
        self.raw.executor_healthy = executor.ended and not self.lanes.executor_failed
        self.raw.executor_reusable = executor.ended and not executor.failed and not executor.held_secret
        self.raw.elapsed_s = time.monotonic() - self.wall.started
        return self.raw

    def _finished(self) -> bool:
        return self.executor.ended or self.lanes.executor_failed

    def _event(self, kind: str, sel: selectors.BaseSelector, fd: int) -> None:
        if kind == "output":
            self.output.read(sel)
        elif kind == "tracer" and self.tracer.open:
            self.tracer.frames()
        elif kind == "executor":
            self.replies.frames()
        elif kind == "stopped":
            self.tracer.stopped()
        elif kind == "tracer":  # closed on our side: stop watching it
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(fd)

    def _notify(self) -> None:
        if self.progress is not None:
            self.progress(self.raw)

    # ---------------------------------------------------------------------------------- the units' events

    def _program(self, sig_id: int, module: bytes) -> None:
        self.lanes.arrived(sig_id, module)

    def _retrace(self, sig_id: int, module: bytes) -> None:
        self.lanes.retrace_arrived(sig_id, module)

    def _tracer_failed(self, case_limit: int) -> None:
        self.lanes.limit_cases(case_limit)

    def _public_output_cut(self) -> None:
        self.tracer.send_hidden()

    # ---------------------------------------------------------------------------------- time and the end

    def _deadlines(self, now: float) -> bool:
        """Act on an expired deadline; True if one expired."""
        timeout = request_expired(self.executor.clock, list(self.executor.outstanding.values()), now)
        if timeout is not None:
            self.replies.stop(timeout=timeout)
            return True
        if self.output.mark_deadline is not None:
            if now >= self.output.mark_deadline:
                self.output.mark_missing()
                return True
            return False  # the tracer waits for the judge: its clock is not running
        tracer = self.tracer
        # A process of the tracer's (a child it forked) ended by the memory bound while the tracer lives on
        # is the submission's memory limit all the same, on a quiet machine or a busy one.
        if tracer.open and tracer.clock.oom_check_due(now) and self.pair.tracer.oom_killed_now():
            tracer.stop("oom")
            return True
        if tracer.open:
            timeout = tracer.clock.expired(now)
            if timeout is not None:
                tracer.stop("timeout", timeout=timeout)
                return True
        return False

    def _wall_timeout(self) -> None:
        culprit = self.lanes.first_open_case()
        executor, tracer = self.executor, self.tracer
        working = [r for r in executor.outstanding.values() if r.kind != "end"]
        tracer.stopped()
        self.pair.tracer.kill()
        executor.worker.kill()
        if not executor.ended:
            executor.failed = True
        tracer.close()
        self.lanes.executor_failed = True
        kind = self.wall.kind(time.monotonic())
        if self.raw.stop is None:
            if working:
                first = min(working, key=lambda r: r.case)
                phase = "compile" if first.kind == "program" else "run"
                self.raw.stop = Stop("executor", phase, culprit, timeout=kind)
            else:
                self.raw.stop = Stop("tracer", tracer.culprit()[0], culprit, timeout=kind)
        self._notify()

    def _cancelled(self) -> None:
        """Stop now: kill the tracer (and with it any user code); the executor, busy or not, is not reused
        (the caller's release replaces it: it may be running a program that does not stop)."""
        self.raw.cancelled = True
        self.tracer.close()
        self.executor.failed = True


def run_session(
    pair: GradingProcesses,
    job: SessionJob,
    limits: SandboxLimits,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RawRun:
    """Run one grading to the end (or to a limit). The pair is released by the caller
    (``pair.release(raw.executor_reusable)``). ``cancel``: once set, the session stops within half a second
    (``RawRun.cancelled``), its tracer killed and its executor reported not reusable, so the caller's
    release replaces both workers."""
    pair.tracer.wait_ready(limits.startup_time_s)
    pair.executor.wait_ready(limits.startup_time_s)
    return Session(pair, job, limits, progress, cancel).run()
