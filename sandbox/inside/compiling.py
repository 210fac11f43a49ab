"""Which XLA pipeline compiles a program, so that compile time the judge chose is never the learner's fault.

The sandbox's XLA flags (``sandbox.host.command.FAST_COMPILE_XLA_FLAGS``) make XLA:CPU compile the small
programs graded here about twice as fast as its standard pipeline, mostly by switching XLA's fusion emitters
off. The older emitters used instead generate a fused elementwise expression by recursion, once per use of
each operand, so two shapes of correct program go wrong under them (``bench/bench_compile.py`` measures both):

- a chain of elementwise ops that reuse their operands (``functools.reduce(jnp.hypot, norms)``,
  ``logaddexp`` or ``where`` folds) takes time exponential in its length: 10 leaves took 6.8 s, not 0.1 s;
- a long elementwise chain (a Python loop unrolled a few thousand times) overflows the stack of the XLA
  thread that emits it: the executor dies of SIGSEGV, which no race can outrun.

So a program is compiled by ``Pipelines.compile_program``, from its ``ProgramShape`` (``measure``: one pass
over the module before any compile, under 1 ms for an ordinary program):

- one whose largest elementwise expression, counted as a tree, passes ``EXPANSION_LIMIT`` (the first
  shape), or of more than ``LARGE_PROGRAM_OPS`` ops once its calls are inlined (the second: a jitted helper
  called a thousand times is a thousand copies to XLA), goes straight to the standard pipeline;
- any other starts with the fast pipeline, on the caller's thread (no thread switch when it compiles in
  time); when that compile has run ``RACE_AFTER_S`` of charged time (a watchdog thread checks) or failed,
  a standard compile starts beside it on another thread, and the first to succeed is delivered. This is
  the fallback for shapes the measure does not foresee. XLA:CPU runs at most as many compiles at once as
  the process has CPUs (two here) and queues the others, so a race is only as quick as a free slot, and a
  losing compile holds its slot until it ends: the measure, not the race, is what keeps the known shapes
  fast.

The program is charged the winner's own compile time, in charged time: load does not count. XLA compiles on
threads of its own (the calling thread runs 2-4 ms of a 40 ms compile), so no single thread's counters
(``sandbox.shared.schedclock``) measure a compile. ``ProcessClock`` reads every thread of the process instead:
over an interval, the share of their runnable time in which they actually ran is the share of the wall time
the compile would have taken on a machine of its own (at load 30 on 2 cores, about 1/15), or, when fewer
than one thread was runnable on average, the wall time less their wait. The fast
compile's budget is measured the same way. A winner's charged time is at most the standard compile's when
that one wins, and less than ``RACE_AFTER_S`` plus it when the fast one does. The wall time is reported
beside it.

An XLA compile cannot be cancelled, nor its thread found (XLA starts one of its own per compile). A loser
still running keeps a core busy until the job ends; charged time keeps that out of the learner's times,
and the soft CPU-time limit of the job is lifted to the hard one so that the judge's own compile never
spends the learner's CPU time (the judge's per-request and wall deadlines still bound the job).
``lingering`` says so: the executor then tells the judge to retire it and exits after the job, which ends
the loser with it.

The fast compile reads the module the executor parsed (XLA converts it to HLO in its first milliseconds);
the standard one reads its bytes (XLA parses them in a context of its own), so the two never share an MLIR
context while both read it, whichever outlives the other.
"""

