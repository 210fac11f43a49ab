"""The judge command line: exit codes, JSON shape, usage errors (run as a real subprocess)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judge.check import known_problems
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT

SOLUTIONS = FIXTURES / FIXTURE_SLUG / "solutions"
ACCEPTED = SOLUTIONS / "accepted" / "tree_util_map.py"
#: The fixture problem, from its own problems folder (no test names a problem of the repository).
INSECURE = ["--sandbox", "process", "--insecure", "--problems", str(FIXTURES)]


def judge(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
        cwd=ROOT,
    )


def test_problems_lists_every_problem_of_the_folder() -> None:
    out = judge("problems", "--problems", str(FIXTURES))
    assert out.returncode == 0
    assert FIXTURE_SLUG in out.stdout and "scale_tree(tree, factor)" in out.stdout
    rows = json.loads(judge("problems", "--json").stdout)
    assert {r["slug"] for r in rows} == set(known_problems(ROOT / "problems"))


@pytest.mark.slow
def test_grade_json_accepted_exits_0() -> None:
    out = judge(
        "grade",
        FIXTURE_SLUG,
        str(ACCEPTED),
        "--json",
        *INSECURE,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] == "accepted"
    assert result["passed"] == result["total"] == len(result["cases"])
    for case in result["cases"]:
        assert {"name", "visibility", "verdict", "message"} <= set(case)
        if case["visibility"] == "hidden":
            assert case["input"] is None and case["expected"] is None
        else:
            assert case["input"] is not None and case["expected"]["json"] is not None


@pytest.mark.slow
def test_grade_text_report_rejected_exits_1() -> None:
    out = judge("grade", FIXTURE_SLUG, str(SOLUTIONS / "trace_error" / "python_if_on_factor.py"), *INSECURE)
    assert out.returncode == 1
    assert "TRACE_ERROR" in out.stdout
    assert "if factor == 0" in out.stdout and "jnp.where" in out.stdout
    assert "INSECURE" in out.stderr


@pytest.mark.slow
def test_grade_reveal_shows_every_hidden_case_ratio() -> None:
    """An author's view: each case's err/tol, hidden cases included; without --reveal no hidden ratio."""
    wrong = str(SOLUTIONS / "wrong_answer" / "adds_factor.py")
    out = judge("grade", FIXTURE_SLUG, wrong, "--reveal", *INSECURE)
    assert out.returncode == 1, out.stderr
    assert "err/tol" in out.stdout
    hidden = [line for line in out.stdout.splitlines() if "(hidden)" in line]
    # Every hidden row ends with its ratio, e.g. "7.46e+04x".
    assert hidden and all(re.search(r"\s[0-9.]+(?:e[+-]\d+)?x$", line) for line in hidden), hidden
    data = json.loads(judge("grade", FIXTURE_SLUG, wrong, "--reveal", "--json", *INSECURE).stdout)
    assert all(c["error_ratio"] is not None for c in data["cases"] if c["verdict"] == "wrong_answer")
    plain = json.loads(judge("grade", FIXTURE_SLUG, wrong, "--json", *INSECURE).stdout)
    assert all(c["error_ratio"] is None for c in plain["cases"] if c["visibility"] == "hidden")
    assert "err/tol" not in judge("grade", FIXTURE_SLUG, wrong, *INSECURE).stdout


def strict_loads(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and -Infinity, as browsers and other strict parsers do."""

    def refuse(name: str) -> None:
        raise ValueError(f"not standard JSON: {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.slow
def test_grade_reads_stdin_and_json_is_strict_on_a_structure_mismatch() -> None:
    code = (
        "import jax\n\n\ndef scale_tree(tree, factor):\n"
        "    return (jax.tree.map(lambda x: x * factor, tree),)\n"
    )
    out = judge("grade", FIXTURE_SLUG, "-", "--json", *INSECURE, stdin=code)
    assert out.returncode == 1
    result = strict_loads(out.stdout)
    assert result["verdict"] == "wrong_answer"
    case = result["cases"][0]
    assert case["reason"] == "structure" and case["error_ratio"] is None  # not comparable, not Infinity


@pytest.mark.slow
def test_a_source_with_a_byte_order_mark_is_read_like_python_reads_it(tmp_path: Path) -> None:
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + (ACCEPTED).read_bytes())
    out = judge("grade", FIXTURE_SLUG, str(bom), "--json", *INSECURE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert strict_loads(out.stdout)["verdict"] == "accepted"


def test_a_nul_byte_is_a_usage_error_naming_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "nul.py"
    bad.write_bytes(b"import jax\n\ndef f(x):\n    return x\x00\n")
    out = judge("grade", FIXTURE_SLUG, str(bad), *INSECURE)
    assert out.returncode == 2
    assert f"{bad}: line 4: a NUL character at column 13" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["grade", "no-such-problem", str(ACCEPTED), *INSECURE],
            "no such problem",
        ),
        (["grade", FIXTURE_SLUG, "/nonexistent/solution.py", *INSECURE], "cannot read"),
        (
            [
                "grade",
                FIXTURE_SLUG,
                str(ACCEPTED),
                "--sandbox",
                "process",
            ],
            "insecure",
        ),
        (
            [
                "grade",
                FIXTURE_SLUG,
                str(ACCEPTED),
                "--sandbox",
                "nope",
            ],
            "unknown sandbox backend",
        ),
        (["grade"], ""),
    ],
    ids=["unknown-slug", "unreadable-file", "process-needs-insecure", "unknown-backend", "missing-args"],
)
def test_usage_errors_exit_2(args: list[str], needle: str) -> None:
    out = judge(*args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert needle in out.stderr
    assert "Traceback" not in out.stderr


def test_binary_file_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"\xff\xfe\x00def")
    out = judge("grade", FIXTURE_SLUG, str(bad), *INSECURE)
    assert out.returncode == 2
    assert "UTF-8" in out.stderr
