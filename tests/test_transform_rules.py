"""Transformation rules (``[[rules]]`` kinds ``require_autodiff`` and ``require_batched``): the spec, the seed
scaling in the tracer's wrapper, the decisions, the statement, and gradings on every sandbox backend of the
reference's way accepted and each lookalike (the rule met in form only) rejected."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from judge.authoring.statement import render_rules
from judge.core.compare import bind
from judge.core.grader import grade
from judge.core.problems import Problem, ProblemSet
from judge.core.spec import BatchedRule, ProblemSpec
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.compiled_rules import rules_for
from judge.grading.transform_rules import (
    AUTODIFF_SCALES,
    Peer,
    autodiff_broken,
    autodiff_plan,
    batched_broken,
    held_key,
)
from sandbox.session.pool import GradingPool
from tests.conftest import available_backends
from tests.program_pool import backend_pool, pool_source

pytestmark = pytest.mark.xdist_group("program_features")

#: Tracer slots of this module's pools (one backend at a time; up to 1619).
SLOT_BASE = 1580

VALIDATOR = """
from typing import Any

def validate(args: dict[str, Any], dtype: str) -> list[str]:
    return []

JUNK: list[dict[str, Any]] = []
EDGE: list[dict[str, Any]] = []
"""

AUTODIFF_TOML = """
slug = "autodiff-probe"
title = "Autodiff probe"
difficulty = "easy"
function = "loss_and_grad"
reference = "autodiff_probe"

[[args]]
name = "params"
kind = "pytree"
description = "w and b."

[[args]]
name = "x"
kind = "array"
description = "inputs"

[output]
kind = "tuple"
names = ["loss", "grads"]

[[rules]]
kind = "require_autodiff"
asks = "compute the gradient with jax.value_and_grad"
outputs = ["grads"]
"""

AUTODIFF_REFERENCE = """
import jax
import jax.numpy as jnp

def _loss(params, x):
    return jnp.mean((x @ params["w"] + params["b"]) ** 2)

def loss_and_grad(params, x):
    return jax.value_and_grad(_loss)(params, x)
"""

BATCHED_TOML = """
slug = "batched-probe"
title = "Batched probe"
difficulty = "easy"
function = "ensemble"
reference = "batched_probe"

[[args]]
name = "w"
kind = "array"
description = "stacked weights (E, D, K)"

[[args]]
name = "x"
kind = "array"
description = "inputs (B, D)"

[output]
kind = "pytree"

[[rules]]
kind = "require_batched"
asks = "map the model over the ensemble with jax.vmap"
arg = "w"
member = "ensemble member"
"""

BATCHED_REFERENCE = """
import jax
import jax.numpy as jnp

def ensemble(w, x):
    return jax.vmap(lambda m: jnp.tanh(x @ m), in_axes=0)(w)
