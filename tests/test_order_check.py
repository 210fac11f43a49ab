"""The ``order`` check (``judge.check.order_check``) and the declaration it asks for: a reference that adds
terms in an order a solution may change declares ``[compare] magnitude`` (a function, or ``"none"`` with a
reason), and a ``require_batched`` rule has two hidden cases that differ in the batch size alone."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from pydantic import ValidationError

from judge.check import order_check, spec_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Severity
from judge.core.spec import CompareSpec
from judge.grading.transform_rules import batch_size, batched_rule, held_key
from tests.conftest import ROOT


def _copy(tmp_path: Path, slug: str) -> Path:
    root = tmp_path / "problems" / slug
    shutil.copytree(ROOT / "problems" / slug, root)
    shutil.copytree(ROOT / "reference", tmp_path / "reference")
    return root


def _declare(root: Path, lines: str) -> None:
    """Replace the problem's magnitude declaration (and its reason) with ``lines``."""
    spec = root / "problem.toml"
    text = re.sub(r"^magnitude(_reason)? = .*\n", "", spec.read_text(), flags=re.M)
    spec.write_text(text.replace("[compare]\n", "[compare]\n" + lines, 1))


def _run(root: Path) -> CheckContext:
    ctx = CheckContext(
        root=root, diag=Diagnostics(problem=root.name, base=root.parent.parent), separate_runs=False
    )
    ctx.diag.check = spec_check.NAME
    spec_check.check(ctx)
    assert ctx.problem is not None, [f.message for f in ctx.diag.findings]
    ctx.diag.check = order_check.NAME
    order_check.check(ctx)
    return ctx


def _errors(ctx: CheckContext) -> list[str]:
    return [f.message for f in ctx.diag.of(order_check.NAME) if f.severity is Severity.ERROR]


@pytest.mark.parametrize(
    ("slug", "operation"),
    [("masked-mean", "reduce_sum"), ("ema-scan", "scan adding floats"), ("spectral-norm", "dot_general")],
)
def test_a_summing_reference_without_a_declaration_fails(tmp_path: Path, slug: str, operation: str) -> None:
    root = _copy(tmp_path, slug)
    _declare(root, "")
    errors = _errors(_run(root))
    assert len(errors) == 1 and operation in errors[0] and "[compare] magnitude" in errors[0], errors


def test_none_with_a_reason_is_a_declaration(tmp_path: Path) -> None:
    root = _copy(tmp_path, "masked-mean")
    _declare(root, 'magnitude = "none"\nmagnitude_reason = "the author says no order moves it"\n')
    ctx = _run(root)
    assert _errors(ctx) == []
    assert any("the author says" in note for note in ctx.diag.notes_of(order_check.NAME))


def test_a_reference_that_adds_nothing_needs_no_declaration(tmp_path: Path) -> None:
    root = _copy(tmp_path, "kv-cache-update")
    _declare(root, "")
    ctx = _run(root)
    assert _errors(ctx) == []
    assert any("adds nothing" in note for note in ctx.diag.notes_of(order_check.NAME))


def test_every_problem_declares_how_its_order_of_additions_is_graded() -> None:
    """No problem of the catalog is silently uncovered: each says magnitude function or none, and
    ``none`` always comes with its reason (the spec refuses it otherwise)."""
    for spec in sorted((ROOT / "problems").glob("*/problem.toml")):
        text = spec.read_text()
        assert re.search(r"^magnitude = ", text, re.M), f"{spec.parent.name} declares no magnitude"


def test_none_needs_a_reason_and_a_reason_needs_none() -> None:
    with pytest.raises(ValidationError, match="magnitude_reason"):
        CompareSpec.model_validate({"magnitude": "none"})
    with pytest.raises(ValidationError, match="magnitude_reason"):
        CompareSpec.model_validate({"magnitude": "f", "magnitude_reason": "a reason long enough"})
    declared = CompareSpec.model_validate({"magnitude": "none", "magnitude_reason": "elementwise only"})
    assert declared.magnitude_function is None
    assert CompareSpec.model_validate({"magnitude": "f"}).magnitude_function == "f"


def _jaxpr(fn: Any, *args: Any) -> Any:
    return jax.make_jaxpr(fn)(*args).jaxpr


def test_the_walk_finds_sums_in_nested_programs_and_ignores_exact_ones() -> None:
    x = jnp.ones((3, 4), jnp.float32)
    assert order_check.first_summing(_jaxpr(lambda a: a.sum(), x)) == "reduce_sum"
    assert order_check.first_summing(_jaxpr(lambda a: jax.jit(lambda b: b @ b.T)(a), x)) == "dot_general"
    assert order_check.first_summing(_jaxpr(lambda a: jnp.cumsum(a, axis=0), x)) == "cumsum"
    scan = lambda a: jax.lax.scan(lambda c, r: (c + r, c), jnp.zeros(4), a)[0]  # noqa: E731
    assert order_check.first_summing(_jaxpr(scan, x)) == "scan adding floats"
    # Exact in any order: a max, elementwise arithmetic, a loop that only counts in integers.
    assert order_check.first_summing(_jaxpr(lambda a: jnp.max(a, axis=0) * 2.0 + 1.0, x)) is None
    count = lambda a: jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, a)  # noqa: E731
    assert order_check.first_summing(_jaxpr(count, x)) is None


def _keep_hidden(root: Path, keep: Any) -> None:
    for path in (root / "cases").glob("*.json"):
        data = json.loads(path.read_text())
        data["cases"] = [c for c in data["cases"] if c.get("visibility") != "hidden" or keep(c)]
        path.write_text(json.dumps(data))


def test_require_batched_without_a_pair_of_batch_sizes_fails(tmp_path: Path) -> None:
    root = _copy(tmp_path, "model-ensemble")
    ctx = _run(root)
    assert _errors(ctx) == []
    assert any("differ in the batch size alone" in n for n in ctx.diag.notes_of(order_check.NAME))
    problem = ctx.loaded
    rule = batched_rule(problem.spec)
    assert rule is not None
    seen: set[str] = set()
    unique: set[str] = set()
    for case in problem.cases:
        key = held_key(rule, problem.spec, case.inputs)
        if (
            case.hidden
            and key is not None
            and key not in seen
            and batch_size(rule, problem.spec, case.inputs)
        ):
            seen.add(key)
            unique.add(case.name)
    _keep_hidden(root, lambda c: c["name"] in unique)  # one hidden case per held key: no pair left
    errors = _errors(_run(root))
    assert len(errors) == 1 and "can never fire" in errors[0], errors
