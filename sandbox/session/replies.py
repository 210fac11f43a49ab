"""The executor's replies, written into the record: each must answer an outstanding request (compiles
may finish in any order); a program's summary and a case's outputs are bounded as they are read. An
executor that dies, hangs or says nonsense stops the run at the lowest case it was working on."""

from __future__ import annotations

from typing import Any

from sandbox.session.lanes import RETRACE_ID, Lanes
from sandbox.session.reports import (
    CaseReport,
    Stop,
    TimeoutKind,
    decode_compiled,
    decode_loops_matter,
    decode_refused,
    decode_run_error,
)
from sandbox.session.reports import duration_ms as _ms
from sandbox.session.reports import wire_int as _int
from sandbox.shared.wire import Frame, ProtocolError, TreeLimits, decode_leaves


class Replies:
    """Reads the executor's channel for the lanes (``lanes``) and records what each reply says."""

    def __init__(self, lanes: Lanes) -> None:
        self.lanes = lanes
        self.executor, self.raw, self.job = lanes.executor, lanes.raw, lanes.job
        self.skeleton_limits = TreeLimits(max_leaves=100_000, max_bytes=lanes.job.max_output_bytes)

    def feed_leftover(self) -> None:
        """Bytes the executor sent after ``ready``: it spoke before it was asked anything."""
        worker = self.executor.worker
        data, worker.leftover = worker.leftover, b""
        if data and not self.lanes.executor_failed:
            self.stop(protocol_error="the executor spoke before it was asked anything")

    def frames(self) -> None:
        if self.lanes.executor_failed:
            return
        channel = self.executor.channel
        try:
            frames = channel.read()
            for frame in frames:
                self.frame(frame)
                if self.lanes.executor_failed:
                    return
        except ProtocolError as exc:
            self.stop(protocol_error=str(exc))
            return
        if channel.eof and not self.lanes.executor_failed:
            self.stop()

    def frame(self, frame: Frame) -> None:
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
                self.lanes.retrace_state = "done"
            else:
                self.raw.runs[request.case] = report
        else:
            executor.ended = True
            if message.get("recycle") is True:  # a compile that lost a race still runs: it exits, retire it
                executor.failed = True
        self.lanes.notify()

    def _compiled(self, program_id: int, kind: str, message: dict[str, Any]) -> None:
        compiled = decode_compiled(message) if kind == "compiled" else None
        refused = decode_refused(message) if compiled is None else None
        lanes = self.lanes
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
                lanes.retrace_state = "done"
            elif compiled is not None:
                self.executor.compiled.add(RETRACE_ID)
                lanes.retrace_state = "compiled"
            else:
                lanes.retrace_state = "done"
            return
        program = self.raw.programs[program_id]
        if compiled is not None:
            self.executor.compiled.add(program_id)
        program.compiled, program.refused = compiled, refused

    def stop(self, *, protocol_error: str | None = None, timeout: TimeoutKind | None = None) -> None:
        """The executor failed (died, hung, said nonsense): the run stops at the lowest case it was working
        on (or, if it was asked nothing, the first case without an outcome)."""
        executor, lanes = self.executor, self.lanes
        lanes.executor_failed = True
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
                module = lanes.retrace_module if program == RETRACE_ID else lanes.modules.get(program)
                program_bytes = None if module is None else len(module)
        else:  # it spoke (or died) unasked
            first = lanes.first_open_case()
            phase, case = "run", first if first is not None else -1
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
        tracer = lanes.tracer
        if tracer.open:
            tracer.close()
            tracer.worker.kill()
        lanes.notify()
