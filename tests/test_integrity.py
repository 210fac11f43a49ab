"""Issue 13's attacks (and issue 7's harness points 8-12), graded end to end on every backend.

User code runs in the tracer, which it owns: it can read and rewrite anything there (the job, the tracer's
checks, its result channel). Each test below does that and asserts what the judge must still guarantee: a
function that fails under jit is never accepted, a host callback cannot be hidden, no hidden value reaches
the output or the messages, forged or flooding frames give a clean verdict in bounded time and memory, and
state kept across calls, mutations, debug callbacks and container subclasses get the right verdict.
Gradings go through a warm GradingPool (forked tracers, reused executors), as in the service.
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from judge.core.grader import grade
from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.session.pool import GradingPool
from tests.conftest import FIXTURE_SLUG, FIXTURES, TUPLE_SLUG, available_backends
from tests.program_pool import backend_pool

pytestmark = pytest.mark.slow

#: Tracer slots of these pools (others are skipped while busy).
SLOT_BASE = 300

#: A correct solution of the fixture problem scale-tree (``tests/fixtures/problems``).
CORRECT = """
import jax
import jax.numpy as jnp


def correct(tree, factor):
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""
#: A correct solution of the fixture problem lerp-trees (a tuple output; its inputs must stay unchanged).
LERP = """
import jax


def correct(start, end, weight):
    gap = jax.tree.map(lambda a, b: b - a, start, end)
    return jax.tree.map(lambda a, d: a + weight * d, start, gap), gap
"""


@pytest.fixture(scope="module")
def problems() -> ProblemSet:
    return ProblemSet(FIXTURES)


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with backend_pool(str(request.param), SLOT_BASE, slots=32) as pool:
        yield pool


def run(pool: GradingPool, problem: Problem, code: str, **options: Any) -> GradeResult:
    return grade(problem, code, lambda limits: pool.acquire(180, limits), **options)


def fast(problem: Problem, **limits: float) -> Problem:
    spec = problem.spec.model_copy(update={"limits": problem.spec.limits.model_copy(update=limits)})
    return Problem(spec, problem.root, problem.statement_source, problem.starter, problem.cases)


def shown(result: GradeResult) -> str:
    """Everything a learner sees: output, messages (case and summary)."""
    return "\n".join([result.stdout, result.message, *(c.message for c in result.cases)])


# ------------------------------------------------------------------------------------------ forging


FORGED_FRAMES = """
import os, sys
from sandbox.shared.wire import encode_frame
frames = [
    encode_frame({"type": "loaded"}),
    encode_frame({"type": "program", "sig": 0, "skeleton": {"out": 0}, "module": 0}, [b"junk"]),
    encode_frame({"type": "case_result", "index": 0, "status": "ok", "verdict": "accepted"}),
    encode_frame({"type": "public_done"}),
    encode_frame({"type": "done"}),
]
for fd in range(3, 64):  # the result channel is one of these, whatever its number
    for frame in frames:
        try:
            os.write(fd, frame)
        except OSError:
            break


def scale_tree(tree, factor):
    return tree
"""


def test_forged_frames_claiming_results_are_not_accepted(pool: GradingPool, problems: ProblemSet) -> None:
    result = run(pool, problems.get(FIXTURE_SLUG), FORGED_FRAMES)
    assert result.verdict is not Verdict.ACCEPTED, result.message
    assert result.verdict in {Verdict.RUNTIME_ERROR, Verdict.WRONG_ANSWER}


