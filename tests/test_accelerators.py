"""Grading per backend (issue 42): ``judge check --backend``, per-backend tolerances and the matmul precision
a problem grades at, the measured table in docs/accelerators.md held to the specs, capability routing.

No accelerator is needed: the backend run is exercised on the CPU (``--backend cpu`` runs the same process
and comparison a TPU run does), and the TPU's figures are the committed measurement."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.authoring.statement import render_rules
from judge.check import run_checks
from judge.check.backend_check import _outcome, _same_as_reference, _scales
from judge.check.backend_table import markdown, spec_settings, summaries
from judge.core.accelerators import BackendError, detect_backend, jax_can_use, parse_backend
from judge.core.compare import bind
from judge.core.expected import case_key, matmul_precision
from judge.core.problems import ProblemSet, load_problem
from judge.core.spec import BackendCompare, CompareSpec, Tolerance
from judge.core.verdicts import Verdict
from judge.dispatch.capabilities import SUBMISSIONS_QUEUE, can_grade, node_queues, queue_for
from sandbox.shared.wire import dumps_tree
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT

PROBLEMS = ROOT / "problems"
DOC = ROOT / "docs" / "accelerators.md"


# ----------------------------------------------------------------------------------- the spec's settings


def test_a_backend_tolerance_replaces_only_the_fields_it_names() -> None:
    spec = CompareSpec.model_validate(
        {
            "tolerance": {"float32": {"rtol": 1e-5, "atol": 1e-6, "well_inside": 0.75}},
            "backend": {
                "tpu": {"reason": "square roots differ there", "tolerance": {"float32": {"rtol": 2e-4}}}
            },
        }
    )
    tpu = spec.tolerance_on("tpu")["float32"]
    assert (tpu.rtol, tpu.atol, tpu.well_inside) == (2e-4, 1e-6, 0.75)
    assert spec.tolerance_on("cpu")["float32"] == spec.tolerance["float32"]
    assert spec.tolerance_on("gpu")["float32"] == spec.tolerance["float32"]  # a backend not named: the base
    assert spec.on("tpu").tolerance["bfloat16"] == spec.tolerance["bfloat16"]


@pytest.mark.parametrize(
    "backend",
    [
        {"cuda": {"reason": "another path there", "tolerance": {"float32": {"rtol": 1e-4}}}},  # not a backend
        {"tpu": {"tolerance": {"float32": {"rtol": 1e-4}}}},  # no reason for the statement
        {"tpu": {"reason": "another path there", "tolerance": {}}},  # nothing differs
        {
            "tpu": {"reason": "another path there", "tolerance": {"float64": {"rtol": 1e-4}}}
        },  # not a case dtype
        {"tpu": {"reason": "another path there", "tolerance": {"float32": {"rtol": -1}}}},
    ],
)
def test_a_backend_setting_that_says_nothing_usable_is_refused(backend: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        CompareSpec.model_validate({"backend": backend})


def test_the_matmul_precision_is_one_of_jax_s() -> None:
    with pytest.raises(ValidationError):
        CompareSpec.model_validate({"matmul_precision": "bfloat16_3x"})
    assert CompareSpec.model_validate({"matmul_precision": "highest"}).matmul_precision == "highest"


def test_the_precision_is_part_of_the_expected_output_s_cache_key() -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    case = problem.cases[0]
    spec = problem.spec.model_copy(
        update={"compare": problem.spec.compare.model_copy(update={"matmul_precision": "highest"})}
    )
    highest = type(problem)(**{**problem.__dict__, "spec": spec})
    assert case_key(problem, case) != case_key(highest, case)


def test_the_statement_states_the_precision_and_each_backend_s_tolerance() -> None:
    for slug, wanted in [
        ("rotary-embedding", ["default_matmul_precision('highest')", "Graded on a TPU", "524288 ulp"]),
        ("adamw", ["Graded on a TPU", "rtol 0.0002 + atol 2e-05"]),
        ("prng-key-splitting", ["Graded on a TPU", "atol 0.0004"]),
        ("piecewise-switch", ["Graded on a TPU", "rtol 0.002"]),
        ("matrix-power-loop", ["default_matmul_precision('highest')"]),
        ("remat-tanh-stack", ["default_matmul_precision('highest')"]),
        ("rotary-embedding", ["excess precision", "cast to bfloat16 compute the float32 rotation there"]),
    ]:
        text = render_rules(load_problem(PROBLEMS / slug).spec)
        for words in wanted:
            assert words in text, (slug, words)
    assert "Graded on a" not in render_rules(load_problem(PROBLEMS / "masked-mean").spec)


# ---------------------------------------------------------------------------------- precision in programs


def test_the_reference_traces_its_products_at_the_problem_s_precision() -> None:
    import jax
    import jax.numpy as jnp

    problem = load_problem(PROBLEMS / "batched-attention")
    assert problem.spec.compare.matmul_precision == "highest"
    a = jnp.ones((2, 2), jnp.float32)
    with matmul_precision(problem):
        inside = str(jax.make_jaxpr(jnp.dot)(a, a))
    outside = str(jax.make_jaxpr(jnp.dot)(a, a))
    assert "HIGHEST" in inside and "HIGHEST" not in outside


#: In a process of its own: ``Captured`` patches JAX's MLIR context for the whole process.
TRACE_AT_PRECISION = """
import json, jax, jax.numpy as jnp
from sandbox.inside import tracer
cap = tracer.Captured()
if PRECISION:
    cap.use_matmul_precision(PRECISION)
