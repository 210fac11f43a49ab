"""The reference on a problem's device mesh: expected outputs and where each output leaf lives.

A problem with ``[sandbox] devices`` > 1 grades where each output's pieces live (``sandbox.shared.layouts``)
as well as its values, so the reference runs on the same number of CPU host devices as the sandbox gives the
learner, each input replicated over all of them as the executor places it, under ``jax.jit``; each output
leaf's layout is read from the array's own sharding.

JAX fixes a process's device count when its backend starts. The judge's own processes start theirs with
``judge.core.trusted_jax.HOST_DEVICES`` host devices (set before JAX loads, see
``judge.core.trusted_jax.import_jax``), so a problem of that many devices runs its reference in the judge's
process. Any other count, or a process whose backend started otherwise (a test run that imported JAX first),
runs the reference in a child process started with that count: ``python -m judge.core.mesh_reference``
(trusted repository code, the judge's own environment; no user code is involved). It reads the problem folder
and the cases as JSON on stdin and writes one JSON line per case: the output as a wire-encoded tree
(``sandbox.shared.wire.dumps_tree``, base64) and the layouts by leaf path, or the reference's failure. Its
cost is a JAX start (about 1-2 s of CPU) per batch of uncached cases; expected outputs are cached as usual
(``judge.core.expected``), so a Submit pays it only for cases it has never seen, a Run with custom inputs on
each new input.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judge.core.errors import ReferenceFailure
from judge.core.problems import Case, Problem, convert_args, load_problem
from judge.core.spec import CaseDef
from judge.core.trusted_jax import import_jax, load_reference, to_host
from sandbox.shared.layouts import Layout, from_hlo
from sandbox.shared.tree import to_host as tree_to_host
from sandbox.shared.wire import dumps_tree, loads_tree

#: Wall seconds a reference child may take for one batch (a JAX start plus the cases).
CHILD_TIMEOUT_S = 300.0

Layouts = dict[str, dict[str, Any]]
Result = tuple[Any, Layouts] | ReferenceFailure


def run(problem: Problem, cases: Sequence[Case]) -> list[Result]:
    """The reference's output and output layouts per case (a ReferenceFailure where it failed), on the
    problem's device count: in this process when its backend has exactly that many devices, else in a
    child process."""
    devices = problem.spec.sandbox.devices
    jax = import_jax()
    if len(jax.devices()) == devices:
        return run_here(problem, cases)
    return run_in_child(problem, cases)


def run_here(problem: Problem, cases: Sequence[Case]) -> list[Result]:
    """The reference in this process, whose backend has the problem's device count."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    jax = import_jax()
    devices = problem.spec.sandbox.devices
    try:
        fn = load_reference(problem)
    except ReferenceFailure as exc:
        return [exc] * len(cases)
    mesh = Mesh(np.array(jax.devices()[:devices]), ("_",))
    placed = NamedSharding(mesh, PartitionSpec())  # type: ignore[no-untyped-call]
    static = tuple(i for i, a in enumerate(problem.spec.args) if not a.traced)
    jitted = jax.jit(fn, static_argnums=static)
    out: list[Result] = []
    for case in cases:
        try:
            args = [
                value
                if isinstance(value, float) or not arg.traced
                else jax.tree_util.tree_map(lambda x: jax.device_put(x, placed), value)
                for value, arg in zip(case.inputs, problem.spec.args, strict=True)
            ]
            result = jax.block_until_ready(jitted(*args))
            out.append((to_host(result), layouts_of(jax, result, devices)))
        except Exception as exc:
            failure = ReferenceFailure(
                f"the reference {problem.spec.reference} failed on case {case.name} on {devices} devices: "
                f"{type(exc).__name__}: {exc}"
            )
            failure.__cause__ = exc
            out.append(failure)
    return out


