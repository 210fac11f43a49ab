"""A pytree argument declared ``structure = "fixed"`` is covered against the structure it declares: no
demand for bare arrays, long lists or deep nesting, and one warning when the cases disagree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from judge.check import coverage_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Severity
from judge.core.problems import load_problem
from judge.core.spec import ArgSpec
from tests.conftest import FIXTURES


def _package(tmp_path: Path, fixed: bool, other_last: bool = False) -> Path:
    """scale-tree with every case's tree {"hidden": ..., "out": ...} (the last hidden one other, if asked)."""
    root = tmp_path / "problems" / "scale-tree"
    shutil.copytree(FIXTURES / "scale-tree", root)
    shutil.copytree(FIXTURES.parent / "reference", tmp_path / "reference")
    if fixed:
        toml = root / "problem.toml"
        text = toml.read_text()
        toml.write_text(
            text.replace(
                'name = "tree"\nkind = "pytree"\n', 'name = "tree"\nkind = "pytree"\nstructure = "fixed"\n', 1
            )
        )
    for name in ("public.json", "hidden.json"):
        path = root / "cases" / name
        data = json.loads(path.read_text())
        for i, case in enumerate(data["cases"]):
            case["args"]["tree"] = {"hidden": [[1.0, 2.0]] * (1 + i % 3), "out": [0.5] * (2 + i % 2)}
            case.pop("expected", None)
        if other_last and name == "hidden.json":
            data["cases"][-1]["args"]["tree"] = {"hidden": [1.0]}
        path.write_text(json.dumps(data))
    return root


def _warnings(root: Path) -> list[str]:
    diag = Diagnostics(problem=root.name, base=root.parent.parent, check=coverage_check.NAME)
    coverage_check.check(CheckContext(root=root, diag=diag, problem=load_problem(root)))
    return [f.message for f in diag.findings if f.severity is Severity.WARNING]


def test_without_the_declaration_a_fixed_input_cannot_pass_coverage(tmp_path: Path) -> None:
    warnings = _warnings(_package(tmp_path, fixed=False))
    assert any("bare array" in w for w in warnings) and any("list node" in w for w in warnings)


def test_a_declared_fixed_structure_is_covered_against_what_it_declares(tmp_path: Path) -> None:
    assert _warnings(_package(tmp_path, fixed=True)) == []


def test_a_case_of_another_structure_warns_naming_both(tmp_path: Path) -> None:
    (warning,) = _warnings(_package(tmp_path, fixed=True, other_last=True))
    assert "structure = 'fixed'" in warning and "2 container structures" in warning
    assert "{'hidden': an array, 'out': an array}" in warning and "1 {'hidden': an array}" in warning


def test_fixed_applies_to_pytrees_only() -> None:
    with pytest.raises(ValidationError, match="structure 'fixed' applies to kind 'pytree' only"):
        ArgSpec.model_validate({"name": "x", "kind": "number", "structure": "fixed"})
