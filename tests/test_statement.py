"""The generated sections of a statement: examples and the rules the judge enforces (judge.statement)."""

from __future__ import annotations

import pytest

from judge.problems import ProblemSet
from judge.spec import ProblemSpec
from judge.statement import (
    RULES_HEADING,
    RULES_PLACEHOLDER,
    fill_placeholder,
    render_rules,
    stated_rules,
    statement_html,
    statement_markdown,
)
from tests.conftest import ROOT

PROBLEMS = ProblemSet(ROOT / "problems")


def _spec(**changes: object) -> ProblemSpec:
    base = PROBLEMS.get("sgd-momentum").spec.model_dump()
    for dotted, value in changes.items():
        target = base
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[key]
        target[last] = value
    return ProblemSpec.model_validate(base)


@pytest.mark.parametrize("slug", ["global-norm-clipping", "sgd-momentum"])
def test_every_statement_shows_every_rule_of_its_spec(slug: str) -> None:
    problem = PROBLEMS.get(slug)
    markdown = statement_markdown(problem)
    assert RULES_PLACEHOLDER not in markdown and "{{examples}}" not in markdown
    assert markdown.count(RULES_HEADING) == 1
    for rule in stated_rules(problem.spec):
        assert f"- {rule}" in markdown
    assert "inside `jax.jit`" in markdown and "`jax.pure_callback`" in markdown
    assert "OrderedDict, defaultdict, NamedTuple) count as their base container" in markdown
    assert "any other container type is a structure mismatch" in markdown
    assert "bfloat16 within the larger of 3 ulp of the element" in markdown
    assert "float32 within rtol 1e-05 + atol 1e-06" in markdown
    html = statement_html(problem)
    assert "<h2>How your function is run and judged</h2>" in html


def test_rules_follow_the_spec() -> None:
    sgd = stated_rules(_spec())
    assert any("`params`, `grads` and `velocity` must be left exactly as they were" in r for r in sgd)
    assert any("`learning_rate` and `momentum` are passed as Python floats" in r for r in sgd)
    assert any("a list where a tuple is expected" in r for r in sgd)

    relaxed = stated_rules(_spec(compare__checks=[], compare__forbid_host_callbacks=False))
    assert not any("must be left exactly" in r for r in relaxed)
    assert not any("Host callbacks" in r for r in relaxed)

    lists = stated_rules(_spec(compare__tuple_as_list=True))
    assert any("a list may stand for an expected tuple" in r for r in lists)

    static = _spec()
    args = [a.model_copy(update={"traced": a.name != "momentum"}) for a in static.args]
    rules = stated_rules(static.model_copy(update={"args": args}))
    assert any(
        "`momentum` arrives as plain Python values (static arguments of `jax.jit`)" in r for r in rules
    )
    assert any("`learning_rate` is passed as a Python float" in r for r in rules)
    assert any("`params`, `grads`, `velocity` and `learning_rate` arrive traced" in r for r in rules)


def test_only_allowed_dtypes_are_described() -> None:
    rules = " ".join(stated_rules(_spec(dtypes__allowed=["float32"])))
    assert "float32 within rtol" in rules and "bfloat16" not in rules.split("Values are compared")[1]


def test_render_and_fill() -> None:
    section = render_rules(_spec())
    assert section.startswith(RULES_HEADING + "\n\n- The judge calls `sgd_momentum` inside `jax.jit`")
    filled = fill_placeholder("a\n  {{rules}}  \nb", RULES_PLACEHOLDER, "X")
    assert filled == "a\nX\nb"