def layouts_of(jax: Any, tree: Any, devices: int) -> Layouts:
    """Each array leaf's layout by its path (``leaf_paths``), from the array's own sharding."""

    def children(x: Any) -> list[Any] | None:
        flat, treedef = jax.tree_util.tree_flatten(x, is_leaf=lambda y: y is not x)
        return None if jax.tree_util.treedef_is_leaf(treedef) else list(flat)

    def layout(x: Any) -> Layout:
        return from_hlo(x.sharding._to_xla_hlo_sharding(x.ndim), x.ndim, devices)

    host = tree_to_host(
        tree, lambda x: hasattr(x, "shape") and hasattr(x, "sharding"), children, convert=layout
    )
    return {key: value.wire() for key, value in leaf_paths(host)}


def leaf_paths(tree: Any, at: tuple[Any, ...] = ()) -> list[tuple[str, Any]]:
    """Every leaf of a host tree (dicts, lists, tuples) with its path as a key: the JSON list of its dict
    keys and indexes (``path_entries`` reads it back). The same key for the same place in the reference's
    tree and the learner's."""
    if isinstance(tree, dict):
        out: list[tuple[str, Any]] = []
        for key, value in tree.items():
            out.extend(leaf_paths(value, (*at, key)))
        return out
    if isinstance(tree, list | tuple):
        out = []
        for i, value in enumerate(tree):
            out.extend(leaf_paths(value, (*at, i)))
        return out
    if tree is None:
        return []
    return [(json.dumps(list(at)), tree)]


def path_entries(key: str) -> tuple[Any, ...]:
    """A leaf path's entries back from its key (``leaf_paths``)."""
    return tuple(json.loads(key))


def run_in_child(problem: Problem, cases: Sequence[Case]) -> list[Result]:
    """The reference in a child process started with the problem's device count."""
    import_jax()  # the XLA flags this process compiles with, for the child too
    env = {**os.environ, "JAX_NUM_CPU_DEVICES": str(problem.spec.sandbox.devices), "JAX_PLATFORMS": "cpu"}
    request = {
        "problem": str(problem.root),
        # By position: a case made here (a validator's EDGE input) may have a name no case file could.
        "cases": [
            {**case.definition.model_dump(mode="json"), "name": _child_name(i)}
            for i, case in enumerate(cases)
        ],
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "judge.core.mesh_reference"],
            input=json.dumps(request).encode(),
            capture_output=True,
            env=env,
            timeout=CHILD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [
            ReferenceFailure(
                f"the reference's process on {problem.spec.sandbox.devices} devices failed: {exc}"
            )
        ] * len(cases)
    lines = done.stdout.decode(errors="replace").splitlines()
    if done.returncode != 0 or len(lines) != len(cases):
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return [
            ReferenceFailure(
                f"the reference's process on {problem.spec.sandbox.devices} devices exited with "
                f"{done.returncode}: {tail[0][:300]}"
            )
        ] * len(cases)
    out: list[Result] = []
    for i, line in enumerate(lines):
        item = json.loads(line)
        if "failure" in item:
            failure = str(item["failure"]).replace(f"case {_child_name(i)} ", f"case {cases[i].name} ")
            out.append(ReferenceFailure(failure))
        else:
            out.append((loads_tree(base64.b64decode(item["output"])), dict(item["layouts"])))
    return out


def _child_name(index: int) -> str:
    return f"case_{index}"


def main() -> None:
    """The child: ``{"problem": folder, "cases": [case definitions]}`` on stdin, a JSON line per case."""
    request = json.loads(sys.stdin.buffer.read())
    problem = load_problem(Path(request["problem"]))
    cases = []
    for body in request["cases"]:
        definition = CaseDef.model_validate(body)
        cases.append(Case(definition, convert_args(problem.spec, definition.args, definition.dtype)))
    for result in run_here(problem, cases):
        if isinstance(result, ReferenceFailure):
            line: dict[str, Any] = {"failure": str(result)}
        else:
            output, layouts = result
            line = {"output": base64.b64encode(dumps_tree(output)).decode(), "layouts": layouts}
        sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
