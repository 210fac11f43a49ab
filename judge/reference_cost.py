"""What the reference's program costs on a case: XLA's cost analysis of it, compiled on the trusted side.

The reference is repository code: it is lowered and compiled in the judge's own process (``judge.expected``'s
JAX, XLA flags and lock), exactly as the user's program is compiled in the executor, and XLA's cost analysis
of the result gives the figures a learner's program is measured against (FLOPs, bytes accessed), beside the
number of loops (``stablehlo.while``) in its program. On a ``[gradient]`` problem the reference's program
computes the gradient too, as the learner's does. Figures are cached per case key as JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import Any

from judge import expected as _expected
from judge.menu import MenuChoice
from judge.problems import Case, Problem

_JITTED: dict[tuple[str, str], Any] = {}
#: Figures read or measured in this process, by case key.
_MEMORY: dict[str, dict[str, float]] = {}
_MEMORY_ENTRIES = 4096
_JITTED_LOCK = threading.Lock()


def _jitted(problem: Problem) -> Any:
    key = (str(problem.reference_path), problem.reference_source)
    with _JITTED_LOCK:
        if key in _JITTED:
            return _JITTED[key]
    jax = _expected._import_jax()
    fn = _expected.load_reference(problem)
    if problem.spec.gradient is not None:
        value, gradient = fn, _expected._gradient_of(problem, fn)

        def fn(*args: Any) -> Any:
            return value(*args), gradient(*args)

    static = tuple(i for i, a in enumerate(problem.spec.args) if not a.traced)
    jitted = jax.jit(fn, static_argnums=static)
    with _JITTED_LOCK:
        _JITTED[key] = jitted
    return jitted


def _measure(problem: Problem, case: Case) -> dict[str, float] | None:
    jax = _expected._import_jax()
    from sandbox.inside.executor import cost_of

    try:
        menu = problem.menu()
        args = [
            menu[value.name]
            if isinstance(value, MenuChoice)
            else value
            if isinstance(value, float) or not arg.traced
            else _expected.reference_argument(jax, value)
            for value, arg in zip(case.inputs, problem.spec.args, strict=True)
        ]
        lowered = _jitted(problem).lower(*args)
        figures = cost_of(lowered.compile().runtime_executable())
        figures["loops"] = float(lowered.as_text().count("stablehlo.while"))
        return figures
    except Exception:  # the reference's failure is the expected-output path's to report; no cost here
        return None


def reference_cost(problem: Problem, case: Case) -> dict[str, float] | None:
    """The reference's figures on ``case`` (``flops``, ``bytes_accessed``, ``transcendentals``, ``loops``),
    from the cache or measured and cached; None when the reference cannot be compiled for it."""
    key = _expected.case_key(problem, case, "cost")
    if key in _MEMORY:
        return _MEMORY[key]
    file = _expected.cache_dir().parent / "cost" / problem.slug / f"{key}.json"
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(file.read_text())
        if isinstance(data, dict) and all(isinstance(v, int | float) for v in data.values()):
            return _remember(key, {str(k): float(v) for k, v in data.items()})
    with _expected._LOCK:
        figures = _measure(problem, case)
    if figures is not None:
        with contextlib.suppress(OSError):
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = file.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(figures))
            tmp.replace(file)
        _remember(key, figures)
    return figures


def _remember(key: str, figures: dict[str, float]) -> dict[str, float]:
    if len(_MEMORY) >= _MEMORY_ENTRIES:
        _MEMORY.pop(next(iter(_MEMORY)))
    _MEMORY[key] = figures
    return figures
