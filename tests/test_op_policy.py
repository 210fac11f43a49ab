"""Issue 36, point 1: the executor compiles only what JAX's own lowering makes (``sandbox.inside.op_policy``).

A submission defined a JAX primitive of its own whose lowering emits ``stablehlo.sort`` with the comparator
``a <= b``: XLA:CPU hands it to ``std::sort``, which then reads and writes past its buffer. The policy allows
ops, attributes and kernel regions only as JAX's lowerings make them (a table derived from JAX) and a sort
only with the comparator JAX's ``lax.sort`` makes for the same operand types.

In-process tests check the policy directly: JAX's own lowerings of every feature the problems use pass,
each kind of tampering is refused and named, and a property-based fuzz mutates attributes and regions of
programs JAX lowered. End-to-end tests grade the attack on every backend (also with the bad sort only on
hidden signatures, compiled while the tracer runs and run last): refused before compiling, with the verdict
a forbidden op gets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jax import lax
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

from judge.core.grader import grade
from judge.core.problems import ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.backends import get_backend
from sandbox.host.resource_limits import SandboxLimits
from sandbox.inside import op_corpus
from sandbox.inside.lowering import Lowerer, parse
from sandbox.inside.op_policy import (
    KERNEL_REGION_OPS,
    SORT,
    UNREADABLE,
    Policy,
    PolicyViolation,
    attribute_items,
    comparator_of,
    element_kind,
)
from sandbox.session.pool import GradingPool
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT, available_backends
from tests.program_pool import backend_pool, pool_source

#: Tracer slots of these pools (others are skipped while busy).
SLOT_BASE = 2140

S: Any = jax.ShapeDtypeStruct
F32 = jnp.float32
LOWER = Lowerer()

#: A submission's own primitive whose lowering sorts with ``a <= b`` (not a strict weak order), unstable:
#: the issue's attack, written with JAX's public extension API only.
BAD_SORT = """
import jax
from jax.extend.core import Primitive
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import mlir

bad_sort_p = Primitive("bad_sort")
bad_sort_p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))


def _lower(ctx, x):
    (aval,) = ctx.avals_in
    kind = mlir.aval_to_ir_type(ctx.module_context, aval)
    scalar = mlir.aval_to_ir_type(ctx.module_context, aval.update(shape=()))
    sort = hlo.SortOp([kind], [x], dimension=mlir.i64_attr(0), is_stable=ir.BoolAttr.get(False))
    block = sort.comparator.blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        le = hlo.compare(
            block.arguments[0],
            block.arguments[1],
            hlo.ComparisonDirectionAttr.get("LE"),
            compare_type=hlo.ComparisonTypeAttr.get("TOTALORDER"),
        )
        hlo.return_([le])
    return sort.results


mlir.register_lowering(bad_sort_p, _lower)


def bad_sort(x):
    return bad_sort_p.bind(x)