"""


def _case(name: str, visibility: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "visibility": visibility, "dtype": "float32", "args": args}


def _grid(rng: np.random.Generator, *shape: int) -> list[Any]:
    values: list[Any] = (np.round(rng.normal(size=shape) * 8) / 8).astype(np.float32).tolist()
    return values


def _write(root: Path, slug: str, toml: str, module: str, reference: str, cases: list[Any]) -> None:
    folder = root / "problems" / slug
    (folder / "cases").mkdir(parents=True)
    (folder / "problem.toml").write_text(toml)
    (folder / "statement.md").write_text(f"# {slug}\n\n## Constraints\n\nnone\n\n{{{{rules}}}}\n")
    (folder / "starter.py").write_text("def f():\n    pass\n")
    (folder / "validator.py").write_text(VALIDATOR)
    public = [c for c in cases if c["visibility"] == "public"]
    hidden = [c for c in cases if c["visibility"] == "hidden"]
    (folder / "cases" / "public.json").write_text(json.dumps({"cases": public}))
    (folder / "cases" / "hidden.json").write_text(json.dumps({"cases": hidden}))
    (root / "reference").mkdir(exist_ok=True)
    (root / "reference" / f"{module}.py").write_text(reference)


@pytest.fixture(scope="module")
def problems(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProblemSet]:
    root = tmp_path_factory.mktemp("transform_rules")
    rng = np.random.default_rng(1580)
    autodiff_cases = [
        _case(
            f"c{i}",
            "public" if i == 0 else "hidden",
            {"params": {"w": _grid(rng, d, 2), "b": _grid(rng, 2)}, "x": _grid(rng, n, d)},
        )
        for i, (n, d) in enumerate([(4, 3), (5, 2)])
    ]
    _write(root, "autodiff-probe", AUTODIFF_TOML, "autodiff_probe", AUTODIFF_REFERENCE, autodiff_cases)
    batched_cases = [
        _case(f"e{e}", "public" if e == 2 else "hidden", {"w": _grid(rng, e, 3, 2), "x": _grid(rng, 4, 3)})
        for e in (2, 3, 5)
    ]
    _write(root, "batched-probe", BATCHED_TOML, "batched_probe", BATCHED_REFERENCE, batched_cases)
    yield ProblemSet(root / "problems")


# ------------------------------------------------------------------------------------- the seed scaling


def _traced_twice(fn: Any, *args: Any, scale: float = 2.0, scaled_first: bool = False) -> tuple[Any, Any]:
    """The wrapper's pair, as the tracer builds it, run here."""
    import jax

    from sandbox.inside.autodiff import SeedScaler, with_autodiff_twice

    scaler = SeedScaler()
    twice = jax.jit(lambda *a: with_autodiff_twice(fn, list(a), scaler, scale, scaled_first=scaled_first))
    pair: tuple[Any, Any] = twice(*args)
    return pair


def _loss(p: Any, x: Any) -> Any:
    import jax.numpy as jnp

    return jnp.mean((x @ p["w"] + p["b"]) ** 2)


def _hand(p: Any, x: Any) -> Any:
    r = x @ p["w"] + p["b"]
    return {"w": 2 * x.T @ r / r.size, "b": 2 * r.sum(0) / r.size}


def _ways() -> dict[str, Any]:
    import jax

    jitted = jax.jit(jax.value_and_grad(_loss))

    def vjp(p: Any, x: Any) -> Any:
        out, pull = jax.vjp(lambda q: _loss(q, x), p)
        return out, pull(1.0)[0]

    def in_scan(p: Any, x: Any) -> Any:
        def step(c: Any, _: Any) -> Any:
            return c, jax.grad(_loss)(p, x)

        return _loss(p, x), jax.tree.map(lambda g: g[0], jax.lax.scan(step, 0.0, None, length=2)[1])

    return {
        "value_and_grad": jax.value_and_grad(_loss),
        "grad": lambda p, x: (_loss(p, x), jax.grad(_loss)(p, x)),
        "vjp with a float cotangent": vjp,
        "jacfwd": lambda p, x: (_loss(p, x), jax.jacfwd(_loss)(p, x)),
        "jacrev": lambda p, x: (_loss(p, x), jax.jacrev(_loss)(p, x)),
        "a jax.jit of the user's own": jitted,
        "grad inside a scan body": in_scan,
    }


@pytest.mark.parametrize("way", sorted(_ways()))
@pytest.mark.parametrize(("scale", "scaled_first"), [(2.0, False), (16.0, True)])
def test_every_autodiff_api_scales_with_the_seed(way: str, scale: float, scaled_first: bool) -> None:
    import jax.numpy as jnp

    p = {"w": jnp.ones((3, 2)), "b": jnp.ones(2)}
    x = jnp.arange(12.0).reshape(4, 3) / 10
    (loss, grads), (loss2, grads2) = _traced_twice(_ways()[way], p, x, scale=scale, scaled_first=scaled_first)
    assert float(loss2) == float(loss)
    for key in ("w", "b"):
        expected = scale * np.asarray(grads[key])
        np.testing.assert_allclose(np.asarray(grads2[key]), expected, rtol=1e-6)


