"""Realistic stored submissions for ``bench_listing.py``: code, results, events, tags, users, dates.

Population(seed, rows)         the shape of a platform's data: keys, problems, users, verdicts, ...
population.row(index)          one submissions row (a dict of the table's columns) to bulk-insert
code_text(rng) / result_doc()  a learner's code (1-2 KB) and a grading result as the judge stores it
case_events(result)            the events a grading publishes (status, one per case, the final one)
"""

from __future__ import annotations

import itertools
import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

#: Verdicts with their share of a platform's gradings (a rare one included: ``output_limit_exceeded``).
VERDICTS = (
    ("accepted", 0.45),
    ("wrong_answer", 0.33),
    ("runtime_error", 0.08),
    ("trace_error", 0.07),
    ("compile_error", 0.04),
    ("time_limit_exceeded", 0.025),
    ("memory_limit_exceeded", 0.0045),
    ("output_limit_exceeded", 0.0005),
)
RARE_VERDICT = "output_limit_exceeded"
#: The key that holds most rows (a platform), and the others (tenants of the same judge).
MAIN_KEY = "platform"
OTHER_KEYS = ("tenant-a", "tenant-b", "tenant-c", "tenant-d")
PROBLEMS = 60
USERS = 5_000
COURSES = 20
ASSIGNMENTS = 300
START = datetime(2026, 1, 1, tzinfo=UTC)
YEAR_S = 365 * 24 * 3600

_BODY = '''def {name}(params, x):
    """Forward pass of a small {what}: layer norm, a projection and a {act}."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    h = (x - mean) / jnp.sqrt(var + {eps})
    h = h * params["scale"] + params["bias"]
    h = jnp.einsum("...d,de->...e", h, params["w{index}"])
    h = jax.nn.{act}(h)
    for _ in range({loops}):
        h = h + 0.5 * jnp.tanh(h @ params["mix"])
    return jax.lax.stop_gradient(h) if {stop} else h

'''


def code_text(rng: random.Random) -> str:
    """A learner's solution of 1 to 2 KB (imports, a helper or two, the function)."""
    parts = ["import jax\nimport jax.numpy as jnp\nfrom functools import partial\n\n\n"]
    while sum(map(len, parts)) < rng.randint(1000, 2000):
        parts.append(
            _BODY.format(
                name=rng.choice(("forward", "block", "mlp", "attend", "step")) + f"_{rng.randint(0, 99)}",
                what=rng.choice(("network", "transformer block", "residual layer")),
                act=rng.choice(("gelu", "relu", "silu")),
                eps=rng.choice(("1e-5", "1e-6", "1e-12")),
                index=rng.randint(0, 3),
                loops=rng.randint(1, 4),
                stop=rng.choice(("False", "True")),
            )
        )
    return "".join(parts)


def _program(rng: random.Random) -> dict[str, Any]:
    jaxpr = (
        "{ lambda ; a:f32[8,16] b:f32[16,16]. let\n"
        + "".join(
            f"    c{i}:f32[8,16] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
            for i in range(8)
        )
        + "  in (c7,) }"
    )
    hlo = (
        "module @jit_f {\n  func.func public @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {\n"
        + "".join(
            f"    %{i} = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
            "(tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n"
            for i in range(rng.randint(10, 16))
        )
        + "    return %0 : tensor<8x16xf32>\n  }\n}"
    )
    return {
        "jaxpr": jaxpr,
        "stablehlo": hlo,
        "jaxpr_marks": [],
        "stablehlo_marks": [{"line": 3, "kind": "loop"}],
    }


def _leaf(rng: random.Random, n: int) -> dict[str, Any]:
    return {"dtype": "float32", "shape": [n], "data": [round(rng.uniform(-3, 3), 6) for _ in range(n)]}


def result_doc(rng: random.Random, problem: str, verdict: str) -> dict[str, Any]:
    """A grading result as stored (``GradeResult`` as JSON): 4 public cases with inputs, outputs, costs
    and the program, 8 hidden ones with a verdict and a message; about 5 to 9 KB, less for an error
    that stopped the run early."""
    early = verdict in ("trace_error", "compile_error")
    cases: list[dict[str, Any]] = []
    for index in range(12):
        hidden = index >= 4
        case_verdict = "not_run" if early else ("accepted" if verdict == "accepted" or index % 3 else verdict)
        case: dict[str, Any] = {
            "name": f"case-{index}",
            "visibility": "hidden" if hidden else "public",
            "verdict": case_verdict,
            "reason": "value" if case_verdict == "wrong_answer" else None,
            "message": "" if case_verdict == "accepted" else f"leaf ['h']: max error {rng.random():.3g}",
        }
        if not hidden and not early:
            case |= {
                "compile_ms": round(rng.uniform(20, 90), 3),
                "run_ms": round(rng.uniform(0.1, 3), 3),
                "input": {"x": _leaf(rng, 16)},
                "output": _leaf(rng, 16),
                "expected": _leaf(rng, 16),
                "error_ratio": round(rng.random(), 4),
                "cost": {
                    "flops": 4096.0,
                    "bytes_accessed": 2048.0,
                    "text": "4096 FLOPs (the reference: 4096)",
                },
                "program": _program(rng) if index == 0 else None,
            }
        cases.append(case)
    passed = sum(case["verdict"] == "accepted" for case in cases)
    message = "" if verdict == "accepted" else f"{verdict.replace('_', ' ')} on case-{rng.randint(0, 11)}"
    return {
        "problem": problem,
        "verdict": verdict,
        "passed": passed,
        "total": len(cases),
        "message": message,
        "cases": cases,
        "stdout": "loss 0.231\n" * rng.randint(0, 8),
        "stdout_truncated": False,
        "output": [
            {"kind": "trace", "cases": ["case-0"], "text": "tracing\n", "cut_bytes": 0, "unordered": False}
        ],
        "backend": "cpu",
        "elapsed_ms": round(rng.uniform(300, 4000), 1),
    }


