"""The generated sections of a statement: examples and the rules the judge enforces
(judge.authoring.statement)."""

from __future__ import annotations

import pytest

from judge.authoring.statement import (
    RULES_HEADING,
    RULES_PLACEHOLDER,
    fill_placeholder,
    render_rules,
    stated_rules,
    statement_html,
    statement_markdown,
)
from judge.check import known_problems
from judge.core.problems import ProblemSet
from judge.core.spec import ArgSpec, ProblemSpec
from tests.conftest import FIXTURES, ROOT, TUPLE_SLUG

PROBLEMS = ProblemSet(ROOT / "problems")


def _spec(**changes: object) -> ProblemSpec:
    """lerp-trees's spec (two trees that must stay unchanged, a number, a tuple output), changed."""
    base = ProblemSet(FIXTURES).get(TUPLE_SLUG).spec.model_dump()
    for dotted, value in changes.items():
        target = base
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[key]
        target[last] = value
    return ProblemSpec.model_validate(base)


@pytest.mark.parametrize("slug", known_problems(ROOT / "problems"))
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
    for dtype in problem.spec.dtypes.allowed:
        assert f"{dtype} within {problem.spec.compare.tolerance[dtype].describe()}" in markdown
    html = statement_html(problem)
    assert "<h2>How your function is run and judged</h2>" in html


def test_rules_follow_the_spec() -> None:
    stated = stated_rules(_spec())
    assert any("`start` and `end` must be left exactly as they were" in r for r in stated)
    assert any("`weight` is passed as a Python float" in r for r in stated)
    assert any("a list where a tuple is expected" in r for r in stated)
    two = _spec()
    two = two.model_copy(update={"args": [*two.args, ArgSpec(name="rate", kind="number")]})
    assert any("`weight` and `rate` are passed as Python floats" in r for r in stated_rules(two))

    relaxed = stated_rules(_spec(compare__checks=[], compare__forbid_host_callbacks=False))
    assert not any("must be left exactly" in r for r in relaxed)
    assert not any("Host callbacks" in r for r in relaxed)

    lists = stated_rules(_spec(compare__tuple_as_list=True))
    assert any("a list may stand for an expected tuple" in r for r in lists)

    static = [*two.args[:-1], ArgSpec(name="rate", kind="number", traced=False)]
    rules = stated_rules(two.model_copy(update={"args": static}))
    assert any("`rate` arrives as plain Python values (static arguments of `jax.jit`" in r for r in rules)
    assert any("`weight` is passed as a Python float" in r for r in rules)
    assert any("`start`, `end` and `weight` arrive traced" in r for r in rules)


def test_a_problem_of_several_devices_states_them_and_the_sharding_comparison() -> None:
    one = " ".join(stated_rules(_spec()))
    assert "CPU devices" not in one and "reason `sharding`" not in one
    mesh = {"devices": 8, "mesh": {"axes": ["data", "model"], "shape": [4, 2]}}
    rules = " ".join(stated_rules(_spec(sandbox=mesh)))
    assert "runs on 8 CPU devices" in rules
    assert "the mesh of shape (4, 2) with axes `data` and `model` lays out devices 0 to 7" in rules
    assert "every input arrives replicated" in rules and "wrong_answer (reason `sharding`)" in rules


def test_only_allowed_dtypes_are_described() -> None:
    rules = " ".join(stated_rules(_spec(dtypes__allowed=["float32"])))
    assert "float32 within rtol" in rules and "bfloat16" not in rules.split("Values are compared")[1]


def test_render_and_fill() -> None:
    section = render_rules(_spec())
    assert section.startswith(RULES_HEADING + "\n\n- The judge calls `lerp_trees` inside `jax.jit`")
    filled = fill_placeholder("a\n  {{rules}}  \nb", RULES_PLACEHOLDER, "X")
    assert filled == "a\nX\nb"
