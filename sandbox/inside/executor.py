"""The executor: compiles and runs the programs the tracer exported. It never runs user Python.

    python -m sandbox.inside.executor --result-fd N [--cache-scope job|process] [--cache-entries K]
        [--devices D]

Long-lived: it imports JAX once, reports ``ready`` on the private result channel and serves requests on stdin,
job after job, until stdin closes (the judge recycles it after a bounded number of jobs or on
any failure). Requests and replies:

- ``program`` {id, module (blob), inputs: [{dtype, shape}], max_output_bytes}: read the StableHLO module (MLIR
  bytecode, ``sandbox.inside.lowering``; MLIR verifies it as it reads), walk every op (nested regions and
  private functions included) into a summary, refuse what must never be compiled (a Python host callback
  above all: it would call an address the program chose; an op, attribute or kernel region, a sort's
  comparator above all, that JAX's own lowerings do not make, ``sandbox.inside.op_policy``; a custom call that
  is not exactly one JAX's own lowering makes, ``sandbox.inside.contracts``), check the main function's
  inputs against the case's leaves and its outputs against the output cap, then compile it with XLA
  (``sandbox.inside.compiling`` chooses the pipeline, racing two when the fast one is slow). Replies
  ``compiled`` {id, summary, compile_ms (charged time), compile_wall_ms, pipeline, raced, cached, cost} or
  ``refused`` {id, kind, message, summary}. Programs compile on a small thread pool (XLA releases the GIL), so
  replies may come in any order.
- ``run`` {program, case, leaves (blobs)}: run a compiled program on concrete inputs (on the main thread,
  in request order). Replies ``result`` {case, outputs (leaves as blobs), run_ms (charged time)} or
  ``run_error`` {case, kind, message}. When the program's ``precheck`` has ``loops_matter`` (a problem with
  a ``require_loop`` rule), the executor also compiles a variant of the parsed program with every loop's
  results perturbed (``sandbox.inside.perturb``), runs it after the program, untimed, and ``result``
  carries ``loops_matter``: per output leaf, whether any of its bits changed.
- ``begin`` {cpu_time_s}: a job starts; its CPU time limit (the soft RLIMIT_CPU) counts from now.
- ``end``: the job is over; its programs are dropped (compiled programs stay cached by content only with
  ``--cache-scope process``). Replies ``ended`` {jobs, recycle}; ``recycle``: a compile that lost a race
  still runs, so the executor exits after this reply and the judge must not lend it again.

With ``--devices D`` (D > 1, a problem's ``[sandbox] devices``) the process has D CPU host devices, fixed
at its start (``jax_num_cpu_devices``, set before the backend starts): every program must be lowered for D
partitions (``mhlo.num_partitions``), its meshes must span exactly the D devices and it may carry no GSPMD
annotation (``sandbox.inside.contracts.check_partitioning``); it compiles for D partitions over devices
0..D-1 with Shardy, every input placed replicated on all of them (a program whose compiled parameters are
not replicated is refused), and ``compiled`` carries ``shardings``: each output's layout as the compiled
executable places it (``sandbox.shared.layouts``), which the judge compares with the reference's. Runs gather
each output from its shards.

The cache key is the module's text with locations stripped, so a program traced twice (the judge's fresh
re-trace) or the same code submitted again compiles once. The executor runs no user code, so a cached
executable can only be the compilation of the same program text.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from sandbox.inside.broad_warm_up import broad_inputs
from sandbox.inside.compiling import FAST, STANDARD, STANDARD_OVERRIDES, Outcome, Pipelines, measure
from sandbox.inside.contracts import Contracts
from sandbox.inside.ir_contexts import IrContexts
from sandbox.inside.lowering import Lowerer, parse
from sandbox.inside.op_corpus import load_table
from sandbox.inside.op_policy import Policy
from sandbox.inside.placement import Placement
from sandbox.inside.program_checks import (
    ProgramChecker,
    Refused,
    allowed_custom_calls,
    summarize,
    tensor_types,
)
from sandbox.inside.program_checks import first_line as _first
from sandbox.shared.schedclock import thread_now
from sandbox.shared.wire import (
    Blobs,
    Frame,
    FrameLimits,
    ProtocolError,
    TreeLimits,
    decode_leaves,
    encode_leaf,
    read_frame,
    write_frame,
)

REQUEST_LIMITS = FrameLimits(max_frame=256 * 1024 * 1024, max_json=16 * 1024 * 1024, max_json_depth=64)
INPUT_LIMITS = TreeLimits(max_depth=4, max_leaves=100_000, max_bytes=256 * 1024 * 1024, max_ndim=16)


def _initialize_lapack() -> None:
    """Register jaxlib's LAPACK kernels with XLA's CPU runtime. JAX does it when it lowers a linear-algebra
    op; this process only compiles programs lowered elsewhere, so without it a program calling ``svd``,
    ``norm(w, 2)``, ``solve``, ``det``... jumps through a null kernel pointer and dies (SIGSEGV)."""
    try:
        from jax._src.lax.linalg import initialize_lapack
    except ImportError:  # another JAX version: its LAPACK calls then fail as they would, never guessed at
        return
    initialize_lapack()  # type: ignore[no-untyped-call]


@dataclass
class Compiled:
    executable: Any
    summary: dict[str, Any]
    outputs: list[tuple[str, tuple[int, ...]]]
    key: str
    #: Per output, its layout over the job's devices (``sandbox.shared.layouts``); empty on one device.
    layouts: list[dict[str, Any]] = field(default_factory=list)
    #: Per output, the executable's own sharding (to gather its shards); empty on one device.
    shardings: list[Any] = field(default_factory=list)
    #: Bytes of the inputs donated to the program (``ProgramChecker.donate``); 0 when none were.
    donated_bytes: int = 0
    #: The loop check's variant (``sandbox.inside.perturb``), compiled, when the judge asked for it; each
    #: run then also runs it and reports ``loops_matter``.
    variant: Any = None


#: Threads an executor compiles on (each with an MLIR context of its own, ``IrContexts``).
COMPILE_THREADS = 2


class Executor:
    def __init__(
        self,
        channel: int,
        cache_scope: str = "job",
        cache_entries: int = 64,
        compile_threads: int = COMPILE_THREADS,
        devices: int = 1,
        policy: Policy | None = None,
        ir_contexts: IrContexts | None = None,
    ) -> None:
        """``policy``: the op policy to check programs with (an executor zygote's, its usual comparators
        already derived); by default one of its own. ``ir_contexts``: MLIR contexts an executor zygote made
        for its children (``IrContexts.stock``, one per compile thread); by default made here."""
        import jax

        #: CPU host devices of this process: fixed before the backend starts, never changed after.
        self.partitions = max(1, devices)
        if self.partitions > 1:
            jax.config.update("jax_num_cpu_devices", self.partitions)  # type: ignore[no-untyped-call]
        from jax._src import compiler, xla_bridge
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

        _initialize_lapack()
        self.jax: Any = jax
        self.ir: Any = ir
        self.mlir: Any = mlir
        self.backend: Any = xla_bridge.get_backend("cpu")
        self.placement = Placement(jax, self.backend, self.partitions)
        # detailed_logging only adds XLA's own logging: without it a small program compiles ~15% faster.
        self.options: Any = self.placement.compile_options(compiler)
        self.channel = channel
        self.cache_scope = cache_scope
        self.cache_entries = max(1, cache_entries)
        self.cache: collections.OrderedDict[str, Compiled] = collections.OrderedDict()
        #: This job's programs, by id: compiling (a future) or done.
        self.programs: dict[int, Future[Compiled | None]] = {}
        #: Every custom call must be one JAX's own lowering makes (``sandbox.inside.contracts``); every op,
        #: attribute and kernel region one JAX's lowering makes (``op_policy``).
        contracts = Contracts(allowed_custom_calls(), Lowerer(self.partitions))
        self.policy = policy if policy is not None else Policy(load_table())
        self.checker = ProgramChecker(ir, mlir, self.policy, contracts, self.partitions)
        self.jobs = 0
        self.lock = threading.Lock()  # replies come from the compile threads and the main thread
        #: MLIR contexts for the current job, one per compile thread (``sandbox.inside.ir_contexts``).
        self.compile_threads = max(1, compile_threads)
        if ir_contexts is None or ir_contexts.threads != self.compile_threads:
            ir_contexts = IrContexts(ir, self.compile_threads)
        self.ir_contexts = ir_contexts
        self.compiler = ThreadPoolExecutor(max_workers=self.compile_threads, thread_name_prefix="compile")

    # ------------------------------------------------------------------------------------------ requests

    def send(self, message: dict[str, Any], blobs: list[bytes] | None = None) -> None:
        with self.lock:
            write_frame(self.channel, message, blobs or [])

    def handle(self, frame: Frame) -> None:
        kind = frame.type
        if kind == "begin":
            self.begin(frame.message)
        elif kind == "program":
            program_id = int(frame.message["id"])
            done: Future[Compiled | None] = Future()  # set by whichever compile wins (``program``)
            self.programs[program_id] = done
            self.compiler.submit(self.program, frame, done)
        elif kind == "run":
            self.run(frame)
        elif kind == "end":
            for future in self.programs.values():
                future.result()  # a reply per request, all sent before "ended"
            self.jobs += 1
            # A compile that lost a race still runs and cannot be stopped: retire this process after the job.
            self.retiring = self.pipelines.lingering()
            self.send({"type": "ended", "jobs": self.jobs, "recycle": self.retiring})
            # The job's programs are dropped after the reply, off the judge's clock (freeing a compiled
            # program takes ~0.2 ms), and before the next request is read: no job sees another's programs.
            self.programs.clear()
            if self.cache_scope != "process":
                with self.lock:
                    self.cache.clear()
        else:
            raise ProtocolError(f"unknown request {kind!r}")

    def begin(self, message: dict[str, Any]) -> None:
        """A job starts: its CPU time counts from now (the soft limit; the hard one was set at start). Its
        MLIR contexts are fresh: made now if an earlier job used the last ones (the judge lends an executor
        for one job, so the warm-up's contexts serve it and none are made after its end for nobody)."""
        self.ir_contexts.prepare()
        set_cpu_limit(message.get("cpu_time_s"))

    def program(self, frame: Frame, done: Future[Compiled | None]) -> None:
        """Compile one program (on a compile thread) and reply; ``done`` gets the compiled program, or None
        if refused. With a race (``sandbox.inside.compiling``) the reply and ``done`` may come from the
        standard compile's thread while this one still runs the losing fast compile."""
        message = frame.message
        program_id = int(message["id"])
        summary: dict[str, Any] = {}
        started = time.perf_counter()
        clock = thread_now()
        try:
            data = bytes(frame.blob(message["module"]))
            checker = self.checker
            with self.ir_contexts.take() as context, context:
                module = checker.parse(data)
                summary = summarize(self.ir, module)
                checker.check(module, summary, message)
                donated, data = checker.donate(module, message.get("donate"), data)
                variant = checker.variant(data) if _wants_loop_check(message) else None
                text = module.operation.get_asm(enable_debug_info=False) + ("|loops" if variant else "")
                key = hashlib.sha256(text.encode()).hexdigest()
                with self.lock:
                    cached = self.cache.get(key)
                if cached is not None:
                    with self.lock:
                        self.cache.move_to_end(key)
                    self._reply_compiled(program_id, summary, cached, clock.charged_s(thread_now()), started)
                    done.set_result(cached)
                    return
                outputs = tensor_types(self.ir, checker.main(module), "results")
                shape = measure(self.ir, module)
                before = clock.charged_s(thread_now())  # this thread's part; XLA's threads compile

                def finish(result: Outcome | BaseException) -> None:
                    if isinstance(result, BaseException):
                        text = f"XLA could not compile the program: {_first(result)}"
                        self._refuse(program_id, "compile", text, summary)
                        done.set_result(None)
                        return
                    compiled = Compiled(result.executable, summary, outputs, key, donated_bytes=donated)
                    if variant is not None:
                        try:
                            compiled.variant = self.backend.compile_and_load(
                                variant,
                                executable_devices=self.placement.devices,
                                compile_options=self.pipeline_options[FAST],
                            )
                        except Exception as exc:  # the judge's own transformation failed: never the user's
                            text = f"the judge could not compile its loop check of the program: {_first(exc)}"
                            self._refuse(program_id, "internal", text, summary)
                            done.set_result(None)
                            return
                    if self.partitions > 1:
                        try:
                            self._lay_out(compiled)
                        except Refused as exc:
                            self._refuse(program_id, exc.kind, exc.message, summary)
                            done.set_result(None)
                            return
                    with self.lock:
                        self.cache[key] = compiled
                        while len(self.cache) > self.cache_entries:
                            self.cache.popitem(last=False)
                    self._reply_compiled(
                        program_id, summary, compiled, before + result.charged_s, started, result
                    )
                    done.set_result(compiled)

                self.pipelines.compile_program(self._compiler_of(module, data), shape, finish)
        except Refused as exc:
            self._refuse(program_id, exc.kind, exc.message, summary)
            done.set_result(None)
        except Exception as exc:  # the executor's own failure on this program: reported, never fatal
            if not done.done():
                self.send({"type": "refused", "id": program_id, "kind": "internal", "message": _first(exc)})
                done.set_result(None)

    def _refuse(self, program_id: int, kind: str, message: str, summary: dict[str, Any]) -> None:
        self.send({"type": "refused", "id": program_id, "kind": kind, "message": message, "summary": summary})

    def _reply_compiled(
        self,
        program_id: int,
        summary: dict[str, Any],
        compiled: Compiled,
        charged_s: float,
        started: float,
        outcome: Outcome | None = None,
    ) -> None:
        """``compile_ms`` is charged time: this thread's part plus the winning compile's (``compiling``)."""
        reply = compiled_message(program_id, summary, compiled, charged_s, started, outcome, self.partitions)
        self.send(reply)

    def _compiler_of(self, module: Any, data: bytes) -> Callable[[str], Any]:
        """Compiles the program with a pipeline's options: the fast one from the parsed module (XLA converts
        it to HLO in its first milliseconds, long before any race starts, so a losing compile no longer
        reads this thread's MLIR context), the standard one from the bytes (XLA parses them in a context
        of its own, ~1 ms), so it never shares the context with a compile still running."""

        def compile(pipeline: str) -> Any:
            source = module if pipeline == FAST else data
            return self.backend.compile_and_load(
                source,
                executable_devices=self.placement.devices,
                compile_options=self.pipeline_options[pipeline],
            )

        return compile

    def run(self, frame: Frame) -> None:
        message = frame.message
        case = int(message["case"])
        future = self.programs.get(int(message["program"]))
        if future is None:
            raise ProtocolError(f"run of unknown program {message['program']!r}")
        compiled = future.result()
        if compiled is None:
            raise ProtocolError(f"run of refused program {message['program']!r}")
        leaves = decode_leaves(message["leaves"], frame, INPUT_LIMITS)
        started = thread_now()  # charged time: a busy machine's run-queue waits are not the program's
        try:
            if self.partitions > 1:
                outputs = self.placement.run_partitioned(
                    compiled.executable, compiled.shardings, compiled.outputs, leaves
                )
            else:
                results = compiled.executable.execute(self.placement.placed(leaves))
                outputs = [np.asarray(r) for r in results]
        except Exception as exc:
            text = str(exc)
            kind = "memory" if "RESOURCE_EXHAUSTED" in text or "Out of memory" in text else "runtime"
            self.send({"type": "run_error", "case": case, "kind": kind, "message": _first(exc)})
            return
        run_ms = started.charged_s(thread_now()) * 1000
        extra: dict[str, Any] = {}
        if compiled.variant is not None:  # the judge's check, after the program's own (timed) run
            extra["loops_matter"] = self._loops_matter(compiled.variant, leaves, outputs)
        blobs = Blobs()
        nodes = [encode_leaf(out, blobs) for out in outputs]
        self.send(
            {"type": "result", "case": case, "outputs": nodes, "run_ms": round(run_ms, 3), **extra},
            [bytes(b) for b in blobs.items],
        )

    def _loops_matter(self, variant: Any, leaves: list[Any], outputs: list[Any]) -> list[bool]:
        """Per output leaf, whether the variant with perturbed loop results gives other bits there on these
        inputs (a variant that fails where the program ran changes every leaf)."""
        try:
            perturbed = [np.asarray(r) for r in variant.execute(self.placement.placed(leaves))]
        except Exception:
            return [True] * len(outputs)
        if len(perturbed) != len(outputs):
            return [True] * len(outputs)
        return [
            a.shape != b.shape or a.tobytes() != b.tobytes() for a, b in zip(outputs, perturbed, strict=True)
        ]

    def warm(self, module: bytes | None = None, broad: bytes | None = None) -> None:
        """Read, compile and run one tiny program now, not on the first job's clock. ``module``: that
        program already lowered for this process's device count (``warm_module``; an executor zygote
        lowers it once for its children), else it is lowered here. ``broad``: also compile and run the
        broad warm-up program (``sandbox.inside.broad_warm_up``, lowered for one device), which sets up the
        op kinds jobs use most."""
        from jax._src import compiler

        data = module if module is not None else warm_module(self.partitions)
        self.ir_contexts.warm_module = data
        #: The fast pipeline is this process's XLA flags; the standard one overrides them per compile.
        self.pipeline_options: dict[str, Any] = {
            FAST: self.options,
            # XLA wants each option's own type: a bool, not jax's declared str ("true" is refused).
            STANDARD: self.placement.compile_options(compiler, env_options_overrides=STANDARD_OVERRIDES),
        }
        self.pipelines = Pipelines()
        #: Set at the end of a job that left a losing compile running: serve no other job.
        self.retiring = False
        self.policy.comparators.warm()  # the usual sorts' comparators, not on a job's clock
        warmed: list[Outcome | BaseException] = []
        with self.ir_contexts.for_warm_up() as context, context:
            module = parse(self.ir, data)
            summarize(self.ir, module)
            self.pipelines.compile_program(
                self._compiler_of(module, data), measure(self.ir, module), warmed.append
            )
            (outcome,) = warmed  # a tiny program: the fast compile, delivered on this thread
            if isinstance(outcome, BaseException):
                raise outcome
            if broad is not None:  # one device only (``serve_forked`` passes it to those alone)
                executable = self.backend.compile_and_load(
                    parse(self.ir, broad),
                    executable_devices=self.placement.devices,
                    compile_options=self.options,
                )
                executable.execute([self.jax.device_put(a, self.placement.device) for a in broad_inputs()])
        self.ir_contexts.prepare()  # the first job's, unused by the warm-up's program
        if self.partitions > 1:
            compiled = Compiled(outcome.executable, {}, [("float32", (2,))], "")
            self._lay_out(compiled)
            self.placement.run_partitioned(
                compiled.executable, compiled.shardings, compiled.outputs, [np.ones(2, np.float32)]
            )
        else:
            outcome.executable.execute([self.jax.device_put(np.ones(2, np.float32), self.placement.device)])

    def _lay_out(self, compiled: Compiled) -> None:
        """A program compiled for several devices: its output layouts and shardings (``Placement.layouts``),
        or Refused."""
        compiled.layouts, compiled.shardings = self.placement.layouts(compiled.executable, compiled.outputs)


def warm_module(devices: int = 1) -> bytes:
    """The tiny program ``Executor.warm`` compiles, lowered for ``devices`` partitions (no backend needed)."""
    import jax
    import jax.numpy as jnp

    spec = jax.ShapeDtypeStruct((2,), jnp.float32)  # type: ignore[no-untyped-call]
    return Lowerer(devices)(jax.jit(lambda x: [x * 2 + 1]).trace(spec).jaxpr)


def set_cpu_limit(seconds: Any) -> None:
    """A job's CPU time limit: ``seconds`` more than this process has used so far (the soft RLIMIT_CPU;
    never above the hard one, set at start). Anything but a positive number leaves the limit as it is."""
    import resource

    if isinstance(seconds, int | float) and seconds > 0:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        wanted = int(usage.ru_utime + usage.ru_stime + seconds) + 1
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_CPU, (wanted, hard))


