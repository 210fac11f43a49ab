"""Expected outputs: the reference solution run under ``jax.jit`` on the trusted side, cached on disk.

The reference is repository code, so it runs in the judge's own process where user code cannot reach it.
Results are cached per (reference source, case inputs, JAX version, XLA flags) as wire-encoded trees
(one frame of data, never pickle), so a grade usually needs no JAX at all on this side; the judge keeps them
decoded in memory while their files are unchanged (``judge.core.decoded_trees``). The reference's
output goes through ``sandbox.shared.tree.to_host``, the same container rule as the user's (a NamedTuple reads
as a tuple). A reference that raises is the judge's fault: the case is graded ``internal_error``
(``ReferenceFailure``), never blamed on the user.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from judge.core.decoded_trees import TREES
from judge.core.errors import ProblemError, ReferenceFailure
from judge.core.menu import MenuChoice
from judge.core.problems import REPO_ROOT, Case, Problem
from judge.core.trusted_jax import import_file, import_jax, load_reference, to_host
from sandbox.host.command import FAST_COMPILE_XLA_FLAGS
from sandbox.shared import transforms
from sandbox.shared.tree import KeyArray
from sandbox.shared.wire import ProtocolError, dumps_tree

#: Held while the judge's own JAX runs or compiles trusted code (the reference, the known mistakes, their
#: cost figures): one at a time in this process. Shared with ``judge.feedback.mistakes`` and
#: ``judge.feedback.figure_cache``.
JAX_LOCK = threading.Lock()
_MISSING = object()


def cache_dir() -> Path:
    return Path(os.environ.get("JUDGE_CACHE_DIR", REPO_ROOT / ".cache")) / "expected"


@cache
def _jax_version() -> str:
    from importlib.metadata import version

    return f"jax-{version('jax')}-jaxlib-{version('jaxlib')}"


@cache
def _transforms_source() -> str:
    return Path(transforms.__file__).read_text(encoding="utf-8")


def case_key(problem: Problem, case: Case, what: str = "output") -> str:
    """The cache key of one case's expected ``output`` or ``gradient`` (which includes the gradient spec)."""
    parts = [
        _jax_version(),
        # The flags this process compiles with (set before JAX loads, see
        # ``judge.core.trusted_jax.import_jax``): compiler options are part of what a number was computed
        # with.
        os.environ.get("XLA_FLAGS", FAST_COMPILE_XLA_FLAGS),
        problem.spec.function,
        problem.reference_source,
        case.dtype,
        case.args_json,
    ]
    if problem.menu_source is not None:
        parts.append(problem.menu_source)
    if problem.spec.sandbox.devices > 1:  # the reference ran on that many devices
        parts.append(f"devices={problem.spec.sandbox.devices}")
    if problem.spec.compare.matmul_precision is not None:  # what its products were computed at
        parts.append(f"matmul_precision={problem.spec.compare.matmul_precision}")
    if what == "magnitude":
        parts += [what, problem.spec.compare.magnitude_function or ""]
    elif what != "output":
        gradient = problem.spec.gradient
        # The code that builds the cotangent and the vjp program is part of what a gradient is.
        parts += [what, gradient.model_dump_json() if gradient is not None else "", _transforms_source()]
    # Memoized on the case (a grading asks for each case's keys several times: outputs, layouts,
    # magnitudes): every part is a string made once per process, problem or case, whose hash Python keeps,
    # so a lookup costs a tuple's hash where a digest is a pass over the reference's source and the case's
    # arguments. The memo lives and dies with the case (a frozen dataclass: its __dict__ is written directly).
    key = tuple(parts)
    memo: dict[tuple[str, ...], str] = case.__dict__.setdefault("_case_keys", {})
    known = memo.get(key)
    if known is None:
        digest = hashlib.sha256()
        for part in key:
            digest.update(part.encode())
            digest.update(b"\0")
        known = memo[key] = digest.hexdigest()[:32]
    return known


def reference_argument(jax: Any, value: Any) -> Any:
    """A traced input on the device as the reference receives it: a ``KeyArray`` as the typed key its data
    wraps (``jax.random.wrap_key_data``), anything else as is."""
    if isinstance(value, KeyArray):
        return jax.random.wrap_key_data(jax.device_put(value.data), impl=value.impl)
    return jax.device_put(value)


def clear_jax_caches() -> None:
    """Forget every traced and compiled function, so the next reference run traces and compiles afresh."""
    import_jax().clear_caches()


