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
executable places it (``sandbox.shardings``), which the judge compares with the reference's. Runs gather
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
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from sandbox.inside.compiling import FAST, STANDARD, STANDARD_OVERRIDES, Outcome, Pipelines, measure
from sandbox.inside.contracts import BrokenContract, Contracts, check_partitioning
from sandbox.inside.lowering import Lowerer, lean_ir_context, parse
from sandbox.inside.op_corpus import load_table
from sandbox.inside.op_policy import Policy, PolicyViolation
from sandbox.inside.perturb import perturb_loops
from sandbox.inside.remat import remat_summary
from sandbox.protocol import (
    DTYPES,
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
from sandbox.schedclock import thread_now
from sandbox.shardings import BadLayout, from_hlo

REQUEST_LIMITS = FrameLimits(max_frame=256 * 1024 * 1024, max_json=16 * 1024 * 1024, max_json_depth=64)
INPUT_LIMITS = TreeLimits(max_depth=4, max_leaves=100_000, max_bytes=256 * 1024 * 1024, max_ndim=16)
#: Dialects a program may use. Anything else (llvm, gpu, ...) is refused before compiling.
ALLOWED_PREFIXES = ("stablehlo.", "chlo.", "func.", "sdy.")
ALLOWED_OPS = frozenset({"builtin.module"})
#: StableHLO ops that talk to the host or other devices: never needed to compute an answer.
FORBIDDEN_OPS = frozenset({"stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv"})
#: Custom-call targets of Python host callbacks (jax.pure_callback, io_callback, jax.debug.*).
HOST_CALLBACK_TARGETS = frozenset(
    {
        "xla_python_cpu_callback",
        "xla_ffi_python_cpu_callback",
        "xla_python_gpu_callback",
        "xla_ffi_python_gpu_callback",
        "xla_ffi_partitioned_python_cpu_callback",
    }
)
#: Partitioning annotations that compile to nothing on one device (on several, checked: ``contracts``).
_ANNOTATIONS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})

#: MLIR element type -> wire dtype name.
ELEMENT_TYPES = {
    "f32": "float32",
    "f64": "float64",
    "f16": "float16",
    "bf16": "bfloat16",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
    "i1": "bool",
    "complex<f32>": "complex64",
}


class Refused(Exception):
    """A program the executor will not compile; ``kind`` tells the judge which rule it broke."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def allowed_custom_calls() -> frozenset[str]:
    """jax.export's custom-call targets guaranteed stable that run on CPU (LAPACK), plus annotations."""
    try:
        from jax._src.export._export import _CUSTOM_CALL_TARGETS_GUARANTEED_STABLE as stable
    except ImportError:  # moved in another JAX version: LAPACK calls are then refused, never guessed at
        stable = set()
    return frozenset({t for t in stable if t.startswith("lapack_")} | _ANNOTATIONS)


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
    #: Per output, its layout over the job's devices (``sandbox.shardings``); empty on one device.
    layouts: list[dict[str, Any]] = field(default_factory=list)
    #: Per output, the executable's own sharding (to gather its shards); empty on one device.
    shardings: list[Any] = field(default_factory=list)
    #: Bytes of the inputs donated to the program (``Executor.donate``); 0 when none were.
    donated_bytes: int = 0
    #: The loop check's variant (``sandbox.inside.perturb``), compiled, when the judge asked for it; each
    #: run then also runs it and reports ``loops_matter``.
    variant: Any = None