def compiled_message(
    program_id: int,
    summary: dict[str, Any],
    compiled: Compiled,
    charged_s: float,
    started: float,
    outcome: Outcome | None,
    partitions: int,
) -> dict[str, Any]:
    """The ``compiled`` reply: ``outcome`` None for a program found in the cache."""
    return {
        "type": "compiled",
        "id": program_id,
        "summary": summary,
        "compile_ms": round(max(0.0, charged_s) * 1000, 3),
        "compile_wall_ms": round((time.perf_counter() - started) * 1000, 3),
        "pipeline": outcome.pipeline if outcome is not None else "cached",
        "raced": outcome.raced if outcome is not None else False,
        "cached": outcome is None,
        "key": compiled.key[:16],
        "cost": cost_of(compiled.executable),
        **({"donation": donation_of(compiled)} if compiled.donated_bytes else {}),
        **({"shardings": compiled.layouts} if partitions > 1 else {}),
    }


def _wants_loop_check(message: dict[str, Any]) -> bool:
    """The judge's precheck asks for the loop check (``judge.grading.compiled_rules.precheck_for``:
    ``loops_matter``)."""
    precheck = message.get("precheck")
    return isinstance(precheck, dict) and "loops_matter" in precheck


def donation_of(compiled: Compiled) -> dict[str, int]:
    """What donation gave a compiled program: the bytes donated, and the bytes of inputs XLA aliased with
    an output (its compiled memory statistics; -1 when XLA offers none, which breaks an in-place rule)."""
    try:
        aliased = int(compiled.executable.get_compiled_memory_stats().alias_size_in_bytes)
    except Exception:  # no memory statistics: the judge cannot tell, and fails closed
        aliased = -1
    return {"donated_bytes": compiled.donated_bytes, "aliased_bytes": aliased}


