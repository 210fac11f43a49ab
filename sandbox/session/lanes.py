"""The executor's lanes: which program compiles and which case runs next.

Up to ``COMPILE_SLOTS`` programs compile at once (the executor compiles on threads: XLA releases the
GIL) while one case runs, lowest case first. Hidden cases run last: only once the tracer is gone (no user
code lives to time the executor) and every shown result is in, the re-trace of a shown case included; the
executor is then spent, as nothing a learner is shown may be computed in a process that has held a hidden
value. The re-trace's program compiles once its case's first run is in, and runs unless it is the same
program. Then the job ends.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable

from sandbox.backends.base import SandboxedProcess
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.channel import Channel, executor_limits
from sandbox.session.deadlines import Request
from sandbox.session.monitor import CasePlan, CaseReport, RawRun, SessionJob, SigPlan
from sandbox.session.tracer import TracerProtocol
from sandbox.shared.schedclock import TreeClock
from sandbox.shared.wire import Blobs, encode_leaf

#: Program id of the fresh re-trace (real signatures are numbered from 0).
RETRACE_ID = 1 << 30
#: Programs an executor compiles at once (on threads: XLA releases the GIL), while it runs cases.
COMPILE_SLOTS = 2


class ExecutorState:
    """The session's executor and what it has been asked. It computes the public and custom cases (and a
    re-trace of one) first, then the hidden cases (``Lanes.may_run``); once it has held a hidden value it
    computes nothing shown again."""

    def __init__(self, worker: SandboxedProcess, job: SessionJob) -> None:
        self.worker = worker
        self.channel = Channel(worker, executor_limits(job))
        self.clock = TreeClock(worker.clock_root)
        self.outstanding: dict[tuple[str, int], Request] = {}  # ("program", id), ("run", case), ("end", -1)
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
        self.outstanding[key] = Request(kind, program, case, now + limit, self.clock.mark(), limit)

    def deadline(self) -> float | None:
        return min((r.deadline for r in self.outstanding.values()), default=None)


class Lanes:
    """The programs the tracer sent, the cases waiting for them, and the requests that keep the executor
    busy (``schedule``). ``notify``: the record changed."""

    def __init__(
        self,
        executor: ExecutorState,
        tracer: TracerProtocol,
        job: SessionJob,
        limits: SandboxLimits,
        raw: RawRun,
        notify: Callable[[], None],
    ) -> None:
        self.executor, self.tracer, self.job, self.limits, self.raw = executor, tracer, job, limits, raw
        self.notify = notify
        self.modules: dict[int, bytes] = {}
        self.pending: list[int] = []  # case indexes whose program arrived, not yet run (sorted)
        self.retrace_module: bytes | None = None
        self.retrace_state = "none"  # none -> arrived -> compiling -> compiled -> running -> done
        #: The executor stopped the run (it failed, or the job's time ran out).
        self.executor_failed = False
        self.case_limit: int | None = None  # after a stop: run no case at or past this index

    # ---------------------------------------------------------------------------------- programs in

    def arrived(self, sig_id: int, module: bytes) -> None:
        self.modules[sig_id] = module
        for case in self.job.cases:
            if case.sig == sig_id:
                bisect.insort(self.pending, case.index)
        self._prune()

    def retrace_arrived(self, sig_id: int, module: bytes) -> None:
        """The re-trace's program. Byte for byte the program the first trace gave (what a stateless
        function gives): the same program, so the same result; nothing to compile or run. Otherwise the
        executor compiles it (``_schedule_retrace``), and runs it unless its text is the same."""
        if module == self.modules.get(sig_id):
            self.raw.retrace_run = CaseReport(self.job.retrace_case or 0, same_program=True)
            self.retrace_state = "done"
            return
        self.retrace_module = module
        self.retrace_state = "arrived"

    def limit_cases(self, case_limit: int) -> None:
        """The tracer stopped at this case: no case at or past it runs (-1: none)."""
        self.case_limit = case_limit
        self._prune()

    def _prune(self) -> None:
        if self.case_limit is not None:
            self.pending = (
                [i for i in self.pending if 0 <= i < self.case_limit] if self.case_limit >= 0 else []
            )

    # ---------------------------------------------------------------------------------- requests out

    def schedule(self) -> None:
        """Keep the executor busy: up to ``COMPILE_SLOTS`` compiles at once (it compiles on threads), one run
        at a time, lowest case first (hidden ones last: ``may_run``); then the re-trace; then the end of
        the job."""
        executor = self.executor
        if self.executor_failed or executor.ended:
            return
        refused = [i for i in self.pending if self._refused(self.job.cases[i].sig)]
        if refused:
            self.pending = [i for i in self.pending if i not in refused]
            self.notify()
        if executor.ending:
            return
        self._schedule_cases()
        if self._schedule_retrace():
            return
        if self.pending or executor.outstanding or self.tracer.open:
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
                self.request_program(sig, self.modules[sig], self.job.sig(sig), index)
                compiling += 1
        if executor.busy("run"):
            return
        ready = next(
            (
                i
                for i in self.pending
                if self.job.cases[i].sig in executor.compiled and self.may_run(self.job.cases[i])
            ),
            None,
        )
        if ready is not None:
            self.pending.remove(ready)
            case = self.job.cases[ready]
            self.request_run(case.sig, case)

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
            self.request_program(RETRACE_ID, self.retrace_module, self.job.sig(case.sig), case.index)
            return True
        if self.retrace_state == "compiled" and not executor.busy("run") and self.may_run(case):
            self.retrace_state = "running"
            self.request_run(RETRACE_ID, case)
            return True
        return False

    def may_run(self, case: CasePlan) -> bool:
        """A secret case runs only once the tracer is gone: while user code lives it could time the
        executor (host-wide CPU counters, its own slowed threads) and carry what it learns out in the
        prints, the keys or the failures of what it traces next. Compiling is safe: it sees no values.

        It also waits for every shown result, the re-trace of a shown case included: nothing shown is
        computed in a process that has held a hidden value (a public program that compiles last does not
        let a hidden case run first)."""
        executor = self.executor
        if not case.secret:
            return not executor.held_secret
        if not self.tracer.gone:
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

    def request_program(self, program_id: int, module: bytes, sig: SigPlan, culprit: int) -> None:
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

    def request_run(self, program_id: int, case: CasePlan) -> None:
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

    # ---------------------------------------------------------------------------------- outcomes

    def final(self, case: CasePlan) -> bool:
        """The case's outcome is known (its run is in, or its program failed or was refused)."""
        program = self.raw.programs.get(case.sig)
        return case.index in self.raw.runs or (
            program is not None and (program.failure is not None or program.refused is not None)
        )

    def first_open_case(self) -> int | None:
        """The first case without an outcome (what a failure outside any request is charged to)."""
        return next((c.index for c in self.job.cases if not self.final(c)), None)
