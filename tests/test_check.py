"""``judge check`` on the seed problems, its output formats, the statement renderer, and ``judge new``.

The seed check grades every shipped solution, so it runs once (the ``seed_check`` fixture, shared with
tests/test_solutions.py) and one test asserts everything about it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from judge.authoring.scaffold import ScaffoldError, create
from judge.authoring.statement import render_examples, statement_html, statement_markdown
from judge.check import (
    CHECK_NAMES,
    CheckReport,
    Finding,
    ProblemReport,
    Severity,
    known_problems,
    problem_dirs,
    resolve_problem_dirs,
    run_checks,
)
from judge.check.context import MarginRow
from judge.check.formats import annotation, github, junit, markdown_summary, render, text, to_json
from judge.check.margins import TIME_WARN
from judge.check.runner import CheckOutcome
from judge.constraints import (
    check_finite,
    check_has_leaves,
    check_ndim,
    check_number,
    check_same_structure,
    leaves_with_paths,
)
from judge.core.problems import ProblemSet
from judge.core.verdicts import Verdict
from sandbox.backends import get_backend
from sandbox.backends.base import Backend
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT, SEED_CHECK_SLOTS, SeedCheck, seed_check_group

#: Every problem of the repository, found as ``judge check`` finds them: no test names one.
PROBLEMS = known_problems(ROOT / "problems")


def judge(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args], capture_output=True, text=True, timeout=600, cwd=cwd
    )


# ------------------------------------------------------------------------------------- every problem


def test_the_check_covers_every_problem_of_the_repository() -> None:
    assert PROBLEMS, "the repository has no problem"
    assert [p.name for p in problem_dirs([], ROOT / "problems")] == PROBLEMS


@pytest.mark.slow
@pytest.mark.parametrize("slug", [pytest.param(s, marks=seed_check_group(s)) for s in PROBLEMS])
def test_every_problem_passes_the_check_with_werror(seed_check: SeedCheck, slug: str) -> None:
    """The rules a problem must meet are judge check's own (rules, coverage, margins...); this only asks
    that every problem meets them, with no warning."""
    problem = seed_check(slug)
    assert [c.name for c in problem.checks] == list(CHECK_NAMES)
    assert _skipped(problem) == ["backend"], [(c.name, c.skipped) for c in problem.checks]
    findings = _findings_but_time(problem)
    assert findings == [], "\n".join(str(f) for f in findings)
    shipped = list(ProblemSet(ROOT / "problems").get(slug).solutions())
    assert {row.solution for row in problem.margins} == {
        f"{folder}/{file.name}" for folder, file in shipped if folder in ("accepted", "wrong_answer")
    }
    for row in problem.margins:
        assert row.verdict is row.expected and (not row.warning or _time_warning(row)), row
    starter = problem.grade_of(problem.root / "starter.py")
    assert starter.result is not None and starter.result.verdict is not Verdict.ACCEPTED


def _skipped(problem: ProblemReport) -> list[str]:
    """The checks a run skipped: on a host without an accelerator and without `--backend`, only the backend
    check, which runs where `judge check --backend` names a platform (tests/test_accelerators.py)."""
    return [c.name for c in problem.checks if c.skipped is not None]


def _time_warning(row: MarginRow) -> bool:
    """The row warns only because its slowest case took more than half the case time limit (yet passed)."""
    return row.time_share is not None and TIME_WARN < row.time_share <= 1 and "slowest case" in row.warning


def _findings_but_time(problem: ProblemReport) -> list[Finding]:
    """Every finding but the time margin's: the share of the case limit an accepted solution's slowest case
    takes is measured under the suite's own load, not the problem's (an author's CI keeps it)."""
    timed = {row.warning for row in problem.margins if _time_warning(row)}
    return [f for f in problem.findings if not (f.check == "margins" and f.message in timed)]


@pytest.fixture(scope="module")
def fixture_check(backend: Backend) -> CheckReport:
    """``judge check --werror`` on the suite's own fixture problems, every shipped solution graded."""
    return run_checks(problem_dirs([], FIXTURES), backend=backend, concurrency=2, slot_base=SEED_CHECK_SLOTS)


@pytest.mark.slow
@pytest.mark.xdist_group("check-fixtures")
def test_the_fixture_problems_pass_the_check_with_werror(fixture_check: CheckReport) -> None:
    """The problems the tests grade (tests/fixtures/problems) are complete packages, held to every rule
    a contributed problem is held to."""
    assert [p.problem for p in fixture_check.problems] == known_problems(FIXTURES)
    assert len(fixture_check.problems) >= 4
    for problem in fixture_check.problems:
        assert [c.name for c in problem.checks] == list(CHECK_NAMES)
        assert _skipped(problem) == ["backend"], [(c.name, c.skipped) for c in problem.checks]
        findings = _findings_but_time(problem)
        assert findings == [], "\n".join(str(f) for f in findings)
    assert fixture_check.exit_code == 0


@pytest.mark.slow
@pytest.mark.parametrize("slug", [pytest.param(s, marks=seed_check_group(s)) for s in PROBLEMS[:1]])
def test_the_report_of_a_clean_problem_in_every_format(seed_check: SeedCheck, slug: str) -> None:
    report = CheckReport((seed_check(slug),))
    out = text(report)
    assert "margins: accepted want max err <" in out
    assert out.rstrip().endswith("-> OK")
    data = json.loads(render(report, "json"))
    assert data["ok"] is True and data["errors"] == 0
    assert [c["name"] for c in data["problems"][0]["checks"]] == list(CHECK_NAMES)
    xml = ET.fromstring(junit(report))
    assert xml.tag == "testsuites" and xml.get("failures") == "0"
    assert [len(suite.findall("testcase")) for suite in xml] == [len(CHECK_NAMES)]
    lines = github(report).splitlines()
    assert sum(line.startswith("::warning ") for line in lines) == report.warnings


# ---------------------------------------------------------------------------------------------- formats


def _synthetic(werror: bool = False) -> CheckReport:
    tricky = 'a <b> & "c", 100% : d\nsecond line'
    findings = (
        Finding(
            Severity.ERROR,
            "reference",
            "demo",
            "reference/demo.py: case x",
            tricky,
            "/abs/reference/demo.py",
            3,
            path="reference/demo.py",
            at="case x",
        ),
        Finding(
            Severity.WARNING, "margins", "demo", "problems/demo/solutions/accepted/a.py", "near the edge"
        ),
    )
    checks = tuple(
        CheckOutcome(
            name,
            tuple(f for f in findings if f.check == name),
            0.5,
            "because" if name == "examples" else None,
        )
        for name in CHECK_NAMES
    )
    margins = (
        MarginRow("accepted/a.py", Verdict.ACCEPTED, Verdict.ACCEPTED, 5, 0, 0.2, "c1", None, 0.1, "warn"),
        MarginRow(
            "wrong_answer/b.py",
            Verdict.WRONG_ANSWER,
            Verdict.WRONG_ANSWER,
            5,
            5,
            float("inf"),
            "c2",
            "dtype",
            None,
        ),
        MarginRow(
            "wrong_answer/c.py", Verdict.WRONG_ANSWER, Verdict.WRONG_ANSWER, 5, 3, 1234.5, "c3", "value", None
        ),
    )
    return CheckReport(
        (ProblemReport("demo", Path("/abs/problems/demo"), checks, margins, 1.0),), werror=werror
    )


def test_text_format_lists_checks_findings_and_margin_table() -> None:
    out = text(_synthetic())
    assert "FAIL  reference" in out and "skip  examples" in out and "skipped: because" in out
    assert "error: reference/demo.py:3: case x: a <b>" in out  # the file, its line, the case
    assert "\n            second line" in out  # continuation lines are indented
    assert "dtype (inf)" in out and "best 1.2e+03x tol" in out and "max err 0.2x tol" in out
    assert out.rstrip().endswith("1 error, 1 warning -> FAILED")


def test_json_format_round_trips() -> None:
    data = json.loads(render(_synthetic(), "json"))
    assert data["ok"] is False and data["errors"] == 1 and data["warnings"] == 1
    finding = data["problems"][0]["checks"][CHECK_NAMES.index("reference")]["findings"][0]
    assert finding == {
        "severity": "error",
        "check": "reference",
        "problem": "demo",
        "where": "reference/demo.py: case x",
        "location": "reference/demo.py:3: case x",
        "message": 'a <b> & "c", 100% : d\nsecond line',
        "file": "/abs/reference/demo.py",
        "path": "reference/demo.py",
        "line": 3,
    }
    assert data["problems"][0]["margins"][1]["ratio"] == "inf"
    assert (
        to_json(_synthetic())["problems"][0]["checks"][CHECK_NAMES.index("examples")]["status"] == "skipped"
    )


@pytest.mark.parametrize("werror", [False, True])
def test_junit_format_parses_and_counts_failures(werror: bool) -> None:
    root = ET.fromstring(junit(_synthetic(werror)))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == str(len(CHECK_NAMES))
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    failure = cases["reference"].find("failure")
    assert failure is not None and 'a <b> & "c"' in (failure.get("message") or "")
    assert cases["examples"].find("skipped") is not None
    margins_failed = cases["margins"].find("failure") is not None
    assert margins_failed is werror  # warnings fail a check only with --werror
    assert suite.get("failures") == ("2" if werror else "1")


def test_github_annotations_escape_data_and_properties() -> None:
    report = _synthetic()
    line = annotation(report.findings[0])
    assert line.startswith("::error file=/abs/reference/demo.py,line=3,title=judge check demo%3A reference::")
    assert "100%25 : d%0Asecond line" in line and "\n" not in line
    assert annotation(report.findings[1]).startswith("::warning title=")
    assert annotation(report.findings[1], werror=True).startswith("::error ")
    summary = markdown_summary(report)
    assert "| reference | failed |" in summary and "| accepted/a.py |" in summary


def test_exit_code_and_werror() -> None:
    assert _synthetic().exit_code == 1
    warn_only = CheckReport(
        (
            ProblemReport(
                "demo", Path("/x"), (CheckOutcome("margins", (_synthetic().findings[1],), 0.0),), (), 0.0
            ),
        )
    )
    assert warn_only.exit_code == 0
    assert CheckReport(warn_only.problems, werror=True).exit_code == 1


# ------------------------------------------------------------------------------------- helpers and pieces


def test_problem_dirs_defaults_to_every_folder_and_resolves_slugs(tmp_path: Path) -> None:
    folders = sorted(p.name for p in FIXTURES.iterdir() if (p / "problem.toml").is_file())
    assert [p.name for p in problem_dirs([], FIXTURES)] == folders and FIXTURE_SLUG in folders
    assert problem_dirs([Path(FIXTURE_SLUG)], FIXTURES) == [FIXTURES / FIXTURE_SLUG]
    assert problem_dirs([tmp_path / "nope"], FIXTURES) == [tmp_path / "nope"]
    assert resolve_problem_dirs([Path("nope"), FIXTURES / FIXTURE_SLUG], FIXTURES) == (
        [FIXTURES / FIXTURE_SLUG],
        ["nope"],
    )


def test_missing_problem_folder_is_a_spec_finding(tmp_path: Path) -> None:
    report = run_checks([tmp_path / "problems" / "nope"])
    (finding,) = report.findings
    assert finding.check == "spec" and "no such problem folder" in finding.message
    assert all(c.skipped for c in report.problems[0].checks[1:])


def test_constraint_helpers_name_the_path() -> None:
    tree = {"b": [{"w": np.zeros((1, 1, 1, 1), np.float32)}], "a": np.array([np.nan], np.float32)}
    assert [p for p, _ in leaves_with_paths(tree, "g")] == ['g["a"]', 'g["b"][0]["w"]']
    assert check_ndim(tree, "g", max_ndim=3) == ['g["b"][0]["w"]: 4 dimensions, at most 3 allowed']
    assert check_finite(tree, "g") == ['g["a"][0]: non-finite value nan']
    assert check_has_leaves({"a": {}, "b": []}, "g") == ["g: the tree has no leaf, at least one is required"]
    assert check_number(-1.0, "max_norm", gt=0.0) == ["max_norm: -1.0, must be greater than 0.0"]
    assert check_number(1.0, "momentum", ge=0.0, lt=1.0) == ["momentum: 1.0, must be less than 1.0"]
    other = {"b": [{"w": np.zeros((1, 1, 1, 2), np.float32)}], "c": np.zeros(1, np.float32)}
    assert check_same_structure(tree, "params", other, "grads") == [
        "grads: keys differ from params (missing keys ['a']; extra keys ['c'])"
    ]
    del other["c"]
    other["a"] = np.zeros(1, np.float32)
    assert check_same_structure(tree, "params", other, "grads") == [
        'grads["b"][0]["w"]: shape (1, 1, 1, 2), params["b"][0]["w"] has shape (1, 1, 1, 1)'
    ]


def test_statement_examples_are_generated_from_public_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path))
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    markdown = statement_markdown(problem)
    assert "{{examples}}" not in markdown and "{{rules}}" not in markdown
    assert markdown.count("### Example ") == len(problem.public_cases)
    assert (
        'Output: {"b": 1.5, "w": [3.0, 6.0]}' in markdown
    )  # the reference's output, not the hand-worked one
    assert "factor = 3.0" in markdown
    assert problem.public_cases[0].definition.explanation in markdown  # type: ignore[operator]
    html = statement_html(problem)
    assert '<div class="math block">' in html and '<span class="math inline">' in html
    assert "Output: {&quot;b&quot;: 1.5, &quot;w&quot;: [3.0, 6.0]}" in html
    with pytest.raises(ValueError):
        render_examples(problem, [])