from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FAST = "fast"
STANDARD = "standard"
#: Per-compile XLA debug options that turn the sandbox's fast pipeline into the standard one: XLA's own
#: fusion emitters. The other fast settings (optimization level 0, no expensive LLVM passes, one LLVM
#: module) stay: so set, every shape of bench/bench_compile.py compiled in 0.23-1.35x the time XLA's
#: defaults took.
STANDARD_OVERRIDES: dict[str, bool | int | str] = {"xla_cpu_use_fusion_emitters": True}
#: Charged seconds a fast compile runs before a standard one starts beside it. No program of a shipped
#: solution took the fast pipeline more than 0.27 s (bench/bench_compile.py).
RACE_AFTER_S = 0.5
#: How often the watchdog looks at the fast compiles running.
WATCH_S = 0.05
#: Programs with more ops than this (calls inlined) are compiled with the standard pipeline only.
LARGE_PROGRAM_OPS = 2000
#: Programs whose largest elementwise expression, counted as a tree, passes this are compiled with the
#: standard pipeline only (``ProgramShape.expansion``).
EXPANSION_LIMIT = 5_000.0

Compile = Callable[[str], Any]


#: Ops whose result the old emitters never regenerate per use, besides ops with regions: XLA materializes
#: these, or (the expensive elementwise ones) fuses them into a consumer only when it has one.
_UNFUSED = frozenset(
    {
        "stablehlo.dot_general",
        "stablehlo.dot",
        "stablehlo.convolution",
        "stablehlo.custom_call",
        "stablehlo.fft",
        "stablehlo.divide",
        "stablehlo.remainder",
        "stablehlo.sqrt",
        "stablehlo.rsqrt",
        "stablehlo.cbrt",
        "stablehlo.exponential",
        "stablehlo.exponential_minus_one",
        "stablehlo.log",
        "stablehlo.log_plus_one",
        "stablehlo.logistic",
        "stablehlo.power",
        "stablehlo.atan2",
        "stablehlo.tanh",
        "stablehlo.sine",
        "stablehlo.cosine",
        "stablehlo.tan",
    }
)
#: Expansions past this are all alike (floats, so a crafted module cannot make a number overflow).
_CAP = 1e30
#: No dependence on a function's arguments (shared, never written to), and a materialized value.
_NONE: dict[int, float] = {}
_LEAF: tuple[float, dict[int, float]] = (1.0, _NONE)


@dataclass(frozen=True)
class ProgramShape:
    """What decides the pipeline, measured on the module before any compile (``measure``).

    ``ops``: ops once every ``func.call`` from ``main`` is inlined (each call site counts its callee again,
    as XLA inlines calls first; a loop body counts once). ``expansion``: the largest elementwise expression
    the old emitters would generate, counted as a tree (each use of an operand counts its whole expression
    again, through calls too): a hypot fold of 6 leaves is ~2e5, of 10 leaves ~4e8; ordinary programs stay
    below 100."""

    ops: int
    expansion: float


class _Summary:
    """One function, as a linear map: each result's expansion and op count are a constant plus multiples
    of the arguments' expansions (the count of an elementwise op is 1 plus its operands')."""

    def __init__(self, results: list[tuple[float, dict[int, float]]], ops: int) -> None:
        self.results = results
        self.ops = ops


