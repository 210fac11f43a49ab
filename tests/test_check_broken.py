"""``judge check`` on deliberately broken problem packages: each breaks one thing and expects the finding
that names it (the check, where, and what).

Each package is a seed problem copied to ``tmp_path`` (with its reference) and edited. Checks that grade
solutions use the process backend, on a trimmed set of solutions, to stay quick.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest

from judge.check import CheckReport, Finding, Severity, run_checks
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics
from judge.check.solutions_check import grade_files
from judge.problems import load_problem
from judge.verdicts import Verdict
from sandbox.backends import get_backend
from sandbox.base import Backend, PopenWorker, Protection, Worker
from sandbox.limits import SandboxLimits
from tests.conftest import ROOT

GNC = "global-norm-clipping"
SGD = "sgd-momentum"
LOOKALIKES = {"example_1_lookalike", "example_2_lookalike", "example_3_lookalike"}
KEEP = {
    GNC: {
        "bare_vector_clipped",
        "root_list_mixed_magnitudes",
        "large_random_clipped",
        "bf16_bare_vector",
        "long_list_deep_nesting",
        *LOOKALIKES,
    },
    SGD: {
        "bare_vector",
        "root_list_of_dicts",
        "bf16_bare_vector",
        "bf16_root_list_of_dicts",
        "long_list_deep_nesting",
        *LOOKALIKES,
    },
}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))


def copy_problem(tmp_path: Path, slug: str, *, keep_generator: bool = False) -> Path:
    """A copy of a seed problem and its reference under ``tmp_path``."""
    root = tmp_path / "problems" / slug
    shutil.copytree(ROOT / "problems" / slug, root, ignore=shutil.ignore_patterns("__pycache__"))
    module = tomllib.loads((root / "problem.toml").read_text())["reference"]
    (tmp_path / "reference").mkdir(exist_ok=True)
    shutil.copy(ROOT / "reference" / f"{module}.py", tmp_path / "reference" / f"{module}.py")
    if not keep_generator:  # so edits of hidden.json are not also reported as drift from the generator
        (root / "generate_cases.py").unlink()
        # A few hidden cases that still cover every dtype, a bare array, a long list node, deep nesting
        # and the examples' structures: fewer compiles.
        keep = KEEP[slug]
        edit_cases(root / "cases" / "hidden.json", lambda cases: [c for c in cases if c["name"] in keep])
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def edit_cases(path: Path, change: Callable[[list[dict]], list[dict]]) -> None:  # type: ignore[type-arg]
    data = json.loads(path.read_text())
    data["cases"] = change(data["cases"])
    path.write_text(json.dumps(data))


def check(root: Path, *, grade: bool = False) -> CheckReport:
    return run_checks([root], backend=get_backend("process") if grade else None, concurrency=2)


def only(report: CheckReport, check_name: str, *, where: str = "", message: str = "") -> Finding:
    """The one error of ``check_name`` whose where and message contain the given texts (``where`` as a
    whole name: ``case example_1`` does not match ``case example_1_lookalike``)."""
    named = re.compile(re.escape(where) + r"(?![\w-])")
    found = [
        f
        for f in report.findings
        if f.check == check_name
        and f.severity is Severity.ERROR
        and named.search(f.where)
        and message in f.message
    ]
    assert len(found) == 1, "\n".join(str(f) for f in report.findings)
    assert report.exit_code == 1
    return found[0]


# --------------------------------------------------------------------------------------------------- spec


def test_bad_spec_field_names_file_field_and_line(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit(root / "problem.toml", 'difficulty = "easy"', 'difficulty = "impossible"')
    edit(root / "problem.toml", "case_time_s = 10", "case_time_s = -1")
    report = check(root)
    finding = only(report, "spec", where="problems/sgd-momentum/problem.toml: difficulty", message="'easy'")
    assert finding.line == 3 and finding.file == str(root / "problem.toml")
    only(report, "spec", where="problem.toml: limits.case_time_s", message="greater than 0")
    skipped = [c.name for c in report.problems[0].checks if c.skipped]
    assert skipped == [
        "statement",
        "starter",
        "cases",
        "reference",
        "examples",
        "coverage",
        "lookalikes",
        "solutions",
        "margins",
    ]


def test_slug_must_match_folder(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit(root / "problem.toml", 'slug = "sgd-momentum"', 'slug = "sgd"')
    only(check(root), "spec", where="problem.toml: slug", message="differs from the folder name")


def test_folder_may_not_allow_accepted_in_place_of_a_failure(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    (root / "problem.toml").write_text(
        (root / "problem.toml").read_text() + '\n[solutions.also_allow]\nwrong_answer = ["accepted"]\n'
    )
    only(check(root), "spec", where="solutions.also_allow.wrong_answer", message="hide a wrong solution")


# ------------------------------------------------------------------------------------- statement, starter


def test_missing_statement_is_a_statement_finding(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    (root / "statement.md").unlink()
    only(check(root), "statement", where="problems/sgd-momentum/statement.md", message="missing")


def test_starter_with_wrong_signature(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    edit(root / "starter.py", "def clip_by_global_norm(grads, max_norm):", "def clip_by_global_norm(grads):")
    finding = only(check(root), "starter", where="starter.py: def clip_by_global_norm")
    assert finding.message == "takes (grads), the spec declares (grads, max_norm)"
    assert finding.line == 5


def test_starter_without_the_function(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    edit(root / "starter.py", "def clip_by_global_norm(", "def clip(")
    only(check(root), "starter", where="starter.py", message="does not define `clip_by_global_norm`")


# --------------------------------------------------------------------------------------------- examples


def test_hand_written_stale_example_instead_of_placeholder(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    stale = (
        "## Example\n\n"
        'Input: grads = {"b": 4.0, "w": [3.0, 0.0]}, max_norm = 1.0\n'
        'Output: {"clipped": {"b": 0.4, "w": [0.3, 0.0]}, "global_norm": 5.0}\n'
    )
    edit(root / "statement.md", "{{examples}}\n", stale)
    report = check(root)
    only(report, "examples", where="statement.md", message="no {{examples}} line")
    line = (root / "statement.md").read_text().splitlines().index(stale.splitlines()[3]) + 1
    finding = only(report, "examples", where=f"statement.md: line {line}", message="matches no public case's")
    assert finding.line == line
    assert (
        '{"clipped": {"b": 0.8, "w": [0.6, 0.0]}, "global_norm": 5.0}' in finding.message
    )  # the real output
    only(report, "examples", where="cases/public.json: case example_2", message="input is not shown")


def test_rules_placeholder_missing_or_twice_or_hand_written(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    edit(root / "statement.md", "{{rules}}\n", "## How your function is run and judged\n\n- jit.\n")
    report = check(root)
    only(report, "statement", where="statement.md", message="no {{rules}} line")
    only(report, "statement", where="statement.md: line", message="hand-written")
    edit(root / "statement.md", "## How your function is run and judged\n", "{{rules}}\n{{rules}}\n")
    only(check(root), "statement", where="statement.md", message="{{rules}} appears 2 times")


def test_placeholder_twice(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit(root / "statement.md", "{{examples}}\n", "{{examples}}\n\n{{examples}}\n")
    only(check(root), "examples", where="statement.md", message="appears 2 times")


def test_expected_output_contradicting_the_reference(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    edit(root / "cases" / "public.json", '"global_norm": 5.0}', '"global_norm": 6.0}')
    finding = only(
        check(root), "examples", where="problems/global-norm-clipping/cases/public.json: case example_1"
    )
    assert finding.where.endswith("case example_1.expected")
    assert finding.message.endswith('expected["global_norm"]: written 6, the reference gives 5')


def test_public_case_without_explanation_warns_and_werror_fails(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit_cases(root / "cases" / "public.json", lambda cases: [{**cases[0], "explanation": None}, *cases[1:]])
    report = check(root)
    (warning,) = report.findings
    assert warning.severity is Severity.WARNING and warning.check == "examples"
    assert warning.where.endswith("cases/public.json: case example_1")
    assert report.exit_code == 0
    assert run_checks([root], werror=True).exit_code == 1


# ------------------------------------------------------------------------------------------------ cases


def test_case_with_4d_leaf_violates_constraints(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)

    def four_d(cases: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        case = next(c for c in cases if c["name"] == "bare_vector_clipped")
        case["args"]["grads"] = [[[case["args"]["grads"]]]]
        return cases

    edit_cases(root / "cases" / "hidden.json", four_d)
    finding = only(
        check(root),
        "cases",
        where="problems/global-norm-clipping/cases/hidden.json: case bare_vector_clipped",
    )
    assert finding.message == "violates the constraints: grads: 4 dimensions, at most 3 allowed"


def test_case_with_negative_max_norm(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    edit(root / "cases" / "public.json", '"max_norm": 2.0', '"max_norm": -2.0')
    finding = only(check(root), "cases", where="cases/public.json: case example_2")
    assert finding.message == "violates the constraints: max_norm: -2.0, must be greater than 0.0"


def test_case_with_mismatched_trees(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit(
        root / "cases" / "public.json",
        '"velocity": {"w": [0.0, 0.0], "b": 0.0}',
        '"velocity": {"w": [0.0], "b": 0.0}',
    )
    finding = only(check(root), "cases", where="cases/public.json: case example_1")
    assert (
        finding.message == 'violates the constraints: velocity["w"]: shape (1,), params["w"] has shape (2,)'
    )


def test_validator_that_accepts_junk(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    (root / "validator.py").write_text(
        "JUNK = [{'why': '4-D leaf', 'args': {'grads': [[[[1.0]]]], 'max_norm': 1.0}},\n"
        "        {'why': 'string leaf', 'args': {'grads': 'x', 'max_norm': 1.0}}]\n\n\n"
        "def validate(args, dtype):\n    return []\n"
    )
    finding = only(check(root), "cases", where="validator.py: JUNK[0] (4-D leaf)")
    assert "neither the converter nor validate() rejects it" in finding.message


def test_missing_validator(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    (root / "validator.py").unlink()
    only(check(root), "cases", where="problems/sgd-momentum/validator.py", message="missing")


def test_a_bound_the_reference_cannot_meet_is_found_at_the_edge(tmp_path: Path) -> None:
    """The original defect: nothing bounded the gradients, and the float32 sum of squares overflowed."""
    root = copy_problem(tmp_path, GNC)
    edit(root / "validator.py", '        *check_max_abs(grads, "grads", MAX_ABS),\n', "")
    edit(
        root / "validator.py",
        '"args": {"grads": {"w": [[1e15] * 64] * 64}',
        '"args": {"grads": {"w": [1e20, 1e20]}',
    )
    report = check(root)
    finding = only(report, "reference", message="non-finite values")
    assert 'non-finite values at output["global_norm"] on an input' in finding.message
    assert "validator.py EDGE[0] (every value at the bound)" in finding.message
    only(report, "cases", where="validator.py: JUNK[12] (squares overflow float32)", message="was accepted")


def test_an_edge_input_the_validator_rejects(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit(root / "validator.py", '"momentum": 0.999,', '"momentum": 1.5,')
    finding = only(check(root), "cases", where="validator.py: EDGE[0]")
    assert (
        finding.message
        == "an EDGE input must satisfy the constraints, but: momentum: 1.5, must be less than 1.0"
    )


def test_case_file_drifted_from_its_generator(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC, keep_generator=True)
    edit(root / "cases" / "hidden.json", '"max_norm": 1.5}', '"max_norm": 1.25}')
    only(
        check(root), "cases", where="cases/hidden.json", message="differs from what generate_cases.py writes"
    )


# -------------------------------------------------------------------------------------------- reference


def test_reference_that_fails_under_jit(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    reference = tmp_path / "reference" / "global_norm_clipping.py"
    edit(
        reference,
        "    safe_norm = jnp.where(",
        "    if global_norm > max_norm:\n        pass\n    safe_norm = jnp.where(",
    )
    report = check(root)
    finding = only(report, "reference", where="reference/global_norm_clipping.py: cases example_1, example_2")
    assert "TracerBoolConversionError" in finding.message
    assert reference.read_text().splitlines()[finding.line - 1].strip() == "if global_norm > max_norm:"  # type: ignore[operator]
    checks = report.problems[0]
    assert checks.check("examples").skipped and checks.check("solutions").skipped


def test_reference_that_is_not_deterministic(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    reference = tmp_path / "reference" / "global_norm_clipping.py"
    edit(reference, "import jax\n", "import random\n\nimport jax\n")
    edit(
        reference,
        "    global_norm = jnp.sqrt(sum_sq)",
        "    global_norm = jnp.sqrt(sum_sq) + random.random()",
    )
    report = check(root)
    finding = only(report, "reference", where="case example_1", message="not deterministic")
    assert finding.message == 'not deterministic: two runs differ at output["clipped"]["b"]'


def test_reference_with_undeclared_output_structure(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    reference = tmp_path / "reference" / "global_norm_clipping.py"
    edit(reference, 'return {"clipped": clipped, "global_norm": global_norm}', "return clipped, global_norm")
    edit(reference, "-> dict[str, Any]:", "-> Any:")
    finding = only(check(root), "reference", where="case example_1")
    assert finding.message == "returns a tuple of 2, the spec declares output.kind = 'dict'"


def test_reference_with_integer_output(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    reference = tmp_path / "reference" / "global_norm_clipping.py"
    edit(reference, '"global_norm": global_norm}', '"global_norm": global_norm.astype(jnp.int32)}')
    finding = only(check(root), "reference", where="case example_1")
    assert finding.message.startswith('output["global_norm"]: dtype int32, expected one of')


# --------------------------------------------------------------------------------------------- coverage


def test_hidden_cases_missing_bfloat16(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit_cases(root / "cases" / "hidden.json", lambda cases: [c for c in cases if c["dtype"] != "bfloat16"])
    finding = only(check(root), "coverage", where="problems/sgd-momentum/cases/hidden.json: dtype bfloat16")
    assert "no hidden case uses it" in finding.message


def test_short_lists_and_shallow_trees_warn_and_the_extent_is_noted(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    edit_cases(
        root / "cases" / "hidden.json", lambda cases: [c for c in cases if "long_list" not in c["name"]]
    )
    report = check(root)
    warnings = [f for f in report.findings if f.check == "coverage"]
    assert {f.where.rsplit(": ", 1)[1] for f in warnings} == {
        "argument params",
        "argument grads",
        "argument velocity",
    }
    assert all(f.severity is Severity.WARNING for f in warnings)
    assert any(
        "the longest list node any hidden case gives `params` has 2 items" in f.message for f in warnings
    )
    assert any("nest `grads` at most 3 containers deep" in f.message for f in warnings)
    (note,) = report.problems[0].check("coverage").notes
    assert note.startswith("hidden cases cover `params`: list nodes up to 2 items, nesting up to 3 levels")


# ------------------------------------------------------------------------------------------- lookalikes


def test_an_example_structure_missing_from_the_hidden_cases(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, GNC)
    edit_cases(
        root / "cases" / "hidden.json", lambda cases: [c for c in cases if c["name"] != "example_2_lookalike"]
    )
    finding = only(check(root), "lookalikes", where="cases/public.json: case example_2")
    assert finding.message.startswith("no hidden case has this example's input structure, shapes and dtype")


def test_a_lookalike_that_expects_the_published_output(tmp_path: Path) -> None:
    root = copy_problem(tmp_path, SGD)
    public = json.loads((root / "cases" / "public.json").read_text())["cases"]

    def same_values(cases: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        lookalike = next(c for c in cases if c["name"] == "example_3_lookalike")
        lookalike["args"] = public[2]["args"]
        return cases

    edit_cases(root / "cases" / "hidden.json", same_values)
    finding = only(check(root), "lookalikes", where="cases/public.json: case example_3")
    assert "(example_3_lookalike) expect the same output" in finding.message


# -------------------------------------------------------------------------------------------- solutions


@pytest.mark.slow
def test_misfiled_solutions_and_weak_cases(tmp_path: Path) -> None:
    """A wrong solution under accepted/, a correct one under wrong_answer/, a wrong one only one case
    catches, an unknown folder, and a folder allowed a second verdict."""
    root = copy_problem(tmp_path, GNC)
    seeds = ROOT / "problems" / GNC / "solutions"
    shutil.rmtree(root / "solutions")
    for folder, source in [
        ("accepted", "accepted/tree_map_minimum.py"),
        ("accepted", "wrong_answer/l1_norm.py"),
        ("wrong_answer", "accepted/flatten_where.py"),
        ("wrong_answer", "wrong_answer/no_cast_back.py"),
        ("runtime_error", "trace_error/python_if.py"),
        ("maybe", "accepted/optax_style.py"),
    ]:
        (root / "solutions" / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(seeds / source, root / "solutions" / folder)
    (root / "problem.toml").write_text(
        (root / "problem.toml").read_text() + '\n[solutions.also_allow]\nruntime_error = ["trace_error"]\n'
    )
    # Keep one bfloat16 case: only it separates a solution that does not cast back to bfloat16.
    edit_cases(
        root / "cases" / "hidden.json",
        lambda cases: [c for c in cases if c["dtype"] == "float32" or c["name"] == "bf16_bare_vector"],
    )
    report = check(root, grade=True)
    only(
        report,
        "solutions",
        where="solutions/accepted/l1_norm.py",
        message="expected accepted, got wrong_answer",
    )
    only(
        report,
        "solutions",
        where="solutions/wrong_answer/flatten_where.py",
        message="expected wrong_answer, got accepted",
    )
    only(report, "solutions", where="solutions/maybe/optax_style.py", message="is not a verdict")
    assert not [f for f in report.findings if "python_if" in f.where or "tree_map_minimum" in f.where]
    warning = next(f for f in report.findings if f.check == "margins")
    assert warning.where.endswith("solutions/wrong_answer/no_cast_back.py")
    assert warning.message.startswith(
        "killed by 1 hidden case at its dtype's 'well outside' margin or more (want 2; hidden cases "
        "rejecting it: bf16_bare_vector at inf)"
    )
    rows = {row.solution: row for row in report.problems[0].margins}
    assert rows["wrong_answer/no_cast_back.py"].rejecting == 1
    assert rows["wrong_answer/no_cast_back.py"].strong == 1
    assert rows["accepted/l1_norm.py"].verdict.value == "wrong_answer"


class FlakyStartBackend(Backend):
    """The process backend, except that its first ``failures`` workers exit before they are ready."""

    name: ClassVar[str] = "flaky"
    insecure: ClassVar[bool] = True

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.inner = get_backend("process")

    def available(self) -> str | None:
        return None

    def protections(self) -> list[Protection]:
        return []

    def start(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        if self.failures > 0:
            self.failures -= 1
            return PopenWorker(self.name, ["/bin/sh", "-c", "exit 3", "sh"], {"PATH": "/usr/bin:/bin"})
        return self.inner.start(limits, slot)


@pytest.mark.slow
@pytest.mark.parametrize(("failures", "graded"), [(2, True), (3, False)])
def test_a_worker_that_fails_to_start_is_tried_again(tmp_path: Path, failures: int, graded: bool) -> None:
    root = copy_problem(tmp_path, GNC)
    shutil.rmtree(root / "solutions")
    (root / "solutions" / "accepted").mkdir(parents=True)
    shutil.copy(
        ROOT / "problems" / GNC / "solutions" / "accepted" / "tree_map_minimum.py",
        root / "solutions" / "accepted",
    )
    ctx = CheckContext(root=root, diag=Diagnostics(GNC, tmp_path), problem=load_problem(root), concurrency=1)
    (grading,) = grade_files(
        ctx,
        FlakyStartBackend(failures),
        [("accepted", root / "solutions" / "accepted" / "tree_map_minimum.py")],
    )
    if graded:
        assert grading.result is not None and grading.result.verdict is Verdict.ACCEPTED, grading.error
    else:
        assert grading.result is None and grading.error is not None
        assert grading.error.startswith("WorkerStartError (after 3 tries): ")
