"""Issue 21: a custom call must be one JAX's own lowering makes, before anything compiles.

A submission needs nothing but the public ``jax.ffi.ffi_call`` to call a LAPACK kernel the executor allows
by name with types of its choosing: a result far larger than the kernel writes came back holding what
earlier cases left in that memory, a tiny one made the kernel write past it. ``sandbox.inside.contracts``
checks each call against the calls JAX's lowering makes for the same operand types.

In-process tests check ``Contracts`` directly (honest lowerings pass; each tampered part is refused and
named). End-to-end tests grade the attacks on every backend through a warm pool: the verdict is the one a
forbidden op gets (``wrong_answer``, reason ``rule``), and the message names the call and what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

from judge.core.grader import grade
from judge.core.problems import ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.host.command import MALLOC_PERTURB
from sandbox.inside import contracts
from sandbox.inside.contracts import BrokenContract, Contracts
from sandbox.inside.lowering import Lowerer, parse
from sandbox.inside.program_checks import allowed_custom_calls
from sandbox.session.pool import GradingPool
from tests.conftest import FIXTURE_SLUG, FIXTURES, available_backends
from tests.program_pool import backend_pool

#: Tracer slots of these pools (others are skipped while busy).
SLOT_BASE = 340

S: Any = jax.ShapeDtypeStruct
F32 = jnp.float32
LOWER = Lowerer()


@pytest.fixture(scope="module")
def checker() -> Contracts:
    return Contracts(allowed_custom_calls(), LOWER)


def check(checker: Contracts, function: Callable[..., Any], *specs: Any, edit: Any = None) -> str | None:
    """Lower ``function`` as the tracer does, optionally ``edit`` its custom calls, and check the module:
    None if every call keeps its contract, else the refusal's message."""
    data = LOWER(jax.jit(function).trace(*specs).jaxpr)
    with mlir.make_ir_context():
        module = parse(ir, data)
        if edit is not None:
            calls: list[Any] = []

            def visit(op: Any) -> Any:
                if op.name == "stablehlo.custom_call":
                    calls.append(op.operation)
                return ir.WalkResult.ADVANCE

            module.operation.walk(visit)
            assert calls, "nothing to edit"
            for call in calls:
                edit(call)
        try:
            checker.check(module)
        except BrokenContract as exc:
            return str(exc)
        return None


def ffi(
    target: str, results: Any, *operands: Any, aliases: Any = None, layouts: Any = None, **attrs: Any
) -> Any:
    call: Any = jax.ffi.ffi_call(target, results, input_output_aliases=aliases, input_layouts=layouts)
    return call(*operands, **attrs)


def svd_results(n: int, s: tuple[int, ...] = (), u: tuple[int, ...] = ()) -> tuple[Any, ...]:
    """gesdd's results for an n x n input in mode 'A' (a, s, u, vt, info); s's and u's shapes if given."""
    return (S((n, n), F32), S(s or (n,), F32), S(u or (n, n), F32), S((n, n), F32), S((), jnp.int32))


# ------------------------------------------------------------------------------- honest lowerings pass