class Executor:
    def __init__(
        self,
        channel: int,
        cache_scope: str = "job",
        cache_entries: int = 64,
        compile_threads: int = 2,
        devices: int = 1,
        policy: Policy | None = None,
    ) -> None:
        """``policy``: the op policy to check programs with (an executor zygote's, its usual comparators
        already derived); by default one of its own."""
        import jax

        #: CPU host devices of this process: fixed before the backend starts, never changed after.
        self.partitions = max(1, devices)
        if self.partitions > 1:
            jax.config.update("jax_num_cpu_devices", self.partitions)  # type: ignore[no-untyped-call]
        from jax._src import compiler, xla_bridge
        from jax._src.interpreters import mlir
        from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]
        from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

        _initialize_lapack()
        self.jax: Any = jax
        self.ir: Any = ir
        self.mlir: Any = mlir
        self.backend: Any = xla_bridge.get_backend("cpu")
        self.device = self.backend.local_devices()[0]
        self.mesh_devices: tuple[Any, ...] = tuple(self.backend.local_devices()[: self.partitions])
        if len(self.mesh_devices) != self.partitions:
            raise RuntimeError(f"this process has {len(self.mesh_devices)} devices, not {self.partitions}")
        self.devices: Any = xc.DeviceList(self.mesh_devices)
        # detailed_logging only adds XLA's own logging: without it a small program compiles ~15% faster.
        self.options: Any = self._compile_options(compiler)
        self.channel = channel
        self.cache_scope = cache_scope
        self.cache_entries = max(1, cache_entries)
        self.cache: collections.OrderedDict[str, Compiled] = collections.OrderedDict()
        #: This job's programs, by id: compiling (a future) or done.
        self.programs: dict[int, Future[Compiled | None]] = {}
        self.allowed = allowed_custom_calls()
        #: Every custom call must be one JAX's own lowering makes (``sandbox.inside.contracts``).
        self.contracts = Contracts(self.allowed, Lowerer(self.partitions))
        #: Every op, attribute and kernel region must be one JAX's lowering makes (``op_policy``).
        self.policy = policy if policy is not None else Policy(load_table())
        self.jobs = 0
        self.lock = threading.Lock()  # replies come from the compile threads and the main thread
        #: MLIR contexts for the current job, one per compile thread, made at the warm-up, before the
        #: executor is lent (making one and loading its dialects, ~1 ms each, ``lean_ir_context``, would
        #: otherwise fall on the first programs of its job); a later job's are made when it begins. A
        #: context holds one program at a time; a job's contexts (and the attributes its modules uniqued
        #: in them) are dropped when the next job begins or the process ends.
        self.compile_threads = max(1, compile_threads)
        self.contexts: list[Any] = []
        #: Contexts handed out since they were made (``ir_context``): 0 means they are as fresh as new.
        self.used_contexts = 0
        self.warm_module: bytes | None = None
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
        import resource

        self.prepare_contexts()

        seconds = message.get("cpu_time_s")
        if isinstance(seconds, int | float) and seconds > 0:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            _, hard = resource.getrlimit(resource.RLIMIT_CPU)
            wanted = int(usage.ru_utime + usage.ru_stime + seconds) + 1
            if hard != resource.RLIM_INFINITY:
                wanted = min(wanted, hard)
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_CPU, (wanted, hard))

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
            with self.ir_context() as context, context:
                module = self._parse(data)
                summary = self.summarize(module)
                self.check(module, summary, message)
                donated, data = self.donate(module, message.get("donate"), data)
                variant = self._variant(data) if _wants_loop_check(message) else None
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
                outputs = _types(self.ir, self._main(module), "results")
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
                                executable_devices=self.devices,
                                compile_options=self.pipeline_options[FAST],
                            )
                        except Exception as exc:  # the judge's own transformation failed: never the user's
                            text = f"the judge could not compile its loop check of the program: {_first(exc)}"
                            self._refuse(program_id, "internal", text, summary)
                            done.set_result(None)
                            return
                    if self.partitions > 1:
                        try:
                            self._partitioned(compiled)
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
        self.send(
            {
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
                **({"shardings": compiled.layouts} if self.partitions > 1 else {}),
            }
        )

    def _compiler_of(self, module: Any, data: bytes) -> Callable[[str], Any]:
        """Compiles the program with a pipeline's options: the fast one from the parsed module (XLA converts
        it to HLO in its first milliseconds, long before any race starts, so a losing compile no longer
        reads this thread's MLIR context), the standard one from the bytes (XLA parses them in a context
        of its own, ~1 ms), so it never shares the context with a compile still running."""

        def compile(pipeline: str) -> Any:
            source = module if pipeline == FAST else data
            return self.backend.compile_and_load(
                source, executable_devices=self.devices, compile_options=self.pipeline_options[pipeline]
            )

        return compile

    @contextlib.contextmanager
    def ir_context(self) -> Iterator[Any]:
        """A prepared MLIR context of the current job, this thread's until the block ends."""
        with self.lock:
            context = self.contexts.pop() if self.contexts else None
            self.used_contexts += 1
        if context is None:  # more programs at once than compile threads: not expected; costs only time
            context = self._new_context()
        try:
            yield context
        finally:
            with self.lock:
                self.contexts.append(context)

    def prepare_contexts(self) -> None:
        """Fresh MLIR contexts for the next job (the current job's are dropped with their modules). A job
        that read no program (an executor lent for a job that needed none of it) leaves its contexts as
        they were made: nothing was parsed in them, so they are kept."""
        with self.lock:
            if self.used_contexts == 0 and len(self.contexts) == self.compile_threads:
                return
        fresh = [self._new_context() for _ in range(self.compile_threads)]
        with self.lock:
            self.contexts = fresh
            self.used_contexts = 0

    def _new_context(self) -> Any:
        """A context whose dialects are loaded: deserializing the warm-up program loads the ones JAX uses."""
        context = lean_ir_context()
        if self.warm_module is not None:
            with context:
                parse(self.ir, self.warm_module)
        return context

    def _variant(self, data: bytes) -> bytes | None:
        """The loop check's variant of the program (``sandbox.inside.perturb``) as bytes, parsed afresh
        from the program's own bytes; None on several devices (not checked there)."""
        if self.partitions > 1:
            return None
        from jax._src.lib.mlir.dialects import hlo  # type: ignore[attr-defined]

        variant = self._parse(data)
        perturb_loops(self.ir, hlo, variant)
        return bytes(self.mlir.module_to_bytecode(variant))

    def _parse(self, data: bytes) -> Any:
        try:
            return parse(self.ir, data)
        except Exception as exc:
            raise Refused("unreadable", f"the program is not a valid MLIR module: {_first(exc)}") from None

    def _main(self, module: Any) -> Any:
        mains = [
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and str(op.operation.attributes["sym_name"]).strip('"') == "main"
        ]
        if len(mains) != 1:
            raise Refused("unreadable", "the program has no single `main` function")
        return mains[0]

    def summarize(self, module: Any) -> dict[str, Any]:
        """Every op of the module (nested regions, private functions): histogram, custom calls, loops."""
        ops: collections.Counter[str] = collections.Counter()
        targets: list[str] = []
        ir = self.ir

        def visit(op: Any) -> Any:
            name = op.name
            ops[name] += 1
            if name == "stablehlo.custom_call":
                target = op.attributes["call_target_name"]
                targets.append(str(ir.StringAttr(target).value))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        return {
            "ops": dict(sorted(ops.items())),
            "loop_ops": dict(sorted(loop_ops(self.ir, module).items())),
            # What an optimization barrier's results feed (the ``require_remat`` rule's evidence).
            **remat_summary(self.ir, module),
            "custom_calls": sorted(set(targets)),
            "loops": ops.get("stablehlo.while", 0),
            "functions": ops.get("func.func", 0),
            "host_callbacks": sorted({t for t in targets if _is_callback(t)}),
        }

    def check(self, module: Any, summary: dict[str, Any], message: dict[str, Any]) -> None:
        """Refuse what must never be compiled, then match the inputs and bound the outputs."""
        if summary["host_callbacks"]:
            raise Refused(
                "host_callback",
                f"the program calls back into Python on the host ({', '.join(summary['host_callbacks'])})",
            )
        try:
            self.policy.check(module)  # every op, attribute and kernel region: JAX's own, before any compile
        except PolicyViolation as exc:
            raise Refused("op", str(exc)) from None
        try:
            self.contracts.check(module)  # every call's target, types and attributes, before any compile
            if self.partitions > 1:
                check_partitioning(self.ir, module, self.partitions)
        except BrokenContract as exc:
            raise Refused("custom_call", str(exc)) from None
        for name in summary["ops"]:
            if name in FORBIDDEN_OPS or not (name in ALLOWED_OPS or name.startswith(ALLOWED_PREFIXES)):
                raise Refused("op", f"the program uses the operation {name!r}, which the judge does not run")
        broken = _precheck(summary, message.get("precheck"))
        if broken is not None:
            raise Refused("rule", broken)
        main = self._main(module)
        inputs = _types(self.ir, main, "inputs")
        expected = [(str(s["dtype"]), tuple(int(d) for d in s["shape"])) for s in message["inputs"]]
        if len(inputs) > len(expected):
            raise Refused(
                "extra_inputs",
                f"the program takes {len(inputs)} inputs but the case has {len(expected)} leaves",
            )
        if inputs != expected:
            raise Refused(
                "inputs", "the program's inputs do not match the case's leaves (count, shapes, dtypes)"
            )
        outputs = _types(self.ir, main, "results")
        total = sum(
            int(np.prod(shape, dtype=np.float64)) * DTYPES[dtype].itemsize for dtype, shape in outputs
        )
        if total > int(message["max_output_bytes"]):
            raise Refused("output_limit", f"the function returns {total} bytes of arrays")

    def donate(self, module: Any, wanted: Any, data: bytes) -> tuple[int, bytes]:
        """Decide which inputs the program may update in place: the ones the judge names in ``donate``
        (flat input indices; ``jax.jit``'s ``donate_argnames`` of a problem's in-place rule), marked as
        buffer donors on ``main`` for XLA to alias with outputs. Aliasing the module declares itself
        (``tf.aliasing_output``, ``jax.buffer_donor``) is dropped first: it is not the tracer's to decide.
        Returns the donated bytes and the module's bytes (written again when the attributes changed, for
        the pipeline that compiles from bytes)."""
        ir = self.ir
        main = self._main(module)
        inputs = _types(ir, main, "inputs")
        indices = wanted if isinstance(wanted, list) else []
        if any(not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(inputs) for i in indices):
            raise ValueError(f"donate names inputs the program does not have: {str(wanted)[:80]}")
        old = main.attributes.get("arg_attrs", None)
        attrs: list[dict[str, Any]] = []
        changed = bool(indices)
        for i in range(len(inputs)):
            entries = {a.name: a.attr for a in ir.DictAttr(old[i])} if old is not None else {}
            for name in _ALIASING_ATTRIBUTES:
                changed |= entries.pop(name, None) is not None
            if i in indices:
                entries["jax.buffer_donor"] = ir.BoolAttr.get(True)
            attrs.append(entries)
        if not changed:
            return 0, data
        main.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])
        donated = sum(
            int(np.prod(inputs[i][1], dtype=np.float64)) * DTYPES[inputs[i][0]].itemsize for i in set(indices)
        )
        return donated, bytes(self.mlir.module_to_bytecode(module))

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
                outputs = self._run_partitioned(compiled, leaves)
            else:
                results = compiled.executable.execute(self._placed(leaves))
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

    def _placed(self, leaves: list[Any]) -> list[Any]:
        """The case's leaves on this process's device, copied out of the request's frame, in one
        ``device_put`` (one call for all leaves: ~0.2 ms a leaf less than one call each)."""
        return list(self.jax.device_put([np.array(leaf) for leaf in leaves], self.device))

    def _loops_matter(self, variant: Any, leaves: list[Any], outputs: list[Any]) -> list[bool]:
        """Per output leaf, whether the variant with perturbed loop results gives other bits there on these
        inputs (a variant that fails where the program ran changes every leaf)."""
        try:
            perturbed = [np.asarray(r) for r in variant.execute(self._placed(leaves))]
        except Exception:
            return [True] * len(outputs)
        if len(perturbed) != len(outputs):
            return [True] * len(outputs)
        return [
            a.shape != b.shape or a.tobytes() != b.tobytes() for a, b in zip(outputs, perturbed, strict=True)
        ]

    def _compile_options(self, compiler: Any, **overrides: Any) -> Any:
        """XLA's options for this process: one partition, or ``partitions`` over devices 0..D-1 with the
        Shardy partitioner (JAX's own), parameters as placed (replicated), outputs as XLA propagates them."""
        n = self.partitions
        options = compiler.get_compile_options(
            num_replicas=1,
            num_partitions=n,
            backend=self.backend,
            detailed_logging=False,
            device_assignment=np.array(self.mesh_devices).reshape(1, n) if n > 1 else None,
            **overrides,
        )
        if n > 1:
            build = options.executable_build_options
            build.use_spmd_partitioning = True
            build.use_shardy_partitioner = True
        return options

    def _partitioned(self, compiled: Compiled) -> None:
        """The compiled program's output layouts, or Refused when its inputs are not replicated (the
        executor places every input so) or an output's sharding cannot be read."""
        from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]
        from jax._src.sharding_impls import GSPMDSharding

        executable = compiled.executable
        n = self.partitions
        for op in executable.get_parameter_shardings() or []:
            if not xc.HloSharding.from_proto(op).is_replicated():
                raise Refused(
                    "inputs",
                    "the program asks for its inputs sharded, where the judge gives them replicated over "
                    f"{n} devices",
                )
        shardings = executable.get_output_shardings() or []
        if len(shardings) != len(compiled.outputs):
            raise Refused("outputs", "the compiled program's outputs have no sharding the judge can read")
        for op, (_, shape) in zip(shardings, compiled.outputs, strict=True):
            hlo = xc.HloSharding.from_proto(op)
            try:
                layout = from_hlo(hlo, len(shape), n)
            except BadLayout as exc:
                raise Refused("outputs", f"an output's sharding cannot be read: {exc}") from None
            compiled.layouts.append(layout.wire())
            compiled.shardings.append(GSPMDSharding(self.mesh_devices, hlo))

    def _run_partitioned(self, compiled: Compiled, leaves: list[Any]) -> list[Any]:
        """Run on every device, each input replicated; each output gathered from its shards."""
        jax = self.jax
        replicated = self._replicated_sharding()
        arguments = [jax.device_put(np.array(leaf), replicated) for leaf in leaves]
        results = compiled.executable.execute_sharded(arguments)
        shards = results.disassemble_into_single_device_arrays()
        outputs = []
        for pieces, sharding, (_, shape) in zip(shards, compiled.shardings, compiled.outputs, strict=True):
            whole = jax.make_array_from_single_device_arrays(shape, sharding, list(pieces))
            outputs.append(np.asarray(whole))
        return outputs

    def _replicated_sharding(self) -> Any:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        cached = getattr(self, "_replicated", None)
        if cached is None:
            mesh = Mesh(np.array(self.mesh_devices), ("_",))
            cached = self._replicated = NamedSharding(mesh, PartitionSpec())  # type: ignore[no-untyped-call]
        return cached

    def warm(self, module: bytes | None = None) -> None:
        """Read, compile and run one tiny program now, not on the first job's clock. ``module``: that
        program already lowered for this process's device count (``warm_module``; an executor zygote
        lowers it once for its children), else it is lowered here."""
        from jax._src import compiler

        data = module if module is not None else warm_module(self.partitions)
        self.warm_module = data
        #: The fast pipeline is this process's XLA flags; the standard one overrides them per compile.
        self.pipeline_options: dict[str, Any] = {
            FAST: self.options,
            # XLA wants each option's own type: a bool, not jax's declared str ("true" is refused).
            STANDARD: self._compile_options(compiler, env_options_overrides=STANDARD_OVERRIDES),
        }
        self.pipelines = Pipelines()
        #: Set at the end of a job that left a losing compile running: serve no other job.
        self.retiring = False
        self.policy.comparators.warm()  # the usual sorts' comparators, not on a job's clock
        warmed: list[Outcome | BaseException] = []
        with self.ir_context() as context, context:
            module = parse(self.ir, data)
            self.summarize(module)
            self.pipelines.compile_program(
                self._compiler_of(module, data), measure(self.ir, module), warmed.append
            )
        (outcome,) = warmed  # a tiny program: the fast compile, delivered on this thread
        if isinstance(outcome, BaseException):
            raise outcome
        self.prepare_contexts()  # the first job's, unused by the warm-up's program
        if self.partitions > 1:
            compiled = Compiled(outcome.executable, {}, [("float32", (2,))], "")
            self._partitioned(compiled)
            self._run_partitioned(compiled, [np.ones(2, np.float32)])
        else:
            outcome.executable.execute([self.jax.device_put(np.ones(2, np.float32), self.device)])