#: XLA's cost-analysis figures the executor reports with a compiled program, by the name the judge reads.
COST_FIGURES = {"flops": "flops", "bytes accessed": "bytes_accessed", "transcendentals": "transcendentals"}


def cost_of(executable: Any) -> dict[str, float]:
    """XLA's cost analysis of a compiled program (FLOPs, bytes accessed, transcendentals), finite
    non-negative figures only; empty when XLA offers none (the judge then shows no cost)."""
    try:
        analysis = executable.cost_analysis()
    except Exception:  # an executable without a cost model: no figures, never a failure
        return {}
    if isinstance(analysis, list):
        analysis = analysis[0] if analysis else {}
    figures: dict[str, float] = {}
    for name, key in COST_FIGURES.items():
        value = analysis.get(name) if isinstance(analysis, dict) else None
        if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
            figures[key] = float(value)
    return figures


def serve(executor: Executor, stdin: BinaryIO) -> None:
    while not executor.retiring:
        try:
            frame = read_frame(stdin, REQUEST_LIMITS)
        except EOFError:
            return
        executor.handle(frame)


def main() -> None:
    parser = argparse.ArgumentParser(prog="sandbox.inside.executor")
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--cache-scope", choices=("job", "process"), default="job")
    parser.add_argument("--cache-entries", type=int, default=64)
    parser.add_argument("--devices", type=int, default=1)
    opts = parser.parse_args()
    run(opts.result_fd, opts.cache_scope, opts.cache_entries, opts.devices)