def test_a_call_counter_cannot_know_which_call_to_scale() -> None:
    """A hand-written gradient returned twice over on every second call passes the one plan it was written
    for (the second call scaled by 2) and none of the seven others the judge draws from per signature."""
    import jax.numpy as jnp

    calls = [0]

    def counter(q: Any, y: Any) -> Any:
        calls[0] += 1
        factor = 2.0 if calls[0] % 2 == 0 else 1.0
        return _loss(q, y), {k: v * factor for k, v in _hand(q, y).items()}

    p = {"w": jnp.ones((3, 2)), "b": jnp.ones(2)}
    x = jnp.arange(12.0).reshape(4, 3) / 10

    def scales(scale: float, scaled_first: bool) -> bool:
        calls[0] = 0
        (_, grads), (_, grads2) = _traced_twice(counter, p, x, scale=scale, scaled_first=scaled_first)
        return bool(np.allclose(np.asarray(grads2["w"]), scale * np.asarray(grads["w"])))

    passed = [(f, first) for f in AUTODIFF_SCALES for first in (False, True) if scales(f, first)]
    assert passed == [(2.0, False)]


def test_the_plan_is_drawn_per_signature(problems: ProblemSet) -> None:
    problem = problems.get("autodiff-probe")
    plans = [autodiff_plan(problem, range(12)) for _ in range(4)]
    drawn = {(v["scale"], v["scaled_first"]) for plan in plans if plan for v in plan["sigs"].values()}
    assert {f for f, _ in drawn} <= set(AUTODIFF_SCALES) and len(drawn) > 2
    assert all(
        plan is not None and sorted(plan["sigs"], key=int) == [str(i) for i in range(12)] for plan in plans
    )


def test_a_hand_written_gradient_does_not_scale_and_the_patch_is_undone() -> None:
    import jax
    import jax.numpy as jnp
    from jax._src import api

    before = (api._vjp3_bwd, api._jvp)
    p = {"w": jnp.ones((3, 2)), "b": jnp.ones(2)}
    x = jnp.arange(12.0).reshape(4, 3) / 10

    def unrelated(q: Any, y: Any) -> Any:
        jax.grad(lambda v: jnp.sum(v["w"]))(q)  # autodiff of something else, thrown away
        return _loss(q, y), _hand(q, y)

    (_, grads), (_, grads2) = _traced_twice(unrelated, p, x)
    np.testing.assert_allclose(np.asarray(grads2["w"]), np.asarray(grads["w"]))
    assert (api._vjp3_bwd, api._jvp) == before


# ------------------------------------------------------------------------------------- decisions (pure)


def test_the_autodiff_decision(problems: ProblemSet) -> None:
    problem = problems.get("autodiff-probe")
    (rule,) = problem.spec.rules
    checker = bind(problem.spec.compare, problem.spec.output)
    grads = {"w": np.array([1.0, -2.0], np.float32), "b": np.asarray(0.5, np.float32)}
    output = (np.asarray(3.0, np.float32), grads)
    doubled = (np.asarray(3.0, np.float32), {k: np.asarray(v * 2) for k, v in grads.items()})
    assert autodiff_broken(rule, problem.spec, checker, output, doubled, hidden=False, scale=2.0) is None  # type: ignore[arg-type]
    assert autodiff_broken(rule, problem.spec, checker, output, doubled, hidden=False, scale=4.0) is not None  # type: ignore[arg-type]
    message = autodiff_broken(rule, problem.spec, checker, output, output, hidden=True, scale=0.5)  # type: ignore[arg-type]
    assert message is not None and "`grads` does not come from autodiff" in message
    assert "wrong values" not in message  # hidden: no detail
    assert rules_for(problem) and len(rules_for(problem)) == 1  # decided by the grader, not per summary