def measure(ir: Any, module: Any) -> ProgramShape:
    """The program's ``ProgramShape``: one pass over each function's ops. A call cycle (only a crafted
    module has one, and XLA refuses it) counts as larger than any bound."""
    functions: dict[str, Any] = {}
    for op in module.body.operations:
        operation = op.operation
        if operation.name == "func.func":
            functions[str(ir.StringAttr(operation.attributes["sym_name"]).value)] = operation
    summaries: dict[str, _Summary | None] = {}
    worst = [0.0]

    def summarize(name: str) -> _Summary | None:
        if name in summaries:
            return summaries[name]  # None: on the stack, a cycle
        summaries[name] = None
        block = functions[name].regions[0].blocks[0]
        # ``main``'s arguments are parameters, materialized: it needs no linear map, only numbers.
        values: dict[Any, tuple[float, dict[int, float]]] = {
            argument: (0.0, _NONE if name == "main" else {i: 1.0})
            for i, argument in enumerate(block.arguments)
        }
        results: list[tuple[float, dict[int, float]]] = []
        ops = 0
        todo: list[tuple[Any, bool]] = [(block, True)]
        while todo:
            current, top = todo.pop()
            for op in current.operations:
                operation = op.operation
                kind = operation.name
                ops += 1
                if kind == "stablehlo.constant":
                    values[operation.result] = _LEAF
                    continue
                if kind == "func.return":
                    if top:
                        results = [values.get(v, _LEAF) for v in operation.operands]
                    continue
                if kind == "func.call":
                    callee = str(ir.FlatSymbolRefAttr(operation.attributes["callee"]).value)
                    called = summarize(callee) if callee in functions else None
                    if called is None and callee in functions:
                        raise _CallCycle(callee)
                    ops += called.ops if called is not None else 0
                    inputs = [values.get(v, _LEAF) for v in operation.operands]
                    for k, result in enumerate(operation.results):
                        if called is None or k >= len(called.results):
                            values[result] = _LEAF
                            continue
                        values[result] = _apply(called.results[k], inputs)
                        worst[0] = max(worst[0], values[result][0])
                    continue
                regions = operation.regions
                if len(regions):
                    for region in regions:
                        for inner in region.blocks:
                            for argument in inner.arguments:
                                values[argument] = _LEAF
                            todo.append((inner, False))
                if len(regions) or kind in _UNFUSED:
                    for result in operation.results:
                        values[result] = _LEAF
                    continue
                const, coefs = 1.0, _NONE
                for value in operation.operands:
                    c, vector = values.get(value, _LEAF)
                    const += c
                    if vector:
                        if coefs is _NONE:
                            coefs = dict(vector)
                        else:
                            for i, x in vector.items():
                                coefs[i] = min(_CAP, coefs.get(i, 0.0) + x)
                const = min(_CAP, const)
                if const > worst[0]:
                    worst[0] = const
                for result in operation.results:
                    values[result] = (const, coefs)
        summary = _Summary(results, ops)
        summaries[name] = summary
        return summary

    if "main" not in functions:
        return ProgramShape(0, 0.0)
    try:
        main = summarize("main")
    except (_CallCycle, RecursionError):  # a crafted module: the standard pipeline, which refuses it
        return ProgramShape(1 << 62, _CAP)
    return ProgramShape(main.ops if main is not None else 0, worst[0])


def _apply(
    result: tuple[float, dict[int, float]], inputs: list[tuple[float, dict[int, float]]]
) -> tuple[float, dict[int, float]]:
    """A callee's result (a linear map of its arguments) at the call's operands."""
    const, coefs = result
    out: dict[int, float] = {}
    for j, coef in coefs.items():
        c, vector = inputs[j] if j < len(inputs) else (1.0, {})
        const = min(_CAP, const + coef * c)
        for i, x in vector.items():
            out[i] = min(_CAP, out.get(i, 0.0) + coef * x)
    return const, out


class _CallCycle(Exception):
    """A function calls itself, directly or not."""


@dataclass(frozen=True)
class Outcome:
    """The executable and what it cost: the winner's pipeline and charged time, the wall time since the
    first compile started, and whether a standard compile was started beside a fast one."""

    executable: Any
    pipeline: str
    charged_s: float
    wall_s: float
    raced: bool


@dataclass(frozen=True)
class ProcessClock:
    """Every thread's scheduler counters at one moment (``/proc/self/task/*/schedstat``)."""

    wall_ns: int
    #: thread id -> (ns it ran, ns it waited runnable on a run queue)
    tasks: dict[int, tuple[int, int]]

    @staticmethod
    def now() -> ProcessClock:
        wall = time.monotonic_ns()
        return ProcessClock(wall, _TASKS.read())

    def charged_s(self, later: ProcessClock) -> float:
        """Seconds of wall time from here to ``later`` less the process's run-queue wait per runnable
        thread: ``wall * ran / (ran + waited)`` while at least one thread was runnable on average (a compile
        on XLA's threads), ``wall - waited`` when less (threads that started meanwhile count from zero).
        Without counters it is the wall time."""
        wall_ns = max(0, later.wall_ns - self.wall_ns)
        ran = waited = 0
        for tid, (run, wait) in later.tasks.items():
            run0, wait0 = self.tasks.get(tid, (0, 0))
            ran += max(0, run - run0)
            waited += max(0, wait - wait0)
        share = min(1.0, wall_ns / (ran + waited)) if ran + waited > 0 else 0.0
        return max(0.0, wall_ns - waited * share) / 1e9


