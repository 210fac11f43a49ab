"""Device meshes (issue 26, feature 2): a problem of 8 CPU host devices, outputs compared by sharding.

In-process: layouts and their words (``sandbox.shared.layouts``), the spec's ``[sandbox]`` table, and the
executor's partitioning contract (``sandbox.inside.contracts.check_partitioning``) on honest and lying
modules. In the sandbox, on every backend, through one warm pool: a sharded output placed as the reference
places it is accepted; one sharded differently, and one left replicated, are wrong answers that name the
leaf and both shardings; a lying annotation (a mesh of 16 devices on an 8-device problem, GSPMD's form of
an annotation) is refused before compiling; and a one-device problem is still served by the pool's
one-device executors, the 8-device ones untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir  # type: ignore[attr-defined]
from pydantic import ValidationError

from judge.core.grader import grade
from judge.core.problems import Problem, ProblemSet, load_problem
from judge.core.results import GradeResult
from judge.core.spec import SandboxSpec
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.inside.contracts import BrokenContract, check_partitioning
from sandbox.inside.lowering import Lowerer, parse
from sandbox.session.pool import GradingPool
from sandbox.shared.layouts import Mesh, describe, from_tiles, replicated, spec_layout
from tests.conftest import FIXTURE_SLUG, FIXTURES, available_backends
from tests.program_pool import backend_pool, pool_source

#: Tracer slots of this module's pools: 1540-1579, one range of ``SLOTS`` per backend.
SLOT_BASE = 1540
SLOTS = 12
#: The 8-device problem of these tests: a package of its own, outside the fixture problems that every
#: check runs on.
PROBLEM = FIXTURES.parent / "mesh" / "device-mesh-sharding"
MESH = Mesh(("data", "model"), (4, 2))

pytestmark = pytest.mark.xdist_group("mesh_sharding")

ACCEPTED = """
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    return {"y": y, "top": jax.lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("data")))}
"""
#: The mesh axes swapped on y: every value right, each block on other devices.
SWAPPED = ACCEPTED.replace('P("data", "model")', 'P("model", "data")')
REPLICATED = """
import jax.numpy as jnp

def shard_activations(x, w):
    y = x @ w
    return {"y": y, "top": jnp.max(y, axis=1)}
"""
#: A mesh of 16 devices on an 8-device problem: an annotation naming devices the job does not have.
LYING_MESH = """
import jax
from jax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P

def shard_activations(x, w):
    mesh = AbstractMesh((16,), ("data",), axis_types=(AxisType.Auto,))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data")))
    return {"y": y, "top": y.max(axis=1)}
"""
#: Shardy switched off: the annotation comes as GSPMD's custom call, which JAX makes for no 8-device job.
GSPMD = """
import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

jax.config.update("jax_use_shardy_partitioner", False)

def shard_activations(x, w):
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    return {"y": y, "top": jax.lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("data")))}
"""


# ------------------------------------------------------------------------------------------ layouts


def test_a_partition_spec_and_xla_tiles_are_one_layout() -> None:
    """P('data') over a (4, 2) mesh is XLA's [4, 1, 2] tiles with the last dimension replicated."""
    xla = from_tiles(2, [4, 1, 2], list(range(8)), True, 8)
    assert spec_layout((("data",), ()), MESH) == xla
    assert describe(xla, MESH) == "sharded over ('data',) on axis 0"
    both = from_tiles(2, [4, 2], list(range(8)), False, 8)
    assert describe(both, MESH) == "sharded over ('data',) on axis 0 and ('model',) on axis 1"
    assert describe(replicated(2, 8), MESH) == "replicated"
    swapped = spec_layout((("model",), ("data",)), MESH)
    assert swapped != both
    assert describe(swapped, MESH) == "sharded over ('model',) on axis 0 and ('data',) on axis 1"


def test_a_layout_no_spec_gives_is_told_by_its_tiles() -> None:
    odd = from_tiles(2, [1, 2, 4], list(range(8)), True, 8)
    assert describe(odd, MESH).startswith(
        "split into tiles [1, 2] held by devices [0, 1, 2, 3], [4, 5, 6, 7]"
    )


def test_a_mesh_must_span_the_devices() -> None:
    SandboxSpec.model_validate({"devices": 8, "mesh": {"axes": ["data", "model"], "shape": [4, 2]}})
    with pytest.raises(ValidationError, match="has 6 devices"):
        SandboxSpec.model_validate({"devices": 8, "mesh": {"axes": ["data", "model"], "shape": [3, 2]}})
    with pytest.raises(ValidationError, match=r"needs sandbox\.mesh"):
        SandboxSpec.model_validate({"devices": 8})


# ------------------------------------------------------------------------------------------ contract