# ----------------------------------------------------------------------------------------------- judge new


def test_new_refuses_bad_slugs_and_existing_folders(tmp_path: Path) -> None:
    problems = tmp_path / "problems"
    with pytest.raises(ScaffoldError, match="not a valid slug"):
        create("Bad_Slug", problems)
    with pytest.raises(ScaffoldError, match="not a valid Python function name"):
        create("ok", problems, function="class")
    create("twice", problems)
    with pytest.raises(ScaffoldError, match="already exists"):
        create("twice", problems)


def test_new_scaffold_fails_until_the_reference_is_written(tmp_path: Path) -> None:
    out = judge("new", "layer-scale", "--problems", str(tmp_path / "problems"))
    assert out.returncode == 0, out.stderr
    assert "created" in out.stdout and (tmp_path / "reference" / "layer_scale.py").is_file()
    report = run_checks([tmp_path / "problems" / "layer-scale"])
    assert {f.check for f in report.findings} == {"reference"}
    assert "NotImplementedError" in report.findings[0].message
    assert report.problems[0].check("solutions").skipped


@pytest.mark.slow
def test_new_scaffold_passes_once_the_reference_is_filled(tmp_path: Path) -> None:
    create("layer-scale", tmp_path / "problems")
    (tmp_path / "reference" / "layer_scale.py").write_text(
        "import jax\n\n\ndef layer_scale(tree, factor):\n"
        "    return jax.tree.map(lambda x: x * factor, tree)\n"
    )
    backend = get_backend("process")
    try:
        report = run_checks([tmp_path / "problems" / "layer-scale"], backend=backend, werror=True)
    finally:
        backend.close()  # its zygote
    assert report.findings == [] and report.ok
    problem = report.problems[0]
    statuses = {c.name: c.status for c in problem.checks}
    assert statuses.pop("backend") == "skipped" and set(statuses.values()) == {"passed"}, statuses
    assert {row.solution for row in problem.margins} == {
        "accepted/tree_util_map.py",
        "accepted/float32_then_cast.py",
        "wrong_answer/adds_factor.py",
    }