def test_the_batched_decision() -> None:
    rule = BatchedRule(kind="require_batched", asks="use vmap", arg="w", member="member")
    batched = {"stablehlo.dot_general": 1, "stablehlo.tanh": 1, "func.return": 1}
    unrolled = {"stablehlo.dot_general": 3, "stablehlo.tanh": 3, "stablehlo.slice": 3, "func.return": 1}
    held = "held"
    assert batched_broken(rule, 3, held, batched, [Peer(2, batched, held, "e2")]) is None
    message = batched_broken(
        rule, 3, held, unrolled, [Peer(2, {**unrolled, "stablehlo.slice": 2}, held, "e2")]
    )
    assert message is not None
    assert "for 2 and for 3 members with every other size the same (case e2 and this one)" in message
    assert "slice 2 -> 3" in message
    assert batched_broken(rule, 3, held, unrolled, [Peer(3, batched, held, "same size")]) is None  # one size
    assert batched_broken(rule, 3, held, unrolled, []) is None  # one program alone: undecided
    # A program for other sizes besides the batch size is not compared: its form may move with them.
    assert batched_broken(rule, 3, held, unrolled, [Peer(2, batched, "other", "e2")]) is None
    # The same op count made of other ops is another program.
    padded = {"stablehlo.dot_general": 1, "stablehlo.tanh": 1, "stablehlo.add": 1, "func.return": 1}
    assert batched_broken(rule, 3, held, padded, [Peer(2, {**batched, "stablehlo.multiply": 1}, held, "e2")])
    looped = batched_broken(rule, 3, None, {"stablehlo.while": 1}, [])
    assert looped is not None and "your program has a loop" in looped


def test_held_key_leaves_out_the_batch_axis_only(problems: ProblemSet) -> None:
    spec = problems.get("batched-probe").spec
    rule = BatchedRule(kind="require_batched", asks="a", arg="w", member="m")
    f32 = np.float32

    def key(e: int, d: int, n: int) -> str | None:
        return held_key(rule, spec, [np.zeros((e, d), f32), np.zeros((n, d), f32)])

    assert key(2, 3, 4) == key(5, 3, 4)
    assert key(2, 3, 4) != key(2, 3, 5)  # another number of rows of x
    assert key(2, 3, 4) != key(5, 2, 4)  # another size of w besides the batch axis
    assert held_key(rule, spec, [np.zeros((2, 3), np.float64), np.zeros((4, 3), f32)]) != key(2, 3, 4)
    assert held_key(rule, spec, [np.float32(1.0), np.zeros((4, 3), f32)]) is None  # no batch axis


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        ({"kind": "require_autodiff", "asks": "x", "outputs": ["nope"]}, "not in output.names"),
        ({"kind": "require_autodiff", "asks": "x", "outputs": []}, "at least 1"),
        ({"kind": "require_batched", "asks": "x", "arg": "nope", "member": "m"}, "not an argument"),
    ],
)
def test_malformed_transformation_rules_are_refused(
    problems: ProblemSet, rule: dict[str, Any], words: str
) -> None:
    base = problems.get("autodiff-probe").spec.model_dump()
    ProblemSpec.model_validate(base)
    with pytest.raises(ValidationError, match=words):
        ProblemSpec.model_validate({**base, "rules": [rule]})


def test_the_statement_states_both_rules(problems: ProblemSet) -> None:
    autodiff = render_rules(problems.get("autodiff-probe").spec)
    assert "`grads` must come from JAX's automatic differentiation" in autodiff and "(`rule`)" in autodiff
    batched = render_rules(problems.get("batched-probe").spec)
    assert "one batched computation over axis 0 of `w`" in batched and "unrolled" in batched


# ------------------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with backend_pool(str(request.param), SLOT_BASE, slots=32) as pool:
        yield pool