"""


def _bad_sort() -> Callable[[Any], Any]:
    namespace: dict[str, Any] = {}
    exec(compile(BAD_SORT, "<bad_sort>", "exec"), namespace)
    return namespace["bad_sort"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def policy() -> Policy:
    return Policy(op_corpus.load_table())


def lowered(function: Callable[..., Any], *specs: Any, devices: int = 1) -> bytes:
    return Lowerer(devices)(jax.jit(function).trace(*specs).jaxpr)


def verdict(policy: Policy, data: bytes) -> str | None:
    """None if the policy accepts the module in ``data``, else its message."""
    with mlir.make_ir_context():
        module = parse(ir, data)
        try:
            policy.check(module)
        except PolicyViolation as exc:
            return str(exc)
        return None


# ---------------------------------------------------------------------------- the table is JAX's own


def test_the_committed_table_is_what_this_jax_lowers() -> None:
    """Regenerated from the corpus, the table is the committed one: a JAX upgrade that changes what its
    lowerings make shows here (``python -m sandbox.inside.op_corpus --write`` derives it again)."""
    derived = op_corpus.derive()
    committed = json.loads(op_corpus.TABLE.read_text())
    assert derived["jax"] == jax.__version__
    assert derived == committed


def test_the_table_allows_no_host_io_and_puts_nothing_unsafe_in_kernels(policy: Policy) -> None:
    table = policy.table
    for op in ("stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv", "llvm.call"):
        assert op not in table.attributes
    for op in (SORT, "stablehlo.custom_call", "stablehlo.all_reduce", "stablehlo.rng_bit_generator"):
        assert op not in table.region_ops
    assert "stablehlo.add" in table.region_ops and "stablehlo.compare" in table.region_ops


# ------------------------------------------------------------------------- JAX's own lowerings pass


def _mesh_features() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], int]]:
    from jax.sharding import AbstractMesh, AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))

    def constrained(x: Any, w: Any) -> Any:
        y = lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))  # type: ignore[no-untyped-call]
        return [y, lax.with_sharding_constraint(y.max(axis=1), NamedSharding(mesh, P("data")))]  # type: ignore[no-untyped-call]

    def mapped(x: Any, w: Any) -> Any:
        def block(xs: Any, ws: Any) -> Any:
            y = xs @ ws
            return y, lax.pmax(jnp.max(y, axis=1), "model"), lax.psum(jnp.sum(y), ("data", "model"))  # type: ignore[no-untyped-call]

        specs = (P("data", "model"), P("data"), P())  # type: ignore[no-untyped-call]
        return jax.shard_map(block, mesh=mesh, in_specs=(P("data", None), P(None, "model")), out_specs=specs)(  # type: ignore[no-untyped-call]
            x, w
        )

    pair = (S((8, 4), F32), S((4, 6), F32))
    return {
        "mesh constraints": (constrained, pair, 8),
        "mesh shard_map": (mapped, (S((8, 4), F32), S((4, 8), F32)), 8),
    }


def _features() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], int]]:
    """Programs written for these tests (not the corpus): every feature new problems are using."""

    def while_loop(x: Any, n: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1]) * 0.5), (0, x))

    def scans(x: Any) -> Any:
        return [
            lax.associative_scan(jnp.maximum, x),
            lax.associative_scan(lambda a, b: a * b + b, x, reverse=True),
        ]

    @jax.custom_jvp
    def softplus(x: Any) -> Any:
        return jnp.logaddexp(x, 0.0)

    softplus.defjvp(lambda p, t: (softplus(p[0]), jax.nn.sigmoid(p[0]) * t[0]))

    def branches(x: Any, k: Any) -> Any:
        return [
            lax.switch(k, [jnp.sin, jnp.cos, lambda t: t * 2, jnp.tanh], x),
            lax.cond(k > 1, lambda t: t.sum(), lambda t: t.max(), x),
        ]

    def checkpointed(x: Any) -> Any:
        f = jax.checkpoint(lambda t: jnp.sum(jnp.tanh(t @ t.T)))
        return jax.value_and_grad(f)(x)

    def integers(a: Any, b: Any) -> Any:
        return [a // b, a % b, a & b, a << 2, a >> 1, jnp.argsort(a), jnp.sort(a > b), jnp.cumsum(a), a.max()]

    def keys(seed: Any) -> Any:
        key = jax.random.key(seed)
        ks = jax.random.split(key, 3)
        return [jax.random.normal(ks[0], (4,)), jax.random.permutation(ks[1], 6), jax.random.key_data(ks)]

    def bf16(x: Any) -> Any:
        y = x.astype(jnp.bfloat16)
        return [jnp.sort(y), y @ y.T, jax.nn.softmax(y), jnp.argmax(y, axis=1), jnp.max(y)]

    def sorts(x: Any, i: Any) -> Any:
        return [
            jnp.sort(x, axis=0),
            jnp.argsort(x, axis=1, stable=False),
            lax.sort((x, i), num_keys=2, is_stable=False),
            lax.sort_key_val(i, x),
            lax.top_k(x, 2),
            jnp.lexsort((x[0], x[1])),
            jnp.median(x, axis=1),
            jax.grad(lambda t: jnp.sort(t).sum())(x),
        ]

    def windows(x: Any) -> Any:
        pool = lambda t: lax.reduce_window(t, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID")  # noqa: E731
        return [pool(x), jax.grad(lambda t: pool(t).sum())(x), x.at[0].apply(jnp.exp), x.at[1, 2].max(3.0)]  # type: ignore[no-untyped-call]

    features: dict[str, tuple[Callable[..., Any], tuple[Any, ...], int]] = {
        "while_loop": (while_loop, (S((3,), F32), S((), jnp.int32)), 1),
        "associative_scan": (scans, (S((8,), F32),), 1),
        "custom_jvp": (jax.grad(lambda x: softplus(x).sum()), (S((5,), F32),), 1),
        "switch and cond": (branches, (S((4,), F32), S((), jnp.int32)), 1),
        "checkpoint": (checkpointed, (S((3, 3), F32),), 1),
        "integers and booleans": (integers, (S((6,), jnp.int32), S((6,), jnp.int32)), 1),
        "random with key arrays": (keys, (S((), jnp.uint32),), 1),
        "bfloat16": (bf16, (S((3, 4), F32),), 1),
        "sorts": (sorts, (S((4, 4), F32), S((4, 4), jnp.int32)), 1),
        "windows and updates": (windows, (S((4, 4), F32),), 1),
    }
    return {**features, **_mesh_features()}


FEATURES = sorted(_features())


@pytest.mark.parametrize("name", FEATURES)
def test_jax_own_lowering_of_each_feature_passes(policy: Policy, name: str) -> None:
    function, specs, devices = _features()[name]
    assert verdict(policy, lowered(function, *specs, devices=devices)) is None


def test_sort_comparators_are_derived_once_per_operand_types(policy: Policy) -> None:
    key = ("ui16", "f16")
    policy.comparators.cache.pop(key, None)
    data = lowered(lambda a, b: lax.sort((a, b), num_keys=1), S((5,), jnp.uint16), S((5,), jnp.float16))
    assert verdict(policy, data) is None
    assert key in policy.comparators.cache
    found = policy.comparators.cache[key]
    assert sorted(keys for keys, _ in found.values()) == [1, 2]  # one comparator per number of keys


# --------------------------------------------------------------------------------- attacks refused


def test_the_issue_attack_is_refused_naming_the_comparison(policy: Policy) -> None:
    bad_sort = _bad_sort()
    message = verdict(policy, lowered(lambda x: bad_sort(x * 2), S((64,), F32)))
    assert message is not None
    assert message.startswith("stablehlo.sort of (f32): its comparator is not one JAX's lowering of lax.sort")
    assert "it compares with LE (TOTALORDER)" in message and "LT (TOTALORDER)" in message


def edit(data: bytes, mutate: Callable[[Any], None]) -> bytes:
    """The module in ``data`` with ``mutate(module)`` applied, written again (MLIR verifies it when read)."""
    with mlir.make_ir_context():
        module = parse(ir, data)
        mutate(module)
        return bytes(mlir.module_to_bytecode(module))


def ops_named(module: Any, name: str) -> list[Any]:
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if op.name == name:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def set_attribute(name: str, attribute: str, value: str, index: int = 0) -> Callable[[Any], None]:
    def mutate(module: Any) -> None:
        ops_named(module, name)[index].attributes[attribute] = ir.Attribute.parse(value)

    return mutate


def test_an_attribute_jax_never_gives_is_refused(policy: Policy) -> None:
    data = edit(
        lowered(lambda x: x + 1, S((3,), F32)), set_attribute("stablehlo.add", "judge.secret", "1 : i32")
    )
    message = verdict(policy, data)
    assert message == (
        "stablehlo.add has the attribute judge.secret = 1 : i32, which JAX's lowering of stablehlo.add "
        "never gives"
    )


def test_a_compare_type_that_does_not_fit_the_elements_is_refused(policy: Policy) -> None:
    data = edit(
        lowered(lambda x, y: x < y, S((3,), jnp.int32), S((3,), jnp.int32)),
        set_attribute("stablehlo.compare", "compare_type", "#stablehlo<comparison_type UNSIGNED>"),
    )
    message = verdict(policy, data)
    assert message is not None and message.startswith("stablehlo.compare on int values with compare_type = ")
    assert "UNSIGNED" in message and "JAX's lowering makes no such stablehlo.compare" in message


def test_an_op_jax_never_lowers_to_is_refused(policy: Policy) -> None:
    text = """
    func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.cholesky %arg0, lower = true : tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    with mlir.make_ir_context():
        data = bytes(
            mlir.module_to_bytecode(ir.Module.parse(text.replace("tensor<4xf32>", "tensor<4x4xf32>")))
        )
    assert verdict(policy, data) == (
        "the program uses the operation 'stablehlo.cholesky', which JAX's lowering does not make"
    )