def user(a, b):
    # A submission that flips the global setting while it loads is set back (restore_config); a product it
    # gives a precision of its own keeps that one.
    return jnp.dot(a, b), jnp.dot(a, b, precision="default")
jax.config.update("jax_default_matmul_precision", "default")
cap.restore_config()
spec = jax.ShapeDtypeStruct((4, 4), jnp.float32)
traced = cap.jit(user).trace(spec, spec)
cap.lower(traced.jaxpr)
text = cap.lower.text(1 << 20)
print(json.dumps([line.strip() for line in text.splitlines() if "dot_general" in line]))
"""


@pytest.mark.parametrize("precision", ["highest", None])
def test_the_sandbox_lowers_the_submission_s_products_at_the_job_s_precision(precision: str | None) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"PRECISION = {precision!r}\n" + TRACE_AT_PRECISION],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout.strip().splitlines()[-1])
    if precision == "highest":
        assert "HIGHEST" in first  # the job's precision, in the program the executor compiles
    else:
        assert "HIGHEST" not in first
    assert "HIGHEST" not in second  # the submission's own choice for its own product


def test_the_grading_job_carries_the_problem_s_precision_to_the_tracer() -> None:
    from judge.core.grader import build_session

    problem = load_problem(PROBLEMS / "batched-attention")
    job = build_session(problem, "code", problem.public_cases[:1], [False], max_output_bytes=1 << 20)
    assert job.matmul_precision == "highest"
    plain = load_problem(PROBLEMS / "masked-mean")
    assert (
        build_session(
            plain, "code", plain.public_cases[:1], [False], max_output_bytes=1 << 20
        ).matmul_precision
        is None
    )


# -------------------------------------------------------------------------------- judge check --backend


def _copy_fixture(tmp_path: Path) -> Path:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    root = tmp_path / "problems" / FIXTURE_SLUG
    shutil.copytree(problem.root, root)
    (tmp_path / "reference").mkdir()
    shutil.copy(problem.reference_path, tmp_path / "reference" / problem.reference_path.name)
    return root


@pytest.mark.slow
def test_check_on_a_backend_reports_every_value_solution_there_and_catches_one_that_fails(
    tmp_path: Path,
) -> None:
    root = _copy_fixture(tmp_path)
    # A wrong answer filed under accepted/: on the backend it must be an error of the backend check.
    (root / "solutions" / "accepted" / "adds_factor.py").write_bytes(
        (root / "solutions" / "wrong_answer" / "adds_factor.py").read_bytes()
    )
    report = run_checks([root], platform="cpu", separate_runs=False)
    problem = report.problems[0]
    outcome = problem.check("backend")
    assert outcome.skipped is None
    rows = {row.solution: row for row in problem.margins}
    assert all(row.backend == "cpu" for row in rows.values())
    assert rows["reference"].verdict is Verdict.ACCEPTED and rows["reference"].rejecting == 0
    assert rows["accepted/tree_util_map.py"].verdict is Verdict.ACCEPTED
    assert rows["wrong_answer/adds_factor.py"].verdict is Verdict.WRONG_ANSWER
    assert rows["wrong_answer/adds_factor.py"].strong >= 2
    assert rows["accepted/adds_factor.py"].verdict is Verdict.WRONG_ANSWER
    errors = [f.message for f in outcome.findings if f.severity.value == "error"]
    assert len(errors) == 1 and errors[0].startswith("accepted/adds_factor.py is rejected on cpu on ")


def test_without_a_backend_the_backend_check_is_skipped(tmp_path: Path) -> None:
    report = run_checks([tmp_path / "missing"], separate_runs=False)
    assert report.problems[0].check("backend").skipped


def test_a_check_on_the_cpu_alone_makes_no_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a platform run needs one: a check killed mid-way (a caller's time limit) left an empty
    ``judge-backend-*`` folder behind in the host's temporary directory."""
    from judge.check import runner

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    seen: list[list[str]] = []
    checked = runner.check_problem

    def check_problem(root: Path, **options: Any) -> Any:
        seen.append(sorted(os.listdir(scratch)))
        return checked(root, **options)

    monkeypatch.setattr(runner, "check_problem", check_problem)
    run_checks([tmp_path / "missing"], separate_runs=False)
    assert seen == [[]]


