"""Drive one grading through a tracer and an executor, for every backend alike.

    raw = run_session(pair, job, limits, progress=callback)

The tracer gets the job (code, argument specs, the ABSTRACT public signatures, the public values for its
prints); each program it exports is forwarded to the executor as soon as it arrives, so the tracer traces
signature k+1 while the executor compiles k. The executor then runs every case of the program on its
concrete inputs, lowest case first. Just before the tracer reports ``public_done`` it writes the session's
mark into its output (``sandbox.output_mark``); the judge cuts the output there (nothing printed after it
is shown to the user) and only once it has seen the mark does the tracer receive the hidden signatures,
still abstract. Hidden cases run last, in the same executor, once the tracer is closed and every shown
result is in (``_Session._may_run``); the executor is then spent: nothing a learner is shown is computed in
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
counted and dropped. The result is raw: verdicts are the judge's job (``judge.grader.interpret``).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import os
import selectors
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sandbox.base import Pair, Worker
from sandbox.limits import SandboxLimits
from sandbox.output_mark import MarkScanner, SectionSplitter, new_mark, new_section_token
from sandbox.protocol import (
    Blobs,
    Frame,
    FrameLimits,
    FrameReader,
    ProtocolError,
    TreeLimits,
    decode_leaves,
    encode_frame,
    encode_leaf,
)
from sandbox.schedclock import Mark, TreeClock
from sandbox.session.reports import (
    CaseReport,
    ProgramReport,
    RawRun,
    Stop,
    TimeoutKind,
    decode_compiled,
    decode_failure,
    decode_load,
    decode_loops_matter,
    decode_refused,
    decode_run_error,
    decode_view,
)
from sandbox.session.reports import bounded_text as _text
from sandbox.session.reports import duration_ms as _ms
from sandbox.session.reports import wire_int as _int

#: Longest wait, after ``public_done``, for the tracer's output mark to come through its output relay (it
#: comes at once unless the tracer closed or redirected its output, which costs only its own session).
MARK_WAIT_S = 2.0
#: How often a live tracer's memory cgroup is asked whether its OOM killer ended one of its processes.
OOM_CHECK_S = 0.25
#: Largest serialized program a tracer may send.
MAX_MODULE_BYTES = 16 * 1024 * 1024
#: Most bytes read from one channel per select round.
READ_CHUNK = 1 << 20
#: Most section marks kept from one session (one per signature and public case, and the load, honestly).
MAX_SECTIONS = 4096
#: Program id of the fresh re-trace (real signatures are numbered from 0).
RETRACE_ID = 1 << 30
#: Programs an executor compiles at once (on threads: XLA releases the GIL), while it runs cases.
COMPILE_SLOTS = 2
#: Time limits count charged time (``sandbox.schedclock``: wall time minus the time the machine kept the
#: worker waiting on a run queue), so load changes how long an answer takes, never what it is. A request (or
#: the whole job) still short of its limit in charged time after this many times the limit in wall time is
#: stopped as the judge's own failure (``overload``): every wait has a deadline.
OVERLOAD_FACTOR = 30.0


# ------------------------------------------------------------------------------------------ the plan


@dataclass(frozen=True)
class SigPlan:
    """One distinct signature: its abstract arguments (what the tracer sees) and its flat input types."""

    id: int
    args: list[Any]
    inputs: list[dict[str, Any]]
    secret: bool
    #: Flat input indices the executor donates to the program (a problem's in-place rule), usually none.
    donate: tuple[int, ...] = ()


@dataclass(frozen=True)
class CasePlan:
    index: int
    sig: int
    #: The concrete flat inputs (signature order); only the executor receives them for secret cases.
    leaves: list[np.ndarray[Any, Any]]
    secret: bool
    name: str = ""


@dataclass(frozen=True)
class SessionJob:
    code: str
    function: str
    #: ``[{"name", "kind", "traced"}]`` in signature order.
    args: list[dict[str, Any]]
    #: Distinct signatures: every public one before any secret one.
    sigs: list[SigPlan]
    #: Cases in order.
    cases: list[CasePlan]
    check_inputs_unchanged: bool = False
    max_output_bytes: int = 16 * 1024 * 1024
    #: The case whose signature is traced a second time at the end (None: no re-trace).
    retrace_case: int | None = None
    #: Op rules the executor applies before compiling (``{"require_loop_any": [...], "forbid_ops": [...]}``):
    #: a program that breaks one is refused (kind ``rule``) without paying for its compile, so the verdict
    #: does not depend on how long an unrolled program takes to compile. The judge still decides the rule
    #: itself from the summary (``judge.rules``).
    precheck: dict[str, list[str]] = field(default_factory=dict)
    #: A gradient the program returns beside the output (``sandbox.transforms``):
    #: ``{"wrt": [arg index], "names": [arg name], "cotangent": kind}``, or None.
    gradient: dict[str, Any] | None = None
    #: ``{"sigs": {id: {"scale": factor, "scaled_first": bool}}}``: each signature's program returns the
    #: output and the output again with every autodiff seed scaled (``sandbox.inside.autodiff``, the
    #: ``require_autodiff`` rule), or None.
    autodiff: dict[str, Any] | None = None
    #: The source of the problem's menu module (problem code) for ``function`` arguments, or None.
    functions: str | None = None
    #: CPU host devices the programs are lowered for (the executor's own count is fixed at its start).
    devices: int = 1
    #: The matrix-product precision the programs are traced at (a problem's ``[compare] matmul_precision``;
    #: None: JAX's default).
    matmul_precision: str | None = None

    def sig(self, sig_id: int) -> SigPlan:
        return next(s for s in self.sigs if s.id == sig_id)

    def first_case(self, sig_id: int) -> int | None:
        return next((c.index for c in self.cases if c.sig == sig_id), None)


# ------------------------------------------------------------------------------------------ the record

# The record's dataclasses and the decoding of every message that becomes part of it:
# ``sandbox.session.reports``.

Progress = Callable[[RawRun], None]


# ------------------------------------------------------------------------------------------ channels


@dataclass
class _Request:
    """A request the executor has not answered yet, and the case a failure there is charged to."""

    kind: str  # "program" | "run" | "end"
    program: int
    case: int
    #: When to look at the request's time again: its limit in charged time cannot have run out before.
    deadline: float
    #: The executor's clock when the request was sent, and the request's limit in charged seconds.
    mark: Mark | None = None
    limit: float = 0.0


class _Channel:
    """One process's request pipe (our writes, buffered, non-blocking) and reply pipe (a FrameReader)."""

    def __init__(self, worker: Worker, limits: FrameLimits) -> None:
        self.worker = worker
        self.reader = FrameReader(limits)
        self.out = bytearray()
        self.eof = False
        self.write_failed = False
        os.set_blocking(worker.stdin_fd, False)
        os.set_blocking(worker.result_fd, False)

    def send(self, message: dict[str, Any], blobs: list[bytes] | None = None) -> None:
        self.out += encode_frame(message, blobs or [])

    def flush(self) -> None:
        while self.out and not self.write_failed:
            try:
                written = os.write(self.worker.stdin_fd, self.out[: 1 << 20])
            except BlockingIOError:
                return
            except OSError:
                self.write_failed = True  # it died: the reply channel tells how
                self.out.clear()
                return
            del self.out[:written]

    def read(self) -> list[Frame]:
        try:
            data = os.read(self.worker.result_fd, READ_CHUNK)
        except BlockingIOError:
            return []
        except OSError as exc:
            if exc.errno == errno.EAGAIN:
                return []
            data = b""
        if not data:
            self.eof = True
            return []
        return self.reader.feed(data)


