"""The command line's contract for scripts and CI: one ``--problems`` option, exit codes stated in every
``--help``, usage errors as exit 2 (a JSON object on stdout under ``--json``), aligned columns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command

from judge.check import known_problems
from judge.cli import aligned, app, wants_json
from tests.conftest import ROOT

COMMANDS = sorted(get_command(app).commands)  # type: ignore[attr-defined]


def judge(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_states_its_exit_codes(command: str) -> None:
    out = judge(command, "--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "Exit codes: 0" in text, text


def test_every_command_that_reads_problems_names_the_folder_option_the_same() -> None:
    for command in ("grade", "problems", "check", "new", "run"):
        text = judge(command, "--help").stdout
        assert "--problems " in text, command
        assert "--problems-dir" not in text, command


def test_check_on_an_unknown_problem_exits_2_and_lists_the_known_ones() -> None:
    out = judge("check", "no-such-problem", "--skip-solutions")
    assert out.returncode == 2
    assert "no such problem: no-such-problem" in out.stderr
    for slug in known_problems(ROOT / "problems"):
        assert slug in out.stderr
    assert "Traceback" not in out.stderr


def test_check_on_an_unknown_problem_with_json_is_one_json_object() -> None:
    out = judge("check", "no-such-problem", "--skip-solutions", "--format", "json")
    assert out.returncode == 2
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "unknown_problem" and error["unknown"] == ["no-such-problem"]
    assert error["known"] == known_problems(ROOT / "problems")


def test_check_with_a_missing_problems_folder_exits_2(tmp_path: Path) -> None:
    out = judge("check", "--problems", str(tmp_path / "absent"), "--skip-solutions", "--format=json")
    assert out.returncode == 2
    assert "no such folder" in json.loads(out.stdout)["error"]["message"]


@pytest.mark.parametrize(
    "args",
    [
        ["grade", "--json", "--no-such-option"],
        ["problems", "--json", "--no-such-option"],
        ["run", "--json"],
        ["check", "--format", "json", "--jobs", "0"],
        ["doctor", "--json", "--sandbox"],
    ],
    ids=["unknown-option", "problems-unknown-option", "missing-argument", "out-of-range", "missing-value"],
)
def test_usage_errors_under_json_are_one_json_object_on_stdout(args: list[str]) -> None:
    out = judge(*args)
    assert out.returncode == 2, out.stdout + out.stderr
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "usage" and error["message"]
    assert "Traceback" not in out.stderr


def test_usage_errors_without_json_go_to_stderr() -> None:
    out = judge("grade", "--no-such-option")
    assert out.returncode == 2
    assert out.stdout == "" and "No such option: --no-such-option" in out.stderr


def test_a_command_usage_error_under_json_is_json_too() -> None:
    out = judge("problems", "--json", "--problems", "/nonexistent/problems-folder")
    assert out.returncode == 2
    assert "no such folder" in json.loads(out.stdout)["error"]["message"]
    out = judge("grade", "no-such-problem", "/nonexistent/file.py", "--json", "--sandbox", "process")
    assert out.returncode == 2
    assert json.loads(out.stdout)["error"]["code"] == "usage"


def test_wants_json_reads_only_options_before_a_double_dash() -> None:
    assert wants_json(["grade", "--json"]) and wants_json(["check", "--format", "json"])
    assert wants_json(["check", "--format=json"])
    assert not wants_json(["check", "--format", "text"]) and not wants_json(["grade", "--", "--json"])


def test_aligned_columns_stay_aligned_for_long_cells() -> None:
    rows = [["a", "x", "tail"], ["a-very-long-problem-slug-that-is-longer-than-usual", "yy", "t"]]
    lines = aligned(rows)
    assert lines[0].index("x") == lines[1].index("yy")
    assert lines[0].index("tail") == lines[1].index(" t") + 1


def test_the_grade_report_keeps_its_columns_aligned_for_long_case_names() -> None:
    from judge.core.problems import load_problem
    from judge.core.results import CaseResult, GradeResult
    from judge.core.verdicts import Verdict
    from judge.feedback.report import text_report
    from tests.conftest import FIXTURE_SLUG, FIXTURES

    problem = load_problem(FIXTURES / FIXTURE_SLUG)
    names = ["a", "a_case_name_far_longer_than_the_default_column_of_twenty_eight"]
    cases = [
        CaseResult(name=n, visibility="hidden", verdict=Verdict.ACCEPTED, compile_ms=12.0, run_ms=1.0)
        for n in names
    ]
    result = GradeResult(
        problem=FIXTURE_SLUG,
        verdict=Verdict.ACCEPTED,
        passed=2,
        total=2,
        cases=cases,
        backend="x",
        elapsed_ms=1.0,
    )
    rows = [
        line
        for line in text_report(problem, result).splitlines()
        if "accepted" in line and "(hidden)" in line
    ]
    header = next(
        line for line in text_report(problem, result).splitlines() if line.strip().startswith("case ")
    )
    assert len(rows) == 2
    assert rows[0].index("accepted") == rows[1].index("accepted") == header.index("verdict")
