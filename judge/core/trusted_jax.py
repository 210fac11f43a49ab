"""JAX on the trusted side and the problem's reference code, below everything that runs the reference
(``judge.core.expected`` for one device, ``judge.core.mesh_reference`` for a mesh, the checks, the known
mistakes).

``import_jax`` sets the sandbox's XLA flags and the host devices before JAX's first import in this process;
``load_reference`` imports the problem's reference module from its file (an import that fails is a
``ReferenceFailure``: the judge's fault); ``to_host`` turns a JAX output into the host tree the checker
compares, by the same container rule as the user's (``sandbox.shared.tree.to_host``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

from judge.core.errors import ReferenceFailure
from judge.core.problems import Problem
from sandbox.host.command import FAST_COMPILE_XLA_FLAGS
from sandbox.shared.tree import KeyArray
from sandbox.shared.tree import to_host as tree_to_host

#: CPU host devices the judge's own JAX starts with (when it is the first to import JAX), so that the
#: reference of a problem of that many devices runs in this process (``judge.core.mesh_reference``); one
#: device problems use device 0 as before.
HOST_DEVICES = 8


def import_jax() -> ModuleType:
    """JAX for the trusted side, compiled with the same XLA flags as the sandbox (set before first import),
    with ``JUDGE_HOST_DEVICES`` (default ``HOST_DEVICES``) CPU host devices. Call it before anything on the
    trusted side imports JAX (a reference, a known mistake, a cost measurement)."""
    if "jax" not in sys.modules:
        os.environ.setdefault("XLA_FLAGS", FAST_COMPILE_XLA_FLAGS)
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        os.environ.setdefault("JAX_NUM_CPU_DEVICES", os.environ.get("JUDGE_HOST_DEVICES", str(HOST_DEVICES)))
    import jax

    return jax


def load_reference(problem: Problem) -> Callable[..., Any]:
    """Import the problem's reference module from its file and return its function."""
    import_jax()  # the reference imports jax: the XLA flags must be set before that first import
    module = import_file(str(problem.reference_path), problem.reference_source)
    fn = getattr(module, problem.spec.function, None)
    if not callable(fn):
        raise ReferenceFailure(f"{problem.reference_path} does not define `{problem.spec.function}`")
    return fn  # type: ignore[no-any-return]


@cache
def import_file(path: str, source: str) -> ModuleType:
    name = f"_judge_reference_{hashlib.sha1(path.encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ReferenceFailure(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ReferenceFailure(f"importing {path} failed: {type(exc).__name__}: {exc}") from exc
    return module


def to_host(tree: Any) -> Any:
    """JAX output -> plain containers with numpy leaves (the same conversion the sandbox applies); a typed
    PRNG key array becomes a ``KeyArray`` of its implementation and uint32 data, as the tracer marks it."""
    import jax

    def children(x: Any) -> list[Any] | None:
        flat, treedef = jax.tree_util.tree_flatten(x, is_leaf=lambda y: y is not x)
        return None if jax.tree_util.treedef_is_leaf(treedef) else list(flat)

    def convert(x: Any) -> Any:
        if jax.numpy.issubdtype(x.dtype, jax.dtypes.prng_key):
            return KeyArray(str(jax.random.key_impl(x)), np.asarray(jax.random.key_data(x)))
        return np.asarray(x)

    return tree_to_host(tree, lambda x: hasattr(x, "shape") and hasattr(x, "dtype"), children, convert)