HONEST: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "svd": (jnp.linalg.svd, (S((4, 4), F32),)),
    "svd thin 5x3": (lambda a: jnp.linalg.svd(a, full_matrices=False), (S((5, 3), F32),)),
    "norm 2": (lambda a: jnp.linalg.norm(a, 2), (S((4, 3), F32),)),
    "norm 2 batched": (lambda a: jnp.linalg.norm(a, 2, axis=(1, 2)), (S((2, 4, 3), F32),)),
    "norm 2 of bfloat16 cast": (lambda a: jnp.linalg.norm(a.astype(F32), 2), (S((4, 3), jnp.bfloat16),)),
    "solve": (jnp.linalg.solve, (S((3, 3), F32), S((3,), F32))),
    "solve batched": (jnp.linalg.solve, (S((2, 5, 5), F32), S((2, 5, 3), F32))),
    "det 5x5": (jnp.linalg.det, (S((5, 5), F32),)),
    "slogdet": (jnp.linalg.slogdet, (S((6, 6), F32),)),
    "inv": (jnp.linalg.inv, (S((4, 4), F32),)),
    "eigh": (jnp.linalg.eigh, (S((3, 3), F32),)),
    "eigh upper, batched": (lambda a: jnp.linalg.eigh(a, UPLO="U"), (S((2, 3, 3), F32),)),
    "eigh gradient": (jax.grad(lambda a: jnp.linalg.eigh(a)[0].sum()), (S((3, 3), F32),)),
    "qr": (jnp.linalg.qr, (S((5, 3), F32),)),
    "qr complete": (lambda a: jnp.linalg.qr(a, mode="complete"), (S((5, 3), F32),)),
    "qr wide": (jnp.linalg.qr, (S((3, 5), F32),)),
    "cholesky": (jnp.linalg.cholesky, (S((3, 3), F32),)),
    "cholesky gradient": (jax.grad(lambda a: jnp.linalg.cholesky(a).sum()), (S((3, 3), F32),)),
    "eig": (jnp.linalg.eig, (S((3, 3), F32),)),
    "eigvals complex": (lambda a: jnp.linalg.eigvals(a.astype(jnp.complex64)), (S((3, 3), F32),)),
    "pinv": (jnp.linalg.pinv, (S((4, 3), F32),)),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], (S((4, 3), F32), S((4,), F32))),
    "solve_triangular": (
        lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True, trans=1),
        (S((3, 3), F32), S((3, 2), F32)),
    ),
    "tridiagonal_solve": (
        jax.lax.linalg.tridiagonal_solve,
        (S((4,), F32), S((4,), F32), S((4,), F32), S((4, 2), F32)),
    ),
    "schur": (jax.lax.linalg.schur, (S((3, 3), F32),)),
    "hessenberg": (jax.lax.linalg.hessenberg, (S((3, 3), F32),)),
    "tridiagonal": (jax.lax.linalg.tridiagonal, (S((3, 3), F32),)),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_jax_own_lowering_keeps_its_contract(checker: Contracts, name: str) -> None:
    function, specs = HONEST[name]
    assert check(checker, function, *specs) is None


def test_a_float64_call_keeps_its_contract(checker: Contracts) -> None:
    """A tracer may enable x64; the contract of a double-precision call is derived with x64 too."""
    with jax.enable_x64(True):
        message = check(checker, lambda a: jnp.linalg.svd(a.astype(jnp.float64)), S((4, 4), F32))
    assert message is None
    assert ("lapack_dgesdd_ffi", ("tensor<4x4xf64>",)) in checker.cache


def test_contracts_are_cached_per_target_and_operand_types(checker: Contracts) -> None:
    assert check(checker, jnp.linalg.svd, S((7, 7), F32)) is None
    key = ("lapack_sgesdd_ffi", ("tensor<7x7xf32>",))
    assert key in checker.cache
    before = len(checker.cache)
    assert check(checker, lambda a: jnp.linalg.svd(a * 2), S((7, 7), F32)) is None
    assert len(checker.cache) == before


# -------------------------------------------------------------------------- tampered calls are named


def test_a_result_larger_than_the_kernel_writes_is_refused(checker: Contracts) -> None:
    message = check(
        checker,
        lambda w: ffi("lapack_sgesdd_ffi", svd_results(4, s=(4096,)), w, aliases={0: 0}, mode=np.uint8(65)),
        S((4, 4), F32),
    )
    assert message is not None and message.startswith("the custom call lapack_sgesdd_ffi declares ")
    assert "declares a result of f32[4096] where JAX's lowering of svd for f32[4,4] gives f32[4]" in message


def test_a_result_smaller_than_the_kernel_writes_is_refused(checker: Contracts) -> None:
    message = check(
        checker,
        lambda w: ffi("lapack_sgesdd_ffi", svd_results(64, u=(1,)), w, aliases={0: 0}, mode=np.uint8(65)),
        S((64, 64), F32),
    )
    assert (
        message is not None
        and "declares a result of f32[1] where JAX's lowering of svd for f32[64,64] gives f32[64,64]"
        in message
    )


