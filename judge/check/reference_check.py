"""Check ``reference``: the reference runs under ``jax.jit`` with traced arguments on every case, returns the
declared output structure and dtypes, and is deterministic; and it gives finite outputs on the validator's
EDGE inputs (the limits of the constraints).

It runs twice in this process, with JAX's caches cleared in between (so the second run traces and compiles
again), and once in each of two other processes with different ``PYTHONHASHSEED`` values
(``judge.check.reference_run``); every case's outputs must be bitwise equal across the four runs, or one
finding names how many cases differ, the first and the largest difference. Outputs are kept for the
``examples`` check.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judge.check.context import CheckContext
from judge.core.errors import ReferenceFailure
from judge.core.expected import clear_jax_caches, reference_outputs
from judge.core.problems import REPO_ROOT, Case
from judge.core.pytree_json import KEY_DTYPE_NAMES, describe_leaves, path_str
from judge.core.trusted_jax import load_reference
from sandbox.shared.tree import KeyArray, OtherNode
from sandbox.shared.wire import ProtocolError, loads_tree

NAME = "reference"

_MAX_MESSAGE = 600
#: ``reference_outputs`` names the case; the finding names it already.
_PREFIX = re.compile(r"^the reference \S+ failed on case \S+: ")


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    file = problem.reference_path
    try:
        load_reference(problem)
    except ReferenceFailure as exc:
        diag.error(str(exc), file=file, line=_line_in(exc, file))
        return
    with SeparateRuns(
        problem.root, timeout_s=_timeout_s(ctx), seeds=HASH_SEEDS if ctx.separate_runs else ()
    ) as separate:
        first = _run_all(ctx)
        clear_jax_caches()
        second = _run_all(ctx)
        others = separate.results(len(problem.cases))
    outputs: list[Any] = []
    failures: dict[str, list[tuple[Case, ReferenceFailure]]] = {}
    differences: list[Difference] = []
    problems: dict[tuple[str, bool], list[Case]] = {}
    for index, (case, out, again) in enumerate(zip(problem.cases, first, second, strict=True)):
        if isinstance(out, ReferenceFailure):
            # Group by the first line: the rest names the case's own argument paths.
            failures.setdefault(_failure_text(out).split("\n")[0], []).append((case, out))
            outputs.append(None)
            continue
        outputs.append(out)
        runs = [("a second run in this process", again)]
        if not isinstance(others, str):
            runs += [(f"a separate process with PYTHONHASHSEED={seed}", got[index]) for seed, got in others]
        for label, got in runs:
            found = _difference(case, out, got, label)
            if found is not None:
                differences.append(found)
                break
        for message, is_error in _check_output(ctx, case, out):
            problems.setdefault((message, is_error), []).append(case)
    if isinstance(others, str):
        diag.error(f"the reference could not run in a separate process: {others}", file=file)
    if differences:
        diag.error(_nondeterminism(differences, len(problem.cases)), file=file)
    for (message, is_error), cases in problems.items():  # one finding per mistake, naming its cases
        report = diag.error if is_error else diag.warning
        report(message, file=file, at=_cases_text([case.name for case in cases]))
    for failed in failures.values():  # one finding per distinct failure, naming every case it hit
        at = _cases_text([case.name for case, _ in failed])
        diag.error(_failure_text(failed[0][1]), file=file, at=at, line=_line_in(failed[0][1], file))
    ctx.reference_outputs = outputs
    ctx.reference_ok = all(out is not None for out in outputs)
    _gradients(ctx, file)
    _edges(ctx, file)


@dataclass(frozen=True)
class Difference:
    """Where one case's output differs between two runs of the reference, and by how much."""

    case: str
    #: What the first run was compared with (``a separate process with PYTHONHASHSEED=2``).
    against: str
    #: The first differing path (``output["w"]``), or the failure of the other run.
    where: str
    #: The largest absolute difference at that leaf; None when not numeric (structure, dtype, failure).
    size: float | None


def _difference(case: Case, out: Any, got: Any, label: str) -> Difference | None:
    if isinstance(got, ReferenceFailure):
        return Difference(case.name, label, f"it failed there: {_failure_text(got).splitlines()[0]}", None)
    where = _bitwise_difference(out, got, "output")
    if where is None:
        return None
    return Difference(case.name, label, where, _largest_difference(out, got))