def replace_in_region(parent: str, target: str = "judge_fuzz") -> Callable[[Any], None]:
    """Replace the first op of ``parent``'s region that computes a value with a custom call of the same
    types (the call's contract would refuse it too; the policy refuses it first, named)."""

    def mutate(module: Any) -> None:
        op = ops_named(module, parent)[0]
        block = op.regions[0].blocks[0]
        victim = next(
            o.operation for o in block.operations if len(o.operation.results) and len(o.operation.operands)
        )
        with ir.InsertionPoint(victim), victim.location:
            call = ir.Operation.create(
                "stablehlo.custom_call",
                results=[r.type for r in victim.results],
                operands=list(victim.operands),
                attributes={"call_target_name": ir.StringAttr.get(target)},
            )
        for old, new in zip(victim.results, call.results, strict=True):
            old.replace_all_uses_with(new)
        victim.erase()

    return mutate


@pytest.mark.parametrize(
    ("parent", "function", "specs"),
    [
        ("stablehlo.reduce", lambda x: jnp.sum(x), (S((5,), F32),)),
        ("stablehlo.scatter", lambda x, i: x.at[i].add(1.0), (S((5,), F32), S((2,), jnp.int32))),
        (
            "stablehlo.reduce_window",
            lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (1,), "VALID"),
            (S((5,), F32),),
        ),
        (
            "stablehlo.select_and_scatter",
            jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2,), (2,), "VALID").sum()),
            (S((6,), F32),),
        ),
    ],
)
def test_a_kernel_region_holding_what_jax_never_puts_there_is_refused(
    policy: Policy, parent: str, function: Callable[..., Any], specs: tuple[Any, ...]
) -> None:
    data = lowered(function, *specs)
    assert verdict(policy, data) is None
    message = verdict(policy, edit(data, replace_in_region(parent)))
    assert message == (
        f"{parent} hands its kernel a region that uses stablehlo.custom_call, which JAX's lowering never "
        "puts in such a region"
    )