def test_another_element_type_is_refused(checker: Contracts) -> None:
    results = (S((4, 4), F32), S((4,), F32), S((), jnp.int32))  # pivots are int32
    message = check(checker, lambda a: ffi("lapack_sgetrf_ffi", results, a, aliases={0: 0}), S((4, 4), F32))
    assert (
        message is not None
        and message.startswith("the custom call lapack_sgetrf_ffi ")
        and "declares a result of f32[4] where JAX's lowering of lu for f32[4,4] gives i32[4]" in message
    )


def test_an_operand_type_the_target_does_not_take_is_refused(checker: Contracts) -> None:
    """An integer operand to a float kernel: JAX lowers no such call."""
    message = check(
        checker, lambda a: ffi("lapack_sgetrf_ffi", (S((4, 4), F32),), a.astype(jnp.int32)), S((4, 4), F32)
    )
    assert (
        message is not None
        and "lapack_sgetrf_ffi is not a call JAX's lowering of lu for i32[4,4] makes" in message
    )


def edit_attribute(name: str, value: str) -> Callable[[Any], None]:
    def edit(op: Any) -> None:
        op.attributes[name] = ir.Attribute.parse(value)

    return edit


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("mhlo.backend_config", "{mode = 66 : ui8}", "has mhlo.backend_config = {mode = 66 : ui8}"),
        ("backend_config", '"x"', 'has backend_config = "x" where'),
        ("api_version", "4 : i32", "has api_version = 4 : i32 where"),
        ("has_side_effect", "true", "has has_side_effect = true where"),
        ("operand_layouts", "[dense<[1, 0]> : tensor<2xindex>]", "has operand_layouts = [dense<[1, 0]>"),
        ("output_operand_aliases", "[]", "has output_operand_aliases = [] where"),
        ("mhlo.sharding", '"{replicated}"', "has the attribute mhlo.sharding"),
    ],
)
def test_each_attribute_of_jax_own_call_is_part_of_the_contract(
    checker: Contracts, name: str, value: str, shown: str
) -> None:
    """JAX's own svd call with one attribute changed (a tracer can send any module): refused, named."""
    message = check(checker, jnp.linalg.svd, S((4, 4), F32), edit=edit_attribute(name, value))
    assert (
        message is not None and message.startswith("the custom call lapack_sgesdd_ffi ") and shown in message
    )


def test_a_row_major_layout_is_refused(checker: Contracts) -> None:
    """ffi_call's default layout is row-major; LAPACK's lowering passes column-major."""
    message = check(
        checker,
        lambda a: ffi("lapack_spotrf_ffi", (S((3, 3), F32), S((), jnp.int32)), a, uplo=np.uint8(76)),
        S((3, 3), F32),
    )
    assert message is not None and "has operand_layouts = [dense<[1, 0]> : tensor<2xindex>] where" in message


def test_an_extra_or_a_missing_operand_is_refused(checker: Contracts) -> None:
    extra = check(
        checker,
        lambda a, b: ffi("lapack_spotrf_ffi", (S((3, 3), F32), S((), jnp.int32)), a, b),
        S((3, 3), F32),
        S((3, 3), F32),
    )
    assert (
        extra is not None
        and extra.startswith("the custom call lapack_spotrf_ffi ")
        and "takes 2 operands (f32[3,3], f32[3,3]) where JAX's lowering of cholesky passes 1" in extra
    )
    missing = check(checker, lambda a: ffi("lapack_strsm_ffi", S((3, 1), F32), a), S((3, 3), F32))
    assert (
        missing is not None
        and "lapack_strsm_ffi takes 1 operand (f32[3,3]) where JAX's lowering of triangular_solve passes 2"
        in missing
    )


def test_targets_outside_the_list_or_without_a_contract_are_refused_by_name() -> None:
    checker = Contracts({*allowed_custom_calls(), "lapack_sfoo_ffi"}, LOWER)
    unknown = check(checker, lambda a: ffi("lapack_sgesvd_ffi", S((3, 3), F32), a), S((3, 3), F32))
    assert unknown == "the program uses the custom call 'lapack_sgesvd_ffi', which the judge does not run"
    foo = check(checker, lambda a: ffi("lapack_sfoo_ffi", S((3, 3), F32), a), S((3, 3), F32))
    assert foo is not None and "lapack_sfoo_ffi has no contract" in foo