def warm_module(devices: int = 1) -> bytes:
    """The tiny program ``Executor.warm`` compiles, lowered for ``devices`` partitions (no backend needed)."""
    import jax
    import jax.numpy as jnp

    spec = jax.ShapeDtypeStruct((2,), jnp.float32)  # type: ignore[no-untyped-call]
    return Lowerer(devices)(jax.jit(lambda x: [x * 2 + 1]).trace(spec).jaxpr)


def loop_ops(ir: Any, module: Any) -> collections.Counter[str]:
    """Histogram of the ops that run inside a loop: in the regions of a ``stablehlo.while`` (body and
    condition), nested regions (``case``, ``if``, a reducer) and the functions they ``func.call``,
    transitively (``jax.jit`` inside a scan body, or the scan body itself, becomes a private function).

    Walked from ``main`` through the call graph, each function once per context (in a loop or not), with
    an explicit stack (a crafted module cannot exhaust the Python stack). A program with no loop gives
    an empty histogram, whatever its size: this is what tells ``lax.scan`` from an unrolled Python loop.
    """
    functions: dict[str, Any] = {}
    for op in module.body.operations:
        operation = op.operation
        if operation.name == "func.func":
            functions[str(ir.StringAttr(operation.attributes["sym_name"]).value)] = operation
    counts: collections.Counter[str] = collections.Counter()
    if "main" not in functions:
        return counts
    seen: set[tuple[str, bool]] = {("main", False)}
    stack: list[tuple[Any, bool]] = [(functions["main"], False)]
    while stack:
        parent, in_loop = stack.pop()
        for region in parent.regions:
            for block in region.blocks:
                for op in block.operations:
                    operation = op.operation
                    name = operation.name
                    if in_loop:
                        counts[name] += 1
                    if name == "func.call":
                        callee = str(ir.FlatSymbolRefAttr(operation.attributes["callee"]).value)
                        if callee in functions and (callee, in_loop) not in seen:
                            seen.add((callee, in_loop))
                            stack.append((functions[callee], in_loop))
                    if len(operation.regions):
                        stack.append((operation, in_loop or name == "stablehlo.while"))
    return counts