def test_an_attribute_the_bindings_cannot_read_never_crashes_the_check(policy: Policy) -> None:
    """A dense complex attribute aborts the process when read by position; the policy reads by name."""
    text = """
    func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "stablehlo.add"(%arg0, %arg0) {judge.blob = dense<(1.0,2.0)> : tensor<complex<f32>>}
        : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }"""
    with mlir.make_ir_context():
        mutated = bytes(mlir.module_to_bytecode(ir.Module.parse(text)))
    message = verdict(policy, mutated)
    assert message is not None and f"the attribute judge.blob = {UNREADABLE}" in message
    with mlir.make_ir_context():
        (add,) = ops_named(parse(ir, mutated), "stablehlo.add")
        assert (("judge.blob", UNREADABLE)) in attribute_items(add)


# ------------------------------------------------------------------------------ property-based fuzz

#: Programs JAX lowers, the fuzz's seeds.
SEEDS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "argsort": (lambda x: jnp.argsort(x, axis=1), (S((3, 4), F32),)),
    "sort two keys": (lambda x, i: lax.sort((x, i), num_keys=2), (S((3, 4), F32), S((3, 4), jnp.int32))),
    "sort ints": (lambda i: jnp.sort(i, axis=0), (S((3, 4), jnp.int32),)),
    "top_k and median": (lambda x: [lax.top_k(x, 2)[0], jnp.median(x)], (S((3, 4), F32),)),
    "reductions": (lambda x: [x.sum(0), x.max(1), jnp.argmax(x, 0), x.min()], (S((3, 4), F32),)),
    "scatter and gather": (
        lambda x, i: [x.at[i].add(x[0]), x.at[i].max(1.0), x[i], x.at[i].apply(jnp.exp)],
        (S((3, 4), F32), S((2,), jnp.int32)),
    ),
    "compares": (
        lambda x, i: [x < 1, x == x, i > 2, i != 0, (i > 0) == (x > 0)],
        (S((3, 4), F32), S((3, 4), jnp.uint32)),
    ),
    "windows": (
        jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 2), "VALID").sum()),
        (S((3, 4), F32),),
    ),
}
DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
#: The directions JAX's lowering compares floats in with a total order.
TOTAL_ORDER = ("LT", "LE", "EQ")
TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")
#: compare_type JAX's lowering gives each element kind (lax's comparisons; TOTALORDER in sorts and the
#: total-order comparisons of searchsorted).
JAX_TYPES = {
    "float": {"FLOAT", "TOTALORDER"},
    "int": {"SIGNED"},
    "uint": {"UNSIGNED"},
    "bool": {"UNSIGNED"},
    "complex": {"FLOAT"},
}