# ------------------------------------------------------------------------------------ host detection


def test_the_host_s_backend_is_read_from_its_devices_and_environment() -> None:
    def none(pattern: str) -> list[str]:
        return []

    assert detect_backend({}, none) == "cpu"
    assert detect_backend({"TPU_ACCELERATOR_TYPE": "v5litepod-4"}, none) == "tpu"
    assert detect_backend({}, lambda p: ["/dev/accel0"] if p.startswith("/dev/accel") else []) == "tpu"
    assert detect_backend({}, lambda p: ["/dev/nvidia0"] if "nvidia" in p else []) == "gpu"
    assert detect_backend({"JUDGE_BACKEND": "cpu", "TPU_NAME": "x"}, none) == "cpu"  # the override wins
    with pytest.raises(BackendError, match="unknown backend 'cuda'"):
        parse_backend("cuda")
    assert jax_can_use("cpu", lambda name: None)
    assert jax_can_use("tpu", lambda name: object() if name == "libtpu" else None)
    assert not jax_can_use("gpu", lambda name: object() if name == "libtpu" else None)


# ------------------------------------------------------------------------------------ queue routing


def test_a_submission_is_claimed_only_by_a_node_of_its_backend() -> None:
    assert queue_for("cpu") == SUBMISSIONS_QUEUE  # a deployment without accelerators sees no change
    assert queue_for("tpu") == f"{SUBMISSIONS_QUEUE}.tpu"
    assert node_queues("cpu") == [SUBMISSIONS_QUEUE]
    assert node_queues("tpu") == [f"{SUBMISSIONS_QUEUE}.tpu"]
    assert node_queues("tpu", also_cpu=True) == [f"{SUBMISSIONS_QUEUE}.tpu", SUBMISSIONS_QUEUE]
    assert not can_grade("cpu", "tpu") and not can_grade("gpu", "tpu") and not can_grade("tpu", "gpu")
    assert can_grade("tpu", "tpu") and can_grade("cpu", "cpu")
    assert not can_grade("tpu", "cpu") and can_grade("tpu", "cpu", also_cpu=True)
    with pytest.raises(BackendError):
        queue_for("npu")


# ------------------------------------------------------------------------ the measured table and the specs


def _table(title: str) -> list[list[str]]:
    """The rows of the Markdown table under the heading ``title`` in docs/accelerators.md."""
    text = DOC.read_text()
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def _single_device() -> list[str]:
    return [
        p.name
        for p in sorted(PROBLEMS.iterdir())
        if (p / "problem.toml").is_file() and load_problem(p).spec.sandbox.devices == 1
    ]


def test_every_problem_s_accelerator_settings_are_the_ones_the_measured_table_states() -> None:
    settings = {row[0]: row[1] for row in _table("Settings in the specs")}
    for slug in _single_device():
        declared = spec_settings(load_problem(PROBLEMS / slug).spec)
        assert declared == settings.get(slug, "none"), slug