def _nondeterminism(differences: list[Difference], total: int) -> str:
    """One finding for every case whose output changed: how many, against what, the first, the largest."""
    first = differences[0]
    sizes = [d.size for d in differences if d.size is not None]
    largest = f"; the largest difference is {max(sizes):.3g}" if sizes else ""
    against = sorted({d.against for d in differences})
    return (
        f"not deterministic: {len(differences)} of {total} case{'s' * (total != 1)} give other outputs in "
        f"{' or '.join(against)} (first: case {first.case} at {first.where}){largest}. A reference must not "
        "depend on hash(), set order, random numbers or state kept between calls"
    )


def _largest_difference(a: Any, b: Any) -> float | None:
    """The largest absolute difference between the numeric leaves of two trees of the same structure."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape or a.dtype.kind not in "fiucV" or b.dtype.kind not in "fiucV":
            return None
        try:
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        except (TypeError, ValueError):
            return None
        return float(np.nanmax(diff)) if diff.size and not np.isnan(diff).all() else None
    pairs: list[tuple[Any, Any]] = []
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        pairs = [(a[k], b[k]) for k in a]
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
        pairs = list(zip(a, b, strict=True))
    elif isinstance(a, OtherNode) and isinstance(b, OtherNode) and len(a.children) == len(b.children):
        pairs = list(zip(a.children, b.children, strict=True))
    elif isinstance(a, float | int) and isinstance(b, float | int):
        return abs(float(a) - float(b))
    sizes = [s for x, y in pairs if (s := _largest_difference(x, y)) is not None]
    return max(sizes) if sizes else None


def _cases_text(names: list[str]) -> str:
    """``case a``, ``cases a, b, c, d, e and 3 more``."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"case{'s' * (len(names) > 1)} {shown}"


def _timeout_s(ctx: CheckContext) -> float:
    """Time for a separate run: start-up and import, and every case at its time limit."""
    return 120.0 + ctx.loaded.spec.limits.case_time_s * len(ctx.loaded.cases)


#: The hash seeds of the two separate runs (any two different values; 0 would disable randomization).
HASH_SEEDS = (1, 2)