NUMPY_AT_LOAD_TIME = (
    CORRECT
    + """
import gc, sys
import numpy as np

T = sys.modules.get("sandbox.inside.tracer") or sys.modules["__main__"]  # forked, or run as a script
P = sys.modules["sandbox.shared.wire"]


def numpy_answer(tree, factor):  # cannot be traced: NumPy and Python floats on the values
    scale = float(factor)
    return jax.tree.map(lambda g: (np.asarray(g, np.float32) * scale).astype(np.asarray(g).dtype), tree)


# Read the job out of the tracer's memory, compute every answer it can in NumPy, and make the tracer
# export constant programs with those answers instead of tracing the function. (The tracer froze its own
# objects out of the collector's lists, which is no defence: user code can thaw them.)
gc.unfreeze()
cap = next(o for o in gc.get_objects() if isinstance(o, T.Captured))
ANSWERS = {}
for obj in gc.get_objects():
    if isinstance(obj, P.Frame) and obj.message.get("type") == "job":
        for item in obj.message.get("print_cases", []):
            body = next(s for s in obj.message["signatures"] if s["id"] == item["sig"])
            sig = T.Signature(body, obj.message["args"], cap)
            ANSWERS[sig.id] = numpy_answer(*sig.build(P.decode_leaves(item["leaves"], obj)))
original = T.make_wrapper


def make_wrapper(fn, sig, *rest):
    if sig.id in ANSWERS:
        answer = ANSWERS[sig.id]
        fn = lambda *args: jax.tree.map(jnp.asarray, answer)
    return original(fn, sig, *rest)


T.make_wrapper = make_wrapper


def scale_tree(tree, factor):
    return numpy_answer(tree, factor)
"""
)


def test_a_function_that_fails_under_jit_is_never_accepted(pool: GradingPool, problems: ProblemSet) -> None:
    problem = problems.get(FIXTURE_SLUG)
    result = run(pool, problem, NUMPY_AT_LOAD_TIME)
    assert result.verdict is not Verdict.ACCEPTED
    hidden = [c for c in result.cases if c.visibility == "hidden"]
    assert hidden and all(c.verdict is not Verdict.ACCEPTED for c in hidden), [c.verdict for c in hidden]
    # A hidden case with a public example's signature runs the forged constant program (the example's
    # answer) on other values: wrong_answer. Every other hidden signature must be traced: trace_error.
    assert result.verdict in (Verdict.TRACE_ERROR, Verdict.WRONG_ANSWER), result.message
    assert Verdict.TRACE_ERROR in {c.verdict for c in hidden}, [c.verdict for c in hidden]


HIDDEN_CALLBACK = (
    CORRECT
    + """
import gc, sys
import numpy as np
from jax._src.core import jaxpr_as_fun
from jax._src.interpreters import mlir

T = sys.modules.get("sandbox.inside.tracer") or sys.modules["__main__"]  # forked, or run as a script
# Blind the tracer's own check, and lower through jit (which keeps host callbacks, registering them with a
# backend) instead of the tracer's own lowering: the program that reaches the judge calls back into this
# process.
T.find_callbacks = lambda *args, **kwargs: set()
gc.unfreeze()  # the tracer's own objects were frozen out of gc.get_objects(); thaw them
cap = next(o for o in gc.get_objects() if isinstance(o, T.Captured))


class Lower:
    def ordered_effects(self, jaxpr):
        return []

    def __call__(self, jaxpr):
        lowered = jax.jit(jaxpr_as_fun(jaxpr)).lower(*jaxpr.in_avals)
        return mlir.module_to_bytecode(lowered.compiler_ir("stablehlo"))


cap.lower = Lower()


def scale_tree(tree, factor):
    leaves, treedef = jax.tree.flatten(correct(tree, factor))
    shape = jax.ShapeDtypeStruct(leaves[0].shape, leaves[0].dtype)
    first = jax.pure_callback(lambda x: np.asarray(x), shape, leaves[0])
    return treedef.unflatten([first, *leaves[1:]])
"""
)


def test_a_host_callback_cannot_be_hidden(pool: GradingPool, problems: ProblemSet) -> None:
    result = run(pool, problems.get(FIXTURE_SLUG), HIDDEN_CALLBACK)
    assert result.verdict is Verdict.WRONG_ANSWER, result.message
    first = result.cases[0]
    assert first.reason is WrongAnswerReason.RULE and "host" in first.message, first.message


FORGED_MODULE = (
    CORRECT
    + """
import gc, sys

T = sys.modules.get("sandbox.inside.tracer") or sys.modules["__main__"]  # forked, or run as a script
gc.unfreeze()  # the tracer's own objects were frozen out of gc.get_objects(); thaw them
cap = next(o for o in gc.get_objects() if isinstance(o, T.Captured))
FORGED = FORGED_BYTES


class Lower:
    def ordered_effects(self, jaxpr):
        return []

    def __call__(self, jaxpr):
        return FORGED


cap.lower = Lower()
scale_tree = correct
"""
)
#: A module of a dialect XLA would lower to host code (``arith`` parses in the executor's context).
OTHER_DIALECT = (
    "module { func.func public @main() -> tensor<f32> { %0 = arith.constant dense<1.0> : tensor<f32>\n"
    "return %0 : tensor<f32> } }"
)


