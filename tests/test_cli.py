"""The judge command line: exit codes, JSON shape, usage errors (run as a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SOLUTIONS = ROOT / "problems" / "global-norm-clipping" / "solutions"
INSECURE = ["--sandbox", "process", "--insecure"]


def judge(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
        cwd=ROOT,
    )


def test_problems_lists_both_seed_problems() -> None:
    out = judge("problems")
    assert out.returncode == 0
    assert "global-norm-clipping" in out.stdout and "sgd-momentum" in out.stdout
    rows = json.loads(judge("problems", "--json").stdout)
    # Every problem folder is listed: the seed problems and the ones added since.
    assert {r["slug"] for r in rows} == {
        p.name for p in (ROOT / "problems").iterdir() if (p / "problem.toml").is_file()
    }
    assert {"global-norm-clipping", "sgd-momentum", "grad-accumulation-scan"} <= {r["slug"] for r in rows}


@pytest.mark.slow
def test_grade_json_accepted_exits_0() -> None:
    out = judge(
        "grade",
        "global-norm-clipping",
        str(SOLUTIONS / "accepted" / "tree_map_minimum.py"),
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
    out = judge("grade", "global-norm-clipping", str(SOLUTIONS / "trace_error" / "python_if.py"), *INSECURE)
    assert out.returncode == 1
    assert "TRACE_ERROR" in out.stdout
    assert "if norm > max_norm" in out.stdout and "jnp.where" in out.stdout
    assert "INSECURE" in out.stderr


def strict_loads(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and -Infinity, as browsers and other strict parsers do."""

    def refuse(name: str) -> None:
        raise ValueError(f"not standard JSON: {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.slow
def test_grade_reads_stdin_and_json_is_strict_on_a_structure_mismatch() -> None:
    code = (SOLUTIONS / "wrong_answer" / "tuple_output.py").read_text()
    out = judge("grade", "global-norm-clipping", "-", "--json", *INSECURE, stdin=code)
    assert out.returncode == 1
    result = strict_loads(out.stdout)
    assert result["verdict"] == "wrong_answer"
    case = result["cases"][0]
    assert case["reason"] == "structure" and case["error_ratio"] is None  # not comparable, not Infinity


@pytest.mark.slow
def test_a_source_with_a_byte_order_mark_is_read_like_python_reads_it(tmp_path: Path) -> None:
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + (SOLUTIONS / "accepted" / "tree_map_minimum.py").read_bytes())
    out = judge("grade", "global-norm-clipping", str(bom), "--json", *INSECURE)
    assert out.returncode == 0, out.stdout + out.stderr
    assert strict_loads(out.stdout)["verdict"] == "accepted"


def test_a_nul_byte_is_a_usage_error_naming_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "nul.py"
    bad.write_bytes(b"import jax\n\ndef f(x):\n    return x\x00\n")
    out = judge("grade", "global-norm-clipping", str(bad), *INSECURE)
    assert out.returncode == 2
    assert f"{bad}: line 4: a NUL character at column 13" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["grade", "no-such-problem", str(SOLUTIONS / "accepted" / "tree_map_minimum.py"), *INSECURE],
            "no such problem",
        ),
        (["grade", "global-norm-clipping", "/nonexistent/solution.py", *INSECURE], "cannot read"),
        (
            [
                "grade",
                "global-norm-clipping",
                str(SOLUTIONS / "accepted" / "tree_map_minimum.py"),
                "--sandbox",
                "process",
            ],
            "insecure",
        ),
        (
            [
                "grade",
                "global-norm-clipping",
                str(SOLUTIONS / "accepted" / "tree_map_minimum.py"),
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
    out = judge("grade", "global-norm-clipping", str(bad), *INSECURE)
    assert out.returncode == 2
    assert "UTF-8" in out.stderr