def _wants_loop_check(message: dict[str, Any]) -> bool:
    """The judge's precheck asks for the loop check (``judge.rules.precheck_for``: ``loops_matter``)."""
    precheck = message.get("precheck")
    return isinstance(precheck, dict) and "loops_matter" in precheck


def _precheck(summary: dict[str, Any], precheck: Any) -> str | None:
    """The first op rule of the judge's ``precheck`` the program breaks (a short text), or None.

    ``require_loop_any``: a ``stablehlo.while`` whose body holds one of these ops; ``forbid_ops``: none of
    these ops anywhere. The judge words the verdict itself from the summary; this only spares the compile.
    """
    if not isinstance(precheck, dict):
        return None
    ops, in_loops = summary["ops"], summary["loop_ops"]
    required = precheck.get("require_loop_any")
    if isinstance(required, list) and required:
        if not ops.get("stablehlo.while"):
            return "the program has no loop"
        if not any(in_loops.get(op) for op in required):
            return f"no loop of the program holds {' or '.join(map(str, required))}"
    forbidden = precheck.get("forbid_ops")
    if isinstance(forbidden, list):
        used = sorted(str(op) for op in forbidden if ops.get(op))
        if used:
            return f"the program uses {', '.join(used)}"
    return None


def _types(ir: Any, main: Any, which: str) -> list[tuple[str, tuple[int, ...]]]:
    function = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    out = []
    for kind in function.inputs if which == "inputs" else function.results:
        try:
            tensor = ir.RankedTensorType(kind)
        except (ValueError, TypeError):
            raise Refused(
                "outputs" if which == "results" else "inputs", f"the program has a non-tensor {which[:-1]}"
            ) from None
        if not tensor.has_static_shape:
            raise Refused("outputs" if which == "results" else "inputs", "the program has a dynamic shape")
        element = str(tensor.element_type)
        if element not in ELEMENT_TYPES:
            raise Refused(
                "outputs" if which == "results" else "inputs",
                f"the program uses the unsupported dtype {element}",
            )
        out.append((ELEMENT_TYPES[element], tuple(int(d) for d in tensor.shape)))
    return out


