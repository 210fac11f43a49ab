"""What the reference's program costs on a case: XLA's cost analysis of it, compiled on the trusted side.

The reference is repository code: it is lowered and compiled in the judge's own process
(``judge.core.expected``'s JAX, XLA flags and lock), exactly as the user's program is compiled in the
executor, and XLA's cost analysis of the result gives the figures a learner's program is measured against
(FLOPs, bytes accessed), beside the number of loops (``stablehlo.while``) in its program. On a ``[gradient]``
problem the reference's program computes the gradient too, as the learner's does. Its compile is timed as the
executor times one (charged time), and the compiled program run (the fastest of a few runs, after one that
warms it): the times a learner's are set beside (one-device problems only). Figures are cached per case key as
JSON.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from judge.core import expected as _expected
from judge.core import trusted_jax
from judge.core.problems import Case, Problem
from judge.feedback.figure_cache import FigureCache

_JITTED: dict[tuple[str, str], Any] = {}
#: The figures by case key, in this process and on disk (a reference that cannot compile is retried).
_CACHE = FigureCache("cost", keep_failures=False)
_JITTED_LOCK = threading.Lock()
#: What the figures are and how they are measured: part of their cache key, raised when either changes.
FIGURES = 3
#: Timed runs of the compiled reference per case (the fastest is its run time).
_RUNS = 3


def _jitted(problem: Problem) -> Any:
    key = (str(problem.reference_path), problem.reference_source)
    with _JITTED_LOCK:
        if key in _JITTED:
            return _JITTED[key]
    trusted_jax.import_jax()  # the XLA flags are set before the code imports JAX
    fn = trusted_jax.load_reference(problem)
    jitted = _expected.jit_with_gradient(problem, fn)
    with _JITTED_LOCK:
        _JITTED[key] = jitted
    return jitted


def _measure(problem: Problem, case: Case) -> dict[str, float] | None:
    jax = trusted_jax.import_jax()
    from sandbox.inside.executor import cost_of

    try:
        menu = problem.menu()
        args = _expected.call_arguments(jax, problem, case, menu)
        lowered = _jitted(problem).lower(*args)
        compiled = lowered.compile()
        figures = cost_of(compiled.runtime_executable())
        figures["loops"] = float(lowered.as_text().count("stablehlo.while"))
        if problem.spec.sandbox.devices == 1:
            figures["compile_ms"] = _compile_ms(jax, lowered)
            traced = [a for a, spec in zip(args, problem.spec.args, strict=True) if spec.traced]
            figures["run_ms"] = _run_ms(jax, compiled, traced)
        return figures
    except Exception:  # the reference's failure is the expected-output path's to report; no cost here
        return None


def _compile_ms(jax: Any, lowered: Any) -> float:
    """The reference's program compiled as the executor compiles a learner's (``compile_and_load`` of the
    module with one partition and the process's flags, no detailed logging), in ms of charged time as the
    executor counts it (``ProcessClock``: wall time less the run-queue waits of this process's threads),
    so what a busy machine adds is not the reference's, as it is not charged to a learner."""
    from jax._src import compiler, xla_bridge
    from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]

    from sandbox.inside.compiling import ProcessClock

    backend = xla_bridge.get_backend("cpu")
    options = compiler.get_compile_options(
        num_replicas=1, num_partitions=1, backend=backend, detailed_logging=False
    )
    devices = xc.DeviceList(tuple(backend.local_devices()[:1]))
    module = lowered.compiler_ir("stablehlo")
    begin = ProcessClock.now()
    backend.compile_and_load(module, executable_devices=devices, compile_options=options)
    return begin.charged_s(ProcessClock.now()) * 1000


def _run_ms(jax: Any, compiled: Any, args: list[Any]) -> float:
    """The fastest of ``_RUNS`` runs of the compiled reference, after one that warms it, in ms."""
    jax.block_until_ready(compiled(*args))
    best = float("inf")
    for _ in range(_RUNS):
        started = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        best = min(best, time.perf_counter() - started)
    return best * 1000


def reference_cost(problem: Problem, case: Case) -> dict[str, float] | None:
    """The reference's figures on ``case`` (``flops``, ``bytes_accessed``, ``transcendentals``, ``loops``),
    from the cache or measured and cached; None when the reference cannot be compiled for it."""
    key = _expected.case_key(problem, case, f"cost/{FIGURES}")
    return _CACHE.get(problem.slug, key, lambda: _measure(problem, case))
