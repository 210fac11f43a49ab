"""The old grading path (before the tracer/executor split), for the benchmark baseline only.

Builds the old job (case INPUTS sent to the one sandboxed process), runs it with the old monitor on a
worker running this folder's harness, decodes every output and compares it with the expected output using
today's checker: the same work the old ``judge.grader.grade`` did, minus the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.compare import bind
from judge.expected import expected_outputs
from judge.grader import sandbox_limits
from judge.problems import Case, Problem
from sandbox.base import Worker

from .monitor import run_job
from .protocol import decode_tree, encode_tree


def build_job(problem: Problem, code: str, cases: Sequence[Case], max_output_bytes: int) -> dict[str, Any]:
    spec = problem.spec
    return {
        "type": "job",
        "code": code,
        "function": spec.function,
        "args": [{"name": a.name, "kind": a.kind, "traced": a.traced} for a in spec.args],
        "cases": [
            {"args": [{"number": v} if isinstance(v, float) else encode_tree(v) for v in case.inputs]}
            for case in cases
        ],
        "check_inputs_unchanged": "inputs_unchanged" in spec.compare.checks,
        "forbid_host_callbacks": spec.compare.forbid_host_callbacks,
        "max_output_bytes": max_output_bytes,
    }


def legacy_grade(problem: Problem, code: str, worker: Worker, cases: Sequence[Case] | None = None) -> bool:
    """Grade ``code`` the old way on ``worker`` (closed afterwards); True when every case is accepted."""
    chosen = list(problem.cases if cases is None else cases)
    limits = sandbox_limits(problem)
    try:
        expected = expected_outputs(problem, chosen)
        raw = run_job(worker, build_job(problem, code, chosen, limits.max_frame_bytes // 2), limits)
    finally:
        worker.close()
    checker = bind(problem.spec.compare, problem.spec.output)
    results = {m["index"]: m for m in raw.messages if m.get("type") == "case_result"}
    for i, want in enumerate(expected):
        message = results.get(i)
        if message is None or message.get("status") != "ok" or message.get("mutation"):
            return False
        if not checker(want, decode_tree(message["output"])).ok:
            return False
    return True