Deliver = Callable[[Outcome | BaseException], None]


class _TaskFiles:
    """Open ``schedstat`` files of this process's threads, read again with ``pread`` (opening them is most
    of the cost of a reading: 18 threads take ~0.05 ms this way, ~0.12 ms opening each)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fds: dict[int, int] = {}

    def read(self) -> dict[int, tuple[int, int]]:
        tasks: dict[int, tuple[int, int]] = {}
        with self._lock:
            try:
                alive = {int(name) for name in os.listdir("/proc/self/task") if name.isdigit()}
            except OSError:
                return tasks
            for tid in [t for t in self._fds if t not in alive]:
                os.close(self._fds.pop(tid))
            for tid in alive:
                fd = self._fds.get(tid)
                try:
                    if fd is None:
                        fd = self._fds[tid] = os.open(f"/proc/self/task/{tid}/schedstat", os.O_RDONLY)
                    parts = os.pread(fd, 128, 0).split()
                    tasks[tid] = (int(parts[0]), int(parts[1]))
                except (OSError, ValueError, IndexError):  # gone meanwhile, or no schedstat
                    if tid in self._fds:
                        os.close(self._fds.pop(tid))
        return tasks


_TASKS = _TaskFiles()


class _Race:
    """One program's compiles: the fast one on the caller's thread, a standard one on a thread of its own
    if the watchdog or a fast failure starts it. ``deliver`` is called exactly once: with the first success,
    or with the fast compile's error once every compile tried has failed."""

    def __init__(self, compile: Compile, deliver: Deliver, race_after_s: float) -> None:
        self.compile = compile
        self.deliver = deliver
        self.race_after_s = race_after_s
        self.lock = threading.Lock()
        self.start = ProcessClock.now()
        self.started = time.monotonic()
        self.delivered = False
        self.fast_running = True
        self.fast_error: BaseException | None = None
        self.standard: threading.Thread | None = None
        self.standard_running = False
        self.standard_error: BaseException | None = None

    def due(self) -> float | None:
        """Seconds until the fast compile may have used its budget (charged time never runs faster than
        wall time), 0 once it has, or None when no standard compile is needed any more."""
        if not self.fast_running or self.standard is not None:
            return None
        left = self.race_after_s - self.start.charged_s(ProcessClock.now())
        return max(0.0, left)

    def start_standard(self) -> None:
        with self.lock:
            if self.standard is not None or self.delivered:
                return
            self.standard_running = True
            self.standard = threading.Thread(target=self._standard, name="compile-standard", daemon=True)
        self.standard.start()

    def _standard(self) -> None:
        begin = ProcessClock.now()
        try:
            executable = self.compile(STANDARD)
        except BaseException as exc:  # decided below, with the fast compile's outcome
            with self.lock:
                self.standard_running, self.standard_error = False, exc
                give_up = not self.delivered and not self.fast_running
                self.delivered = self.delivered or give_up
            if give_up:
                self.deliver(self.fast_error or exc)
            return
        charged = begin.charged_s(ProcessClock.now())
        with self.lock:
            self.standard_running = False
            won = not self.delivered
            self.delivered = True
        if won:
            if self.fast_running:
                _spare_cpu_limit()
            self.deliver(Outcome(executable, STANDARD, charged, time.monotonic() - self.started, True))

    def run_fast(self) -> None:
        """The fast compile, on the caller's thread; it delivers unless a standard compile won meanwhile."""
        try:
            executable = self.compile(FAST)
        except BaseException as exc:  # a fast pipeline's failure is tried the standard way
            with self.lock:
                self.fast_running, self.fast_error = False, exc
                tried = self.standard is not None
                give_up = tried and not self.standard_running and not self.delivered
                self.delivered = self.delivered or give_up
            if give_up:
                self.deliver(exc)
            elif not tried:
                self.start_standard()
            return
        charged = self.start.charged_s(ProcessClock.now())
        with self.lock:
            self.fast_running = False
            won = not self.delivered
            self.delivered = True
            raced = self.standard is not None
            if won and self.standard_running:
                _spare_cpu_limit()
        if won:
            self.deliver(Outcome(executable, FAST, charged, time.monotonic() - self.started, raced))

    def lingering(self) -> bool:
        with self.lock:
            return self.delivered and (self.fast_running or self.standard_running)