def reference_outputs(problem: Problem, cases: Sequence[Case], what: str = "output") -> list[Any]:
    """Reference output (or, with ``what="gradient"``, the gradient the problem checks; with
    ``what="magnitude"``, the reference module's magnitude function,
    ``judge.core.spec.CompareSpec.magnitude``) per case, in order, under one ``jax.jit`` (no cache): a
    ReferenceFailure (with the reference's own exception as its cause) where the reference raised, so one bad
    case spoils no other."""
    if problem.spec.sandbox.devices > 1 and what == "output":
        # On the problem's devices: here when this process has them, else in a child that does.
        from judge.core import mesh_reference

        return [r if isinstance(r, ReferenceFailure) else r[0] for r in mesh_reference.run(problem, cases)]
    jax = import_jax()
    try:
        fn = load_reference(problem)
        menu = problem.menu()
    except ReferenceFailure as exc:
        return [exc] * len(cases)
    except ProblemError as exc:
        return [ReferenceFailure(f"the problem's menu module failed: {exc}")] * len(cases)
    if what == "gradient":
        fn = _gradient_of(problem, fn)
    elif what == "magnitude":
        try:
            fn = magnitude_function(problem)
        except ReferenceFailure as exc:
            return [exc] * len(cases)
    # By position: the gradient wrapper keeps the positions, not the names.
    static = tuple(i for i, a in enumerate(problem.spec.args) if not a.traced)
    jitted = jax.jit(fn, static_argnums=static)
    outputs: list[Any] = []
    for case in cases:
        try:
            # Python floats stay floats (weakly typed when traced); static ints and tuples stay Python
            # values; a menu choice becomes its function; arrays and trees move to the device.
            args = call_arguments(jax, problem, case, menu)
            with matmul_precision(problem):
                outputs.append(to_host(jax.block_until_ready(jitted(*args))))
        except Exception as exc:
            failure = ReferenceFailure(
                f"the reference {problem.spec.reference} failed on case {case.name}: "
                f"{type(exc).__name__}: {exc}"
            )
            failure.__cause__ = exc
            outputs.append(failure)
    return outputs


def magnitude_function(problem: Problem) -> Callable[..., Any]:
    """The reference module's magnitude function (``judge.core.spec.CompareSpec.magnitude``)."""
    name = problem.spec.compare.magnitude_function
    module = import_file(str(problem.reference_path), problem.reference_source)
    fn = getattr(module, name or "", None)
    if not callable(fn):
        raise ReferenceFailure(f"{problem.reference_path} does not define the magnitude function `{name}`")
    return fn  # type: ignore[no-any-return]


def expected_magnitudes(problem: Problem, cases: Sequence[Case]) -> list[Any | ReferenceFailure] | None:
    """Per case, the magnitude of the terms of every output element (cached like the outputs), or None for
    a problem without a magnitude function."""
    if problem.spec.compare.magnitude_function is None:
        return None
    return expected_outputs(problem, cases, what="magnitude")


def gradient_function(problem: Problem) -> Callable[..., Any]:
    """The reference's gradient as the problem checks it (``[gradient]`` problems): the function whose
    results ``reference_outputs(..., what="gradient")`` gives, for a trusted caller that traces it."""
    return _gradient_of(problem, load_reference(problem))


def matmul_precision(problem: Problem) -> contextlib.AbstractContextManager[Any]:
    """The problem's ``[compare] matmul_precision`` as a context to trace in (the precision is read when a
    product is traced, and ends up in its ``precision_config``); nothing when the problem sets none."""
    precision = problem.spec.compare.matmul_precision
    if precision is None:
        return contextlib.nullcontext()
    return import_jax().default_matmul_precision(precision)  # type: ignore[no-any-return]


def _gradient_of(problem: Problem, fn: Callable[..., Any]) -> Callable[..., Any]:
    """The reference's gradient as the problem checks it: the same ``sandbox.shared.transforms.with_gradient``
    the tracer wraps the user's function in, keeping only the gradient part."""
    from sandbox.shared.transforms import with_gradient

    jax = import_jax()
    spec = problem.spec.gradient
    if spec is None:
        raise ValueError(f"problem {problem.slug} checks no gradient")
    names = [a.name for a in problem.spec.args]
    wrt = [names.index(name) for name in spec.wrt]

    def gradient(*args: Any) -> Any:
        return with_gradient(
            fn,
            args,
            wrt,
            spec.wrt,
            spec.cotangent,
            vjp=jax.vjp,
            tree_map=jax.tree_util.tree_map,
            jnp=jax.numpy,
        )[1]

    return gradient