AUTODIFF_SUBMISSIONS = {
    "accepted": """
import jax
from jax import grad
import jax.numpy as jnp

@jax.jit
def loss_and_grad(params, x):
    loss = lambda p: jnp.mean((x @ p["w"] + p["b"]) ** 2)
    print("traced")
    return loss(params), grad(loss)(params)
""",
    "hand_written": """
import jax
import jax.numpy as jnp

def loss_and_grad(params, x):
    r = x @ params["w"] + params["b"]
    _ = jax.grad(lambda p: jnp.sum(p["w"]))(params)  # autodiff of something else
    return jnp.mean(r ** 2), {"w": 2 * x.T @ r / r.size, "b": 2 * r.sum(0) / r.size}
""",
}

BATCHED_SUBMISSIONS = {
    "accepted": """
import jax.numpy as jnp

def ensemble(w, x):
    return jnp.tanh(jnp.einsum("bd,edk->ebk", x, w))
""",
    "loop_beside_dummy_vmap": """
import jax
import jax.numpy as jnp

def ensemble(w, x):
    jax.vmap(lambda m: m * 0)(w)
    return jnp.stack([jnp.tanh(x @ w[e]) for e in range(w.shape[0])])
""",
    "broadcast_sum": """
import jax
import jax.numpy as jnp

def ensemble(w, x):
    return jax.vmap(lambda m: jnp.tanh(jnp.sum(x[:, :, None] * m[None], axis=1)), in_axes=0)(w)
""",
    "lax_map": """
import jax
import jax.numpy as jnp

def ensemble(w, x):
    return jax.lax.map(lambda m: jnp.tanh(x @ m), w)
""",
}


def _graded(pool: GradingPool, problem: Problem, code: str) -> Any:
    return grade(problem, code, pool_source(pool), feedback=False)


@pytest.mark.slow
def test_autodiff_rule_in_the_sandbox(pool: GradingPool, problems: ProblemSet) -> None:
    problem = problems.get("autodiff-probe")
    good = _graded(pool, problem, AUTODIFF_SUBMISSIONS["accepted"])
    assert good.verdict is Verdict.ACCEPTED, good.message
    # The second, scaled call prints nothing: one "traced" for the one public signature.
    assert good.stdout.startswith("traced\n") and "traced\ntraced" not in good.stdout
    shown = good.cases[0].output
    assert shown is not None and len(shown.json_value) == 2 and set(shown.json_value[1]) == {"w", "b"}
    bad = _graded(pool, problem, AUTODIFF_SUBMISSIONS["hand_written"])
    assert bad.verdict is Verdict.WRONG_ANSWER
    assert {c.reason for c in bad.cases} == {WrongAnswerReason.RULE}
    assert "`grads` does not come from autodiff" in bad.message


@pytest.mark.slow
def test_batched_rule_in_the_sandbox(pool: GradingPool, problems: ProblemSet) -> None:
    problem = problems.get("batched-probe")
    good = _graded(pool, problem, BATCHED_SUBMISSIONS["accepted"])
    assert good.verdict is Verdict.ACCEPTED, good.message
    reference = _graded(pool, problem, BATCHED_REFERENCE)
    assert reference.verdict is Verdict.ACCEPTED, reference.message
    unrolled = _graded(pool, problem, BATCHED_SUBMISSIONS["loop_beside_dummy_vmap"])
    assert unrolled.verdict is Verdict.WRONG_ANSWER
    # The first program has nothing earlier to be compared with; every later one is caught.
    assert unrolled.cases[0].verdict is Verdict.ACCEPTED
    assert {c.reason for c in unrolled.cases[1:]} == {WrongAnswerReason.RULE}
    broadcast = _graded(pool, problem, BATCHED_SUBMISSIONS["broadcast_sum"])
    assert broadcast.verdict is Verdict.ACCEPTED, broadcast.message
    assert "computes each ensemble member separately" in unrolled.message
    looped = _graded(pool, problem, BATCHED_SUBMISSIONS["lax_map"])
    assert {c.reason for c in looped.cases} == {WrongAnswerReason.RULE}
    assert "your program has a loop" in looped.message
