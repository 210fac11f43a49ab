"""The ``requirements`` check: every requirement a statement states is marked with what backs it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from judge.check import requirements_check, spec_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Finding, Severity
from judge.check.requirements_check import requirements
from tests.conftest import FIXTURES

STATEMENT = """Write `f(x)`. The result must be finite. Most runs do not care.

$$
y must = x
$$

## Requirements

- Keep the dtype: a bfloat16 leaf gives a bfloat16 leaf.
- Advice: do not use a Python loop.
- You may use `jax.vmap`.

{{rules}}

## Constraints

- `x` must be finite.
"""


def test_requirements_are_the_items_of_requirements_and_must_sentences_elsewhere() -> None:
    found = [(r.line, r.text) for r in requirements(STATEMENT)]
    assert found == [
        (1, "The result must be finite."),
        (9, "- Keep the dtype: a bfloat16 leaf gives a bfloat16 leaf."),
    ]


def _run(root: Path) -> list[Finding]:
    ctx = CheckContext(root=root, diag=Diagnostics(problem=root.name, base=root.parent.parent))
    spec_check.check(ctx)
    ctx.diag.check = requirements_check.NAME
    requirements_check.check(ctx)
    return ctx.diag.of(requirements_check.NAME)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "problems" / "lerp-trees"
    shutil.copytree(FIXTURES / "lerp-trees", root)
    shutil.copytree(FIXTURES.parent / "reference", tmp_path / "reference")
    return root


def _set_requirements(root: Path, table: str) -> None:
    spec = root / "problem.toml"
    text = re.sub(r"(?ms)^\[requirements\]\n.*?(?=^\[|\Z)", "", spec.read_text())
    spec.write_text(text.rstrip("\n") + "\n\n" + table)


def test_a_marked_package_passes_and_an_unmarked_requirement_warns_with_what_to_do(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert _run(root) == []
    _set_requirements(root, '[requirements]\n"Keep each leaf\'s dtype" = ["compare"]\n')
    findings = _run(root)
    assert [f.severity for f in findings] == [Severity.WARNING]
    assert findings[0].path.endswith("statement.md") and findings[0].line is not None
    assert "Build new containers" in findings[0].message
    assert '[requirements] "<a few words of it>"' in findings[0].message and "advice" in findings[0].message


def test_a_backer_that_names_nothing_is_an_error_and_a_stale_key_warns(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _set_requirements(
        root,
        "[requirements]\n"
        '"Build new containers" = ["solution:wrong_answer/missing.py", "rule:require_loop"]\n'
        '"Keep each leaf\'s dtype" = ["solution:accepted/one_tree_map.py", "case:nope", "magic"]\n'
        '"words no statement holds" = ["compare"]\n',
    )
    messages = [(f.severity, f.message) for f in _run(root)]
    errors = [m for s, m in messages if s is Severity.ERROR]
    assert len(errors) == 5, errors
    assert any("solutions/wrong_answer/missing.py does not exist" in m for m in errors)
    assert any("no [[rules]] of kind 'require_loop'" in m for m in errors)
    assert any("a folder other than accepted" in m for m in errors)
    assert any("no case is named 'nope'" in m for m in errors)
    assert any("a backer is solution:" in m for m in errors)
    warnings = [m for s, m in messages if s is Severity.WARNING]
    assert len(warnings) == 1 and "matches no requirement" in warnings[0]


def test_rule_cost_backs_a_requirement_only_when_the_problem_has_a_cost_rule(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = (
        "[requirements]\n"
        '"Build new containers" = ["check:inputs_unchanged", "solution:wrong_answer/writes_into_start.py"]\n'
        '"Keep each leaf\'s dtype" = ["compare", "rule:cost"]\n'
    )
    _set_requirements(root, table)
    errors = [f.message for f in _run(root) if f.severity is Severity.ERROR]
    assert len(errors) == 1, errors
    assert errors[0].startswith("[requirements] \"Keep each leaf's dtype\" is backed by 'rule:cost'")
    assert "declares no [cost] rule" in errors[0]
    _set_requirements(root, "[cost]\nmax_flops_ratio = 4\n\n" + table)
    assert _run(root) == []
