"""Run a problem's reference in float64 on every case, in a process of its own: ``python -m
judge.check.float64_run PROBLEM_DIR OUT_DIR [EXTRA_INPUTS_JSON]``.

The ``accuracy`` check compares the reference's float32 (or bfloat16) outputs with these, as the nearest
thing to the exact answer the repository has. The float64 path, stated so an author knows what is run:

- JAX runs with x64 enabled (``JAX_ENABLE_X64=1``, set before JAX is imported: this process only, so the
  judge's own expected outputs never change);
- every floating input leaf is cast to float64 (integers, bools and static values stay as they are); a
  ``number`` argument (a Python float) is first rounded to float32, the value a program traced under
  ``jax.jit`` receives, and is then a weakly typed float64;
- the reference module (and the problem's menu module, whose functions the reference calls) is imported
  afresh and its ``jnp`` stands for ``jax.numpy`` with ``float32``, ``bfloat16`` and ``float16`` meaning
  ``float64``, and so does any global bound to one of those dtypes: a reference that computes "in float32"
  with ``x.astype(jnp.float32)`` computes in float64 here, and ``y.astype(x.dtype)`` keeps float64.

A float output leaf that is not float64 means the reference casts by a path the list above does not map
(``numpy.float32``, ``lax.convert_element_type`` with a literal dtype); the check says so. Each case's
output (and gradient, for a problem with ``[gradient]``) is written to ``OUT_DIR/<index>.frame`` /
``<index>.gradient.frame`` (``sandbox.shared.wire.dumps_tree``: data, never pickle), a failure to
``<index>.error`` as text. Exit 0 once every case is written; 2 when the problem does not load.
"""

from __future__ import annotations

import os
import sys
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

#: The dtypes the float64 path maps to float64 (by name, on ``jax.numpy``).
NARROW_FLOATS = ("float32", "bfloat16", "float16")


def _float64_numpy(jnp: types.ModuleType) -> types.ModuleType:
    """``jax.numpy`` with the narrow float dtypes standing for float64 (everything else is jnp's own)."""

    class Float64Numpy(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            return jnp.float64 if name in NARROW_FLOATS else getattr(jnp, name)

    return Float64Numpy("jax.numpy (float64 path)")


def widen_module(module: types.ModuleType) -> None:
    """Rebind a module's globals for the float64 path: ``jax.numpy`` and the narrow float dtypes."""
    import jax.numpy as jnp

    proxy = _float64_numpy(jnp)
    narrow = [getattr(jnp, name) for name in NARROW_FLOATS]
    for name, value in list(vars(module).items()):
        if value is jnp:
            setattr(module, name, proxy)
        elif any(value is dtype for dtype in narrow):
            setattr(module, name, jnp.float64)


def widen_inputs(value: Any) -> Any:
    """A case input with every floating numpy leaf cast to float64 (containers rebuilt, the rest kept)."""
    import numpy as np

    if isinstance(value, float):  # a number argument: the program gets it as a weakly typed float32
        return float(np.float32(value))
    if isinstance(value, np.ndarray):
        return (
            value.astype(np.float64) if value.dtype.kind == "f" or value.dtype.name == "bfloat16" else value
        )
    if isinstance(value, dict):
        return type(value)((k, widen_inputs(v)) for k, v in value.items())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(widen_inputs(v) for v in value))
    if isinstance(value, list | tuple):
        return type(value)(widen_inputs(v) for v in value)
    return value


def run(root: Path, out: Path, extra: Path | None = None) -> int:
    """Write every case's float64 output (and gradient) or failure to ``out``; 0 when done, 2 when the
    problem does not load. ``extra``: a JSON list of more inputs (``{"name", "dtype", "args"}``, such as the
    validator's EDGE inputs), numbered after the cases."""
    import json

    from judge.core.errors import ProblemError, ReferenceFailure
    from judge.core.expected import reference_outputs
    from judge.core.problems import Case, convert_args, load_problem
    from judge.core.spec import CaseDef
    from judge.core.trusted_jax import load_reference
    from sandbox.shared.wire import dumps_tree

    try:
        problem = load_problem(root)
    except ProblemError as exc:
        print(f"the problem does not load: {exc}", file=sys.stderr)
        return 2
    try:
        widen_module(sys.modules[load_reference(problem).__module__])
        for function in problem.menu().values():
            widen_module(sys.modules[function.__module__])
    except (ReferenceFailure, ProblemError, KeyError):
        pass  # reference_outputs reports the same failure per case
    cases = list(problem.cases)
    for item in json.loads(extra.read_text()) if extra is not None else []:
        definition = CaseDef.model_construct(
            name=item["name"], visibility="hidden", dtype=item["dtype"], args=item["args"], explanation=None
        )
        cases.append(Case(definition, convert_args(problem.spec, item["args"], item["dtype"])))
    cases = [replace(case, inputs=tuple(widen_inputs(v) for v in case.inputs)) for case in cases]
    whats = ["output"] + (["gradient"] if problem.spec.gradient is not None else [])
    for what in whats:
        suffix = "" if what == "output" else ".gradient"
        for index, result in enumerate(reference_outputs(problem, cases, what)):
            if isinstance(result, ReferenceFailure):
                (out / f"{index}.error").write_text(f"{what}: {result}")
            else:
                (out / f"{index}{suffix}.frame").write_bytes(dumps_tree(result))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(
            "usage: python -m judge.check.float64_run PROBLEM_DIR OUT_DIR [EXTRA_INPUTS_JSON]",
            file=sys.stderr,
        )
        return 2
    if "jax" in sys.modules:  # x64 must be on before JAX is imported
        print("float64_run must start in a fresh process", file=sys.stderr)
        return 2
    os.environ["JAX_ENABLE_X64"] = "1"
    return run(Path(argv[0]), Path(argv[1]), Path(argv[2]) if len(argv) == 3 else None)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