def manifest_doc(problem: str, revision: int = 1) -> dict[str, Any]:
    return {
        "judge_version": "0.40.0",
        "jax_version": "0.4.38",
        "jaxlib_version": "0.4.38",
        "problem": problem,
        "problem_revision": revision,
        "problem_hash": uuid.uuid5(uuid.NAMESPACE_URL, f"{problem}/{revision}").hex * 2,
        "sandbox_backend": "nsjail",
    }


def case_events(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(kind, data) of every event a grading publishes, in order, the final ``result`` last."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("status", {"status": "running", "attempt": 1, "cases": len(result["cases"]), "public": 4})
    ]
    events += [("case", {"index": i, "case": case}) for i, case in enumerate(result["cases"])]
    events.append(("result", {"status": "done", "verdict": result["verdict"], "result": result}))
    return events


def _pick(rng: random.Random, weighted: tuple[tuple[str, float], ...]) -> str:
    roll = rng.random()
    for value, share in weighted:
        roll -= share
        if roll < 0:
            return value
    return weighted[0][0]


@dataclass
class Population:
    """The rows of a platform's judge: ``rows`` submissions over a year, most of them of one key."""

    seed: int
    rows: int
    #: Pools of serialized code and results (building a fresh 8 KB result per row would take longer
    #: than the database takes to store it); rows pick from them at random.
    codes: list[str] = field(default_factory=list)
    results: dict[str, list[str]] = field(default_factory=dict)
    manifests: list[str] = field(default_factory=list)
    #: Ids of some rows, to name in ``regrade_of`` (about 1% of rows are regrades).
    originals: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        self.codes = [code_text(rng) for _ in range(200)]
        self.results = {
            verdict: [json.dumps(result_doc(rng, "problem-0", verdict)) for _ in range(12)]
            for verdict, _ in VERDICTS
        }
        # Popularity of problems as Zipf's law has it: problem-0 takes a fifth of the rows, problem-59 0.4%.
        self._problem_weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(PROBLEMS)))
        self.manifests = [json.dumps(manifest_doc(f"problem-{p}")) for p in range(PROBLEMS)]
        self._rng = rng

    def row(self, index: int) -> dict[str, Any]:
        """Row ``index`` (rows are made in creation order, oldest first); JSON columns as text."""
        rng = self._rng
        key = MAIN_KEY if rng.random() < 0.8 else rng.choice(OTHER_KEYS)
        problem = rng.choices(range(PROBLEMS), cum_weights=self._problem_weights)[0]
        created = START + timedelta(seconds=YEAR_S * index / self.rows + rng.random())
        newest = index >= self.rows - 200  # the last few minutes: some still queued or running
        status = rng.choice(("queued", "queued", "running")) if newest and rng.random() < 0.5 else "done"
        if status == "done" and rng.random() < 0.004:
            status = "failed"
        verdict = _pick(rng, VERDICTS) if status == "done" else None
        ident = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        regrade_of = rng.choice(self.originals) if self.originals and rng.random() < 0.01 else None
        if rng.random() < 0.02 and len(self.originals) < 5000:
            self.originals.append(ident)
        # A tenth of the rows come from 50 busy learners, the rest from every learner alike.
        user = f"learner-{rng.randrange(50) if rng.random() < 0.1 else rng.randrange(USERS)}"
        course = rng.randrange(COURSES)
        tags = {"course": f"c{course}", "assignment": f"c{course}-a{rng.randrange(ASSIGNMENTS // COURSES)}"}
        finished = created + timedelta(seconds=rng.uniform(1, 30)) if status in ("done", "failed") else None
        hook = "https://platform.example/judge-hook" if rng.random() < 0.5 else None
        return {
            "id": ident,
            "problem": f"problem-{problem}",
            "code": rng.choice(self.codes),
            "status": status,
            "verdict": verdict,
            "result": rng.choice(self.results[verdict]) if verdict else None,
            "error": "the judge could not grade it (OSError) after 3 attempts"
            if status == "failed"
            else None,
            "attempts": 0 if status == "queued" else 1,
            "manifest": self.manifests[problem],
            "key_name": key,
            "key_id": key,
            "client_address": None,
            "callback_url": hook,
            "callback_state": None if hook is None else ("delivered" if finished else "pending"),
            "created_at": created,
            "started_at": created if status != "queued" else None,
            "finished_at": finished,
            "node": None,
            "enqueued_at": None,
            "external_user": user,
            "tags": json.dumps(tags),
            "regrade_of": regrade_of,
        }