def call_arguments(jax: Any, problem: Problem, case: Case, menu: dict[str, Callable[..., Any]]) -> list[Any]:
    """The arguments of a trusted-side call on ``case`` (the reference, a known mistake): Python floats stay
    floats (weakly typed when traced), static ints and tuples stay Python values, a menu choice becomes its
    function, arrays and trees move to the device (``reference_argument``)."""
    return [
        menu[value.name]
        if isinstance(value, MenuChoice)
        else value
        if isinstance(value, float) or not arg.traced
        else reference_argument(jax, value)
        for value, arg in zip(case.inputs, problem.spec.args, strict=True)
    ]


def jit_with_gradient(problem: Problem, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` under ``jax.jit`` with the problem's static arguments; for a problem with ``[gradient]`` it
    returns ``(output, gradient)``, the gradient as the problem checks it (``_gradient_of``)."""
    jax = import_jax()
    if problem.spec.gradient is not None:
        value, gradient = fn, _gradient_of(problem, fn)

        def fn(*args: Any) -> Any:
            return value(*args), gradient(*args)

    static = tuple(i for i, a in enumerate(problem.spec.args) if not a.traced)
    return jax.jit(fn, static_argnums=static)  # type: ignore[no-any-return]


def expected_gradients(problem: Problem, cases: Sequence[Case]) -> list[Any | ReferenceFailure] | None:
    """The reference's gradient per case for a problem with ``[gradient]`` (cached like the outputs), or
    None for a problem that checks no gradient."""
    if problem.spec.gradient is None:
        return None
    return expected_outputs(problem, cases, what="gradient")


def expected_outputs(
    problem: Problem, cases: Sequence[Case], what: str = "output"
) -> list[Any | ReferenceFailure]:
    """Expected output per case, from the cache or computed and cached; a ReferenceFailure where it failed.
    ``what="gradient"``: the gradient the problem checks instead (see ``expected_gradients``)."""
    directory = cache_dir() / problem.slug
    files = [directory / f"{case_key(problem, case, what)}.frame" for case in cases]
    results: list[Any] = [_MISSING] * len(cases)
    for i, file in enumerate(files):
        with contextlib.suppress(OSError, ValueError, ProtocolError):  # absent or damaged: recompute it
            results[i] = TREES.read(file)
    missing = [i for i, r in enumerate(results) if r is _MISSING]
    if missing and what == "output" and problem.spec.sandbox.devices > 1:
        with JAX_LOCK:
            for i, (output, _) in zip(missing, _on_mesh(problem, [cases[i] for i in missing]), strict=True):
                results[i] = output
    elif missing:
        with JAX_LOCK:
            computed = reference_outputs(problem, [cases[i] for i in missing], what)
            for i, output in zip(missing, computed, strict=True):
                results[i] = output
                if not isinstance(output, ReferenceFailure):
                    _store(files[i], output)
    return results


def expected_layouts(problem: Problem, cases: Sequence[Case]) -> list[Any] | None:
    """Where each output leaf of the reference lives, per case (``{leaf path: layout}``, see
    ``judge.core.mesh_reference``; a ReferenceFailure where it failed), for a problem of more than one device;
    None for a one-device problem. Cached beside the expected outputs."""
    if problem.spec.sandbox.devices <= 1:
        return None
    directory = cache_dir() / problem.slug
    files = [directory / f"{case_key(problem, case)}.layouts.json" for case in cases]
    results: list[Any] = [_MISSING] * len(cases)
    for i, file in enumerate(files):
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(file.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                results[i] = loaded
    missing = [i for i, r in enumerate(results) if r is _MISSING]
    if missing:
        with JAX_LOCK:
            for i, (_, layouts) in zip(missing, _on_mesh(problem, [cases[i] for i in missing]), strict=True):
                results[i] = layouts
    return results


def _on_mesh(problem: Problem, cases: Sequence[Case]) -> list[tuple[Any, Any]]:
    """The reference on the problem's devices (``judge.core.mesh_reference``): (output, layouts) per case,
    both cached, or the failure twice."""
    from judge.core import mesh_reference

    directory = cache_dir() / problem.slug
    out: list[tuple[Any, Any]] = []
    for case, result in zip(cases, mesh_reference.run(problem, cases), strict=True):
        if isinstance(result, ReferenceFailure):
            out.append((result, result))
            continue
        output, layouts = result
        key = case_key(problem, case)
        _store(directory / f"{key}.frame", output)
        with contextlib.suppress(OSError):
            file = directory / f"{key}.layouts.json"
            tmp = file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(layouts, sort_keys=True), encoding="utf-8")
            tmp.replace(file)
        out.append((output, layouts))
    return out


def _store(file: Path, output: Any) -> None:
    """Cache one expected output; the cache only saves time, so a read-only cache folder is no error."""
    with contextlib.suppress(OSError):
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(dumps_tree(output))
        tmp.replace(file)