@pytest.fixture(scope="module")
def seeds() -> dict[str, bytes]:
    return {name: lowered(f, *specs) for name, (f, specs) in SEEDS.items()}


def _sites(module: Any) -> list[tuple[Any, bool]]:
    """Every op of the module, with whether it sits in a sort's comparator."""
    out: list[tuple[Any, bool]] = []

    def visit(op: Any, in_comparator: bool) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    inside = in_comparator or op.name == SORT
                    out.append((child, inside))
                    visit(child, inside)

    visit(module.operation, False)
    return out


def _comparators(module: Any) -> list[tuple[str, ...]]:
    return [comparator_of(op) for op, _ in _sites(module) if op.name == SORT]


def _readable(data: bytes) -> bool:
    with mlir.make_ir_context():
        try:
            parse(ir, data)
        except Exception:
            return False
        return True


MUTATIONS = ("direction", "compare_type", "is_stable", "dimension", "region_op", "swap", "kernel_dimensions")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.sampled_from(sorted(SEEDS)),
    mutation=st.sampled_from(MUTATIONS),
    pick=st.integers(min_value=0, max_value=1000),
    value=st.integers(min_value=0, max_value=1000),
)
def test_every_mutant_that_is_not_a_jax_lowering_is_refused(
    policy: Policy, seeds: dict[str, bytes], seed: str, mutation: str, pick: int, value: int
) -> None:
    """Mutate one attribute or region op of a program JAX lowered. The unmutated program passes; a mutant
    MLIR's verifier refuses never reaches the policy (the executor refuses it unread); otherwise the
    mutant is refused exactly when it is no longer a JAX lowering: a comparator that is no longer the one
    JAX made for its sort, a compare_type JAX never gives those elements, a kernel region holding an op
    JAX never puts there. Flipping ``is_stable`` or sorting along another axis is a JAX lowering
    (``lax.sort`` takes both): accepted."""
    data = seeds[seed]
    assert verdict(policy, data) is None
    expect_refused: bool | None = None
    with mlir.make_ir_context():
        module = parse(ir, data)
        before = _comparators(module)
        sites = _sites(module)
        if mutation in ("direction", "compare_type"):
            compares = [(op, inside) for op, inside in sites if op.name == "stablehlo.compare"]
            if not compares:
                return
            op, inside = compares[pick % len(compares)]
            kind = element_kind(str(op.operands[0].type))
            if mutation == "direction":
                new = DIRECTIONS[value % len(DIRECTIONS)]
                op.attributes["comparison_direction"] = ir.Attribute.parse(
                    f"#stablehlo<comparison_direction {new}>"
                )
                if not inside:
                    had = str(op.attributes["compare_type"]) if "compare_type" in op.attributes else ""
                    # Any direction is a lax comparison, but a total order JAX makes only as LT, LE or
                    # EQ (sort comparators of several keys, searchsorted).
                    expect_refused = "TOTALORDER" in had and new not in TOTAL_ORDER
            else:
                new = TYPES[value % len(TYPES)]
                op.attributes["compare_type"] = ir.Attribute.parse(f"#stablehlo<comparison_type {new}>")
                direction = str(op.attributes["comparison_direction"]).split()[-1].rstrip(">")
                if not inside:
                    total = new == "TOTALORDER" and direction not in TOTAL_ORDER
                    expect_refused = new not in JAX_TYPES[kind] or total
        elif mutation in ("is_stable", "dimension"):
            sorts = [op for op, _ in sites if op.name == SORT]
            if not sorts:
                return
            op = sorts[pick % len(sorts)]
            if mutation == "is_stable":
                stable = str(op.attributes["is_stable"]) == "true"
                op.attributes["is_stable"] = ir.BoolAttr.get(not stable)
            else:
                rank = len(ir.RankedTensorType(op.operands[0].type).shape)
                op.attributes["dimension"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), value % (rank + 1)
                )
            expect_refused = False
        elif mutation == "region_op":
            holders = [op for op, _ in sites if op.name == SORT or op.name in KERNEL_REGION_OPS]
            if not holders:
                return
            holder = holders[pick % len(holders)]
            block = holder.regions[value % len(holder.regions)].blocks[0]
            victims = [
                o.operation
                for o in block.operations
                if len(o.operation.results) and len(o.operation.operands)
            ]
            if not victims:
                return
            victim = victims[value % len(victims)]
            kinds = {str(r.type) for r in victim.results} | {str(o.type) for o in victim.operands}
            if len(kinds) != 1 or len(victim.operands) > 2:
                return
            # The same types, another op: maximum for anything binary, negate for anything unary.
            name = "stablehlo.maximum" if len(victim.operands) == 2 else "stablehlo.negate"
            if victim.name == name:
                name = "stablehlo.minimum" if len(victim.operands) == 2 else "stablehlo.abs"
            with ir.InsertionPoint(victim), victim.location:
                other = ir.Operation.create(
                    name, results=[victim.results[0].type], operands=list(victim.operands)
                )
            victim.results[0].replace_all_uses_with(other.results[0])
            victim.erase()
            expect_refused = True if holder.name == SORT else None
        elif mutation == "swap":  # a region op's two operands swapped (in a comparator: b < a)
            inner = [
                op
                for op, inside in sites
                if len(op.operands) == 2
                and op.operands[0] != op.operands[1]
                and (inside or (op.parent is not None and op.parent.name in KERNEL_REGION_OPS))
            ]
            if not inner:
                return
            op = inner[pick % len(inner)]
            first, second = op.operands[0], op.operands[1]
            op.operands[0], op.operands[1] = second, first
            if _comparators(module) != before:
                expect_refused = True
        else:  # kernel_dimensions: reduce over another axis than the one the result type says
            reduces = [op for op, _ in sites if op.name == "stablehlo.reduce"]
            if not reduces:
                return
            op = reduces[pick % len(reduces)]
            rank = len(ir.RankedTensorType(op.operands[0].type).shape)
            op.attributes["dimensions"] = ir.Attribute.parse(f"array<i64: {value % (rank + 1)}>")
        if mutation in ("direction", "region_op", "compare_type") and expect_refused is None:
            after = _comparators(module)
            if after != before:
                expect_refused = True
        try:
            mutant = bytes(mlir.module_to_bytecode(module))
        except Exception:
            return  # MLIR will not even write it: nothing a tracer could send
    if not _readable(mutant):
        return  # the executor refuses it as unreadable, before the policy
    message = verdict(policy, mutant)
    event(f"{mutation}: {'refused' if message else 'accepted'} (expected refused: {expect_refused})")
    if expect_refused is True:
        assert message is not None, f"{seed}: {mutation} accepted"
    elif expect_refused is False:
        assert message is None, f"{seed}: {mutation} refused: {message}"