@pytest.mark.parametrize(
    ("forged", "verdict", "needle"),
    [
        (b"\x00\xffnot MLIR at all", Verdict.RUNTIME_ERROR, "not a valid MLIR module"),
        (b"ML\xefR\x00truncated bytecode", Verdict.RUNTIME_ERROR, "not a valid MLIR module"),
        (OTHER_DIALECT.encode(), Verdict.WRONG_ANSWER, "arith.constant"),
        # MLIR's parser recurses: nesting this deep overflows the executor's stack, and the judge reports it
        # as this submission's crash (the executor is replaced; nothing else is affected).
        (b"module {" * 20_000 + b"}" * 20_000, Verdict.RUNTIME_ERROR, "crashed"),
    ],
    ids=["garbage", "truncated-bytecode", "other-dialect", "nested-too-deep"],
)
def test_a_forged_program_is_refused_before_it_compiles(
    pool: GradingPool, problems: ProblemSet, forged: bytes, verdict: Verdict, needle: str
) -> None:
    """Whatever bytes the tracer claims as a program, the executor parses and checks them first: garbage
    is unreadable, a module of another dialect is refused by name, never compiled, and one that crashes the
    parser is this submission's runtime error."""
    result = run(pool, problems.get(FIXTURE_SLUG), FORGED_MODULE.replace("FORGED_BYTES", repr(forged)))
    assert result.verdict is verdict, result.message
    assert needle in shown(result), shown(result)


# ------------------------------------------------------------------------------------------ hidden values


SNOOP = (
    CORRECT
    + """
import gc, os, sys
import numpy as np


def snoop(tag):
    found = []
    gc.unfreeze()  # every object of the process, the tracer's frozen ones included
    for obj in gc.get_objects():
        if isinstance(obj, np.ndarray) and obj.dtype.kind == "f" and 0 < obj.size < 5000:
            found.append(obj.ravel().tolist())
    print(tag, repr(found)[:20000], flush=True)
    return found


snoop("load")


def scale_tree(tree, factor):
    found = snoop("trace")
    shapes = jax.tree.map(lambda x: x.shape, tree)
    raise ValueError(f"FOUND {repr(found)[:3000]} {shapes}")
"""
)


def _hidden_numbers(problem: Problem) -> set[str]:
    """Distinctive printed forms of hidden input values (not also in a public case, not round numbers)."""
    public: set[float] = set()
    for case in problem.public_cases:
        for leaf in _leaves(case.inputs):
            public.update(float(v) for v in leaf.ravel())
    numbers: set[str] = set()
    for case in problem.hidden_cases:
        for leaf in _leaves(case.inputs):
            for value in leaf.ravel()[:4]:
                v = float(value)
                if v in public or v == round(v):
                    continue
                numbers.update({repr(v), f"{v:.6g}", f"{v:.4f}"})
    return numbers


def _leaves(tree: Any) -> list[np.ndarray]:
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in _leaves(v)]
    if isinstance(tree, list | tuple):
        return [x for v in tree for x in _leaves(v)]
    return [np.asarray(tree, np.float64)] if isinstance(tree, np.ndarray) else []


def test_printing_or_raising_hidden_values_reveals_none(pool: GradingPool, problems: ProblemSet) -> None:
    problem = problems.get(FIXTURE_SLUG)
    result = run(pool, problem, SNOOP)
    text = shown(result)
    numbers = _hidden_numbers(problem)
    assert len(numbers) > 20
    leaked = sorted(n for n in numbers if n in text)
    assert leaked == [], f"hidden values reached the learner: {leaked[:5]}"
    source = {line.strip() for line in SNOOP.splitlines()}
    for case in result.cases:
        if case.visibility == "hidden":
            # A hidden trace error quotes the judge's own copy of the user's line, never the exception text.
            where, _, said = case.message.rpartition("\n")
            assert not where or (where.startswith("line ") and where.split(": `", 1)[1][:-1] in source), where
            assert "FOUND" not in said and case.run_ms is None and case.error_ratio is None, case.message
    assert "FOUND" in result.cases[0].message, "public cases show the user's own message"
    assert "hidden cases were traced is not shown" in result.stdout


