"""``judge check`` understands the argument kinds: copies of the fixture problem shift-tokens (int32 and bool
arrays, a traced int32 scalar, static ints and tuples), each broken in one way, get the finding that names it
(no sandbox: solutions are not graded here)."""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.check import CheckReport, run_checks
from tests.conftest import FIXTURES, KINDS_SLUG


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))


def copy_problem(tmp_path: Path, slug: str = KINDS_SLUG) -> Path:
    """A copy of a fixture problem and its reference under ``tmp_path``, without its generator (so edits of
    the hidden cases are not reported as drift) and without its EDGE inputs (fewer reference runs)."""
    root = tmp_path / "problems" / slug
    shutil.copytree(FIXTURES / slug, root, ignore=shutil.ignore_patterns("__pycache__"))
    module = tomllib.loads((root / "problem.toml").read_text())["reference"]
    (tmp_path / "reference").mkdir(exist_ok=True)
    shutil.copy(FIXTURES.parent / "reference" / f"{module}.py", tmp_path / "reference" / f"{module}.py")
    (root / "generate_cases.py").unlink()
    validator = root / "validator.py"
    validator.write_text(validator.read_text() + "\nEDGE = []\n")
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def edit_cases(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    for case in data["cases"]:
        change(case)
    path.write_text(json.dumps(data))


def check(root: Path) -> CheckReport:
    return run_checks([root], backend=None, concurrency=2)


def findings(report: CheckReport, check_name: str) -> list[str]:
    return [f"{f.severity.value} {f.where}: {f.message}" for f in report.findings if f.check == check_name]


def test_array_and_static_arguments_get_no_tree_warnings(tmp_path: Path) -> None:
    report = check(copy_problem(tmp_path))
    assert report.errors == 0 and report.warnings == 0, "\n".join(str(f) for f in report.findings)
    (note,) = report.problems[0].check("coverage").notes
    assert "`tokens`: an int32 array with 2 dimensions, ranks 2" in note
    assert "`offset`: an int32 array with 0 dimensions (a scalar), ranks 0" in note
    assert "`widths`: 7 distinct static values" in note and "`pad_id`: 4 distinct static values" in note


def test_a_static_argument_that_never_varies_is_a_warning(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)

    def same_pad_id(case: dict[str, Any]) -> None:
        case["args"]["pad_id"] = 0

    edit_cases(root / "cases" / "hidden.json", same_pad_id)
    found = findings(check(root), "coverage")
    (warning,) = [f for f in found if "argument pad_id" in f] or [str(found)]
    assert warning.startswith("warning") and "argument pad_id" in warning
    assert "the same value: a solution that ignores it and hard-codes that value would pass" in warning


def test_a_rank_the_spec_allows_but_no_hidden_case_uses_is_a_warning(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "problem.toml", "ndim = [0]", "ndim = [0, 1]")
    (warning,) = findings(check(root), "coverage")
    assert "argument offset" in warning and "`offset` may have 1 dimension (ndim [0, 1])" in warning


def test_a_traced_static_kind_is_a_spec_error_naming_the_field(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(
        root / "problem.toml", 'name = "pad_id"\nkind = "int"', 'name = "pad_id"\nkind = "int"\ntraced = true'
    )
    (error,) = findings(check(root), "spec")
    assert error.startswith("error") and "args.4" in error and "static_argnames" in error


def test_int_and_bool_outputs_need_exact_dtypes_in_the_spec(tmp_path: Path) -> None:
    root = copy_problem(tmp_path)
    edit(root / "problem.toml", 'exact_dtypes = ["int32", "bool"]\n', "")
    errors = findings(check(root), "reference")
    assert errors and all(e.startswith("error") for e in errors)
    assert any("returns dtype int32 in ids (expected one of float32;" in e for e in errors), errors
    assert any("returns dtype bool in mask (expected one of float32;" in e for e in errors), errors