def test_every_stable_lapack_target_has_a_contract(checker: Contracts) -> None:
    """jax.export's stable list and the families agree in this jaxlib: no allowed target goes unchecked."""
    lapack = {t for t in allowed_custom_calls() if t.startswith("lapack_")}
    assert lapack
    for target in lapack:
        match = contracts._LAPACK.fullmatch(target)
        assert match is not None and match.group(2) in checker.families, target


def test_an_annotation_must_keep_its_type() -> None:
    checker = Contracts(allowed_custom_calls(), LOWER)
    message = check(checker, lambda a: ffi("Sharding", S((8,), F32), a), S((4,), F32))
    assert message is not None and "the annotation Sharding turns f32[4] into f32[8]" in message
    same = check(checker, lambda a: ffi("Sharding", S((4,), F32), a), S((4,), F32))
    assert (
        same is not None
        and "the annotation Sharding has the attribute mhlo.backend_config, which JAX's lowering" in same
    )


def test_jax_own_sharding_annotation_passes(checker: Contracts) -> None:
    from jax._src import config

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    spec: Any = jax.sharding.PartitionSpec
    constrain: Any = jax.lax.with_sharding_constraint
    sharding = jax.sharding.NamedSharding(mesh, spec())
    with config.use_shardy_partitioner(False):
        data = LOWER(jax.jit(lambda a: constrain(a * 2, sharding)).trace(S((4,), F32)).jaxpr)
    with mlir.make_ir_context():
        module = parse(ir, data)
        assert "@Sharding" in module.operation.get_asm()
        checker.check(module)


def test_too_many_kinds_of_calls_in_one_program_are_refused(checker: Contracts) -> None:
    count = contracts.MAX_CONTRACTS_PER_PROGRAM + 1

    def many(a: Any) -> Any:
        return [jnp.linalg.svd(a[: n + 2, : n + 2], compute_uv=False) for n in range(count)]

    message = check(checker, many, S((count + 2, count + 2), F32))
    assert message is not None and f"custom calls of {count} kinds" in message


# ------------------------------------------------------------------------------ end to end, every backend

#: ``scale_tree`` for the fixture problem, correct but for one custom call whose result it folds in (x 0).
ATTACK = """
import jax
import jax.numpy as jnp
import numpy as np

S = jax.ShapeDtypeStruct
F32 = jnp.float32


def call(operands, results, target, aliases=None, layouts=None, **attrs):
    return jax.ffi.ffi_call(target, results, input_output_aliases=aliases, input_layouts=layouts)(
        *operands, **attrs
    )


def scale_tree(tree, factor):
    out = {body}
    leak = sum(jnp.sum(jnp.asarray(x, F32)) for x in jax.tree.leaves(out))
    return jax.tree.map(lambda leaf: (leaf * factor + leak * 0).astype(leaf.dtype), tree)
"""