class SeparateRuns:
    """Two runs of the reference in processes of their own with different ``PYTHONHASHSEED`` values,
    started on entry (they run while this process runs the reference itself), their outputs read by
    ``results``. Leaves no process or file behind."""

    def __init__(self, root: Path, *, timeout_s: float, seeds: tuple[int, ...] = HASH_SEEDS) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self.seeds = seeds
        self._temp = tempfile.TemporaryDirectory(prefix="judge-reference-")
        self._runs: list[tuple[int, Path, subprocess.Popen[bytes]]] = []

    def __enter__(self) -> SeparateRuns:
        for seed in self.seeds:
            out = Path(self._temp.name) / str(seed)
            out.mkdir()
            env = {
                **os.environ,
                "PYTHONHASHSEED": str(seed),
                "PYTHONDONTWRITEBYTECODE": "1",
                # This process's XLA flags, even none: the run compares with the in-process one, which has
                # them (judge.core.expected sets the sandbox's only when it imports JAX first; a caller may
                # have).
                "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
            }
            process = subprocess.Popen(
                [sys.executable, "-m", "judge.check.reference_run", str(self.root), str(out)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
                cwd=str(REPO_ROOT),  # the judge's own package, wherever the check was started
            )
            self._runs.append((seed, out, process))
        return self

    def results(self, count: int) -> list[tuple[int, list[Any]]] | str:
        """(seed, output or ReferenceFailure per case) for each run; a text saying why when a run failed."""
        results = []
        for seed, out, process in self._runs:
            try:
                _, stderr = process.communicate(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                return f"the run with PYTHONHASHSEED={seed} took longer than {self.timeout_s:g} s"
            if process.returncode != 0:
                tail = stderr.decode(errors="replace").strip().splitlines()[-3:]
                return f"the run with PYTHONHASHSEED={seed} exited {process.returncode}: {' / '.join(tail)}"
            outputs: list[Any] = []
            for index in range(count):
                frame, error = out / f"{index}.frame", out / f"{index}.error"
                if error.is_file():
                    outputs.append(ReferenceFailure(error.read_text()))
                    continue
                try:
                    outputs.append(loads_tree(frame.read_bytes()))
                except (OSError, ProtocolError) as exc:
                    return f"the run with PYTHONHASHSEED={seed} left no output for case {index}: {exc}"
            results.append((seed, outputs))
        return results

    def __exit__(self, *exc: object) -> None:
        for _, _, process in self._runs:
            if process.poll() is None:
                process.kill()
            process.communicate()
        self._temp.cleanup()


def _gradients(ctx: CheckContext, file: Path) -> None:
    """For a problem with ``[gradient]``: the reference's gradient runs on every case, is finite, and each
    ``wrt`` argument's gradient has that argument's structure, leaf shapes and dtypes."""
    problem = ctx.loaded
    spec = problem.spec.gradient
    if spec is None:
        return
    names = [a.name for a in problem.spec.args]
    for case, grads in zip(problem.cases, reference_outputs(problem, problem.cases, "gradient"), strict=True):
        at = f"case {case.name}"
        if isinstance(grads, ReferenceFailure):
            ctx.diag.error(f"the gradient failed: {_failure_text(grads)}", file=file, at=at)
            continue
        for name in spec.wrt:
            got, arg = grads.get(name) if isinstance(grads, dict) else None, case.inputs[names.index(name)]
            if describe_leaves(got) != describe_leaves(arg):
                ctx.diag.error(
                    f"the gradient w.r.t. {name} differs from {name} in structure, leaf shapes or dtypes",
                    file=file,
                    at=at,
                )
        bad = _non_finite(grads, "gradient")
        if bad:
            ctx.diag.error(f"non-finite gradient at {', '.join(bad[:3])}", file=file, at=at)


def _edges(ctx: CheckContext, file: Path) -> None:
    """The reference gives finite outputs on the validator's EDGE inputs (the limits of the constraints)."""
    if not ctx.edges:
        return
    validator = ctx.loaded.root / "validator.py"
    outputs = reference_outputs(ctx.loaded, [case for _, case in ctx.edges])
    overflowing: list[str] = []
    for (at, _), out in zip(ctx.edges, outputs, strict=True):
        if isinstance(out, ReferenceFailure):
            ctx.diag.error(
                f"the reference fails on an input the constraints allow ({validator.name} {at}): "
                f"{_failure_text(out)}",
                file=file,
                line=_line_in(out, file),
            )
            continue
        bad = [path for root, tree in _named_outputs(ctx, out) for path in _non_finite(tree, root)]
        if bad:
            overflowing.append(f"{validator.name} {at} at {', '.join(bad[:3])}")
    if overflowing:  # one mistake (constraints the reference cannot meet), however many EDGE inputs show it
        ctx.diag.error(
            f"the reference returns non-finite values on input{'s' * (len(overflowing) > 1)} the constraints "
            f"allow ({'; '.join(overflowing)}): tighten the constraints (statement and validator) or make "
            "the reference robust, so the three agree",
            file=file,
        )


def _run_all(ctx: CheckContext) -> list[Any]:
    return reference_outputs(ctx.loaded, ctx.loaded.cases)


def _failure_text(exc: ReferenceFailure) -> str:
    text = _PREFIX.sub("", str(exc).strip())
    lines = [line for line in text.splitlines() if line.strip()]
    short = "\n".join(lines[:4])
    return short if len(short) <= _MAX_MESSAGE else short[: _MAX_MESSAGE - 3] + "..."


def _line_in(exc: BaseException, file: Path) -> int | None:
    """The last line of ``file`` in the traceback of the exception behind ``exc``."""
    line = None
    for cause in (exc, exc.__cause__):
        if cause is None or cause.__traceback__ is None:
            continue
        for frame in traceback.extract_tb(cause.__traceback__):
            if Path(frame.filename) == file:
                line = frame.lineno
    return line


def _named_outputs(ctx: CheckContext, out: Any) -> list[tuple[str, Any]]:
    spec = ctx.loaded.spec.output
    if spec.kind == "tuple" and isinstance(out, tuple) and len(out) == len(spec.names):
        return list(zip(spec.names, out, strict=True))
    return [("output", out)]


def _check_output(ctx: CheckContext, case: Case, out: Any) -> list[tuple[str, bool]]:
    """What is wrong with one case's output: (message, is an error) pairs; a message names no case, so the
    same mistake on many cases is one finding."""
    spec = ctx.loaded.spec
    if spec.output.kind == "dict" and not isinstance(out, dict):
        return [(f"returns {_kind(out)}, the spec declares output.kind = 'dict'", True)]
    if spec.output.kind == "tuple" and (type(out) is not tuple or len(out) != len(spec.output.names)):
        names = ", ".join(spec.output.names)
        return [
            (f"returns {_kind(out)}, the spec declares a tuple of {len(spec.output.names)} ({names})", True)
        ]
    allowed: set[str] = {*spec.dtypes.allowed, "float32", *spec.output.exact_dtypes}
    if "key" in allowed:  # typed keys show their own dtype name (key<fry>)
        allowed |= set(KEY_DTYPE_NAMES.values())
    found: list[tuple[str, bool]] = []
    non_finite = []
    for root, tree in _named_outputs(ctx, out):
        bad = [leaf for leaf in describe_leaves(tree, root=root) if leaf.dtype not in allowed]
        if bad:
            found.append(
                (
                    f"returns dtype {bad[0].dtype} in {root} (expected one of {', '.join(sorted(allowed))}; "
                    "integer and bool outputs are listed in output.exact_dtypes)",
                    True,
                )
            )
        non_finite += _non_finite(tree, root)
    if non_finite:
        found.append(
            (
                "non-finite output (NaN or infinity): it only matches itself, so the case tests little",
                False,
            )
        )
    return found


def _kind(out: Any) -> str:
    if type(out) is tuple:
        return f"a tuple of {len(out)}"
    if isinstance(out, list):
        return f"a list of {len(out)}"
    if isinstance(out, dict):
        return "a dict"
    if isinstance(out, np.ndarray):
        return f"an array of shape {out.shape}"
    return type(out).__name__


def _non_finite(tree: Any, root: str, keys: tuple[Any, ...] = ()) -> list[str]:
    if isinstance(tree, dict):
        return [p for k in sorted(tree, key=str) for p in _non_finite(tree[k], root, (*keys, str(k)))]
    if isinstance(tree, list | tuple):
        return [p for i, item in enumerate(tree) for p in _non_finite(item, root, (*keys, i))]
    if isinstance(tree, OtherNode):
        return [p for i, item in enumerate(tree.children) for p in _non_finite(item, root, (*keys, i))]
    if isinstance(tree, np.ndarray) and tree.dtype.kind in "fV" and tree.size:
        try:
            finite = np.isfinite(tree.astype(np.float64))
        except (TypeError, ValueError):
            return []
        if not finite.all():
            return [path_str(root, keys)]
    return []


def _bitwise_difference(a: Any, b: Any, root: str, keys: tuple[Any, ...] = ()) -> str | None:
    """Where two outputs differ in structure, shape, dtype or any bit; None when identical."""
    here = path_str(root, keys)
    if isinstance(a, KeyArray) or isinstance(b, KeyArray):
        same = isinstance(a, KeyArray) and isinstance(b, KeyArray) and a.impl == b.impl
        return None if same and _bitwise_difference(a.data, b.data, root, keys) is None else here
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return here
        if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
            return here
        return None
    if type(a) is not type(b):
        return here
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return here
        pairs: list[tuple[Any, Any, Any]] = [
            (k if isinstance(k, str) else repr(k), a[k], b[k]) for k in sorted(a, key=str)
        ]
    elif isinstance(a, list | tuple):
        if len(a) != len(b):
            return here
        pairs = [(i, x, y) for i, (x, y) in enumerate(zip(a, b, strict=True))]
    elif isinstance(a, OtherNode):
        if a.type_name != b.type_name or len(a.children) != len(b.children):
            return here
        pairs = [(i, x, y) for i, (x, y) in enumerate(zip(a.children, b.children, strict=True))]
    else:
        return None if a == b else here
    for key, x, y in pairs:
        found = _bitwise_difference(x, y, root, (*keys, key))
        if found:
            return found
    return None