#: A Python ``if`` on a traced value, reached only for a bare-array tree (hidden cases only).
IF_ON_HIDDEN_SHAPES = """
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    if not isinstance(tree, dict | list):
        if jnp.sum(tree) > 0:
            tree = tree + 0
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""


def test_a_trace_error_on_hidden_cases_names_the_line_and_the_advice(
    pool: GradingPool, problems: ProblemSet
) -> None:
    """The judge composes a hidden case's message itself from the line number (its own copy of the line)
    and the advice key the tracer sends as data; free text from the sandbox never shows."""
    result = run(pool, problems.get(FIXTURE_SLUG), IF_ON_HIDDEN_SHAPES)
    assert result.verdict is Verdict.TRACE_ERROR, result.message
    failed = [c for c in result.cases if c.verdict is Verdict.TRACE_ERROR]
    assert failed and all(c.visibility == "hidden" for c in failed)
    message = failed[0].message
    assert "line 8: `if jnp.sum(tree) > 0:`" in message, message
    assert "jnp.where" in message and "details are not shown" not in message, message


#: Finds the session's output mark in the tracer's memory (the job frame is alive while the code loads)
#: and writes it early, then prints more: it can only hide its own later prints, never show hidden ones.
FORGED_MARK = (
    SNOOP.replace('snoop("load")\n', "")
    + """
gc.unfreeze()
JOBS = [o for o in gc.get_objects() if isinstance(o, dict) and isinstance(o.get("output_mark"), str)]
MARK = JOBS[0]["output_mark"] if JOBS else None
print("before the forged mark;", "found it" if MARK else "no mark", flush=True)
sys.stdout.write(MARK or "")
print("FORGED-AFTER", flush=True)
"""
)
#: Closes its output, so the tracer cannot write the mark: the judge cuts where the output stands.
CLOSED_OUTPUT = (
    CORRECT
    + """
import os
print("printed before closing", flush=True)
os.close(1)
os.close(2)
scale_tree = correct
"""
)


def test_a_forged_output_mark_hides_only_the_forgers_own_prints(
    pool: GradingPool, problems: ProblemSet
) -> None:
    problem = problems.get(FIXTURE_SLUG)
    result = run(pool, problem, FORGED_MARK)
    text = shown(result)
    assert "before the forged mark; found it" in result.stdout  # the attack had the real mark
    assert "FORGED-AFTER" not in text and "\x00" not in result.stdout
    numbers = _hidden_numbers(problem)
    assert [n for n in numbers if n in text] == []


def test_a_submission_that_closes_its_output_is_still_graded_and_cut(
    pool: GradingPool, problems: ProblemSet
) -> None:
    result = run(pool, problems.get(FIXTURE_SLUG), CLOSED_OUTPUT)
    assert result.verdict is Verdict.ACCEPTED, shown(result)
    assert result.stdout.startswith("printed before closing")


# ------------------------------------------------------------------------------------------ bounded


FORGED_PROGRESS = """
import os, threading
from sandbox.shared.wire import encode_frame


def flood():
    frame = encode_frame({"type": "loaded"})
    while True:
        for fd in range(3, 64):
            try:
                os.write(fd, frame)
            except OSError:
                pass


threading.Thread(target=flood, daemon=True).start()


def scale_tree(tree, factor):
    while True:
        pass
"""


def test_forged_progress_frames_cannot_clear_the_deadline(pool: GradingPool, problems: ProblemSet) -> None:
    result = run(pool, fast(problems.get(FIXTURE_SLUG), case_time_s=3), FORGED_PROGRESS)
    assert result.verdict in {Verdict.RUNTIME_ERROR, Verdict.TIME_LIMIT_EXCEEDED}, result.message
    assert result.elapsed_ms < (3 + 20) * 1000


FRAME_FLOOD = """
import os, struct
from sandbox.shared.wire import encode_frame
big = encode_frame({"type": "program", "sig": 0, "skeleton": {"out": 0}, "module": 0}, [b"x" * (1000 * 1024)])
for _ in range(100):
    for fd in range(3, 64):
        try:
            os.write(fd, big)
        except OSError:
            pass


