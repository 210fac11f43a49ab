"""A ``require_loop`` rule decided by what the program computes: the executor runs a variant of the program
it parsed whose loops' results are perturbed (``sandbox.inside.perturb``), and the outputs must change."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.compiled_rules import idle_loops_message, precheck_for
from tests.conftest import FIXTURES, PROGRAM_SLUG
from tests.program_pool import pooled_grader

pytestmark = pytest.mark.xdist_group("program_features")

#: Tracer slots of this module's pool.
SLOT_BASE = 1700

PROBLEMS = ProblemSet(FIXTURES)

#: The running-total fixture: a scan whose body does the kind of work the rule asks for (a sum over a
#: row), into a carry nobody reads, while a closed form beside it computes the answer.
DUMMY_LOOP = """
import jax
import jax.numpy as jnp


def running_total(f, x):
    busy, _ = jax.lax.scan(lambda c, row: (c + jnp.sum(row), None), jnp.zeros((), x.dtype), x)
    return jnp.cumsum(jnp.sum(f(x), axis=1)) + 0.0 * busy
"""


def _outputs_change(fn: Callable[..., Any], *args: np.ndarray) -> bool:
    """Lower ``fn`` as the tracer does, build the executor's variant, compile both, compare the outputs."""
    import jax
    from jax._src import xla_bridge
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]
    from jax._src.lib.mlir.dialects import hlo  # type: ignore[attr-defined]

    from sandbox.inside.lowering import Lowerer, parse
    from sandbox.inside.perturb import perturb_loops

    struct: Any = jax.ShapeDtypeStruct
    specs = [struct(a.shape, a.dtype) for a in args]
    data = Lowerer()(jax.jit(fn).trace(*specs).jaxpr)
    backend = xla_bridge.get_backend("cpu")
    devices = xc.DeviceList(tuple(backend.local_devices()[:1]))
    from jax._src import compiler

    options = compiler.get_compile_options(num_replicas=1, num_partitions=1, backend=backend)
    with mlir.make_ir_context():
        variant = parse(ir, data)
        assert perturb_loops(ir, hlo, variant) > 0
        assert variant.operation.verify()
        programs = [data, bytes(mlir.module_to_bytecode(variant))]
    results = []
    for program in programs:
        exe = backend.compile_and_load(program, executable_devices=devices, compile_options=options)
        results.append([np.asarray(r) for r in exe.execute([jax.device_put(a) for a in args])])
    return any(a.tobytes() != b.tobytes() for a, b in zip(*results, strict=True))


XS = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)


def test_a_loop_that_computes_the_answer_changes_the_output_when_perturbed() -> None:
    import jax
    import jax.numpy as jnp

    def ema(xs: Any) -> Any:
        return jax.lax.scan(lambda m, x: (0.9 * m + 0.1 * x, 0.9 * m + 0.1 * x), jnp.zeros(3), xs)[1]

    def normalized_after(xs: Any) -> Any:  # a scaling of the loop's result would cancel here
        u = jax.lax.fori_loop(0, 3, lambda _, u: u + xs.sum(0), jnp.ones(3))
        return u / jnp.linalg.norm(u)

    assert _outputs_change(ema, XS)
    assert _outputs_change(normalized_after, XS)


def test_a_loop_beside_a_closed_form_leaves_the_output_as_it_was() -> None:
    import jax
    import jax.numpy as jnp

    def dummy_times_zero(xs: Any) -> Any:
        busy = jax.lax.scan(lambda c, x: (c * 0.9 + x, None), jnp.zeros(3), xs)[0]
        return jnp.cumsum(xs, axis=0) + 0.0 * busy

    def dummy_minus_itself(xs: Any) -> Any:
        busy = jax.lax.scan(lambda c, x: (c * 0.9 + x, None), jnp.zeros(3), xs)[0]
        return jnp.cumsum(xs, axis=0) + (busy - busy)

    assert not _outputs_change(dummy_times_zero, XS)
    assert not _outputs_change(dummy_minus_itself, XS)


def test_the_judge_asks_for_the_loop_check_and_words_the_verdict() -> None:
    problem = PROBLEMS.get(PROGRAM_SLUG)
    assert "loops_matter" in precheck_for(problem)
    message = idle_loops_message(problem, [False, True], 1)  # the output's leaf kept, its gradient's not
    assert message is not None and "does not depend on what the loop computes" in message
    assert idle_loops_message(problem, [True, False], 1) is None
    assert idle_loops_message(problem, None, 1) is None


@pytest.fixture(scope="module")
def graded() -> Iterator[Callable[[Problem, str], GradeResult]]:
    with pooled_grader(SLOT_BASE) as grader:
        yield grader


def test_a_dummy_loop_beside_a_closed_form_is_a_rule_verdict_end_to_end(
    graded: Callable[[Problem, str], GradeResult],
) -> None:
    problem = PROBLEMS.get(PROGRAM_SLUG)
    result = graded(problem, DUMMY_LOOP)
    assert result.verdict is Verdict.WRONG_ANSWER, result.message
    assert result.cases[0].reason is WrongAnswerReason.RULE
    assert "does not depend on what the loop computes" in result.message
    accepted = (FIXTURES / PROGRAM_SLUG / "solutions/accepted/scan_over_rows.py").read_text()
    assert graded(problem, accepted).verdict is Verdict.ACCEPTED