#: Attributes of ``main``'s arguments that make XLA alias an input with an output (``Executor.donate``).
_ALIASING_ATTRIBUTES = ("tf.aliasing_output", "jax.buffer_donor")


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


def _is_callback(target: str) -> bool:
    return target in HOST_CALLBACK_TARGETS or "callback" in target.lower()


def _first(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:limit]}" if text else type(exc).__name__


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
    channel: int, request: dict[str, Any], policy: Policy | None = None, warm: bytes | None = None
) -> None:
    """Entry point of an executor forked by the executor zygote (fds 0, 1, 2 and ``channel`` set up, already
    confined): scrub the heap, start the XLA backend (the zygote never did), serve one job with the
    zygote's op policy (``policy``) and warm-up program (``warm``, lowered for one device). Never returns."""
    set_malloc_perturb(int(request["malloc_perturb"]))
    devices = int(request.get("devices") or 1)
    run(
        channel,
        str(request.get("cache_scope") or "job"),
        int(request.get("cache_entries") or 64),
        devices,
        policy,
        warm if devices == 1 else None,
    )


def run(
    channel: int,
    cache_scope: str,
    cache_entries: int,
    devices: int,
    policy: Policy | None = None,
    warm: bytes | None = None,
) -> None:
    """Start, warm, report ``ready`` (with the heap scrub measured, ``heap_scrub``) and serve until the
    judge closes stdin (or a retiring end). Never returns."""
    executor = Executor(channel, cache_scope, cache_entries, devices=devices, policy=policy)
    executor.warm(warm)
    ready = {"type": "ready", "pid": os.getpid(), "jax": executor.jax.__version__}
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