def _spare_cpu_limit() -> None:
    """A losing compile still runs: lift the job's soft CPU-time limit to the hard one, so that the judge's
    own compile never spends the learner's CPU time."""
    with contextlib.suppress(OSError, ValueError):
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))


def compile_with(pipeline: str, compile: Compile, deliver: Deliver) -> None:
    """Compile with ``pipeline`` alone, on this thread; ``deliver`` gets its ``Outcome`` (charged time) or
    its error."""
    started, begin = time.monotonic(), ProcessClock.now()
    try:
        executable = compile(pipeline)
    except BaseException as exc:
        deliver(exc)
        return
    charged = begin.charged_s(ProcessClock.now())
    deliver(Outcome(executable, pipeline, charged, time.monotonic() - started, False))


class Pipelines:
    """Compiles programs with the fast pipeline, the standard one, or both in a race; remembers losers.

    A watchdog thread (started with the first race) starts the standard compile of a race whose fast
    compile has used its budget; a fast compile runs on its caller's thread, so a program that compiles in
    time costs no thread switch."""

    def __init__(
        self,
        *,
        race_after_s: float = RACE_AFTER_S,
        large_program_ops: int = LARGE_PROGRAM_OPS,
        expansion_limit: float = EXPANSION_LIMIT,
    ) -> None:
        self.race_after_s = race_after_s
        self.large_program_ops = large_program_ops
        self.expansion_limit = expansion_limit
        self._races: list[_Race] = []
        self._lock = threading.Lock()
        self._watchdog: threading.Thread | None = None

    def lingering(self) -> bool:
        """A compile that lost a race is still running (it cannot be stopped: the process must end)."""
        with self._lock:
            return any(race.lingering() for race in self._races)

    def compile_program(self, compile: Compile, shape: ProgramShape, deliver: Deliver) -> None:
        """Compile one program; ``compile(pipeline)`` compiles it with ``FAST`` or ``STANDARD`` options, and
        ``deliver`` gets the first ``Outcome``, or the fast pipeline's error when every pipeline tried
        failed. Returns once the caller's thread is done with it (``deliver`` may come later, from the
        standard compile's thread, when the fast one failed first)."""
        if shape.ops > self.large_program_ops or shape.expansion > self.expansion_limit:
            compile_with(STANDARD, compile, deliver)
            return
        race = _Race(compile, deliver, self.race_after_s)
        with self._lock:
            self._races = [r for r in self._races if r.fast_running or r.standard_running]
            self._races.append(race)
            if self._watchdog is None:
                self._watchdog = threading.Thread(target=self._watch, name="compile-watchdog", daemon=True)
                self._watchdog.start()
        race.run_fast()

    def _watch(self) -> None:
        """Every ``WATCH_S``: start the standard compile of each race whose fast compile used its budget
        (a poll, so that registering a race wakes no thread; a race younger than its budget in wall time
        costs no reading)."""
        while True:
            time.sleep(WATCH_S)
            with self._lock:
                races = list(self._races)
            now = time.monotonic()
            for race in races:
                if now - race.started >= race.race_after_s and race.due() == 0:
                    race.start_standard()