class _AsideStop:
    """A tracer's stop (``Worker.stop``: every process of it gets SIGKILL) on a thread of its own, so the
    session's thread goes on serving the executor while a cgroup v1 freezer settles (5-15 ms). The thread
    closes a pipe when it is over; the session's selector hears that (``fd``, data ``"stopped"``) and calls
    ``finish``, which is also how anyone waits for it."""

    def __init__(self, tracer: Worker, selector: selectors.BaseSelector) -> None:
        self.selector = selector
        self.fd, done_w = os.pipe()

        def stop() -> None:
            try:
                tracer.stop()
            except Exception:  # it could not be made sure: every process is killed (and waited for)
                with contextlib.suppress(Exception):
                    tracer.kill()
            finally:
                os.close(done_w)

        self.thread = threading.Thread(target=stop, name="tracer-stop", daemon=True)
        selector.register(self.fd, selectors.EVENT_READ, "stopped")
        self.thread.start()

    def finish(self) -> None:
        """Wait for the stop to be over (at once when the selector heard it) and let go of the pipe."""
        self.thread.join()
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.fd)
        os.close(self.fd)


class _Executor:
    """The session's executor and what it has been asked. It computes the public and custom cases (and a
    re-trace of one) first, then the hidden cases (``_Session._may_run``); once it has held a hidden value it
    computes nothing shown again."""

    def __init__(self, worker: Worker, limits: FrameLimits) -> None:
        self.worker = worker
        self.channel = _Channel(worker, limits)
        self.clock = TreeClock(worker.clock_root)
        self.outstanding: dict[tuple[str, int], _Request] = {}  # ("program", id), ("run", case), ("end", -1)
        self.requested: set[int] = set()  # program ids sent for compiling
        self.compiled: set[int] = set()  # program ids compiled here
        self.ending = False
        self.ended = False
        self.failed = False
        #: A hidden case's values were sent to this executor.
        self.held_secret = False

    def busy(self, kind: str) -> int:
        return sum(1 for request in self.outstanding.values() if request.kind == kind)

    def ask(self, key: tuple[str, int], kind: str, program: int, case: int, limit: float) -> None:
        """Record a request (sent next), timed from now in this executor's charged time."""
        now = time.monotonic()
        self.outstanding[key] = _Request(kind, program, case, now + limit, self.clock.mark(), limit)


def tracer_limits(job: SessionJob) -> FrameLimits:
    steps = len(job.sigs) + 6
    return FrameLimits(
        max_frame=MAX_MODULE_BYTES + (1 << 20),
        max_json=1 << 20,
        max_json_depth=200,
        max_frames=steps,
        max_total=min(steps * (MAX_MODULE_BYTES + (1 << 20)), 256 << 20),
    )


def executor_limits(job: SessionJob) -> FrameLimits:
    requests = 2 * len(job.sigs) + len(job.cases) + 4
    frame = job.max_output_bytes + (1 << 20)
    return FrameLimits(
        max_frame=frame, max_json=4 << 20, max_json_depth=64, max_frames=requests, max_total=requests * frame
    )


# ------------------------------------------------------------------------------------------ the session