def test_every_problem_that_failed_on_the_tpu_declares_a_precision_or_a_tpu_tolerance() -> None:
    before = _table("Before: default precision, CPU tolerances")
    assert len(before) == 7  # the table is read: six problems and the other 15
    for row in before:
        slug = row[0]
        if slug == "the other 15":
            continue
        outside = int(re.match(r"(\d+) of", row[1]).group(1))  # type: ignore[union-attr]
        passing, total = map(int, row[2].split("/"))
        if outside or passing < total:
            assert spec_settings(load_problem(PROBLEMS / slug).spec) != "none", slug


def test_the_summary_table_counts_rows_of_the_backend_run() -> None:
    report = {
        "problems": [
            {
                "problem": "demo",
                "checks": [
                    {
                        "name": "backend",
                        "notes": [
                            "wrong_answer/m.py: its values pass on tpu as on the CPU: the sandboxed "
                            "grading's other checks (program rules, inputs unchanged) reject it",
                            "wrong_answer/t.py: its values on tpu are the reference's own there, bit for "
                            "bit, on every case (declared)",
                        ],
                    }
                ],
                "margins": [
                    {
                        "solution": "accepted/a.py",
                        "backend": "cpu",
                        "expected": "accepted",
                        "verdict": "accepted",
                        "ratio": 0.01,
                        "rejecting": 0,
                        "cases": 3,
                    },
                    {
                        "solution": "reference",
                        "backend": "tpu",
                        "expected": "accepted",
                        "verdict": "wrong_answer",
                        "ratio": 3.1,
                        "rejecting": 2,
                        "cases": 3,
                    },
                    {
                        "solution": "accepted/a.py",
                        "backend": "tpu",
                        "expected": "accepted",
                        "verdict": "wrong_answer",
                        "ratio": 3.1,
                        "rejecting": 0,
                        "cases": 3,
                    },
                    {
                        "solution": "wrong_answer/w.py",
                        "backend": "tpu",
                        "expected": "wrong_answer",
                        "verdict": "wrong_answer",
                        "ratio": "inf",
                        "rejecting": 3,
                        "cases": 3,
                    },
                    {
                        "solution": "wrong_answer/m.py",
                        "backend": "tpu",
                        "expected": "wrong_answer",
                        "verdict": "accepted",
                        "ratio": None,
                        "rejecting": 0,
                        "cases": 3,
                    },
                    {
                        "solution": "wrong_answer/t.py",
                        "backend": "tpu",
                        "expected": "wrong_answer",
                        "verdict": "accepted",
                        "ratio": None,
                        "rejecting": 0,
                        "cases": 3,
                    },
                ],
            }
        ]
    }
    (row,) = summaries(report)
    assert (row.platform, row.reference_outside, row.cases) == ("tpu", 2, 3)
    assert (row.accepted_passing, row.accepted, row.worst_accepted) == (0, 1, 3.1)
    assert (row.wrong_rejected, row.wrong, row.sandbox_rejected, row.same_as_reference) == (2, 3, 1, 1)
    assert (
        "| demo | 2 of 3 | 0/1 | 2/3 (1 by the sandbox; 1 the reference's own values there, declared) | 3.1x "
        "| none |" in markdown([row], {"demo": "none"})
    )


def test_the_spec_settings_text_names_each_override() -> None:
    assert spec_settings(load_problem(PROBLEMS / "masked-mean").spec) == "none"
    assert spec_settings(load_problem(PROBLEMS / "adamw").spec) == "tpu: float32 rtol 0.0002, atol 2e-05"
    assert Tolerance(rtol=1e-5).describe() == "rtol 1e-05"


def test_rotary_embedding_declares_the_wrong_answer_a_tpu_computes_as_the_reference() -> None:
    spec = load_problem(PROBLEMS / "rotary-embedding").spec
    assert set(spec.compare.backend["tpu"].same_as_reference) == {
        "wrong_answer/bfloat16_tables_for_float32.py"
    }
    assert spec_settings(spec).endswith(
        "tpu: same as the reference: wrong_answer/bfloat16_tables_for_float32.py"
    )
    for bad in [{"accepted/x.py": "a sentence of why it is so"}, {"wrong_answer/x.py": "short"}]:
        with pytest.raises(ValidationError):
            BackendCompare.model_validate(
                {
                    "reason": "another path there",
                    "tolerance": {"float32": {"rtol": 1e-4}},
                    "same_as_reference": bad,
                }
            )


