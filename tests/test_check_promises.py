"""The ``promises`` check: every promise a statement makes about the inputs (``[[promises]]`` of
``problem.toml``) is reached by a hidden case, bounds that interact by one case together; and every stated
bound is reported with the case that reaches it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judge.check import cases_check, promises_check, spec_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Finding, Severity
from judge.core.problems import load_problem
from judge.core.spec import PromiseSpec
from tests.conftest import FIXTURES

SLUG = "scale-tree"
PREDICATES = """

def some_leaf_above_1e14(args, dtype):
    import numpy as np

    return any(np.abs(leaf).max(initial=0) > 1e14 for leaf in _leaves(args["tree"]))


def never(args, dtype):
    return False


def not_a_bool(args, dtype):
    return 1


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in _leaves(value)]
    if isinstance(tree, list):
        return [leaf for value in tree for leaf in _leaves(value)]
    return [tree]
"""


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "problems" / SLUG
    shutil.copytree(FIXTURES / SLUG, root)
    shutil.copytree(FIXTURES.parent / "reference", tmp_path / "reference")
    with (root / "validator.py").open("a") as out:
        out.write(PREDICATES)
    return root


def _promises(root: Path, table: str) -> None:
    spec = root / "problem.toml"
    text = spec.read_text()
    marker = "# What the statement promises"
    text = text[: text.index(marker)] if marker in text else text
    spec.write_text(text.rstrip("\n") + "\n\n" + table)


def _run(root: Path) -> tuple[list[Finding], list[str]]:
    ctx = CheckContext(root=root, diag=Diagnostics(problem=root.name, base=root.parent.parent))
    spec_check.check(ctx)
    ctx.diag.check = cases_check.NAME
    cases_check.check(ctx)
    ctx.diag.check = promises_check.NAME
    promises_check.check(ctx)
    return ctx.diag.of(promises_check.NAME), ctx.diag.notes_of(promises_check.NAME)


def test_the_fixture_declares_promises_its_hidden_cases_reach(tmp_path: Path) -> None:
    findings, notes = _run(_copy(tmp_path))
    assert findings == []
    reached = 'promise "finite values with magnitude at most $10^{15}$": reached by'
    assert any(n.startswith(reached) for n in notes)
    (bounds,) = [n for n in notes if n.startswith("stated bounds reached: ")]
    assert "tree: magnitude at most by " in bounds and "factor: at most by " in bounds


def test_a_promise_no_hidden_case_reaches_is_an_error_naming_it(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _promises(root, '[[promises]]\nsays = "finite values"\nreached_by = "never"\n')
    findings, _ = _run(root)
    (finding,) = findings
    assert finding.severity is Severity.ERROR
    assert 'no hidden case reaches the promise "finite values" (never true)' in finding.message
    assert finding.at == "promises.0" and finding.line is not None


def test_a_predicate_some_case_meets_reaches_the_promise(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _promises(root, '[[promises]]\nsays = "finite values"\nreached_by = "some_leaf_above_1e14"\n')
    findings, notes = _run(root)
    assert findings == []
    assert any(n.startswith('promise "finite values": reached by ') for n in notes)


def test_bounds_must_be_reached_by_one_case_together(tmp_path: Path) -> None:
    """Each bound alone is reached, but no case has a leaf near 1e15 and a factor near 1e15 at once."""
    root = _copy(tmp_path)
    _promises(root, '[[promises]]\nsays = "finite values"\nbounds = ["tree: magnitude at most"]\n')
    assert _run(root)[0] == []
    _promises(
        root,
        '[[promises]]\nsays = "finite values"\nbounds = ["tree: magnitude at most", "factor: at most"]\n',
    )
    (finding,) = _run(root)[0]
    assert "approaching tree: magnitude at most and factor: at most together" in finding.message


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('says = "values far apart"\nreached_by = "never"', "these words are not in statement.md"),
        ('says = "finite values"\nreached_by = "missing"', "reached_by names 'missing', which validator.py"),
        ('says = "finite values"\nbounds = ["tree: at most"]', "bounds names 'tree: at most', which no"),
        ('says = "finite values"\nreached_by = "not_a_bool"', "not_a_bool returned int, not a bool"),
    ],
)
def test_a_broken_declaration_is_an_error(tmp_path: Path, table: str, message: str) -> None:
    root = _copy(tmp_path)
    _promises(root, f"[[promises]]\n{table}\n")
    findings = _run(root)[0]
    assert [f.severity for f in findings] == [Severity.ERROR]
    assert message in findings[0].message, findings[0].message


def test_no_promise_at_all_warns(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _promises(root, "")
    (finding,) = _run(root)[0]
    assert finding.severity is Severity.WARNING and "declares no [[promises]]" in finding.message


def test_a_promise_needs_a_predicate_or_bounds() -> None:
    with pytest.raises(ValueError, match="reached_by"):
        PromiseSpec(says="finite values")


def test_every_problem_of_the_catalog_declares_promises() -> None:
    """The catalog's statements are read and their promises declared (the check then proves each reached)."""
    problems = Path(__file__).resolve().parent.parent / "problems"
    for root in sorted(p for p in problems.iterdir() if (p / "problem.toml").is_file()):
        assert load_problem(root).spec.promises, f"{root.name} declares no [[promises]]"
