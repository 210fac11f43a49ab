"""The executor between jobs (in this process, no sandbox): what a job leaves behind for the next one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from sandbox.inside.executor import REQUEST_LIMITS, Executor
from sandbox.inside.lowering import Lowerer
from sandbox.shared.wire import Frame, FrameLimits, FrameReader, encode_frame

REPLIES = FrameLimits(max_frame=1 << 24, max_json=1 << 22, max_json_depth=64)


@pytest.fixture(scope="module")
def executor() -> Iterator[tuple[Executor, int]]:
    """An executor in this process, as a process of its own in the sandbox has it: its compile contexts are
    lean ones of its own (``lean_ir_context``), and its contract checks lower in JAX's own contexts, not
    the one a tracer made earlier in the same test process shares for all (``_share_ir_context``)."""
    from jax._src.interpreters import mlir

    read, write = os.pipe()
    os.set_blocking(read, False)
    with pytest.MonkeyPatch.context() as patch:
        jax_own = getattr(mlir.make_ir_context, "unshared", mlir.make_ir_context)
        patch.setattr(mlir, "make_ir_context", jax_own)
        executor = Executor(write)
        executor.warm()
        yield executor, read
    executor.compiler.shutdown()
    os.close(read)
    os.close(write)


def frame(message: dict[str, Any], blobs: list[bytes] | None = None) -> Frame:
    (decoded,) = FrameReader(REQUEST_LIMITS).feed(encode_frame(message, blobs or []))
    return decoded


def replies(read: int) -> list[Frame]:
    data = b""
    while True:
        try:
            chunk = os.read(read, 1 << 16)
        except BlockingIOError:
            break
        data += chunk
    return FrameReader(REPLIES).feed(data)


def test_a_job_that_read_no_program_keeps_its_contexts(executor: tuple[Executor, int]) -> None:
    ex, read = executor
    contexts = list(ex.ir_contexts.contexts)  # warm() leaves the first job's contexts unused
    assert len(contexts) == ex.compile_threads and ex.ir_contexts.used == 0
    for _ in range(2):
        ex.handle(frame({"type": "begin"}))
        ex.handle(frame({"type": "end"}))
        assert [f.type for f in replies(read)] == ["ended"]
        assert ex.ir_contexts.contexts == contexts, "nothing was parsed in them: they are kept"


def test_a_job_after_one_that_compiled_gets_fresh_contexts_and_no_program(
    executor: tuple[Executor, int],
) -> None:
    ex, read = executor
    contexts = list(ex.ir_contexts.contexts)
    spec = jax.ShapeDtypeStruct((3,), jnp.float32)  # type: ignore[no-untyped-call]
    module = Lowerer()(jax.jit(lambda x: [x * 3]).trace(spec).jaxpr)
    message = {
        "type": "program",
        "id": 0,
        "module": 0,
        "inputs": [{"dtype": "float32", "shape": [3]}],
        "max_output_bytes": 1 << 20,
    }
    ex.handle(frame({"type": "begin"}))
    ex.handle(frame(message, [module]))
    ex.handle(frame({"type": "end"}))
    assert [f.type for f in replies(read)] == ["compiled", "ended"]
    assert not ex.programs and not ex.cache, "the job's programs are dropped before the next request"
    ex.handle(frame({"type": "begin"}))  # the next job's contexts: none of the last job's
    fresh = ex.ir_contexts.contexts
    assert len(fresh) == len(contexts) and not set(map(id, fresh)) & set(map(id, contexts))
    assert ex.ir_contexts.used == 0


def test_contexts_an_executor_zygote_stocked_serve_the_first_job_untouched() -> None:
    """An executor zygote makes its children's MLIR contexts (``IrContexts.stock``): the warm-up parses
    in the stocked spare, so the first job gets the stocked contexts themselves, nothing parsed in them."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    from sandbox.inside.executor import COMPILE_THREADS, warm_module
    from sandbox.inside.ir_contexts import IrContexts

    read, write = os.pipe()
    with pytest.MonkeyPatch.context() as patch:
        jax_own = getattr(mlir.make_ir_context, "unshared", mlir.make_ir_context)
        patch.setattr(mlir, "make_ir_context", jax_own)
        stocked = IrContexts(ir, COMPILE_THREADS)
        warm = warm_module(1)
        stocked.stock(warm)
        made, spare = list(stocked.contexts), stocked.spare
        assert len(made) == COMPILE_THREADS and spare is not None and spare not in made
        ex = Executor(write, ir_contexts=stocked)
        try:
            ex.warm(warm)
            assert ex.ir_contexts is stocked and stocked.spare is None, "the warm-up used the spare"
            assert stocked.contexts == made and stocked.used == 0, "the first job's are the stocked ones"
            ex.handle(frame({"type": "begin"}))
            assert stocked.contexts == made, "a job that starts on unused contexts keeps them"
        finally:
            ex.compiler.shutdown()
            os.close(read)
            os.close(write)


def test_contexts_stocked_for_another_thread_count_are_not_used() -> None:
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    from sandbox.inside.ir_contexts import IrContexts

    read, write = os.pipe()
    other = IrContexts(ir, 1)
    ex = Executor(write, compile_threads=2, ir_contexts=other)
    try:
        assert ex.ir_contexts is not other and ex.ir_contexts.threads == 2
    finally:
        ex.compiler.shutdown()
        os.close(read)
        os.close(write)
