"""PRNG key arguments and outputs, and uint32 arrays.

A ``key`` argument is a typed key (``jax.random.key``) in the function and its uint32 key data in the
program; key outputs are unwrapped to data in the program and wrapped again on the judge's side, then
compared as keys. Covered here: the spec, the Run-panel JSON forms (and refusals naming the JSON path,
through the API too), the session plan, the lowered program (data only, no custom call), the comparison's
key-worded messages, and gradings on every sandbox backend: a key argument with key, key-array and uint32
outputs accepted, and wrong keys (the input key returned unchanged, the split order swapped, raw key data)
rejected with a message about keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from judge.core.compare import compare
from judge.core.errors import InputError
from judge.core.expected import reference_outputs
from judge.core.grader import build_session, grade
from judge.core.hidden import hidden_message
from judge.core.output_tree import assemble
from judge.core.problems import Problem, load_problem
from judge.core.pytree_json import ConversionError, describe_leaves, format_value, json_to_key, pytree_to_json
from judge.core.spec import ArgSpec, OutputSpec, default_tolerances
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.backends import get_backend
from sandbox.session.pool import GradingPool
from sandbox.shared.tree import KeyArray
from sandbox.shared.wire import ProtocolError, dumps_tree, loads_tree
from tests.conftest import available_backends
from tests.fakes import FakeEngine
from tests.program_pool import backend_pool, pool_source
from tests.service_support import make_settings, running

pytestmark = pytest.mark.xdist_group("program_features")

#: Tracer slots of this module's pools: one range of 10 per backend (1500-1539).
SLOT_BASE = 1500

SLUG = "key-step"

SPEC = """\
slug = "key-step"
title = "Key Step"
difficulty = "easy"
function = "key_step"
reference = "key_step"

[[args]]
name = "key"
kind = "key"
description = "A typed PRNG key."

[[args]]
name = "x"
kind = "array"
ndim = [1]

[[args]]
name = "salt"
kind = "array"
dtype = "uint32"
ndim = [1]

[output]
kind = "tuple"
names = ["new_key", "subkeys", "noisy", "bits"]
exact_dtypes = ["key", "uint32"]
"""

REFERENCE = """\
import jax
import jax.numpy as jnp


def key_step(key, x, salt):
    key, sub, a, b = jax.random.split(key, 4)
    noisy = x + jax.random.normal(sub, x.shape, x.dtype)
    bits = jax.random.bits(sub, salt.shape, jnp.uint32) ^ salt
    return key, jnp.stack([a, b]), noisy, bits
"""

STATEMENT = """\
Write `key_step(key, x, salt)`.

{{examples}}

{{rules}}

## Constraints