def scale_tree(tree, factor):
    return tree
"""


def test_a_frame_flood_keeps_the_judges_memory_bounded(pool: GradingPool, problems: ProblemSet) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run(pool, problems.get(FIXTURE_SLUG), FRAME_FLOOD)
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert result.verdict is not Verdict.ACCEPTED
    assert grew_mb < 300, f"the judge grew by {grew_mb:.0f} MiB under a frame flood"


SPINNING_WRITER = """
import sys, threading


def spin():
    chunk = "x" * 65536
    while True:
        sys.stdout.write(chunk)


threading.Thread(target=spin, daemon=True).start()


def scale_tree(tree, factor):
    while True:
        pass
"""


def test_a_writer_that_never_pauses_cannot_starve_the_deadline(
    pool: GradingPool, problems: ProblemSet
) -> None:
    result = run(pool, fast(problems.get(FIXTURE_SLUG), case_time_s=3), SPINNING_WRITER)
    assert result.verdict is Verdict.TIME_LIMIT_EXCEEDED, result.message
    assert result.elapsed_ms < (3 + 20) * 1000
    assert result.stdout_truncated and len(result.stdout) < 70_000


THREADS_EXHAUSTED = (
    CORRECT
    + """
import threading, time
held = []
try:
    while True:
        t = threading.Thread(target=time.sleep, args=(3600,), daemon=True)
        t.start()
        held.append(t)
except RuntimeError:
    pass


def scale_tree(tree, factor):
    threading.Thread(target=lambda: None).start()
    return correct(tree, factor)
"""
)


def test_a_thread_that_cannot_start_is_reported_as_such(pool: GradingPool, problems: ProblemSet) -> None:
    if pool.backend.insecure:
        pytest.skip("the process backend has no process limit to meet")
    result = run(pool, problems.get(FIXTURE_SLUG), THREADS_EXHAUSTED)
    assert result.verdict is Verdict.RUNTIME_ERROR, result.message
    assert "thread could not be started" in result.cases[0].message
    assert "sys.exit" not in result.message


# ------------------------------------------------------------------------------------------ issue 7


STATE_ACROSS_CALLS = (
    CORRECT
    + """
SEEN = set()


def scale_tree(tree, factor):
    leaves = jax.tree.leaves(tree)
    key = (str(jax.tree.structure(tree)), tuple((x.shape, str(x.dtype)) for x in leaves))
    again = key in SEEN
    SEEN.add(key)
    out = correct(tree, factor)
    if again:  # the second call of a signature answers differently
        out = jax.tree.map(lambda leaf: leaf * 2, out)
    return out
"""
)


def test_state_kept_across_calls_is_a_wrong_answer(pool: GradingPool, problems: ProblemSet) -> None:
    result = run(pool, problems.get(FIXTURE_SLUG), STATE_ACROSS_CALLS)
    assert result.verdict is Verdict.WRONG_ANSWER, result.message
    last = result.cases[-1]
    assert last.reason is WrongAnswerReason.STATE and "state across calls" in last.message
    assert all(c.verdict is Verdict.ACCEPTED for c in result.cases[:-1])


LEAKED_TRACER = (
    CORRECT
    + """
CACHE = {}


def scale_tree(tree, factor):
    key = str(jax.tree.structure(tree))
    if key not in CACHE:
        CACHE[key] = correct(tree, factor)
    return CACHE[key]
"""
)


def test_a_leaked_tracer_is_a_trace_error_with_advice(pool: GradingPool, problems: ProblemSet) -> None:
    result = run(pool, problems.get(FIXTURE_SLUG), LEAKED_TRACER)
    assert result.verdict is Verdict.TRACE_ERROR, result.message
    assert "escaped the function" in result.cases[0].message


REORDERED_KEYS = (
    LERP
    + """
def lerp_trees(start, end, weight):
    out = correct(start, end, weight)
    for tree in (start, end):
        if isinstance(tree, dict) and len(tree) > 1:
            items = list(tree.items())
            tree.clear()
            tree.update(reversed(items))  # the same values under the same keys, in another order
    return out