class _Session:
    def __init__(
        self,
        pair: Pair,
        job: SessionJob,
        limits: SandboxLimits,
        progress: Progress | None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.pair, self.job, self.limits, self.progress = pair, job, limits, progress
        self.cancel = cancel
        self.raw = RawRun()
        self.tracer = _Channel(pair.tracer, tracer_limits(job))
        self.executor = _Executor(pair.executor, executor_limits(job))
        self.output = bytearray()
        self.section_token = new_section_token()
        self.splitter = SectionSplitter(self.section_token)
        public = [s for s in job.sigs if not s.secret]
        secret = [s for s in job.sigs if s.secret]
        self.secret_sigs = secret
        self.has_secret = bool(secret) or any(c.secret for c in job.cases)
        #: Finds where the public output ends, when there is anything hidden to keep it from.
        self.marks = MarkScanner(new_mark()) if self.has_secret else None
        #: After ``public_done``, while the mark is on its way: when to stop waiting for it.
        self.mark_deadline: float | None = None
        retrace_sig = job.cases[job.retrace_case].sig if job.retrace_case is not None else None
        self.retrace_sig = retrace_sig
        #: What the tracer must say next, in order: ("load",), ("sig", id), ("public_done",), ...
        self.steps: list[tuple[str, int]] = [
            ("load", -1),
            *[("sig", s.id) for s in public],
            ("views", -1),
            ("public_done", -1),
        ]
        self.steps += [("sig", s.id) for s in secret]
        if retrace_sig is not None:
            self.steps.append(("retrace", retrace_sig))
        self.steps.append(("done", -1))
        self.step = 0
        self.tracer_open = True
        self.tracer_deadline: float | None = None
        #: The tracer's stop under way on a thread of its own (``_stop_tracer_aside``).
        self.tracer_stopping: _AsideStop | None = None
        self.selector: selectors.BaseSelector | None = None
        #: When to look next whether the memory bound ended one of the tracer's processes.
        self.oom_check_at = 0.0
        #: The tracer's clock when its current step began (user code: its CPU time counts in full).
        self.tracer_clock = TreeClock(pair.tracer.clock_root)
        self.tracer_mark: Mark | None = None
        #: The job's limit in wall time, pushed back while the machine (not the job) makes it slow.
        self.wall_deadline = 0.0
        self.started = 0.0
        self.start_marks: list[tuple[TreeClock, Mark]] = []
        # Executor scheduling.
        self.modules: dict[int, bytes] = {}
        self.pending: list[int] = []  # case indexes whose program arrived, not yet run (sorted)
        self.retrace_module: bytes | None = None
        self.retrace_state = "none"  # none -> arrived -> compiling -> running -> done
        self.executor_failed = False
        self.case_limit: int | None = None  # after a stop: run no case at or past this index
        self.skeleton_limits = TreeLimits(max_leaves=100_000, max_bytes=job.max_output_bytes)

    # -------------------------------------------------------------------------------------- driving

    def run(self) -> RawRun:
        started = self.started = time.monotonic()
        self.wall_deadline = started + self.limits.wall_time_s
        executor = self.executor
        executor.worker.drain_output()
        executor.channel.send({"type": "begin", "cpu_time_s": self.limits.cpu_time_s})
        self._send_job()
        self.start_marks = [(c, c.mark()) for c in (self.tracer_clock, executor.clock)]
        self._restart_tracer_clock()
        self._notify()  # the job is sent: the tracer loads the code
        self._feed_leftovers()
        with selectors.DefaultSelector() as sel:
            self.selector = sel
            sel.register(self.pair.tracer.result_fd, selectors.EVENT_READ, "tracer")
            sel.register(self.pair.tracer.output_fd, selectors.EVENT_READ, "output")
            sel.register(executor.worker.result_fd, selectors.EVENT_READ, "executor")
            writing: dict[int, bool] = {}
            while not self._finished():
                if self.cancel is not None and self.cancel.is_set():
                    self._cancelled()
                    break
                self._schedule()
                for channel in (self.tracer, executor.channel):
                    channel.flush()
                    fd = channel.worker.stdin_fd
                    want = bool(channel.out) and not channel.write_failed
                    if want != writing.get(fd, False):
                        if want:
                            sel.register(fd, selectors.EVENT_WRITE, "write")
                        else:
                            sel.unregister(fd)
                        writing[fd] = want
                now = time.monotonic()
                if now >= self.wall_deadline and self._wall_expired(now):
                    self._wall_timeout()
                    break
                if self._deadlines(now):
                    continue
                deadline = min(
                    d
                    for d in (
                        self.wall_deadline,
                        self.tracer_deadline,
                        self.mark_deadline,
                        self._executor_deadline(),
                    )
                    if d is not None
                )
                for key, _ in sel.select(timeout=max(0.0, min(deadline - now, 0.5))):
                    self._event(str(key.data), sel, key.fd)
                    if self._finished():
                        break
            for fd, on in writing.items():
                if on:
                    with contextlib.suppress(KeyError, ValueError):
                        sel.unregister(fd)
            self._tracer_stopped()
            self.selector = None
        self._drain_output()
        self._keep(self.splitter.flush())
        self.raw.output = bytes(self.output)
        self.raw.executor_healthy = executor.ended and not self.executor_failed
        self.raw.executor_reusable = executor.ended and not executor.failed and not executor.held_secret
        self.raw.elapsed_s = time.monotonic() - started
        return self.raw

    def _cancelled(self) -> None:
        """Stop now: kill the tracer (and with it any user code); the executor, busy or not, is not reused
        (the caller's release replaces it: it may be running a program that does not stop)."""
        self.raw.cancelled = True
        self._close_tracer()
        self.executor.failed = True

    def _finished(self) -> bool:
        return self.executor.ended or self.executor_failed

    def _event(self, kind: str, sel: selectors.BaseSelector, fd: int) -> None:
        if kind == "output":
            self._read_output(sel)
        elif kind == "tracer" and self.tracer_open:
            self._tracer_frames()
        elif kind == "executor":
            self._executor_frames()
        elif kind == "stopped":
            self._tracer_stopped()
        elif kind == "tracer":  # closed on our side: stop watching it
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(fd)

    def _feed_leftovers(self) -> None:
        """Bytes a worker sent after ``ready`` (none, from an honest one) count as its first replies."""
        data, self.pair.tracer.leftover = self.pair.tracer.leftover, b""
        if data:
            try:
                for frame in self.tracer.reader.feed(data):
                    if self.tracer_open:
                        self._tracer_frame(frame)
            except ProtocolError as exc:
                self._tracer_stop("protocol", protocol_error=str(exc))
        worker = self.executor.worker
        data, worker.leftover = worker.leftover, b""
        if data and not self.executor_failed:
            self._executor_stop(protocol_error="the executor spoke before it was asked anything")

    def _notify(self) -> None:
        if self.progress is not None:
            self.progress(self.raw)

    # -------------------------------------------------------------------------------------- the tracer

    def _send_job(self) -> None:
        job = self.job
        blobs = Blobs()
        prints = [
            {
                "sig": c.sig,
                "name": c.name,
                "index": c.index,
                "leaves": [encode_leaf(x, blobs) for x in c.leaves],
            }
            for c in job.cases
            if not c.secret
        ]
        message = {
            "type": "job",
            "code": job.code,
            "function": job.function,
            "args": job.args,
            "signatures": [{"id": s.id, "args": s.args} for s in job.sigs if not s.secret],
            "print_cases": prints,
            "check_inputs_unchanged": job.check_inputs_unchanged,
            "gradient": job.gradient,
            "autodiff": job.autodiff,
            "functions": job.functions,
            "devices": job.devices,
            "matmul_precision": job.matmul_precision,
            "output_mark": self.marks.mark.decode("ascii") if self.marks is not None else None,
            "output_sections": self.section_token,
        }
        self.tracer.send(message, [bytes(b) for b in blobs.items])

    def _tracer_frames(self) -> None:
        try:
            frames = self.tracer.read()
        except ProtocolError as exc:
            self._tracer_stop("protocol", protocol_error=str(exc))
            return
        for frame in frames:
            if not self.tracer_open:
                return
            self._tracer_frame(frame)
        if self.tracer.eof and self.tracer_open:
            if self.steps[self.step][0] == "done" and not self.tracer.reader.pending:
                self._tracer_finished()
            else:
                self._tracer_stop("exit")

    def _tracer_frame(self, frame: Frame) -> None:
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
                    self._close_tracer()
                    self._notify()
                    return
                self._notify()  # loaded: tracing begins
            elif step == "sig" and kind in ("program", "trace_failed") and message.get("sig") == sig_id:
                report = self._program_report(frame, sig_id, "trace_failed")
                self.raw.programs[sig_id] = report
                if report.failure is None:
                    self._arrived(sig_id, bytes(frame.blob(message.get("module"))))
                self._notify()
            elif step == "views" and kind == "views":
                self._views(message.get("views"))
                self._notify()
            elif step == "public_done" and kind == "public_done":
                self._hidden_phase()
            elif step == "retrace" and kind in ("retrace", "retrace_failed") and message.get("sig") == sig_id:
                self.raw.retrace = self._program_report(frame, sig_id, "retrace_failed")
                if self.raw.retrace.failure is None:
                    self._retrace_arrived(sig_id, bytes(frame.blob(message.get("module"))))
                self._notify()
            elif step == "done" and kind == "done":
                self._tracer_finished()
                return
            else:
                raise ProtocolError(f"the tracer sent {kind[:40]!r} where the judge expected {step}")
        except ProtocolError as exc:
            self._tracer_stop("protocol", protocol_error=str(exc))
            return
        self.step += 1
        self._restart_tracer_clock()

    def _program_report(self, frame: Frame, sig_id: int, failed: str) -> ProgramReport:
        message = frame.message
        report = ProgramReport(sig=sig_id)
        if frame.type == failed:
            report.failure = decode_failure(message)
            return report
        module = frame.blob(message.get("module"))
        if len(module) > MAX_MODULE_BYTES:
            raise ProtocolError(f"program of {len(module)} bytes exceeds the {MAX_MODULE_BYTES}-byte cap")
        report.skeleton = message.get("skeleton")
        report.debug = message.get("debug") is True
        report.debug_unordered = message.get("debug_unordered") is True
        mutation = message.get("mutation")
        report.mutation = _text(mutation, 500) if isinstance(mutation, str) else None
        report.trace_ms = _ms(message.get("trace_ms"))
        return report

    def _views(self, views: Any) -> None:
        """The public programs' text (the tracer's claim, shown back to this learner only): each kept on its
        signature's report, when that signature is public and traced; anything else is ignored."""
        if not isinstance(views, list):
            raise ProtocolError("the tracer's views are not a list")
        public = {s.id for s in self.job.sigs if not s.secret}
        for view in views[: len(public)]:
            if not isinstance(view, dict) or view.get("sig") not in public:
                continue
            report = self.raw.programs.get(view["sig"])
            if report is not None and report.failure is None and report.view is None:
                report.view = decode_view(view)

    def _hidden_phase(self) -> None:
        """The tracer finished everything public: find the end of its public output, then give it the
        hidden signatures.

        The tracer wrote its mark before ``public_done``, but output may trail the frames (a container
        engine relays them separately), so ``continue`` waits until the mark has been read (``_capture``);
        the loop serves the executor meanwhile. Waiting is safe: the tracer knows nothing hidden before
        ``continue``. A mark that does not come (the tracer closed or redirected its output) cuts the
        output where it stands, at the output's end or after ``MARK_WAIT_S``."""
        if self.marks is not None and self.raw.output_cut is None:
            self.mark_deadline = time.monotonic() + MARK_WAIT_S
            return
        self._continue()

    def _mark_missing(self) -> None:
        self.raw.output_cut = len(self.output)
        self.raw.output_cut_stream = self.raw.output_total
        self.marks = None  # anything later is hidden output; a late mark stays in it, never shown
        self._continue()

    def _continue(self) -> None:
        """Give the tracer the hidden signatures; its clock starts again now."""
        self.mark_deadline = None
        if not self.tracer_open:
            return
        message = {
            "type": "continue",
            "signatures": [{"id": s.id, "args": s.args} for s in self.secret_sigs],
            "retrace": self.retrace_sig,
        }
        self.tracer.send(message)
        self._restart_tracer_clock()

    def _restart_tracer_clock(self) -> None:
        """The tracer's next step starts now: it has ``case_time_s`` of charged time for it."""
        self.tracer_mark = self.tracer_clock.mark()
        self.tracer_deadline = time.monotonic() + self.limits.case_time_s

    def _tracer_finished(self) -> None:
        self.step = len(self.steps) - 1
        if self.has_secret:
            self._stop_tracer_aside()  # no user code may live once anything hidden runs
            return
        # Nothing hidden in this job: the tracer (which exits by itself after ``done``) is killed when the
        # pair is released, on the pool's closing thread, not on the grading's clock (a cgroup kill is
        # 5-15 ms of this thread while the executor's replies wait).
        self.tracer_open = False
        self.tracer_deadline = None

    def _stop_tracer_aside(self) -> None:
        """The tracer is done and hidden cases wait: stop listening to it and end its processes aside
        (``_AsideStop``), so the executor's replies (shown cases still running, the re-trace) are not held.
        Hidden cases run only once that stop is over (``_may_run``); without a selector to hear it finish (a
        caller outside ``run``), the stop is made here."""
        if self.selector is None or self.tracer_stopping is not None or not self.tracer_open:
            self._close_tracer()
            return
        self.tracer_open = False
        self.tracer_deadline = None
        self.tracer_stopping = _AsideStop(self.pair.tracer, self.selector)

    def _tracer_stopped(self) -> None:
        """The stop aside is over (heard, or waited for at the end of the session or before another stop):
        every process of the tracer has SIGKILL pending."""
        if self.tracer_stopping is not None:
            self.tracer_stopping.finish()
            self.tracer_stopping = None

    def _close_tracer(self) -> None:
        """Stop listening to the tracer and end its processes (a child it forked included) now, not when
        the pair is released: no user code lives once it is closed, so secret cases may run (``_may_run``)."""
        self._tracer_stopped()  # one stop at a time: a stop under way on its thread is over first
        self.tracer_open = False
        self.tracer_deadline = None
        # Every process of it has SIGKILL pending when this returns (none runs user code again); their exit
        # (~3-7 ms for a JAX process) is not waited for here: the pair's release reaps them.
        self.pair.tracer.stop()

    def _current_culprit(self) -> tuple[str, int | None]:
        """The phase the tracer was in and the case a failure there is charged to."""
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

    def _tracer_stop(
        self, how: str, *, protocol_error: str | None = None, timeout: TimeoutKind | None = None
    ) -> None:
        if not self.tracer_open:
            return
        phase, case = self._current_culprit()
        worker = self.pair.tracer
        if how == "exit":
            worker.wait(1.0)  # it closed its channel: let it finish dying, so its own exit status is kept
        self._close_tracer()
        if phase == "done" or (phase == "print" and case is None):
            return  # everything the verdicts need had arrived
        worker.wait(2.0)
        info = worker.exit_info()
        self._drain_output()
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
        self.case_limit = case if case is not None else -1
        self._prune()
        self._notify()

    # -------------------------------------------------------------------------------------- the executor

    def _arrived(self, sig_id: int, module: bytes) -> None:
        self.modules[sig_id] = module
        for case in self.job.cases:
            if case.sig == sig_id:
                bisect.insort(self.pending, case.index)
        self._prune()

    def _retrace_arrived(self, sig_id: int, module: bytes) -> None:
        """The re-trace's program. Byte for byte the program the first trace gave (what a stateless
        function gives): the same program, so the same result; nothing to compile or run. Otherwise the
        executor compiles it (``_schedule_retrace``), and runs it unless its text is the same."""
        if module == self.modules.get(sig_id):
            self.raw.retrace_run = CaseReport(self.job.retrace_case or 0, same_program=True)
            self.retrace_state = "done"
            return
        self.retrace_module = module
        self.retrace_state = "arrived"

    def _prune(self) -> None:
        if self.case_limit is not None:
            self.pending = (
                [i for i in self.pending if 0 <= i < self.case_limit] if self.case_limit >= 0 else []
            )

    def _schedule(self) -> None:
        """Keep the executor busy: up to ``COMPILE_SLOTS`` compiles at once (it compiles on threads), one run
        at a time, lowest case first (hidden ones last: ``_may_run``); then the re-trace; then the end of
        the job."""
        executor = self.executor
        if self.executor_failed or executor.ended:
            return
        refused = [i for i in self.pending if self._refused(self.job.cases[i].sig)]
        if refused:
            self.pending = [i for i in self.pending if i not in refused]
            self._notify()
        if executor.ending:
            return
        self._schedule_cases()
        if self._schedule_retrace():
            return
        if self.pending or executor.outstanding or self.tracer_open:
            return
        if self.retrace_state not in ("none", "done"):
            return
        executor.ending = True
        executor.ask(("end", -1), "end", -1, -1, self.limits.case_time_s)
        executor.channel.send({"type": "end"})

    def _schedule_cases(self) -> None:
        executor = self.executor
        compiling = executor.busy("program")
        for index in self.pending:
            if compiling >= COMPILE_SLOTS:
                break
            sig = self.job.cases[index].sig
            if sig not in executor.requested:
                self._request_program(sig, self.modules[sig], self.job.sig(sig), index)
                compiling += 1
        if executor.busy("run"):
            return
        ready = next(
            (
                i
                for i in self.pending
                if self.job.cases[i].sig in executor.compiled and self._may_run(self.job.cases[i])
            ),
            None,
        )
        if ready is not None:
            self.pending.remove(ready)
            case = self.job.cases[ready]
            self._request_run(case.sig, case)

    def _schedule_retrace(self) -> bool:
        """Compile, then run, the re-trace's program once its case's first run is in. True if it asked."""
        if self.job.retrace_case is None:
            return False
        case = self.job.cases[self.job.retrace_case]
        executor = self.executor
        if self.retrace_state == "arrived" and self.retrace_module is not None:
            if case.index in self.pending or any(
                r.kind == "run" and r.case == case.index for r in executor.outstanding.values()
            ):
                return False  # its first run is not in yet
            first = self.raw.runs.get(case.index)
            if self.case_limit is not None or first is None or first.outputs is None:
                self.retrace_state = "done"  # nothing to compare the second program's result with
                return False
            self.retrace_state = "compiling"
            self._request_program(RETRACE_ID, self.retrace_module, self.job.sig(case.sig), case.index)
            return True
        if self.retrace_state == "compiled" and not executor.busy("run") and self._may_run(case):
            self.retrace_state = "running"
            self._request_run(RETRACE_ID, case)
            return True
        return False

    def _may_run(self, case: CasePlan) -> bool:
        """A secret case runs only once the tracer is gone: while user code lives it could time the
        executor (host-wide CPU counters, its own slowed threads) and carry what it learns out in the
        prints, the keys or the failures of what it traces next. Compiling is safe: it sees no values.

        It also waits for every shown result, the re-trace of a shown case included: nothing shown is
        computed in a process that has held a hidden value (a public program that compiles last does not
        let a hidden case run first)."""
        executor = self.executor
        if not case.secret:
            return not executor.held_secret
        if self.tracer_open or self.tracer_stopping is not None:
            return False
        shown_left = any(not self.job.cases[i].secret for i in self.pending) or any(
            r.kind == "run" and not self.job.cases[r.case].secret for r in executor.outstanding.values()
        )
        retrace = self.job.retrace_case
        retrace_left = (
            retrace is not None
            and not self.job.cases[retrace].secret
            and self.retrace_state not in ("none", "done")
        )
        return not shown_left and not retrace_left

    def _refused(self, sig: int) -> bool:
        program = self.raw.programs.get(sig)
        return program is not None and program.refused is not None

    def _request_program(self, program_id: int, module: bytes, sig: SigPlan, culprit: int) -> None:
        executor = self.executor
        executor.requested.add(program_id)
        executor.ask(("program", program_id), "program", program_id, culprit, self.limits.case_time_s)
        executor.channel.send(
            {
                "type": "program",
                "id": program_id,
                "module": 0,
                "inputs": sig.inputs,
                "max_output_bytes": self.job.max_output_bytes,
                "precheck": self.job.precheck,
                **({"donate": list(sig.donate)} if sig.donate else {}),
            },
            [module],
        )

    def _request_run(self, program_id: int, case: CasePlan) -> None:
        executor = self.executor
        executor.ask(("run", case.index), "run", program_id, case.index, self.limits.case_time_s)
        if case.secret:
            executor.held_secret = True
        blobs = Blobs()
        leaves = [encode_leaf(x, blobs) for x in case.leaves]
        executor.channel.send(
            {"type": "run", "program": program_id, "case": case.index, "leaves": leaves},
            [bytes(b) for b in blobs.items],
        )

    def _executor_frames(self) -> None:
        if self.executor_failed:
            return
        channel = self.executor.channel
        try:
            frames = channel.read()
            for frame in frames:
                self._executor_frame(frame)
                if self.executor_failed:
                    return
        except ProtocolError as exc:
            self._executor_stop(protocol_error=str(exc))
            return
        if channel.eof and not self.executor_failed:
            self._executor_stop()

    def _executor_frame(self, frame: Frame) -> None:
        """A reply must answer an outstanding request (compiles may finish in any order)."""
        executor = self.executor
        message = frame.message
        kind = frame.type
        if kind in ("compiled", "refused"):
            key: tuple[str, int] = ("program", _int(message.get("id")))
        elif kind in ("result", "run_error"):
            key = ("run", _int(message.get("case")))
        elif kind == "ended":
            key = ("end", -1)
        else:
            key = ("?", -1)
        request = executor.outstanding.pop(key, None)
        if request is None:
            raise ProtocolError(f"the executor sent {kind[:40]!r} that answers no request")
        if request.kind == "program":
            self._compiled(request.program, kind, message)
        elif request.kind == "run":
            report = CaseReport(request.case)
            if kind == "result":
                report.outputs = decode_leaves(message.get("outputs"), frame, self.skeleton_limits)
                report.run_ms = _ms(message.get("run_ms"))
                report.loops_matter = decode_loops_matter(message.get("loops_matter"))
            else:
                report.error = decode_run_error(message)
            if request.program == RETRACE_ID:
                self.raw.retrace_run = report
                self.retrace_state = "done"
            else:
                self.raw.runs[request.case] = report
        else:
            executor.ended = True
            if message.get("recycle") is True:  # a compile that lost a race still runs: it exits, retire it
                executor.failed = True
        self._notify()

    def _compiled(self, program_id: int, kind: str, message: dict[str, Any]) -> None:
        compiled = decode_compiled(message) if kind == "compiled" else None
        refused = decode_refused(message) if compiled is None else None
        if program_id == RETRACE_ID:
            assert self.raw.retrace is not None
            self.raw.retrace.compiled, self.raw.retrace.refused = compiled, refused
            original = self.raw.programs.get(self.raw.retrace.sig)
            same = (
                compiled is not None
                and original is not None
                and original.compiled is not None
                and original.compiled.key == compiled.key
            )
            if same:
                self.raw.retrace_run = CaseReport(self.job.retrace_case or 0, same_program=True)
                self.retrace_state = "done"
            elif kind == "compiled":
                self.executor.compiled.add(RETRACE_ID)
                self.retrace_state = "compiled"
            else:
                self.retrace_state = "done"
            return
        program = self.raw.programs[program_id]
        if compiled is not None:
            self.executor.compiled.add(program_id)
        program.compiled, program.refused = compiled, refused

    def _executor_stop(
        self, *, protocol_error: str | None = None, timeout: TimeoutKind | None = None
    ) -> None:
        """The executor failed (died, hung, said nonsense): the run stops at the lowest case it was working
        on (or, if it was asked nothing, the first case without an outcome)."""
        executor = self.executor
        self.executor_failed = True
        executor.failed = True
        worker = executor.worker
        if protocol_error is None and timeout is None:
            worker.wait(1.0)  # it closed its channel: let it finish dying, so its own exit status is kept
        worker.kill()
        worker.wait(2.0)
        info = worker.exit_info()
        tail = worker.output_tail().strip()
        notes = list(info.notes) + ([f"executor output: {tail[-500:]}"] if tail else [])
        working = sorted(
            (r for r in executor.outstanding.values() if r.kind != "end"), key=lambda r: (r.case < 0, r.case)
        )
        if not working and executor.ending:
            # Every case had its result: the executor failed only while closing the job.
            self.raw.notes.extend(notes)
            return
        program_bytes = None
        if working:
            phase, case = ("compile" if working[0].kind == "program" else "run"), working[0].case
            if phase == "compile":
                program = working[0].program
                module = self.retrace_module if program == RETRACE_ID else self.modules.get(program)
                program_bytes = None if module is None else len(module)
        else:  # it spoke (or died) unasked
            phase, case = "run", next((c.index for c in self.job.cases if not self._final(c)), -1)
        self.raw.stop = Stop(
            "executor",
            phase,
            case if case >= 0 else None,
            timeout=timeout,
            protocol_error=protocol_error,
            returncode=info.returncode,
            oom_killed=info.oom_killed,
            notes=notes,
            program_bytes=program_bytes,
        )
        if self.tracer_open:
            self._close_tracer()
            self.pair.tracer.kill()
        self._notify()

    # -------------------------------------------------------------------------------------- time

    def _executor_deadline(self) -> float | None:
        return min((r.deadline for r in self.executor.outstanding.values()), default=None)

    def _deadlines(self, now: float) -> bool:
        """Act on an expired deadline; True if one expired. A request's deadline is when its limit could
        have run out in wall time; there its charged time is read, and the deadline moves by what is left
        (the machine, not the program, took the rest), until the limit or the overload cap is reached."""
        executor = self.executor
        for request in list(executor.outstanding.values()):
            if now < request.deadline or request.mark is None:
                continue
            verdict, left = _over(executor.clock, request.mark, request.limit, now, cpu_counts=False)
            if verdict is None:
                request.deadline = now + max(0.05, left)
                continue
            self._executor_stop(timeout=verdict)
            return True
        if self.mark_deadline is not None:
            if now >= self.mark_deadline:
                self._mark_missing()
                return True
            return False  # the tracer waits for the judge: its clock is not running
        if self.tracer_open and now >= self.oom_check_at:
            # A process of the tracer's (a child it forked) ended by the memory bound while the tracer
            # lives on is the submission's memory limit all the same, on a quiet machine or a busy one.
            self.oom_check_at = now + OOM_CHECK_S
            if self.pair.tracer.oom_killed_now():
                self._tracer_stop("oom")
                return True
        if self.tracer_open and self.tracer_deadline is not None and now >= self.tracer_deadline:
            assert self.tracer_mark is not None
            limit = self.limits.case_time_s
            verdict, left = _over(self.tracer_clock, self.tracer_mark, limit, now, cpu_counts=True)
            if verdict is None:
                self.tracer_deadline = now + max(0.05, left)
                return False
            self._tracer_stop("timeout", timeout=verdict)
            return True
        return False

    def _wall_expired(self, now: float) -> bool:
        """The job's wall limit came: True if the job used it (or the overload cap came), else it moves.

        The job's charged time is its wall time less the longest run-queue wait any of its processes had
        since the job began. That is lenient where they worked in parallel; the per-case limits are what
        stop a program that loops, this one bounds the job as a whole.
        """
        limit = self.limits.wall_time_s
        stolen = min(clock.charged_s(mark) - (now - mark.wall) for clock, mark in self.start_marks)
        charged = (now - self.started) + stolen  # stolen is <= 0 here: minus the longest wait
        if charged >= limit or now - self.started >= OVERLOAD_FACTOR * limit:
            return True
        self.wall_deadline = now + max(0.05, limit - charged)
        return False

    def _wall_timeout(self) -> None:
        culprit = next((c.index for c in self.job.cases if not self._final(c)), None)
        executor = self.executor
        working = [r for r in executor.outstanding.values() if r.kind != "end"]
        self._tracer_stopped()
        self.pair.tracer.kill()
        executor.worker.kill()
        if not executor.ended:
            executor.failed = True
        self._close_tracer()
        self.executor_failed = True
        now = time.monotonic()
        kind: TimeoutKind = (
            "overload" if now - self.started >= OVERLOAD_FACTOR * self.limits.wall_time_s else "wall"
        )
        if self.raw.stop is None:
            if working:
                first = min(working, key=lambda r: r.case)
                phase = "compile" if first.kind == "program" else "run"
                self.raw.stop = Stop("executor", phase, culprit, timeout=kind)
            else:
                self.raw.stop = Stop("tracer", self._current_culprit()[0], culprit, timeout=kind)
        self._notify()

    def _final(self, case: CasePlan) -> bool:
        """The case's outcome is known (its run is in, or its program failed or was refused)."""
        program = self.raw.programs.get(case.sig)
        return case.index in self.raw.runs or (
            program is not None and (program.failure is not None or program.refused is not None)
        )

    # -------------------------------------------------------------------------------------- output

    def _read_output(self, sel: selectors.BaseSelector) -> None:
        fd = self.pair.tracer.output_fd
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(fd)
            if self.mark_deadline is not None:
                self._mark_missing()  # the output ended without the mark: no need to wait for it
            return
        self._capture(chunk)

    def _drain_output(self, budget_s: float = 0.5) -> None:
        """Take what output is buffered now (bounded in time: a flood cannot hold the judge)."""
        fd = self.pair.tracer.output_fd
        deadline = time.monotonic() + budget_s
        with contextlib.suppress(OSError):
            os.set_blocking(fd, False)
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                return
            self._capture(chunk)

    def _capture(self, chunk: bytes) -> None:
        """Take the section marks out of the stream (each records where its section starts), and keep
        the rest (``_keep``)."""
        for piece in self.splitter.feed(chunk):
            if isinstance(piece, str):
                if len(self.raw.sections) < MAX_SECTIONS:
                    self.raw.sections.append((self.raw.output_total, piece))
            else:
                self._keep(piece)

    def _keep(self, chunk: bytes) -> None:
        """Keep user output up to the cap; count (and drop) the rest, so a flood fills no memory. The
        first output mark is taken out of the stream and sets where the public output ends."""
        if not chunk:
            return
        self.raw.output_total += len(chunk)
        room = self.limits.output_bytes - len(self.output)
        if room > 0:
            self.output += chunk[:room]
        if self.marks is not None and self.raw.output_cut is None:
            at = self.marks.feed(chunk)
            if at is not None:
                # The stream without the mark: the kept output is its first bytes, up to the cap.
                del self.output[at : at + len(self.marks.mark)]
                self.raw.output_total -= len(self.marks.mark)
                self.raw.output_cut = min(at, len(self.output))
                self.raw.output_cut_stream = at
                if self.mark_deadline is not None:
                    self._continue()


def _over(
    clock: TreeClock, mark: Mark, limit: float, now: float, *, cpu_counts: bool
) -> tuple[TimeoutKind | None, float]:
    """(``case`` once ``limit`` charged seconds have passed since ``mark``; ``overload`` once the wall time
    since then reached ``OVERLOAD_FACTOR`` times the limit first; else None) and the charged seconds left."""
    left = limit - clock.charged_s(mark, cpu_counts=cpu_counts)
    if left <= 0:
        return "case", left
    if now - mark.wall >= OVERLOAD_FACTOR * limit:
        return "overload", left
    return None, left


def run_session(
    pair: Pair,
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
    return _Session(pair, job, limits, progress, cancel).run()


__all__ = [
    "CasePlan",
    "CaseReport",
    "ProgramReport",
    "RawRun",
    "SessionJob",
    "SigPlan",
    "Stop",
    "run_session",
]