# ------------------------------------------------------------------- the backend check's comparison


def _frame(folder: Path, name: str, output: object, gradient: object = None) -> None:
    (folder / name).write_bytes(dumps_tree([output, gradient]))


def test_the_backend_check_compares_with_the_magnitudes_the_cpu_s_grading_uses(tmp_path: Path) -> None:
    import numpy as np

    # An element whose terms cancelled: 1e-3 from terms of magnitude 10. Off by 5e-6, it is 5x the plain
    # bound (atol 1e-6 + rtol 1e-5 * 1e-3) but well inside the bound the grading uses there (rtol of 10).
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    case = problem.cases[0]
    checker = bind(CompareSpec.model_validate({}), problem.spec.output)
    expected = np.array([1e-3, 2.0], np.float32)
    _frame(tmp_path, "r.0.frame", expected + np.float32(5e-6))
    plain = _outcome(checker, case, expected, None, None, tmp_path, "r", 0)
    scaled = _outcome(checker, case, expected, None, np.array([10.0, 2.0], np.float32), tmp_path, "r", 0)
    assert not plain.ok and plain.ratio > 4
    assert scaled.ok and scaled.ratio < 0.3  # the element 2.0, off by 5e-6 too
    # A [gradient] problem's magnitudes are the pair (output, gradient): the gradient gets the second.
    gradient = {"x": expected}
    _frame(tmp_path, "r.1.frame", expected, {"x": expected + np.float32(5e-6)})
    pair = (np.array([1e-3, 2.0], np.float32), {"x": np.array([10.0, 2.0], np.float32)})
    assert _outcome(checker, case, expected, gradient, pair, tmp_path, "r", 1).ok
    assert not _outcome(checker, case, expected, gradient, None, tmp_path, "r", 1).ok
    assert _scales(pair, True) == pair and _scales(expected, False) == (expected, None)


def test_a_wrong_answer_is_the_reference_s_own_on_a_backend_only_when_every_frame_is_the_same(
    tmp_path: Path,
) -> None:
    import numpy as np

    for i in range(2):
        _frame(tmp_path, f"r.{i}.frame", np.full(3, i, np.float32))
        _frame(tmp_path, f"s0.{i}.frame", np.full(3, i, np.float32))
        _frame(tmp_path, f"s1.{i}.frame", np.full(3, i, np.float32) + np.float32(i * 1e-7))
    assert _same_as_reference(tmp_path, "s0", [0, 1])
    assert not _same_as_reference(tmp_path, "s1", [0, 1])  # one ulp on one case
    assert _same_as_reference(tmp_path, "s1", [0])  # the cases its values fail on the CPU: the same
    assert not _same_as_reference(tmp_path, "s0", [])  # no such case: nothing to declare
    assert not _same_as_reference(tmp_path, "s2", [0])  # no run


def test_the_after_table_states_each_problem_s_settings_and_a_pass_on_the_chip() -> None:
    rows = {row[0]: row for row in _table("After: every single-device problem on the chip")}
    single = _single_device()
    assert len(rows) >= 25 and set(rows) <= set(single)
    # Not in it: the ones the table's notes name as not measured here.
    assert set(single) - set(rows) == {
        "batched-attention",
        "model-ensemble",
        "per-example-clipping",
    }
    for slug, (_, outside, accepted, wrong, _, settings) in rows.items():
        assert settings == spec_settings(load_problem(PROBLEMS / slug).spec), slug
        assert outside.startswith("0 of "), slug
        passing, total = accepted.split("/")
        assert passing == total, slug
        rejected, shipped = map(int, wrong.split(" ")[0].split("/"))
        declared = len(
            load_problem(PROBLEMS / slug).spec.compare.backend.get("tpu", _NO_TPU).same_as_reference
        )
        assert rejected + declared == shipped, slug


_NO_TPU = BackendCompare.model_validate({"reason": "nothing differs there", "tolerance": {"float32": {}}})