def _module_text(function: Any, devices: int = 8) -> str:
    lower = Lowerer(devices)
    spec = jax.ShapeDtypeStruct((8, 4), jnp.float32)  # type: ignore[no-untyped-call]
    lower(jax.jit(function).trace(spec).jaxpr)
    return lower.text(1 << 20)


def _refusal(text: str, devices: int = 8) -> str | None:
    with mlir.make_ir_context():
        module = ir.Module.parse(text)
        data = mlir.module_to_bytecode(module)
        try:
            check_partitioning(ir, parse(ir, data), devices)
        except BrokenContract as exc:
            return str(exc)
        return None


@pytest.fixture(scope="module")
def honest() -> str:
    from jax.sharding import AbstractMesh, AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    sharding = NamedSharding(mesh, P("data"))  # type: ignore[no-untyped-call]
    return _module_text(lambda x: [jax.lax.with_sharding_constraint(x, sharding)])  # type: ignore[no-untyped-call]


def test_jax_own_partitioning_keeps_the_contract(honest: str) -> None:
    assert "sdy.sharding_constraint" in honest
    assert _refusal(honest) is None


def test_a_mesh_of_other_devices_is_refused(honest: str) -> None:
    lying = honest.replace('"data"=4', '"data"=8')
    assert lying != honest
    assert "spans 16 device(s)" in (_refusal(lying) or "")
    ids = '<["data"=4, "model"=2], device_ids=[0,1,2,3,4,5,6,9]>'
    renumbered = honest.replace('<["data"=4, "model"=2]>', ids)
    assert renumbered != honest
    # Refused by the partitioning contract, or before it by MLIR's own verifier when it parses the module
    # (which the executor does first, so the program is refused either way).
    try:
        refusal = _refusal(renumbered) or ""
    except ir.MLIRError as exc:
        refusal = str(exc)
    assert "names devices [0, 1, 2, 3, 4, 5, 6, 9]" in refusal or "must be iota" in refusal, refusal


def test_a_program_lowered_for_other_partitions_is_refused(honest: str) -> None:
    assert "lowered for 1 partition(s); this problem runs on 8 devices" in (
        _refusal(_module_text(lambda x: [x * 2], devices=1)) or ""
    )


# ------------------------------------------------------------------------------------------ sandbox


@pytest.fixture(scope="module")
def problem() -> Problem:
    return load_problem(PROBLEM)


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    index = available_backends().index(request.param)
    with backend_pool(request.param, SLOT_BASE + index * SLOTS, slots=SLOTS) as pool:
        yield pool


def _grade(pool: GradingPool, problem: Problem, code: str) -> GradeResult:
    return grade(problem, code, pool_source(pool), cases=problem.public_cases)


def test_a_sharded_output_placed_like_the_reference_is_accepted(pool: GradingPool, problem: Problem) -> None:
    result = _grade(pool, problem, ACCEPTED)
    assert result.verdict is Verdict.ACCEPTED, [c.message for c in result.cases]
    assert 8 in pool.meshes


def test_an_output_sharded_differently_names_the_leaf_and_both_shardings(
    pool: GradingPool, problem: Problem
) -> None:
    result = _grade(pool, problem, SWAPPED)
    case = result.cases[0]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.SHARDING
    # The example's y is 4 x 2: two columns cannot be split four ways, so XLA keeps axis 1 whole.
    assert case.message == (
        "y: sharded over ('model',) on axis 0, expected sharded over ('data',) on axis 0 and ('model',) on "
        "axis 1"
    )


def test_a_replicated_output_where_sharding_is_asked_is_wrong(pool: GradingPool, problem: Problem) -> None:
    result = _grade(pool, problem, REPLICATED)
    case = result.cases[0]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.SHARDING
    assert case.message == "top: replicated, expected sharded over ('data',) on axis 0"


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (LYING_MESH, "spans 16 device(s)"),
        (GSPMD, "the annotation Sharding is GSPMD's form"),
    ],
    ids=["mesh_of_16_devices", "gspmd_annotation"],
)
def test_a_lying_sharding_annotation_is_refused(
    pool: GradingPool, problem: Problem, code: str, words: str
) -> None:
    result = _grade(pool, problem, code)
    case = result.cases[0]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.RULE, case.message
    assert words in case.message


def test_a_one_device_problem_is_served_by_the_one_device_pool(pool: GradingPool) -> None:
    one = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    assert one.spec.sandbox.devices == 1
    before = int(pool.executors.stats()["handed_out"] or 0)
    meshes = {n: p.stats()["handed_out"] for n, p in pool.meshes.items()}
    solution = next(path for verdict, path in one.solutions() if verdict == "accepted")
    result = grade(one, solution.read_text(), pool_source(pool), cases=one.public_cases)
    assert result.verdict is Verdict.ACCEPTED
    assert pool.executors.stats()["handed_out"] == before + 1
    after = {n: p.stats()["handed_out"] for n, p in pool.meshes.items()}
    assert after == meshes
