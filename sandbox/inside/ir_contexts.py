"""The executor's MLIR contexts: one per compile thread, made before a job needs them.

Making a context and loading its dialects (~1 ms each, ``sandbox.inside.lowering.lean_ir_context``) would
otherwise fall on the first programs of a job. The first job's are made at the warm-up, before the executor
is lent; a later job's when it begins. A context holds one program at a time; a job's contexts (and the
attributes its modules uniqued in them) are dropped when the next job begins or the process ends.

An executor zygote makes them once for all its children (``stock``: the first job's and the warm-up's own, in
a process that has read no program), so that a forked executor, which serves one job, makes none: 3-6 ms of
a forked executor's CPU, measured by timing the zygote's children from fork to exit.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from sandbox.inside.lowering import lean_ir_context, parse


class IrContexts:
    """``threads`` prepared contexts for the current job; ``warm_module``: the program whose reading loads
    the dialects JAX's programs use (set at the warm-up)."""

    def __init__(self, ir: Any, threads: int) -> None:
        self.ir = ir
        self.threads = max(1, threads)
        self.contexts: list[Any] = []
        #: Contexts handed out since they were made (``take``): 0 means they are as fresh as new.
        self.used = 0
        self.warm_module: bytes | None = None
        #: The warm-up's own context, made by ``stock``: the warm-up parses in it and drops it, leaving the
        #: first job's contexts unused.
        self.spare: Any = None
        self.lock = threading.Lock()

    def stock(self, warm_module: bytes) -> None:
        """Make the first job's contexts and the warm-up's own now, with the dialects ``warm_module`` uses
        loaded (an executor zygote, before it forks: each child inherits them made, as fresh as new)."""
        self.warm_module = warm_module
        self.prepare()
        spare = self._new()
        with self.lock:
            self.spare = spare

    @contextlib.contextmanager
    def for_warm_up(self) -> Iterator[Any]:
        """The warm-up's context: the stocked spare (dropped afterwards, so the first job's stay unused),
        else one of the current job's (``take``; ``prepare`` then makes the first job's afresh)."""
        with self.lock:
            spare, self.spare = self.spare, None
        if spare is None:
            with self.take() as context:
                yield context
        else:
            yield spare

    @contextlib.contextmanager
    def take(self) -> Iterator[Any]:
        """A prepared MLIR context of the current job, this thread's until the block ends."""
        with self.lock:
            context = self.contexts.pop() if self.contexts else None
            self.used += 1
        if context is None:  # more programs at once than compile threads: not expected; costs only time
            context = self._new()
        try:
            yield context
        finally:
            with self.lock:
                self.contexts.append(context)

    def prepare(self) -> None:
        """Fresh MLIR contexts for the next job (the current job's are dropped with their modules). A job
        that read no program (an executor lent for a job that needed none of it) leaves its contexts as
        they were made: nothing was parsed in them, so they are kept."""
        with self.lock:
            if self.used == 0 and len(self.contexts) == self.threads:
                return
        fresh = [self._new() for _ in range(self.threads)]
        with self.lock:
            self.contexts = fresh
            self.used = 0

    def _new(self) -> Any:
        """A context whose dialects are loaded: deserializing the warm-up program loads the ones JAX uses."""
        context = lean_ir_context()
        if self.warm_module is not None:
            with context:
                parse(self.ir, self.warm_module)
        return context