# ---------------------------------------------------------------------------------------------------- CLI


def test_cli_check_without_solutions_json_and_exit_code() -> None:
    out = judge(
        "check", FIXTURE_SLUG, "--problems", str(FIXTURES), "--skip-solutions", "--format", "json", "-q"
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    checks = {c["name"]: c["status"] for c in data["problems"][0]["checks"]}
    assert checks["reference"] == "passed" and checks["solutions"] == "skipped"


def test_cli_check_github_format_and_junit_file(tmp_path: Path) -> None:
    create("layer-scale", tmp_path / "problems")  # reference not written yet: one error
    junit_file = tmp_path / "out" / "junit.xml"
    out = judge(
        "check",
        "--problems",
        str(tmp_path / "problems"),
        "--skip-solutions",
        "--format",
        "github",
        "--junit-xml",
        str(junit_file),
    )
    assert out.returncode == 1
    assert out.stdout.startswith("::error file=")
    assert "title=judge check layer-scale%3A reference::" in out.stdout
    assert "layer-scale: reference failed" in out.stderr  # progress lines
    suite = ET.parse(junit_file).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"


def test_cli_check_refuses_without_sandbox_unless_skipping(tmp_path: Path) -> None:
    out = judge("check", FIXTURE_SLUG, "--problems", str(FIXTURES), "--sandbox", "process")
    assert out.returncode == 2 and "--skip-solutions" in out.stderr