#: glibc's ``mallopt`` parameter that sets the byte ``MALLOC_PERTURB_`` sets at start.
M_PERTURB = -6
#: Bytes of the block ``heap_scrub`` asks for: above the per-thread cache's largest size (1032 bytes; glibc
#: hands those out unscrubbed) and far below the mmap threshold (mapped blocks come zeroed from the kernel).
_PROBE_BYTES = 4096


def heap_scrub() -> str | None:
    """The heap scrub this process has, measured: glibc fills a block ``malloc`` hands out with the scrub
    byte XOR 0xff; the byte (as ``MALLOC_PERTURB_`` spells it) when a fresh block is all that fill, else None.
    Reported with ``ready`` (``malloc_perturb``) so that a backend's configuration can be checked."""
    import ctypes

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    block = libc.malloc(_PROBE_BYTES)
    if not block:
        return None
    try:
        data = ctypes.string_at(block, _PROBE_BYTES)
    finally:
        libc.free(block)
    fill = data[0]
    return str(fill ^ 0xFF) if fill and data == bytes([fill]) * _PROBE_BYTES else None


def set_malloc_perturb(value: int) -> None:
    """Scrub this process's heap from now on, as ``MALLOC_PERTURB_`` does from a process's start: a forked
    executor inherits its zygote's malloc state, so it sets the byte itself (``mallopt(M_PERTURB, value)``)
    before it starts a backend or reads a job. Raises OSError if glibc refuses."""
    import ctypes

    if ctypes.CDLL(None).mallopt(M_PERTURB, value) != 1:
        raise OSError(f"mallopt(M_PERTURB, {value}) failed")


