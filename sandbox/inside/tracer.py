"""The tracer: the only program that runs user Python. It turns the learner's function into programs.

    python -m sandbox.inside.tracer --result-fd N     (standalone: one process per submission)
    sandbox.inside.zygote forks it instead and calls ``serve_forked``

1. captures its own references to ``jax.jit``, the lowering (``sandbox.inside.lowering``) and the config
   BEFORE user code loads and reports ``ready`` on the private result channel (fd N, never stdout);
2. reads the job on stdin: code, function name, argument specs and, per distinct signature, the ABSTRACT
   inputs only (structure, shapes, dtypes, weak types, static values) of the public and custom cases,
   plus the concrete values of public and custom cases (for ``jax.debug.print`` only);
3. loads the code (``loaded`` or ``load_error``), then for each signature traces the function through the
   captured ``jit`` on abstract inputs, checking that no tracer escaped the call, with ``jax.debug.print`` and
   ``jax.debug.callback`` stripped (a compiled program cannot call back into Python), and sends ``program``:
   the trace lowered to StableHLO (MLIR bytecode; no XLA backend is involved) as a blob, a JSON skeleton of
   the output, whether the function used a debug primitive, and what the mutation check saw (advisory: it runs
   beside user code). A function that cannot be traced gets ``trace_failed`` with a verdict and a message
   naming the user's line;
4. runs the function (jit as usual) on the public and custom values of every signature that printed with
   ``jax.debug``, purely for the printed output, then sends ``public_done`` and waits;
5. receives the hidden signatures (abstract only) and traces them the same way; then traces one signature
   again through a FRESH wrapper and jit (state kept across calls shows as a different program), sends it
   as ``retrace``, then ``done``, and leaves with ``os._exit``.

No verdict ever comes from here: the judge compares the outputs the executor computes from these programs.
Everything this process says may be forged by user code; lying only hurts the liar.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import linecache
import logging
import os
import sys
import time
import traceback
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import numpy as np

from sandbox.inside.autodiff import SeedScaler, with_autodiff_twice
from sandbox.inside.lowering import Lowerer
from sandbox.shared.output_mark import section_mark
from sandbox.shared.transforms import with_gradient
from sandbox.shared.tree import KEY_IMPLS, BadLeaf, OtherNode, TreeTooDeep, to_host
from sandbox.shared.wire import (
    ADVICE,
    DTYPES,
    Frame,
    FrameLimits,
    decode_leaves,
    encode_key,
    read_frame,
    write_all,
    write_frame,
)

FILENAME = "solution.py"
#: Frames the judge sends: one job (code plus public values) and one continuation.
JOB_LIMITS = FrameLimits(max_frame=256 * 1024 * 1024, max_json=64 * 1024 * 1024, max_json_depth=400)
#: jax.config options a submission might flip; restored after its code loads and after every trace.
CONFIG_KEYS = (
    "jax_enable_x64",
    "jax_disable_jit",
    "jax_default_matmul_precision",
    "jax_numpy_rank_promotion",
    "jax_numpy_dtype_promotion",
    "jax_debug_nans",
    "jax_debug_infs",
    "jax_default_prng_impl",
    "jax_platforms",
    "jax_check_tracer_leaks",
)
#: The ``jax.default_matmul_precision`` values a job may be graded at (``judge.core.spec.MatmulPrecision``).
MATMUL_PRECISIONS = ("default", "high", "highest")
#: Primitives that call back into Python on the host: they cannot run in the judge.
HOST_CALLBACKS = frozenset({"pure_callback", "io_callback"})


class CaseFailure(Exception):
    """A user-code failure, already classified (a verdict the judge may accept from the tracer).

    Besides the full ``message`` it names, as data, the user's ``line``, the ``error`` type and an ``advice``
    key of ``sandbox.shared.wire.ADVICE``: from these alone the judge composes what a hidden case shows.
    """

    def __init__(
        self,
        verdict: str,
        message: str,
        reason: str | None = None,
        *,
        line: int | None = None,
        error: str | None = None,
        advice: str | None = None,
    ) -> None:
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.reason = reason
        self.line = line
        self.error = error
        self.advice = advice

    def wire(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "message": self.message,
            "reason": self.reason,
            "line": self.line,
            "error": self.error,
            "advice": self.advice,
        }


# ------------------------------------------------------------------------------------------ JAX capture


class Captured:
    """JAX references taken before any user code runs, so patching ``jax.*`` later changes nothing here."""

    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp
        from jax._src import debugging

        self.jax: Any = jax
        self.jnp: Any = jnp
        self.jit: Callable[..., Any] = jax.jit
        self.vjp: Callable[..., Any] = jax.vjp
        self.tree_map: Callable[..., Any] = jax.tree_util.tree_map
        self.lower = Lowerer()
        self.shape_dtype: Callable[..., Any] = jax.ShapeDtypeStruct
        self.device_put: Callable[..., Any] = jax.device_put
        self.block_until_ready: Callable[[Any], Any] = jax.block_until_ready
        self.tracer_type: type = jax.core.Tracer
        self.array_type: type = jax.Array
        self.tree_flatten: Callable[..., Any] = jax.tree_util.tree_flatten
        self.treedef_is_leaf: Callable[[Any], bool] = jax.tree_util.treedef_is_leaf
        # Typed PRNG keys cross as their uint32 data: wrapped again for the function, unwrapped from its
        # output.
        self.wrap_key_data: Callable[..., Any] = jax.random.wrap_key_data
        self.key_data: Callable[[Any], Any] = jax.random.key_data
        self.key_impl: Callable[[Any], Any] = jax.random.key_impl
        self.issubdtype: Callable[[Any, Any], bool] = jnp.issubdtype
        self.prng_key: Any = jax.dtypes.prng_key
        self.config_update: Callable[[str, Any], None] = jax.config.update
        self.config = {key: getattr(jax.config, key) for key in CONFIG_KEYS if hasattr(jax.config, key)}
        self.errors = jax.errors
        self.debug_primitives = (debugging.debug_print_p, debugging.debug_callback_p)
        self.debug_callback_p = debugging.debug_callback_p
        self.ordered_debug_effect = debugging.ordered_debug_effect
        #: The autodiff seed scaling of the ``require_autodiff`` rule (``sandbox.inside.autodiff``).
        self.seeds = SeedScaler()
        _share_ir_context()
        _leave_judge_frames_out()

    def warm_up(self, *, child: bool = False) -> list[str]:
        """Pay the first-use costs of tracing and lowering now, not on the user's clock; the names of the
        programs traced and lowered.

        The zygote (and a tracer started on its own) traces and lowers every program of ``WARM_PROGRAMS``,
        fixed code of ours in the shapes of typical submissions (our signature and skeleton code, pytree
        utilities, ``jax.tree`` maps, casts, reductions, a scan; float32, bfloat16 and weak scalars). Each
        goes through a fresh wrapper under a fresh ``jit``, exactly as ``Tracer.export_one`` does with the
        user's function, so every cache JAX keys on the function misses and its whole path runs; the
        warm-up's own jitted functions are garbage afterwards, and nothing a job uses depends on them.
        Lowering needs no XLA backend, so this starts none, nor any thread: the zygote warms up before it
        forks (forking after the backend started deadlocks), and raises if a thread appeared all the same.

        A forked tracer (``child``) traces and lowers ``WARM_PROGRAMS[CHILD_WARM]`` once more, again under a
        fresh ``jit``, before a submission's clock starts (``serve_forked``): it shares the zygote's pages
        copy-on-write, and the first trace after a fork pays for copying every page it writes.
        """
        threads = len(os.listdir("/proc/self/task"))  # every thread of the process, Python's or not
        chosen = WARM_PROGRAMS[CHILD_WARM : CHILD_WARM + 1] if child else WARM_PROGRAMS
        for function, args in chosen:
            sig = Signature({"id": -1, "args": args}, [{"name": f"a{i}"} for i in range(len(args))], self)
            jitted = self.jit(make_wrapper(function, sig, True, self, Probe(), 64), keep_unused=True)
            traced = jitted.trace(*sig.avals)
            find_callbacks(traced.jaxpr)
            self.lower.ordered_effects(traced.jaxpr)
            assert self.lower(traced.jaxpr)
        if len(os.listdir("/proc/self/task")) != threads:
            raise RuntimeError("tracing or lowering started a thread: this JAX cannot be forked after it")
        return [function.__name__.strip("_") for function, _ in chosen]

    def use_devices(self, devices: int) -> None:
        """A job of ``devices`` CPU host devices (a problem's ``[sandbox] devices``): what ``jax.devices()``
        gives the submission (so it can build its mesh) and how many partitions programs are lowered for.
        Set before user code runs; the backend starts only if the submission asks for devices."""
        self.lower.devices = devices
        with contextlib.suppress(Exception):  # a backend already started keeps its devices
            self.config_update("jax_num_cpu_devices", devices)

    def use_matmul_precision(self, precision: str) -> None:
        """A job graded at a matrix-product precision (a problem's ``[compare] matmul_precision``): traced
        under it, so every product the submission leaves at its default carries it (``precision_config``
        in the program); also the value ``restore_config`` sets back after user code ran. A product the
        submission gives a precision of its own keeps it: that changes its own result alone."""
        self.config["jax_default_matmul_precision"] = precision
        self.config_update("jax_default_matmul_precision", precision)

    def restore_config(self) -> None:
        for key, value in self.config.items():
            try:
                if getattr(self.jax.config, key) != value:
                    self.config_update(key, value)
            except Exception:  # a value the user made unreadable: set it back anyway
                self.config_update(key, value)

    @contextlib.contextmanager
    def debug_stripped(self, used: list[bool]) -> Iterator[None]:
        """While exporting: ``jax.debug.print``/``callback`` bind to nothing (they cannot be serialized);
        ``used`` records that the function called one."""

        def strip(*args: Any, **kwargs: Any) -> list[Any]:
            # Whether the call keeps program order: jax.debug.print's ``ordered``, a callback's effect.
            effect = kwargs.get("effect")
            used.append(bool(kwargs.get("ordered")) or (effect is not None and effect is ordered_effect))
            return []

        ordered_effect = self.ordered_debug_effect
        for primitive in self.debug_primitives:
            primitive.bind = strip  # type: ignore[method-assign]  # an instance attribute shadows the method
        try:
            yield
        finally:
            for primitive in self.debug_primitives:
                with contextlib.suppress(AttributeError):
                    del primitive.bind

    @contextlib.contextmanager
    def callbacks_watched(self, errors: list[BaseException]) -> Iterator[None]:
        """While printing: the body of every ``jax.debug.callback`` records what it raised."""
        primitive = self.debug_callback_p
        original: Callable[..., Any] = type(primitive).bind

        def bind(*args: Any, callback: Callable[..., Any], **kwargs: Any) -> Any:
            def watched(*values: Any) -> Any:
                try:
                    return callback(*values)
                except BaseException as exc:
                    errors.append(exc)
                    raise

            return original(primitive, *args, callback=watched, **kwargs)

        primitive.bind = bind  # type: ignore[method-assign]
        try:
            yield
        finally:
            with contextlib.suppress(AttributeError):
                del primitive.bind


def _warm_function(tree: Any, scale: Any) -> Any:
    """What a typical submission does: pytree maps, casts, reductions, elementwise math, a dot, a where."""
    jax = sys.modules["jax"]
    jnp = jax.numpy
    leaves = jax.tree_util.tree_leaves(tree)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    factor = jnp.minimum(1.0, scale / jnp.maximum(norm, 1e-30))
    scaled = jax.tree_util.tree_map(lambda g: (g * factor).astype(g.dtype), tree)
    first = leaves[0]
    extra = jnp.where(first > 0, jnp.abs(first), -first) + jnp.dot(first, first) + jnp.mean(leaves[1])
    return {"scaled": scaled, "norm": norm, "extra": (extra, jnp.exp(-first), jnp.max(first))}


def _warm_tree_function(grads: Any, lr: Any) -> Any:
    """The most common submission: ``jax.tree`` leaves and maps over a nested tree with a float32 scalar
    leaf, float32 squares and sums, a scale, casts back. A forked tracer traces this one again."""
    jax = sys.modules["jax"]
    jnp = jax.numpy
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in leaves))
    scale = jnp.minimum(1.0, lr / norm)
    moved = jax.tree.map(lambda g, v: (g.astype(jnp.float32) * scale - lr * v).astype(g.dtype), grads, grads)
    return moved, {"norm": norm.astype(jnp.float32)}


def _warm_loop_function(xs: Any, lr: Any) -> Any:
    """Less common, not rare: a scan, cumulative and arg reductions, reshapes, clips, an integer cast."""
    jax = sys.modules["jax"]
    jnp = jax.numpy

    def step(carry: Any, x: Any) -> Any:
        return carry * lr + x, jnp.tanh(carry * x)

    last, ys = jax.lax.scan(step, jnp.zeros((), jnp.float32), xs[0].reshape(-1).astype(jnp.float32))
    index = jnp.argmax(ys).astype(jnp.int32)
    return last, jnp.cumsum(ys), index, jnp.clip(xs[1], -lr, lr), jnp.linalg.norm(xs[1], axis=-1)


def _aval(dtype: str, *shape: int) -> dict[str, Any]:
    return {"aval": {"dtype": dtype, "shape": list(shape)}}


_LEAF4 = _aval("float32", 4)

#: The warm-up programs (``Captured.warm_up``): trusted functions of ours and their signatures' arguments,
#: as the judge sends a job's. Never the user's code.
WARM_PROGRAMS: list[tuple[Callable[..., Any], list[dict[str, Any]]]] = [
    (
        _warm_function,
        [
            {"tree": {"dict": [["a", _aval("float32", 3)], ["b", {"list": [_aval("bfloat16", 2, 2)]}]]}},
            {"number": True},
        ],
    ),
    (
        _warm_tree_function,
        [
            {
                "tree": {
                    "dict": [
                        ["b", _aval("float32")],
                        ["layers", {"list": [{"dict": [["w", _aval("float32", 2, 2)]]}, _LEAF4]}],
                        ["h", _aval("bfloat16", 3)],
                    ]
                }
            },
            {"number": True},
        ],
    ),
    (
        _warm_loop_function,
        [{"tree": {"list": [_aval("bfloat16", 2, 3), _aval("float32", 4, 2)]}}, {"number": True}],
    ),
]

#: The program a forked tracer warms again (``WARM_PROGRAMS`` index): the most common kind of submission.
CHILD_WARM = 1


def freeze_heap() -> None:
    """Move every object alive now (JAX and the judge's own code, before any user code) out of the
    collector's reach (``gc.freeze``). A full collection in a tracer then walks only what the submission
    made: measured here, 100-120 ms of CPU per full collection before, under 1 ms after, and in a child of
    the zygote no collection touches (and so copies) the pages it shares with the zygote. A leaked tracer
    is still found (``Probe.leaked``): it and the trace it holds are made after the freeze."""
    gc.collect()
    gc.freeze()


def _share_ir_context() -> None:
    """Make JAX lower every program of this process in one MLIR context.

    ``jax._src.interpreters.mlir.make_ir_context`` builds a context and loads every dialect on each call;
    lowering one signature through ``jit(...).lower`` or ``jax.export`` made one or two, ~10 ms of the ~40 ms
    an export cost here (measured: 41 -> 20 ms per signature). The modules are the same (their text without
    locations is identical); the context's uniqued attributes stay until the tracer exits, which bounds them
    by one submission. The context is single-threaded (MLIR would otherwise start a thread pool to verify a
    module, and the zygote must not have threads when it forks). The zygote makes it and its children
    inherit it; a tracer started on its own makes it when it first lowers.
    """
    from jax._src.interpreters import mlir

    if getattr(mlir.make_ir_context, "judge_shared", False):
        return
    make = mlir.make_ir_context
    shared: list[Any] = []

    def shared_context() -> Any:
        if not shared:
            context = make()
            context.enable_multithreading(False)
            shared.append(context)
        return shared[0]

    shared_context.judge_shared = True  # type: ignore[attr-defined]
    shared_context.unshared = make  # type: ignore[attr-defined]  # JAX's own, for a test of another role
    mlir.make_ir_context = shared_context


def _leave_judge_frames_out() -> None:
    """Keep this package's own frames (the tracer's loop, the wrapper, the lowering) out of the locations
    JAX writes into a program, as it keeps its own: a program's locations then hold the submission's frames
    only. So two traces of a stateless function give the same bytes wherever the tracer called them from
    (a signature traced for ``program`` and again for ``retrace``), which the monitor takes as the same
    program without compiling it again. Locations never change what a program computes (the executor strips
    them from its cache key); error tracebacks are not affected (JAX filters those by another list)."""
    from jax._src import source_info_util

    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    if here not in source_info_util._exclude_paths:
        source_info_util.register_exclusion(here)


# ------------------------------------------------------------------------------------------ user lines


def _user_frame(exc: BaseException) -> traceback.FrameSummary | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = [f for f in traceback.extract_tb(current.__traceback__) if f.filename == FILENAME]
        if frames:
            return frames[-1]
        current = current.__cause__ or current.__context__
    return None


def where(exc: BaseException) -> str:
    frame = _user_frame(exc)
    if frame is None or frame.lineno is None:
        return ""
    line = (frame.line or "").strip()
    return f"line {frame.lineno}: `{line}`\n" if line else f"line {frame.lineno}\n"


def first_line(exc: BaseException, limit: int = 400) -> str:
    try:
        text = str(exc).strip().splitlines()
    except Exception:
        text = []
    head = text[0] if text else ""
    return f"{type(exc).__name__}: {head[:limit]}" if head else type(exc).__name__


def _trace_advice(exc: BaseException, errors: Any) -> str | None:
    """The ADVICE key of errors that mean 'this function cannot be traced', or None for other errors."""
    if isinstance(exc, errors.TracerBoolConversionError):
        return "bool"
    if isinstance(exc, errors.TracerArrayConversionError):
        return "numpy"
    if isinstance(exc, errors.TracerIntegerConversionError):
        return "int"
    if isinstance(exc, errors.NonConcreteBooleanIndexError):
        return "bool_index"
    if isinstance(exc, errors.ConcretizationTypeError):
        return "concrete"
    if isinstance(exc, errors.UnexpectedTracerError) or _is_leak(exc):
        return "leak"
    if isinstance(exc, TypeError) and "immutable and do not support in-place" in str(exc):
        return "immutable"  # x[idx] = y on a JAX array: the function cannot be traced as written
    return None


def _is_leak(exc: BaseException) -> bool:
    text = str(exc)
    return text.startswith("Leaked trace") or "Too many leaves for PyTreeDef" in text


def classify(exc: BaseException, errors: Any, *, at: str) -> CaseFailure:
    """Turn an exception from user code into a verdict with a message that names the user's line."""
    if isinstance(exc, CaseFailure):
        return exc
    frame = _user_frame(exc)
    line, error = (frame.lineno if frame is not None else None), type(exc).__name__[:60]
    place = where(exc)
    advice = _trace_advice(exc, errors)
    if advice is not None:
        return CaseFailure(
            "trace_error",
            f"{place}{ADVICE[advice]}\n({first_line(exc)})",
            advice=advice,
            line=line,
            error=error,
        )
    if isinstance(exc, NotImplementedError) and "host_callbacks" in str(exc):
        return CaseFailure(
            "trace_error", f"{place}{ADVICE['host_callback']}", advice="host_callback", line=line, error=error
        )
    if isinstance(exc, MemoryError) or "RESOURCE_EXHAUSTED" in str(exc) or "Out of memory" in str(exc):
        return CaseFailure(
            "memory_limit_exceeded",
            f"{place}ran out of memory {at} ({first_line(exc, 200)})",
            advice="memory",
            line=line,
            error=error,
        )
    if isinstance(exc, SystemExit):
        return CaseFailure(
            "runtime_error",
            f"{place}the code called sys.exit({exc.code!r}) {at}",
            advice="exit",
            line=line,
            error=error,
        )
    if isinstance(exc, RecursionError):
        return CaseFailure(
            "runtime_error",
            f"{place}RecursionError: maximum recursion depth exceeded {at}",
            advice="recursion",
            line=line,
            error=error,
        )
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return CaseFailure(
            "runtime_error",
            f"{place}{ADVICE['thread']} ({first_line(exc, 200)}, {at})",
            advice="thread",
            line=line,
            error=error,
        )
    return CaseFailure("runtime_error", f"{place}{first_line(exc)}", line=line, error=error)


# ------------------------------------------------------------------------------------------ loading


MENU_FILENAME = "problem_functions.py"


def load_menu(source: str | None) -> dict[str, Callable[..., Any]]:
    """The problem's menu module (problem code, never the reference) executed in a module of its own, not
    registered in ``sys.modules``: its public callables by name, for ``function`` arguments."""
    if not source:
        return {}
    module = types.ModuleType("problem_functions")
    module.__file__ = MENU_FILENAME
    linecache.cache[MENU_FILENAME] = (len(source), None, source.splitlines(True), MENU_FILENAME)
    exec(compile(source, MENU_FILENAME, "exec", dont_inherit=True), module.__dict__)
    return {k: v for k, v in vars(module).items() if callable(v) and not k.startswith("_")}


def load_function(code: str, name: str) -> Callable[..., Any]:
    """Import the submission as module ``solution`` and return its function, or raise CaseFailure."""
    code = code.removeprefix("\ufeff")  # a byte-order mark, read the way Python reads a source file
    if "\x00" in code:
        line = code.count("\n", 0, code.index("\x00")) + 1
        raise CaseFailure("compile_error", f"line {line}: the code contains a NUL byte")
    try:
        compiled = compile(code, FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        text = (exc.text or "").rstrip("\n").strip()
        shown = f": `{text}`" if text else ""
        raise CaseFailure("compile_error", f"line {exc.lineno}{shown}\nSyntaxError: {exc.msg}") from None
    except ValueError as exc:
        raise CaseFailure("compile_error", f"the code cannot be compiled: {exc}") from None
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    module = types.ModuleType("solution")
    module.__file__ = FILENAME
    sys.modules["solution"] = module
    exec(compiled, module.__dict__)
    if name not in module.__dict__:
        defined = sorted(
            k
            for k, v in module.__dict__.items()
            if callable(v) and not k.startswith("_") and getattr(v, "__module__", None) == "solution"
        )
        hint = f"; it defines {', '.join(defined)}" if defined else ""
        raise CaseFailure("compile_error", f"the code does not define a function named `{name}`{hint}")
    fn = module.__dict__[name]
    if not callable(fn):
        raise CaseFailure(
            "compile_error",
            f"`{name}` is a {type(fn).__name__}, not a function: define it with `def {name}(...)`",
        )
    return fn  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------ mutation


def _path(root: str, keys: list[Any]) -> str:
    return root + "".join(f'["{k}"]' if isinstance(k, str) else f"[{k!r}]" for k in keys)


Snapshot = list[tuple[list[Any], Any, Any]]


def snapshot(tree: Any) -> Snapshot:
    """Every container of an argument with a copy of what it held: (path keys, container, contents)."""
    out: Snapshot = []
    _snapshot(tree, [], out)
    return out


def _snapshot(node: Any, keys: list[Any], out: Snapshot) -> None:
    # Module level, not a recursive closure (a reference cycle would keep tracers alive; see
    # sandbox.shared.tree).
    if isinstance(node, dict):
        out.append((keys, node, {k: id(v) for k, v in node.items()}))
        for k, v in node.items():
            _snapshot(v, [*keys, k], out)
    elif isinstance(node, list):
        out.append((keys, node, [id(v) for v in node]))
        for i, v in enumerate(node):
            _snapshot(v, [*keys, i], out)


def find_mutation(root: str, snap: Snapshot) -> str | None:
    """The first change to an argument's containers, or None. Key order alone is not a change."""
    for keys, container, before in snap:
        here = _path(root, keys)
        if isinstance(container, dict):
            now = {k: id(v) for k, v in container.items()}
            if now == before:
                continue
            added = [k for k in now if k not in before]
            removed = [k for k in before if k not in now]
            if added:
                return f"{here}: key {added[0]!r} was added to the input dict"
            if removed:
                return f"{here}: key {removed[0]!r} was removed from the input dict"
            changed = [k for k in before if now[k] != before[k]]
            if changed:
                return f"{_path(root, [*keys, changed[0]])} was replaced inside the input dict"
            continue
        now_ids = [id(v) for v in container]
        if now_ids == before:
            continue
        if len(now_ids) != len(before):
            return f"{here}: the input list changed length from {len(before)} to {len(now_ids)}"
        index = next((i for i, (a, b) in enumerate(zip(before, now_ids, strict=True)) if a != b), None)
        if index is not None:
            return f"{_path(root, [*keys, index])} was replaced inside the input list"
    return None


#: Most characters of each program text a public signature's view carries.
VIEW_MAX_CHARS = 1 << 16


def _program_view(jaxpr: Any, lower: Lowerer, module: Any = None) -> dict[str, str] | None:
    """The jaxpr as JAX prints it and the StableHLO text of ``module`` (default: the one just lowered),
    capped; None if printing fails (the view is extra: the program is graded without it)."""
    try:
        return {
            "jaxpr": str(jaxpr)[:VIEW_MAX_CHARS],
            "stablehlo": lower.text(VIEW_MAX_CHARS, module) if module is not None else "",
        }
    except Exception:
        return None


#: A public signature whose program text is still to be printed: (signature id, jaxpr, lowered module).
PendingView = tuple[int, Any, Any]


def find_callbacks(jaxpr: Any, found: set[str] | None = None, depth: int = 0) -> set[str]:
    """Names of host-callback primitives anywhere in a (closed) jaxpr, sub-jaxprs included."""
    found = set() if found is None else found
    inner = getattr(jaxpr, "jaxpr", None)
    if inner is not None and not hasattr(jaxpr, "eqns"):
        return find_callbacks(inner, found, depth)
    if depth > 50:
        return found
    for eqn in getattr(jaxpr, "eqns", ()):
        if eqn.primitive.name in HOST_CALLBACKS:
            found.add(eqn.primitive.name)
        for value in eqn.params.values():
            for sub in value if isinstance(value, list | tuple) else (value,):
                if hasattr(sub, "eqns") or hasattr(sub, "jaxpr"):
                    find_callbacks(sub, found, depth + 1)
    return found


# ------------------------------------------------------------------------------------------ signatures


class Signature:
    """One distinct abstract signature: how to rebuild the arguments from the program's flat inputs."""

    def __init__(
        self,
        body: dict[str, Any],
        arg_specs: list[dict[str, Any]],
        cap: Captured,
        menu: dict[str, Callable[..., Any]] | None = None,
    ) -> None:
        self.id: int = int(body["id"])
        #: The problem's menu functions, for ``{"function": name}`` arguments (passed as they are).
        self.menu = menu or {}
        self.args: list[Any] = list(body["args"])
        self.names = [str(a["name"]) for a in arg_specs]
        self.cap = cap
        self.avals: list[Any] = []
        for arg in self.args:
            self._collect(arg)

    def _collect(self, arg: dict[str, Any]) -> None:
        if "number" in arg:
            self.avals.append(self.cap.shape_dtype((), self.cap.jnp.float32, weak_type=True))
        elif "key" in arg:
            # The program's input is the key's uint32 data, (*shape, words); ``build`` wraps it as a key.
            body = arg["key"]
            shape = (*[int(n) for n in body["shape"]], KEY_IMPLS[str(body["impl"])])
            self.avals.append(self.cap.shape_dtype(shape, DTYPES["uint32"]))
        elif "tree" in arg:
            self._collect_node(arg["tree"])

    def _collect_node(self, node: dict[str, Any]) -> None:
        ((tag, body),) = node.items()
        if tag == "aval":
            self.avals.append(self.cap.shape_dtype(tuple(body["shape"]), DTYPES[body["dtype"]]))
        elif tag == "dict":
            for _, child in body:
                self._collect_node(child)
        else:
            for child in body:
                self._collect_node(child)

    def build(self, leaves: list[Any]) -> list[Any]:
        """The function's arguments from the flat leaves (tracers or arrays), in the signature's order."""
        it = iter(leaves)
        out: list[Any] = []
        for arg in self.args:
            if "number" in arg:
                out.append(next(it))
            elif "static" in arg:
                out.append(static_value(arg))
            elif "function" in arg:
                out.append(self.menu[str(arg["function"])])
            elif "key" in arg:
                out.append(self.cap.wrap_key_data(next(it), impl=str(arg["key"]["impl"])))
            else:
                out.append(_build_node(arg["tree"], it))
        return out


def static_value(arg: dict[str, Any]) -> Any:
    """A static argument as the user's function receives it: a Python float, int, bool or str as sent, and
    a tuple of the items as sent for ``{"static": [...], "tuple": true}`` (JSON has no tuple; a static
    value must be hashable): ints for an ``int_tuple``, floats for a ``float_tuple``.

    Each distinct static value is its own signature, traced and exported on its own, which is what
    ``jax.jit(..., static_argnames=...)`` does with it: the function sees the plain Python value."""
    value = arg["static"]
    if arg.get("tuple"):
        return tuple(value)
    return value


def _build_node(node: dict[str, Any], it: Iterator[Any]) -> Any:
    ((tag, body),) = node.items()
    if tag == "aval":
        return next(it)
    if tag == "dict":
        return {key: _build_node(child, it) for key, child in body}
    return [_build_node(child, it) for child in body]


# ------------------------------------------------------------------------------------------ outputs


class _Out:
    """A placeholder for the program's i-th output in a host skeleton."""

    def __init__(self, index: int) -> None:
        self.index = index


class _KeyOut(_Out):
    """A placeholder for an output that is a typed key array: the program returns its uint32 data."""

    def __init__(self, index: int, impl: str) -> None:
        super().__init__(index)
        self.impl = impl


def skeleton_node(tree: Any) -> Any:
    """A host skeleton (from ``to_host`` with ``_Out`` leaves) as a wire node."""
    if isinstance(tree, _KeyOut):
        return {"key": {"impl": tree.impl, "out": tree.index}}
    if isinstance(tree, _Out):
        return {"out": tree.index}
    if isinstance(tree, dict):
        return {"dict": [[encode_key(k), skeleton_node(v)] for k, v in tree.items()]}
    if isinstance(tree, list):
        return {"list": [skeleton_node(v) for v in tree]}
    if isinstance(tree, tuple):
        return {"tuple": [skeleton_node(v) for v in tree]}
    if tree is None:
        return {"none": True}
    if isinstance(tree, OtherNode):
        return {"node": {"type": tree.type_name, "children": [skeleton_node(c) for c in tree.children]}}
    assert isinstance(tree, BadLeaf)
    return {"bad": tree.type_name}


class Probe:
    """What one traced call saw: the output skeleton, a mutation, and (weakly) the trace it ran in."""

    def __init__(self) -> None:
        self.skeleton: Any = None
        self.mutation: str | None = None
        self.trace: weakref.ref[Any] | None = None

    def leaked(self, tracer_type: type) -> bool:
        """A tracer of the finished trace is still referenced (kept in a global, a cache, a closure).

        What ``jax.checking_leaks()`` finds, without the referrer walk it spends seconds on to explain it: a
        trace that outlives the call (after collecting cycles) is held by a tracer that escaped.
        """
        if self.trace is None or self.trace() is None:
            return False
        gc.collect()
        trace = self.trace()
        return trace is not None and any(isinstance(r, tracer_type) for r in gc.get_referrers(trace))


def make_wrapper(
    fn: Callable[..., Any],
    sig: Signature,
    check_inputs: bool,
    cap: Captured,
    probe: Probe,
    max_depth: int,
    gradient: dict[str, Any] | None = None,
    autodiff: dict[str, Any] | None = None,
) -> Callable[..., list[Any]]:
    """The function the captured jit traces: flat leaves in, flat output leaves out (skeleton aside).

    With ``gradient`` (``{"wrt": [arg index], "names": [arg name], "cotangent": kind}``) the program returns
    ``(output, {name: gradient})`` (``sandbox.shared.transforms.with_gradient``), computed in the same trace.
    With ``autodiff`` (``{"scale": factor, "scaled_first": bool}``, the signature's plan) it returns
    ``(output, output again with every autodiff seed scaled)`` (``sandbox.inside.autodiff``).
    """

    def is_array(x: Any) -> bool:
        return isinstance(x, cap.tracer_type | cap.array_type | np.ndarray | np.generic | float | int)

    def children(x: Any) -> list[Any] | None:
        flat, treedef = cap.tree_flatten(x, is_leaf=lambda y: y is not x)
        return None if cap.treedef_is_leaf(treedef) else list(flat)

    def wrapper(*leaves: Any) -> list[Any]:
        if leaves and hasattr(leaves[0], "_trace"):
            probe.trace = weakref.ref(leaves[0]._trace)
        args = sig.build(list(leaves))
        snaps = [(n, snapshot(a)) for n, a in zip(sig.names, args, strict=True)] if check_inputs else []
        if autodiff is not None:
            out = with_autodiff_twice(
                fn, args, cap.seeds, float(autodiff["scale"]), _silenced, autodiff.get("scaled_first") is True
            )
        elif gradient is None:
            out = fn(*args)
        else:
            out = with_gradient(
                fn,
                args,
                [int(i) for i in gradient["wrt"]],
                [str(n) for n in gradient["names"]],
                str(gradient["cotangent"]),
                vjp=cap.vjp,
                tree_map=cap.tree_map,
                jnp=cap.jnp,
            )
        for name, snap in snaps:
            probe.mutation = probe.mutation or find_mutation(name, snap)
        recorded: list[Any] = []

        def record(x: Any) -> _Out | BadLeaf:
            dtype = getattr(x, "dtype", None)
            if dtype is not None and cap.issubdtype(dtype, cap.prng_key):
                impl = str(cap.key_impl(x))
                if impl not in KEY_IMPLS:
                    return BadLeaf(f"PRNG key array of implementation {impl[:40]}")
                recorded.append(cap.key_data(x))
                return _KeyOut(len(recorded) - 1, impl)
            recorded.append(x)
            return _Out(len(recorded) - 1)

        try:
            host = to_host(out, is_array, children, convert=record, max_depth=max_depth)
        except TreeTooDeep as exc:
            raise CaseFailure("wrong_answer", str(exc), reason="structure", advice="output_depth") from None
        probe.skeleton = skeleton_node(host)
        return recorded

    return wrapper


# ------------------------------------------------------------------------------------------ the job


class Tracer:
    """Serves one job: loads the code, exports one program per signature, prints, retraces."""

    def __init__(self, cap: Captured, channel: int, stdin: BinaryIO) -> None:
        self.cap = cap
        self.channel = channel
        self.stdin = stdin

    def send(self, message: dict[str, Any], blobs: list[bytes] | None = None) -> None:
        write_frame(self.channel, message, blobs or [])

    def serve(self) -> None:
        job = read_frame(self.stdin, JOB_LIMITS)
        message = job.message
        self.sections = message.get("output_sections")
        _section(self.sections, "load")
        self.arg_specs: list[dict[str, Any]] = list(message["args"])
        self.check_inputs = bool(message.get("check_inputs_unchanged"))
        self.max_depth = int(message.get("max_output_depth", 64))
        gradient = message.get("gradient")
        self.gradient: dict[str, Any] | None = gradient if isinstance(gradient, dict) else None
        autodiff = message.get("autodiff")
        self.autodiff: dict[str, Any] | None = autodiff if isinstance(autodiff, dict) else None
        devices = message.get("devices")
        if isinstance(devices, int) and devices > 1:
            self.cap.use_devices(devices)
        precision = message.get("matmul_precision")
        if precision in MATMUL_PRECISIONS:
            self.cap.use_matmul_precision(str(precision))
        try:
            self.menu = load_menu(message.get("functions"))
        except BaseException as exc:
            self.send(
                {
                    "type": "load_error",
                    "verdict": "runtime_error",
                    "message": f"the problem's function menu could not be loaded: {first_line(exc)}",
                }
            )
            return
        finally:
            self.cap.restore_config()
        try:
            self.fn = load_function(str(message["code"]), str(message["function"]))
        except BaseException as exc:
            failure = classify(exc, self.cap.errors, at="while loading the code")
            if failure.verdict == "runtime_error":
                failure.message = f"{failure.message}\n(raised while loading the code, before any case ran)"
            self.send({"type": "load_error", "verdict": failure.verdict, "message": failure.message})
            return
        finally:
            self.cap.restore_config()
        self.send({"type": "loaded"})
        signatures: dict[int, Signature] = {}
        debug_sigs: set[int] = set()
        views: list[PendingView] = []
        for body in message["signatures"]:
            sig = Signature(body, self.arg_specs, self.cap, self.menu)
            signatures[sig.id] = sig
            _section(self.sections, f"trace {sig.id}")
            if self.export_one(sig, "program", views=views):
                debug_sigs.add(sig.id)
        # Printed once every public program is on its way: the executor compiles them meanwhile.
        self.send_views(views)
        self.print_runs(job, signatures, debug_sigs)
        _end_public_output(message.get("output_mark"))
        self.send({"type": "public_done"})
        more = read_frame(self.stdin, JOB_LIMITS).message
        for body in more.get("signatures", []):
            sig = Signature(body, self.arg_specs, self.cap, self.menu)
            signatures[sig.id] = sig
            self.export_one(sig, "program")
        retrace = more.get("retrace")
        if isinstance(retrace, int) and retrace in signatures:
            _section(self.sections, f"retrace {retrace}")
            self.export_one(signatures[retrace], "retrace")
        self.send({"type": "done"})

    def export_one(self, sig: Signature, kind: str, *, views: list[PendingView] | None = None) -> bool:
        """Trace and export one signature through a fresh wrapper; send it. True if it used jax.debug.
        ``views`` (public signatures only, before anything hidden arrives): where to keep the traced program
        for ``send_views``, which prints it as text for the learner to read."""
        probe = Probe()
        used: list[bool] = []
        wrapper = make_wrapper(
            self.fn,
            sig,
            self.check_inputs,
            self.cap,
            probe,
            self.max_depth,
            self.gradient,
            self._autodiff(sig),
        )
        started = time.perf_counter()
        try:
            jitted = self.cap.jit(wrapper, keep_unused=True)
            with self.cap.debug_stripped(used):
                traced = jitted.trace(*sig.avals)
                if probe.leaked(self.cap.tracer_type):
                    raise CaseFailure("trace_error", ADVICE["leak"], advice="leak")
                callbacks = find_callbacks(traced.jaxpr)
                if callbacks:
                    raise CaseFailure(
                        "trace_error",
                        f"the function calls {', '.join(sorted(callbacks))}. {ADVICE['host_callback']}",
                        advice="host_callback",
                    )
                effects = self.cap.lower.ordered_effects(traced.jaxpr)
                if effects:
                    raise CaseFailure(
                        "trace_error",
                        f"the function has ordered side effects ({', '.join(map(str, effects))}), which a "
                        "graded function cannot have: return every result instead",
                    )
                module = self.cap.lower(traced.jaxpr)
                if views is not None:
                    views.append((sig.id, traced.jaxpr, getattr(self.cap.lower, "last", None)))
        except BaseException as exc:
            failure = classify(exc, self.cap.errors, at="while tracing the function")
            failed = f"{kind}_failed" if kind == "retrace" else "trace_failed"
            self.send({"type": failed, "sig": sig.id, **failure.wire()})
            return False
        finally:
            self.cap.restore_config()
        self.send(
            {
                "type": kind,
                "sig": sig.id,
                "skeleton": probe.skeleton,
                "debug": bool(used),
                # Two or more debug calls, one of them free to run in any order (not ordered=True).
                "debug_unordered": len(used) > 1 and not all(used),
                "mutation": probe.mutation,
                "module": 0,
                "trace_ms": round((time.perf_counter() - started) * 1000, 3),
            },
            [module],
        )
        return bool(used)

    def _autodiff(self, sig: Signature) -> dict[str, Any] | None:
        """The signature's autodiff plan (the ``require_autodiff`` rule), or None; a rule without a plan
        for this signature is the judge's mistake, and traces it unscaled (the judge then rejects it)."""
        if self.autodiff is None:
            return None
        plan = self.autodiff.get("sigs", {}).get(str(sig.id))
        return plan if isinstance(plan, dict) and isinstance(plan.get("scale"), int | float) else None

    def send_views(self, views: list[PendingView]) -> None:
        """The public programs as text (the jaxpr as JAX prints it and the StableHLO), one message for all;
        a program that cannot be printed is left out."""
        shown: list[dict[str, Any]] = []
        for sig_id, jaxpr, module in views:
            view = _program_view(jaxpr, self.cap.lower, module)
            if view is not None:
                shown.append({"sig": sig_id, **view})
        self.send({"type": "views", "views": shown})

    def print_runs(self, job: Frame, signatures: dict[int, Signature], debug_sigs: set[int]) -> None:
        """Run the function on public and custom values of signatures that used jax.debug, for its prints."""
        for item in job.message.get("print_cases", []):
            sig = signatures.get(item.get("sig"))
            if sig is None or sig.id not in debug_sigs:
                continue
            try:
                leaves = decode_leaves(item["leaves"], job)
            except Exception as exc:  # the judge's own frame: never expected
                print(f"[judge] cannot read the values to print with: {exc}", file=sys.stderr)
                continue
            index = item.get("index")
            _section(self.sections, f"run {index}" if isinstance(index, int) else "other")
            self.print_one(sig, leaves, str(item.get("name", "")))

    def print_one(self, sig: Signature, leaves: list[Any], name: str) -> None:
        probe = Probe()
        errors: list[BaseException] = []
        wrapper = make_wrapper(self.fn, sig, False, self.cap, probe, self.max_depth, self.gradient)
        # JAX logs a failing callback with its own traceback; the message below names the user's line.
        debug_log = logging.getLogger("jax._src.debugging")
        level = debug_log.level
        debug_log.setLevel(logging.CRITICAL)
        try:
            with self.cap.callbacks_watched(errors):
                with _silenced():  # the Python prints of this trace were shown when the program was exported
                    traced = self.cap.jit(wrapper, keep_unused=True).trace(*sig.avals)
                    compiled = traced.lower().compile()
                # A number argument traces as a weakly typed scalar: pass it as the Python float it is.
                values = [
                    float(x) if getattr(aval, "weak_type", False) else self.cap.device_put(x)
                    for x, aval in zip(leaves, sig.avals, strict=True)
                ]
                self.cap.block_until_ready(compiled(*values))
        except BaseException as exc:
            sys.stdout.flush()
            if errors:
                culprit = errors[0]
                place = where(culprit).strip() or "in the callback"
                print(
                    f"[judge] case {name}: jax.debug.callback raised {first_line(culprit)}\n  at {place}",
                    file=sys.stderr,
                    flush=True,
                )
            else:
                print(
                    f"[judge] case {name}: running the function to show its jax.debug output failed: "
                    f"{where(exc).strip()} {first_line(exc)}".replace("  ", " "),
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            debug_log.setLevel(level)
            self.cap.restore_config()
            sys.stdout.flush()


def _section(token: Any, label: str) -> None:
    """Write a section mark into the output (``sandbox.shared.output_mark.section_mark``): what follows it was
    printed while ``label`` (``load``, ``trace <sig>``, ``run <case index>``) ran. The judge splits the
    public output at these marks to show it per case; a forged one only mislabels the forger's own prints."""
    if not isinstance(token, str) or not token:
        return
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        write_all(1, section_mark(token, label))


def _end_public_output(mark: Any) -> None:
    """Write the judge's mark into the output where the public phase ends, after every print so far
    (``sandbox.shared.output_mark``): the judge shows what precedes it and waits for it before anything
    hidden."""
    if not isinstance(mark, str) or not mark:
        return
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    with contextlib.suppress(OSError):  # fd 1 closed by the submission: the judge cuts at its timeout
        write_all(1, mark.encode("ascii", "replace"))


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Send fds 1 and 2 to /dev/null for a while (Python prints of a trace that already printed)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


# ------------------------------------------------------------------------------------------ entry points


def _run(cap: Captured, channel: int) -> None:
    # Keep the judge's code out of reach of the submission's imports (what it needs is imported already).
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    write_frame(channel, {"type": "ready", "pid": os.getpid(), "jax": cap.jax.__version__})
    stdin = os.fdopen(0, "rb", buffering=0, closefd=False)
    with contextlib.suppress(EOFError):  # the judge went away: nothing to report to
        Tracer(cap, channel, stdin).serve()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(0)


def serve_forked(cap: Captured, channel: int) -> None:
    """Entry point of a tracer forked by the zygote (fds 0-3 set up, already confined). Never returns.

    It traces and lowers one warm-up program once more, under a fresh ``jit``, before it reports ready: the
    zygote warmed that machinery, but this process shares the zygote's pages copy-on-write, and the first
    trace after a fork pays for copying every page it writes. Doing it here, while the tracer waits in the
    pool, keeps that cost off the first program of a submission. A fresh ``jit`` because a re-trace of the
    zygote's own jitted function hit JAX's caches and copied too little (global-norm-clipping's first
    signature still copied ~870 pages, ~9 ms of CPU; after a fresh one ~250 pages, ~6 ms). No backend is
    needed until the function runs for its prints."""
    cap.warm_up(child=True)
    _run(cap, channel)


def main() -> None:
    parser = argparse.ArgumentParser(prog="sandbox.inside.tracer")
    parser.add_argument("--result-fd", type=int, required=True)
    opts = parser.parse_args()
    cap = Captured()
    cap.warm_up()
    freeze_heap()
    _run(cap, opts.result_fd)


if __name__ == "__main__":
    main()