"""
)
SWAPPED_VALUES = (
    LERP
    + """
def lerp_trees(start, end, weight):
    out = correct(start, end, weight)
    if isinstance(start, dict) and len(start) > 1:
        keys = list(start)
        values = [start[k] for k in keys]
        start.clear()
        start.update(zip(keys, reversed(values)))  # re-inserted so values line up by position
    return out
"""
)


def test_key_order_alone_is_not_a_mutation(pool: GradingPool, problems: ProblemSet) -> None:
    result = run(pool, problems.get(TUPLE_SLUG), REORDERED_KEYS)
    assert result.verdict is Verdict.ACCEPTED, result.message


def test_values_moved_between_keys_are_a_mutation(pool: GradingPool, problems: ProblemSet) -> None:
    result = run(pool, problems.get(TUPLE_SLUG), SWAPPED_VALUES)
    assert result.verdict is Verdict.WRONG_ANSWER, result.message
    failing = next(c for c in result.cases if c.verdict is Verdict.WRONG_ANSWER)
    assert (
        failing.reason is WrongAnswerReason.MUTATION and "replaced inside the input dict" in failing.message
    )


DEBUG_CALLBACK_RAISES = (
    CORRECT
    + """
def check(factor):
    if factor > 0:
        raise ValueError("the callback saw it")


def scale_tree(tree, factor):
    out = correct(tree, factor)
    jax.debug.callback(check, factor)
    return out
"""
)


def test_errors_in_debug_callbacks_name_the_exception_and_line(
    pool: GradingPool, problems: ProblemSet
) -> None:
    problem = problems.get(FIXTURE_SLUG)
    result = run(pool, problem, DEBUG_CALLBACK_RAISES)
    assert result.verdict is Verdict.ACCEPTED, "verdicts come from the program, which has no callback"
    line = DEBUG_CALLBACK_RAISES.splitlines().index('        raise ValueError("the callback saw it")') + 1
    assert "ValueError: the callback saw it" in result.stdout
    assert f"line {line}" in result.stdout
    assert "INTERNAL" not in result.stdout and "Traceback" not in result.stdout


NAMED_TUPLE = (
    LERP
    + """
from typing import NamedTuple


class Step(NamedTuple):
    mix: object
    gap: object


def lerp_trees(start, end, weight):
    return Step(*correct(start, end, weight))
"""
)
ORDERED_DICT = (
    CORRECT
    + """
from collections import OrderedDict


def scale_tree(tree, factor):
    out = correct(tree, factor)
    return OrderedDict(out) if isinstance(out, dict) else out
"""
)
CUSTOM_NODE = (
    CORRECT
    + """
from dataclasses import dataclass


@jax.tree_util.register_dataclass
@dataclass
class Scaled:
    tree: object


def scale_tree(tree, factor):
    return Scaled(correct(tree, factor))
"""
)


def test_container_subclasses_count_as_their_base(pool: GradingPool, problems: ProblemSet) -> None:
    assert run(pool, problems.get(TUPLE_SLUG), NAMED_TUPLE).verdict is Verdict.ACCEPTED
    assert run(pool, problems.get(FIXTURE_SLUG), ORDERED_DICT).verdict is Verdict.ACCEPTED
    other = run(pool, problems.get(FIXTURE_SLUG), CUSTOM_NODE)
    assert other.verdict is Verdict.WRONG_ANSWER and other.cases[0].reason is WrongAnswerReason.STRUCTURE
    assert "Scaled" in other.cases[0].message


def test_a_run_streams_each_case_as_soon_as_it_is_known(pool: GradingPool, problems: ProblemSet) -> None:
    problem = problems.get(TUPLE_SLUG)
    seen: list[tuple[str, Verdict, str]] = []
    result = run(
        pool,
        problem,
        LERP + "\nlerp_trees = correct\n",
        on_case=lambda c: seen.append((c.name, c.verdict, c.message)),
    )
    assert [name for name, _, _ in seen] == [c.name for c in result.cases]
    assert [(v, m) for _, v, m in seen] == [(c.verdict, c.message) for c in result.cases]