def serve_forked(
    channel: int,
    request: dict[str, Any],
    policy: Policy | None = None,
    warm: bytes | None = None,
    ir_contexts: IrContexts | None = None,
    broad: bytes | None = None,
) -> None:
    """Entry point of an executor forked by the executor zygote (fds 0, 1, 2 and ``channel`` set up, already
    confined): scrub the heap, start the XLA backend (the zygote never did), serve one job with the
    zygote's op policy (``policy``), warm-up programs (``warm``; ``broad``, compiled only when the request
    says ``warm_up: "broad"``; both lowered for one device) and MLIR contexts (``ir_contexts``, made for
    the warm-up program's dialects). Never returns."""
    set_malloc_perturb(int(request["malloc_perturb"]))
    devices = int(request.get("devices") or 1)
    one = devices == 1
    run(
        channel,
        str(request.get("cache_scope") or "job"),
        int(request.get("cache_entries") or 64),
        devices,
        policy,
        warm if one else None,
        ir_contexts if one else None,
        broad if one and request.get("warm_up") == "broad" else None,
    )


def run(
    channel: int,
    cache_scope: str,
    cache_entries: int,
    devices: int,
    policy: Policy | None = None,
    warm: bytes | None = None,
    ir_contexts: IrContexts | None = None,
    broad: bytes | None = None,
) -> None:
    """Start, warm (``broad``: broadly too), report ``ready`` (with the heap scrub measured, ``heap_scrub``,
    and the warm-up it did, ``warm_up``) and serve until the judge closes stdin (or a retiring end). Never
    returns."""
    executor = Executor(
        channel, cache_scope, cache_entries, devices=devices, policy=policy, ir_contexts=ir_contexts
    )
    executor.warm(warm, broad)
    ready = {
        "type": "ready",
        "pid": os.getpid(),
        "jax": executor.jax.__version__,
        "warm_up": "broad" if broad is not None else "tiny",
    }
    write_frame(channel, {**ready, "malloc_perturb": heap_scrub()})
    stdin = os.fdopen(0, "rb", buffering=0, closefd=False)
    try:
        serve(executor, stdin)
    except BaseException:
        traceback.print_exc()  # the executor's own failure: the judge replaces it and keeps the note
        raise
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