- Anything.
"""

CASES: dict[str, list[dict[str, Any]]] = {
    "public": [
        {"key": {"key": 42}, "x": [1.0, 2.0], "salt": [0, 4294967295]},
        {"key": {"key_data": [7, 9]}, "x": [0.5], "salt": [5]},
    ],
    "hidden": [
        {"key": 0, "x": [0.0, 0.0, 0.0], "salt": [1, 2, 3]},
        {"key": {"key_data": [4294967295, 1]}, "x": [3.0], "salt": [0]},
    ],
}


def _write_problem(base: Path) -> Path:
    root = base / "problems" / SLUG
    (root / "cases").mkdir(parents=True)
    (base / "reference").mkdir()
    (base / "reference" / "key_step.py").write_text(REFERENCE)
    (root / "problem.toml").write_text(SPEC)
    (root / "statement.md").write_text(STATEMENT)
    (root / "starter.py").write_text("def key_step(key, x, salt):\n    raise NotImplementedError\n")
    for visibility, inputs in CASES.items():
        cases = [
            {"name": f"{visibility}_{i}", "visibility": visibility, "args": args}
            for i, args in enumerate(inputs)
        ]
        (root / "cases" / f"{visibility}.json").write_text(json.dumps({"cases": cases}))
    return root


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    return load_problem(_write_problem(tmp_path_factory.mktemp("keys")))


# ------------------------------------------------------------------------------------- spec and JSON


def test_a_key_argument_is_traced_and_described_as_a_key() -> None:
    arg = ArgSpec(name="key", kind="key")
    assert arg.traced and arg.key_ranks == [0] and arg.accepts == ("object", "integer")
    assert arg.describe_kind() == "a typed PRNG key (jax.random.key, threefry2x32)"
    batch = ArgSpec(name="keys", kind="key", ndim=[1])
    assert batch.accepts == ("object",) and "with 1 dimension" in batch.describe_kind()
    assert ArgSpec(name="s", kind="array", dtype="uint32").describe_kind() == "a uint32 array"
    assert OutputSpec(kind="pytree", exact_dtypes=["key", "uint32"]).exact_dtypes == ["key", "uint32"]


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ({"name": "k", "kind": "key", "traced": False}, "always traced"),
        ({"name": "k", "kind": "key", "dtype": "int32"}, "dtype and ndim apply to kind 'array' only"),
        ({"name": "n", "kind": "int", "ndim": [0]}, "ndim to kind 'key' too"),
        ({"name": "k", "kind": "key", "impl": "rbg"}, "threefry2x32"),
        ({"name": "x", "kind": "array", "impl": "threefry2x32", "dtype": "uint64"}, "uint32"),
    ],
)
def test_malformed_key_arguments_are_refused(arg: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        ArgSpec.model_validate(arg)


def _jax_key_data(seed: int) -> list[int]:
    import jax

    return [int(w) for w in np.asarray(jax.random.key_data(jax.random.key(seed)))]


@pytest.mark.parametrize("seed", [0, 42, 2**31, 2**32 - 1, -1, -7, -(2**31)])
def test_a_seed_makes_the_key_jax_random_key_makes(seed: int) -> None:
    """Negative seeds too: jax.random.key(-1) is a key (data [0, 2**32 - 1]), so {"key": -1} is one."""
    for form in (seed, {"key": seed}):
        key = json_to_key(form, root="key")
        assert key.impl == "threefry2x32" and key.shape == ()
        assert key.data.dtype == np.uint32 and key.data.tolist() == _jax_key_data(seed)


def test_key_data_and_batches_of_keys() -> None:
    assert json_to_key({"key_data": [7, 9]}, root="k").data.tolist() == [7, 9]
    batch = json_to_key({"key": [1, 2, 3]}, root="k", ndim=[1])
    assert batch.shape == (3,) and batch.data.tolist() == [_jax_key_data(s) for s in (1, 2, 3)]
    data = json_to_key({"key_data": [[1, 2], [3, 4]]}, root="k", ndim=[1])
    assert data.shape == (2,) and data.data.tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize(
    ("value", "path", "words"),
    [
        ([0, 42], "key", 'raw key data is written {"key_data": [...]}'),
        ({"seed": 3}, "key", 'got an object with keys "seed"'),
        ({"key": 1, "key_data": [0, 1]}, "key", 'keys "key", "key_data"'),
        ({"key": -(2**31) - 1}, 'key["key"]', "outside the uint32 range (0 to 4294967295)"),
        ({"key": -1.5}, 'key["key"]', "-1.5 is not an integer"),
        ({"key": 2**32}, 'key["key"]', "outside the uint32 range"),
        ({"key": 1.5}, 'key["key"]', "1.5 is not an integer"),
        ({"key": "7"}, 'key["key"]', "expected an integer or an array of integers, got a string"),
        ({"key_data": [1, 2, 3]}, 'key["key_data"]', "a threefry2x32 key is 2 uint32 words"),
        ({"key_data": [[1, 2], [3, "x"]]}, 'key["key_data"][1][1]', "expected an integer, got a string"),
        ({"key": [1, 2]}, "key", "expected one key, got a key array of shape (2,)"),
        (True, "key", "got a boolean"),
        (None, "key", "got null"),
    ],
)
def test_malformed_key_json_names_its_path(value: Any, path: str, words: str) -> None:
    with pytest.raises(ConversionError) as caught:
        json_to_key(value, root="key")
    assert caught.value.path == path and words in caught.value.reason, str(caught.value)


def test_a_custom_run_input_with_a_bad_key_is_an_input_error(problem: Problem) -> None:
    with pytest.raises(InputError) as caught:
        problem.custom_case({"key": {"key_data": [1]}, "x": [1.0], "salt": [1]})
    assert caught.value.path == 'key["key_data"]' and "2 uint32 words" in caught.value.reason
    with pytest.raises(InputError) as caught:
        problem.custom_case({"key": 1, "x": [1.0], "salt": [-3]})
    assert caught.value.path == "salt[0]" and "outside the uint32 range" in caught.value.reason


def test_keys_are_shown_as_key_data() -> None:
    key = KeyArray("threefry2x32", np.array([0, 42], np.uint32))
    assert pytree_to_json({"k": key}) == {"k": {"key_data": [0, 42]}}
    assert format_value((key, np.array([1], np.uint32))) == "(wrap_key_data([0, 42]), [1])"
    (leaf,) = describe_leaves(key, root="new_key")
    assert (leaf.path, leaf.dtype, leaf.shape) == ("new_key", "key<fry>", ())


def test_a_key_array_checks_its_data() -> None:
    with pytest.raises(ValueError, match="uint32 of shape"):
        KeyArray("threefry2x32", np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="uint32 of shape"):
        KeyArray("threefry2x32", np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="unknown PRNG key implementation"):
        KeyArray("rbg", np.zeros(4, np.uint32))


def test_keys_survive_the_expected_output_cache() -> None:
    key = KeyArray("threefry2x32", np.arange(6, dtype=np.uint32).reshape(3, 2))
    back = loads_tree(dumps_tree({"k": key, "x": np.ones(2, np.float32)}))
    assert isinstance(back["k"], KeyArray) and back["k"].data.tolist() == key.data.tolist()


# ------------------------------------------------------------------------------------- plan and program


def test_the_plan_sends_key_data_and_the_skeleton_wraps_it_again(problem: Problem) -> None:
    case = problem.custom_case({"key": 42, "x": [1.0, 2.0], "salt": [1, 2]})
    job = build_session(problem, "code", [case], [False], max_output_bytes=1 << 20)
    (sig,) = job.sigs
    assert sig.args[0] == {"key": {"impl": "threefry2x32", "shape": []}}
    assert sig.inputs[0] == {"dtype": "uint32", "shape": [2]}
    assert job.cases[0].leaves[0].dtype == np.uint32 and job.cases[0].leaves[0].tolist() == [0, 42]
    data = np.array([1, 2], np.uint32)
    got = assemble({"tuple": [{"key": {"impl": "threefry2x32", "out": 0}}]}, [data], 1 << 20)
    assert isinstance(got[0], KeyArray) and got[0].data.tolist() == [1, 2]


@pytest.mark.parametrize(
    ("node", "leaf", "words"),
    [
        ({"key": {"impl": "rbg", "out": 0}}, np.zeros(2, np.uint32), "not allowed"),
        ({"key": {"impl": "threefry2x32", "out": 0}}, np.zeros(3, np.uint32), "uint32 of shape"),
        ({"key": {"impl": "threefry2x32", "out": 0}}, np.zeros(2, np.int32), "uint32 of shape"),
        ({"key": {"impl": "threefry2x32"}}, np.zeros(2, np.uint32), "malformed"),
    ],
)
def test_a_forged_key_node_is_a_protocol_error(node: Any, leaf: np.ndarray, words: str) -> None:
    with pytest.raises(ProtocolError, match=words):
        assemble(node, [leaf], 1 << 20)


def test_a_key_lowers_to_uint32_data_without_custom_calls(problem: Problem) -> None:
    """What crosses to the executor: the tracer's wrapper takes and returns uint32 data, and threefry's
    split, bits and normal lower to plain StableHLO on CPU (no custom call for the contracts to cover)."""
    from sandbox.inside.tracer import Captured, Probe, Signature, make_wrapper

    case = problem.custom_case({"key": 42, "x": [1.0, 2.0], "salt": [1, 2]})
    job = build_session(problem, "code", [case], [False], max_output_bytes=1 << 20)
    cap = Captured()
    sig = Signature({"id": 0, "args": job.sigs[0].args}, [{"name": a.name} for a in problem.spec.args], cap)
    namespace: dict[str, Any] = {}
    exec(REFERENCE, namespace)
    probe = Probe()
    traced = cap.jit(make_wrapper(namespace["key_step"], sig, False, cap, probe, 64), keep_unused=True)
    lowered = traced.trace(*sig.avals)
    cap.lower(lowered.jaxpr)
    text = cap.lower.text(1 << 20)
    main = next(line for line in text.splitlines() if "func.func public @main" in line)
    assert "tensor<2xui32>" in main and "key<" not in main
    assert "custom_call" not in text
    assert probe.skeleton["tuple"][0] == {"key": {"impl": "threefry2x32", "out": 0}}
    assert probe.skeleton["tuple"][1] == {"key": {"impl": "threefry2x32", "out": 1}}


def test_the_reference_gets_a_typed_key_and_returns_keys(problem: Problem) -> None:
    (out,) = reference_outputs(problem, problem.public_cases[:1])
    new_key, subkeys, noisy, bits = out
    assert isinstance(new_key, KeyArray) and new_key.shape == ()
    assert isinstance(subkeys, KeyArray) and subkeys.shape == (2,)
    assert noisy.dtype == np.float32 and bits.dtype == np.uint32
    import jax

    key = jax.random.split(jax.random.key(42), 4)
    assert new_key.data.tolist() == np.asarray(jax.random.key_data(key[0])).tolist()


# ------------------------------------------------------------------------------------- comparison


def _key(*words: int) -> KeyArray:
    return KeyArray("threefry2x32", np.array(words, np.uint32))


def _compare(expected: Any, got: Any) -> Any:
    return compare(expected, got, tolerance=default_tolerances(), root_names=("new_key",))


def test_an_equal_key_passes_and_a_different_one_is_a_wrong_key() -> None:
    assert _compare((_key(1, 2),), (_key(1, 2),)).ok
    result = _compare((_key(1, 2),), (_key(1, 3),))
    assert not result.ok and result.reason is WrongAnswerReason.VALUE
    assert result.message == "new_key: got the key with data [1, 3], expected [1, 2]; 1 of 1 key differ"
    hidden = hidden_message(result)
    assert hidden == "new_key: wrong values, the worst error is NaN, an infinity or an exact mismatch"


def test_raw_key_data_where_a_key_is_expected_is_named_as_such() -> None:
    result = _compare((_key(1, 2),), (np.array([1, 2], np.uint32),))
    assert result.reason is WrongAnswerReason.TYPE
    assert "expected one PRNG key (a typed key, threefry2x32), got an array of shape (2,) of uint32" in (
        result.message
    )
    assert "looks like raw key data" in result.message and "dtype uint32" not in result.message


def test_a_key_where_an_array_is_expected_and_a_key_array_of_another_shape() -> None:
    result = _compare((np.zeros(2, np.float32),), (_key(1, 2),))
    assert result.reason is WrongAnswerReason.TYPE and "got one PRNG key" in result.message
    keys = KeyArray("threefry2x32", np.zeros((3, 2), np.uint32))
    result = _compare((keys,), (_key(0, 0),))
    assert result.reason is WrongAnswerReason.SHAPE
    assert result.message == "new_key: one PRNG key, expected a PRNG key array of shape (3,)"


def test_uint32_arrays_compare_exactly() -> None:
    exp = (np.array([0, 4294967295], np.uint32),)
    assert _compare(exp, (np.array([0, 4294967295], np.uint32),)).ok
    off = _compare(exp, (np.array([0, 4294967294], np.uint32),))
    assert off.reason is WrongAnswerReason.VALUE and "got 4294967294, expected 4294967295" in off.message
    assert _compare(exp, (np.array([0, -1], np.int32),)).reason is WrongAnswerReason.DTYPE


# ------------------------------------------------------------------------------------- gradings


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    offset = 10 * available_backends().index(str(request.param))
    with backend_pool(str(request.param), SLOT_BASE + offset, slots=10) as pool:
        yield pool


ACCEPTED = REFERENCE

#: Wrong answers, each with the message its first case shows.
WRONG = {
    "returns the input key as its carry": (
        REFERENCE.replace("key, sub, a, b = ", "_, sub, a, b = "),
        "new_key: got the key with data [0, 42], expected",
    ),
    "swaps the split order": (
        REFERENCE.replace("key, sub, a, b = ", "sub, key, a, b = "),
        "new_key: got the key with data",
    ),
    "returns raw key data": (
        REFERENCE.replace("return key, jnp.stack", "return jax.random.key_data(key), jnp.stack"),
        "new_key: expected one PRNG key (a typed key, threefry2x32), got an array of shape (2,) of uint32",
    ),
    "bits as int32": (
        REFERENCE.replace("jnp.uint32) ^ salt", "jnp.uint32).astype(jnp.int32) ^ salt.astype(jnp.int32)"),
        "bits: dtype int32, expected uint32",
    ),
}


def _grade(pool: GradingPool, problem: Problem, code: str) -> Any:
    return grade(problem, code, pool_source(pool))


@pytest.mark.slow
def test_a_key_argument_and_key_outputs_are_accepted(pool: GradingPool, problem: Problem) -> None:
    result = _grade(pool, problem, ACCEPTED)
    assert result.verdict is Verdict.ACCEPTED, f"{result.verdict}: {result.message}"
    assert len(result.cases) == 4
    first = result.cases[0]
    assert first.output is not None and first.output.json_value[0] == first.expected.json_value[0]


@pytest.mark.slow
@pytest.mark.parametrize("mistake", sorted(WRONG))
def test_wrong_keys_are_rejected_with_a_message_about_keys(
    pool: GradingPool, problem: Problem, mistake: str
) -> None:
    code, words = WRONG[mistake]
    result = _grade(pool, problem, code)
    assert result.verdict is Verdict.WRONG_ANSWER, f"{result.verdict}: {result.message}"
    assert words in result.cases[0].message, result.cases[0].message
    hidden = [c for c in result.cases if c.visibility == "hidden"]
    assert hidden and all(c.verdict is Verdict.WRONG_ANSWER for c in hidden)


# ------------------------------------------------------------------------------------- the API and the page


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, problem: Problem) -> Iterator[TestClient]:
    """The real app on a problems folder holding the key problem, with the fake engine (the route converts
    and validates Run inputs itself, before any grading)."""
    settings = make_settings(tmp_path_factory.mktemp("api"), problems_dir=problem.root.parent)
    backend = get_backend("process")
    try:
        with running(settings, backend=backend, engine=FakeEngine()) as (client, _):
            yield client
    finally:
        backend.close()


def test_the_api_describes_a_key_argument(api: TestClient) -> None:
    detail = api.get(f"/api/problems/{SLUG}").json()
    key, _, salt = detail["arguments"]
    assert key["kind"] == "key" and key["key_impl"] == "threefry2x32" and key["ndim"] == [0]
    assert key["accepts"] == ["object", "integer"] and key["dtype"] is None
    assert salt["dtype"] == "uint32" and salt["key_impl"] is None
    assert detail["examples"][0]["input"]["key"] == {"key": 42}
    expected = detail["examples"][0]["expected"]
    assert expected["json"][0] == {"key_data": expected["json"][0]["key_data"]}
    assert expected["leaves"][0] == {"path": [0, "key_data"], "dtype": "key<fry>"}
    assert expected["text"].startswith("(wrap_key_data([")
    page = api.get(f"/problems/{SLUG}").text
    assert "a seed, {&#34;key&#34;: seed} or {&#34;key_data&#34;: [uint32, ...]}" in page


@pytest.mark.parametrize(
    "key", [42, {"key": 42}, {"key_data": [0, 42]}, {"key": 4294967295}, {"key": -1}, -1]
)
def test_every_key_form_is_a_valid_run_input(api: TestClient, key: Any) -> None:
    body = {"code": ACCEPTED, "inputs": {"key": key, "x": [1.0], "salt": [7]}}
    response = api.post(f"/api/problems/{SLUG}/run", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["verdict"] == "accepted"


@pytest.mark.parametrize(
    ("key", "path", "words"),
    [
        ([0, 42], "key", "raw key data is written"),
        ({"key": -(2**31) - 1}, 'key["key"]', "outside the uint32 range"),
        ({"key_data": [0, 42, 1]}, 'key["key_data"]', "2 uint32 words"),
        ({"key_data": [[0, 1]]}, "key", "expected one key"),
        ({"seed": 1}, "key", 'keys "seed"'),
    ],
)
def test_a_malformed_key_is_a_422_naming_its_json_path(
    api: TestClient, key: Any, path: str, words: str
) -> None:
    body = {"code": ACCEPTED, "inputs": {"key": key, "x": [1.0], "salt": [7]}}
    response = api.post(f"/api/problems/{SLUG}/run", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and error["argument"] == "key" and error["path"] == path
    assert words in error["message"], error


# ------------------------------------------------------------------------------------- around the feature


def test_assigning_into_a_jax_array_is_a_trace_error_naming_at() -> None:
    """``x[i] = v`` on a traced array: the tracer classifies JAX's TypeError as a trace error whose advice
    (also what a hidden case shows) names the .at[] methods."""
    import jax

    from sandbox.inside.tracer import classify

    def assign(x: Any) -> Any:
        x[0] = 1.0
        return x

    with pytest.raises(TypeError) as caught:
        jax.jit(assign)(np.zeros(2, np.float32))
    failure = classify(caught.value, jax.errors, at="while tracing the function")
    assert failure.verdict == "trace_error" and failure.advice == "immutable"
    assert "x.at[idx].set(y)" in failure.message


def test_judge_new_scaffolds_keys_and_uint32_arrays() -> None:
    from judge.authoring.scaffold_kinds import ArgDecl

    assert ArgDecl.parse("k:key") == ArgDecl("k", "key", traced=True)
    assert ArgDecl.parse("k:key").spec().kind == "key"
    assert ArgDecl.parse("s:array:uint32") == ArgDecl("s", "array", dtype="uint32", ndim=(1,))
