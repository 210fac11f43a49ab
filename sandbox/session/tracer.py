"""The tracer protocol: what the tracer must say next, in the plan's order, and what ends it.

The steps: ``load``, one ``sig`` per public signature, ``views`` (optional), ``public_done``; then, once
the public output is cut (``sandbox.session.output``), one ``sig`` per hidden signature, the ``retrace``
of one signature, and ``done``. Each frame must be the current step's (each step once, in order); anything
else is a protocol error that stops the tracer, charged to the case of the step it was in. The tracer's
clock restarts only when it completes a step.
"""

from __future__ import annotations

import selectors
from collections.abc import Callable

from sandbox.backends.base import SandboxedProcess
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.channel import AsideStop, Channel, tracer_limits
from sandbox.session.deadlines import StepClock
from sandbox.session.monitor import SessionJob
from sandbox.session.output import OutputCapture
from sandbox.session.reports import RawRun, Stop, TimeoutKind, decode_load
from sandbox.session.tracer_messages import job_message, keep_views, program_report
from sandbox.shared.wire import Frame, ProtocolError

#: A program arrived for a signature: (signature id, its module).
ProgramSink = Callable[[int, bytes], None]


class TracerProtocol:
    """The session's tracer: its channel, its step in the plan, its clock and its end.

    ``on_program``/``on_retrace``: a program to hand to the executor; ``on_stop``: the tracer failed, and
    no case at or past the given index may run (-1: none); ``notify``: the record changed."""

    def __init__(
        self,
        worker: SandboxedProcess,
        job: SessionJob,
        limits: SandboxLimits,
        raw: RawRun,
        output: OutputCapture,
        *,
        on_program: ProgramSink,
        on_retrace: ProgramSink,
        on_stop: Callable[[int], None],
        notify: Callable[[], None],
    ) -> None:
        self.worker, self.job, self.raw, self.output = worker, job, raw, output
        self.on_program, self.on_retrace, self.on_stop, self.notify = on_program, on_retrace, on_stop, notify
        self.channel = Channel(worker, tracer_limits(job))
        self.clock = StepClock(worker, limits.case_time_s)
        self.secret_sigs = [s for s in job.sigs if s.secret]
        self.retrace_sig = job.cases[job.retrace_case].sig if job.retrace_case is not None else None
        #: What the tracer must say next, in order: ("load",), ("sig", id), ("public_done",), ...
        self.steps: list[tuple[str, int]] = [
            ("load", -1),
            *[("sig", s.id) for s in job.sigs if not s.secret],
            ("views", -1),
            ("public_done", -1),
        ]
        self.steps += [("sig", s.id) for s in self.secret_sigs]
        if self.retrace_sig is not None:
            self.steps.append(("retrace", self.retrace_sig))
        self.steps.append(("done", -1))
        self.step = 0
        self.open = True
        #: The tracer's stop under way on a thread of its own (``stop_aside``).
        self.stopping: AsideStop | None = None
        #: The session's selector while its loop runs (a stop aside is heard through it).
        self.selector: selectors.BaseSelector | None = None

    @property
    def has_secret(self) -> bool:
        return bool(self.secret_sigs) or any(c.secret for c in self.job.cases)

    # ---------------------------------------------------------------------------------- talking

    def send_job(self) -> None:
        message, blobs = job_message(self.job, self.output.mark_text, self.output.section_token)
        self.channel.send(message, blobs)

    def feed_leftover(self) -> None:
        """Bytes the tracer sent after ``ready`` (none, from an honest one) count as its first replies."""
        data, self.worker.leftover = self.worker.leftover, b""
        if not data:
            return
        try:
            for frame in self.channel.reader.feed(data):
                if self.open:
                    self.frame(frame)
        except ProtocolError as exc:
            self.stop("protocol", protocol_error=str(exc))

    def frames(self) -> None:
        """Read what the tracer sent and act on each frame; its channel's end is its exit."""
        try:
            frames = self.channel.read()
        except ProtocolError as exc:
            self.stop("protocol", protocol_error=str(exc))
            return
        for frame in frames:
            if not self.open:
                return
            self.frame(frame)
        if self.channel.eof and self.open:
            if self.steps[self.step][0] == "done" and not self.channel.reader.pending:
                self.finished()
            else:
                self.stop("exit")

    def frame(self, frame: Frame) -> None:
        step, sig_id = self.steps[self.step]
        kind = frame.type
        message = frame.message
        if step == "views" and kind != "views":  # the views are extra: a tracer may send none
            self.step += 1
            step, sig_id = self.steps[self.step]
        try:
            if step == "load" and kind in ("loaded", "load_error"):
                self.raw.load = decode_load(message)
                if kind == "load_error":
                    self.close()
                    self.notify()
                    return
                self.notify()  # loaded: tracing begins
            elif step == "sig" and kind in ("program", "trace_failed") and message.get("sig") == sig_id:
                report = program_report(frame, sig_id, "trace_failed")
                self.raw.programs[sig_id] = report
                if report.failure is None:
                    self.on_program(sig_id, bytes(frame.blob(message.get("module"))))
                self.notify()
            elif step == "views" and kind == "views":
                keep_views(self.job, self.raw, message.get("views"))
                self.notify()
            elif step == "public_done" and kind == "public_done":
                self.public_done()
            elif step == "retrace" and kind in ("retrace", "retrace_failed") and message.get("sig") == sig_id:
                self.raw.retrace = program_report(frame, sig_id, "retrace_failed")
                if self.raw.retrace.failure is None:
                    self.on_retrace(sig_id, bytes(frame.blob(message.get("module"))))
                self.notify()
            elif step == "done" and kind == "done":
                self.finished()
                return
            else:
                raise ProtocolError(f"the tracer sent {kind[:40]!r} where the judge expected {step}")
        except ProtocolError as exc:
            self.stop("protocol", protocol_error=str(exc))
            return
        self.step += 1
        self.clock.restart()

    def public_done(self) -> None:
        """The tracer finished everything public: find the end of its public output, then give it the
        hidden signatures (``send_hidden``, at once or once the output is cut). Waiting is safe: the tracer
        knows nothing hidden before ``continue``, and the session serves the executor meanwhile."""
        if not self.output.await_cut():
            self.send_hidden()

    def send_hidden(self) -> None:
        """Give the tracer the hidden signatures; its clock starts again now."""
        if not self.open:
            return
        message = {
            "type": "continue",
            "signatures": [{"id": s.id, "args": s.args} for s in self.secret_sigs],
            "retrace": self.retrace_sig,
        }
        self.channel.send(message)
        self.clock.restart()

    # ---------------------------------------------------------------------------------- ending

    def finished(self) -> None:
        self.step = len(self.steps) - 1
        if self.has_secret:
            self.stop_aside()  # no user code may live once anything hidden runs
            return
        # Nothing hidden in this job: the tracer (which exits by itself after ``done``) is killed when the
        # pair is released, on the pool's closing thread, not on the grading's clock (a cgroup kill is
        # 5-15 ms of this thread while the executor's replies wait).
        self.open = False
        self.clock.stop()

    def stop_aside(self) -> None:
        """The tracer is done and hidden cases wait: stop listening to it and end its processes aside
        (``AsideStop``), so the executor's replies (shown cases still running, the re-trace) are not held.
        Hidden cases run only once that stop is over (``gone``); without a selector to hear it finish (a
        caller outside the session's loop), the stop is made here."""
        if self.selector is None or self.stopping is not None or not self.open:
            self.close()
            return
        self.open = False
        self.clock.stop()
        self.stopping = AsideStop(self.worker, self.selector)

    def stopped(self) -> None:
        """The stop aside is over (heard, or waited for at the end of the session or before another stop):
        every process of the tracer has SIGKILL pending."""
        if self.stopping is not None:
            self.stopping.finish()
            self.stopping = None

    def close(self) -> None:
        """Stop listening to the tracer and end its processes (a child it forked included) now, not when
        the pair is released: no user code lives once it is closed, so secret cases may run (``gone``)."""
        self.stopped()  # one stop at a time: a stop under way on its thread is over first
        self.open = False
        self.clock.stop()
        # Every process of it has SIGKILL pending when this returns (none runs user code again); their exit
        # (~3-7 ms for a JAX process) is not waited for here: the pair's release reaps them.
        self.worker.stop()

    @property
    def gone(self) -> bool:
        """No user code lives: the tracer is closed and any stop of it is over."""
        return not self.open and self.stopping is None

    def culprit(self) -> tuple[str, int | None]:
        """The phase the tracer is in and the case a failure there is charged to."""
        step, sig_id = self.steps[self.step]
        if step == "load":
            return "load", None
        if step == "sig":
            return "trace", self.job.first_case(sig_id)
        if step in ("views", "public_done"):
            first_secret = next((self.job.first_case(s.id) for s in self.secret_sigs), None)
            return "print", first_secret
        if step == "retrace":
            return "retrace", self.job.retrace_case
        return "done", None

    def stop(
        self, how: str, *, protocol_error: str | None = None, timeout: TimeoutKind | None = None
    ) -> None:
        """The tracer failed (``exit``, ``protocol``, ``timeout``, ``oom``): close it and, unless everything
        the verdicts need had arrived, record the stop charged to its current step's case."""
        if not self.open:
            return
        phase, case = self.culprit()
        worker = self.worker
        if how == "exit":
            worker.wait(1.0)  # it closed its channel: let it finish dying, so its own exit status is kept
        self.close()
        if phase == "done" or (phase == "print" and case is None):
            return  # everything the verdicts need had arrived
        worker.wait(2.0)
        info = worker.exit_info()
        self.output.drain()
        self.raw.stop = Stop(
            "tracer",
            phase,
            case,
            timeout=timeout,
            protocol_error=protocol_error,
            returncode=info.returncode,
            oom_killed=info.oom_killed,
            notes=list(info.notes),
        )
        self.on_stop(case if case is not None else -1)
        self.notify()