# ------------------------------------------------------------------------------ end to end, every backend

#: ``scale_tree`` for the fixture problem, correct; the bad sort's result is folded in (x 0) on every
#: signature, or only on hidden ones (the public cases have no leaf of two or more dimensions).
ATTACK = (
    BAD_SORT
    + """
import jax.numpy as jnp


def scale_tree(tree, factor):
    leaves = jax.tree.leaves(tree)
    hidden_only = {hidden_only}
    if hidden_only and not any(jnp.ndim(x) >= 2 for x in leaves):
        return jax.tree.map(lambda leaf: (leaf * factor).astype(leaf.dtype), tree)
    flat = jnp.concatenate([jnp.ravel(jnp.asarray(x, jnp.float32)) for x in leaves] * 64)
    leak = jnp.sum(bad_sort(flat)) * 0
    return jax.tree.map(lambda leaf: (leaf * factor + leak).astype(leaf.dtype), tree)
"""
)


@pytest.fixture(scope="module", params=[b for b in available_backends() if b in ("process", "bwrap")])
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    index = ("process", "bwrap").index(str(request.param))
    with backend_pool(str(request.param), SLOT_BASE + 16 * index, slots=16) as pool:
        yield pool


def run(pool: GradingPool, code: str) -> GradeResult:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    return grade(problem, code, lambda limits: pool.acquire(180, limits))