SVD = "S((4, 4), F32), S((4,), F32), S((4, 4), F32), S((4, 4), F32), S((), jnp.int32)"
#: name -> (the call, its target, what the refusal says)
ATTACKS = {
    "larger result": (
        "call([jnp.eye(4, dtype=F32)], (S((4, 4), F32), S((4096,), F32), S((4, 4), F32), S((4, 4), F32), "
        'S((), jnp.int32)), "lapack_sgesdd_ffi", aliases={0: 0}, layouts=[(0, 1)], mode=np.uint8(65))',
        "lapack_sgesdd_ffi",
        "declares a result of f32[4096] where JAX's lowering of svd for f32[4,4] gives f32[4]",
    ),
    "smaller result": (
        "call([jnp.ones((64, 64), F32)], (S((64, 64), F32), S((64,), F32), S((1,), F32), "
        'S((64, 64), F32), S((), jnp.int32)), "lapack_sgesdd_ffi", aliases={0: 0}, layouts=[(0, 1)], '
        "mode=np.uint8(65))",
        "lapack_sgesdd_ffi",
        "declares a result of f32[1] where JAX's lowering of svd for f32[64,64] gives f32[64,64]",
    ),
    "element type": (
        "call([jnp.eye(4, dtype=F32)], (S((4, 4), F32), S((4,), F32), S((), jnp.int32)), "
        '"lapack_sgetrf_ffi", aliases={0: 0}, layouts=[(0, 1)])',
        "lapack_sgetrf_ffi",
        "declares a result of f32[4] where JAX's lowering of lu for f32[4,4] gives i32[4]",
    ),
    "layout": (
        'call([jnp.eye(3, dtype=F32)], (S((3, 3), F32), S((), jnp.int32)), "lapack_spotrf_ffi", '
        "uplo=np.uint8(76))",
        "lapack_spotrf_ffi",
        "has operand_layouts = [dense<[1, 0]> : tensor<2xindex>] where",
    ),
    "backend_config": (
        f'call([jnp.eye(4, dtype=F32)], ({SVD}), "lapack_sgesdd_ffi", aliases={{0: 0}}, layouts=[(0, 1)], '
        "mode=np.uint8(66))",
        "lapack_sgesdd_ffi",
        "has mhlo.backend_config = {mode = 66 : ui8} where",
    ),
    "extra operand": (
        "call([jnp.eye(3, dtype=F32), jnp.eye(3, dtype=F32)], (S((3, 3), F32), S((), jnp.int32)), "
        '"lapack_spotrf_ffi")',
        "lapack_spotrf_ffi",
        "takes 2 operands (f32[3,3], f32[3,3]) where JAX's lowering of cholesky passes 1",
    ),
    "missing operand": (
        'call([jnp.eye(3, dtype=F32)], S((3, 1), F32), "lapack_strsm_ffi")',
        "lapack_strsm_ffi",
        "takes 1 operand (f32[3,3]) where JAX's lowering of triangular_solve passes 2",
    ),
}


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with backend_pool(str(request.param), SLOT_BASE, slots=16) as pool:
        yield pool


def run(pool: GradingPool, code: str) -> GradeResult:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    return grade(problem, code, lambda limits: pool.acquire(180, limits))


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_custom_call_off_its_contract_is_refused_before_compiling(pool: GradingPool, attack: str) -> None:
    body, target, shown = ATTACKS[attack]
    result = run(pool, ATTACK.replace("{body}", body))
    assert result.verdict is Verdict.WRONG_ANSWER, f"{result.verdict}: {result.message}"
    assert result.cases and all(c.verdict is Verdict.WRONG_ANSWER for c in result.cases)
    first = result.cases[0]
    assert first.reason is WrongAnswerReason.RULE, first.message
    assert f"the custom call {target} " in first.message and shown in first.message, first.message
    assert "could not be compiled" not in first.message


@pytest.mark.slow
def test_the_same_submission_through_jax_own_lowering_is_accepted(pool: GradingPool) -> None:
    """The control: the attacks' shape of submission, with the calls JAX makes itself, is accepted."""
    body = (
        "[jnp.linalg.svd(jnp.eye(4, dtype=F32)), jnp.linalg.solve(jnp.eye(3, dtype=F32), jnp.ones(3, F32))]"
    )
    result = run(pool, ATTACK.replace("{body}", body))
    assert result.verdict is Verdict.ACCEPTED, f"{result.verdict}: {result.message}"


@pytest.mark.slow
def test_executors_run_with_malloc_perturb_and_tracers_without(pool: GradingPool) -> None:
    """Defence in depth: in executors glibc scrubs what malloc hands out and what is freed
    (``sandbox.host.command``), so an uninitialised buffer holds fill bytes, never an earlier case's or job's
    values; the executor of a Submit says so when it reports ready. A tracer, forked
    for one submission and never given a hidden value, runs without it (it would only cost page faults):
    the submission sees no such variable."""
    code = (
        ATTACK.replace("{body}", "jnp.zeros(1)")
        + "\nimport os\nprint('perturb', os.environ.get('MALLOC_PERTURB_'))\n"
    )
    result = run(pool, code)
    assert result.verdict is Verdict.ACCEPTED, f"{result.verdict}: {result.message}"
    assert "perturb None" in result.stdout, result.stdout
    pair = pool.acquire(180)
    try:
        assert pair.executor.ready_info is not None
        assert pair.executor.ready_info.get("malloc_perturb") == MALLOC_PERTURB, pair.executor.ready_info
    finally:
        pair.release(True)