@pytest.mark.slow
def test_a_non_strict_sort_comparator_is_refused_before_compiling(pool: GradingPool) -> None:
    result = run(pool, ATTACK.replace("{hidden_only}", "False"))
    assert result.verdict is Verdict.WRONG_ANSWER, f"{result.verdict}: {result.message}"
    assert result.cases and all(c.verdict is Verdict.WRONG_ANSWER for c in result.cases)
    first = result.cases[0]
    assert first.reason is WrongAnswerReason.RULE, first.message
    assert "stablehlo.sort of (f32): its comparator is not one JAX's lowering" in first.message, first.message
    assert "it compares with LE (TOTALORDER)" in first.message
    assert "could not be compiled" not in first.message


@pytest.mark.slow
def test_a_bad_sort_only_on_hidden_signatures_is_refused_before_compiling(pool: GradingPool) -> None:
    """The public cases pass; every hidden case (each has a leaf of two or more dimensions, or none is
    reached through one) gets the executor's refusal, never a crash."""
    result = run(pool, ATTACK.replace("{hidden_only}", "True"))
    public = [c for c in result.cases if c.visibility != "hidden"]
    hidden = [c for c in result.cases if c.visibility == "hidden"]
    assert public and all(c.verdict is Verdict.ACCEPTED for c in public), [c.message for c in public]
    refused = [c for c in hidden if c.verdict is not Verdict.ACCEPTED]
    assert refused, "no hidden case met the bad sort"
    for case in refused:
        assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.RULE, case.message
    assert result.verdict is Verdict.WRONG_ANSWER, f"{result.verdict}: {result.message}"
    assert all(c.verdict not in (Verdict.RUNTIME_ERROR,) for c in result.cases)


@pytest.mark.slow
def test_the_same_submission_without_the_bad_sort_is_accepted(pool: GradingPool) -> None:
    """The control: the attack's shape of submission with JAX's own sort is accepted."""
    code = ATTACK.replace("{hidden_only}", "False").replace("bad_sort(flat)", "jnp.sort(flat)")
    result = run(pool, code)
    assert result.verdict is Verdict.ACCEPTED, f"{result.verdict}: {result.message}"


# --------------------------------------------------------------- every accepted solution still passes

_PROBLEMS = ProblemSet(ROOT / "problems")
#: Problems whose programs reach the policy's rarer corners (collectives and shardings, typed keys, sorts and
#: top_k, optimization barriers, cases and switch branches, custom_jvp calls, associative scans).
#: tests/test_solutions.py grades every shipped solution of every problem through the same executors, so an
#: accepted solution the policy refused would fail there as well (as a forbidden-op verdict); this test also
#: checks each program these send, away from the grading.
_POLICY_SAMPLE = (
    "device-mesh-sharding",
    "prng-key-splitting",
    "top-k-values-indices",
    "remat-tanh-stack",
    "piecewise-switch",
    "safe-norm-jvp",
    "linear-recurrence-scan",
)


@pytest.fixture(scope="module")
def process_backend() -> Iterator[Any]:
    backend = get_backend("process")
    yield backend
    backend.close()


@pytest.mark.slow
@pytest.mark.parametrize("slug", _POLICY_SAMPLE)
def test_every_program_of_each_accepted_solution_passes_the_policy(
    policy: Policy, process_backend: Any, monkeypatch: pytest.MonkeyPatch, slug: str
) -> None:
    """Each shipped accepted solution, graded through the tracer's path (public and hidden signatures):
    still accepted, and every program the tracer sent the executor passes the policy here too."""
    from sandbox.session.lanes import Lanes

    sent: list[bytes] = []
    original = Lanes.request_program

    def record(self: Any, program_id: int, module: bytes, *rest: Any) -> None:
        sent.append(bytes(module))
        original(self, program_id, module, *rest)

    monkeypatch.setattr(Lanes, "request_program", record)
    problem = _PROBLEMS.get(slug)
    accepted = [file for folder, file in problem.solutions() if folder == "accepted"]
    assert accepted
    index = [p.slug for p in _PROBLEMS].index(slug)
    pool = GradingPool(
        process_backend, SandboxLimits(), size=1, slot_base=SLOT_BASE + 40 + 2 * index, slots=2
    )
    try:
        for file in accepted:
            result = grade(problem, file.read_text(), pool_source(pool, timeout=300))
            assert result.verdict is Verdict.ACCEPTED, f"{file.name}: {result.verdict}: {result.message}"
    finally:
        pool.close()
    assert sent
    for data in sent:
        assert verdict(policy, data) is None
