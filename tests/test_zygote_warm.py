"""The zygote warms JAX's tracing and lowering with programs of its own before it forks (issue 21, point 6).

No timing here: the zygote names what it warmed in its ``ready``, a tracer forked after it still serves a
job, and the warm-up's programs are what a job's would be (signatures the tracer builds, a fresh ``jit``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from sandbox.backends.process import ProcessBackend
from sandbox.host.resource_limits import SandboxLimits
from sandbox.inside import tracer
from tests.sessions import outputs, run, session

ROOT = Path(__file__).resolve().parent.parent
DOUBLE = "import jax\n\ndef f(x, s):\n    return jax.tree.map(lambda v: v * s, x)\n"


def test_the_zygote_reports_every_warm_up_program_and_its_children_still_serve_jobs() -> None:
    backend = ProcessBackend()
    try:
        server = backend._fork_server()
        assert server.ready_info is not None
        names = [function.__name__.strip("_") for function, _ in tracer.WARM_PROGRAMS]
        assert server.ready_info["warmed"] == names
        assert {"warm_function", "warm_tree_function", "warm_loop_function"} <= set(names)
        raw = run(backend, session(DOUBLE, np.ones(3, np.float32), scale=2.0), SandboxLimits(), forked=True)
        np.testing.assert_array_equal(outputs(raw, 0)[0], np.full(3, 2.0, np.float32))
    finally:
        backend.close()


#: Run in a process of its own: ``Captured`` patches JAX's MLIR context for the whole process.
CHECK_FRESH = """
import gc, json, weakref
from sandbox.inside import tracer
cap = tracer.Captured()
made = []
jit = cap.jit
def counted(*args, **kwargs):
    jitted = jit(*args, **kwargs)
    made.append(weakref.ref(jitted))
    return jitted
cap.jit = counted
zygote = cap.warm_up()
child = cap.warm_up(child=True)
gc.collect()
alive = sum(r() is not None for r in made)
print(json.dumps({"zygote": zygote, "child": child, "jits": len(made), "alive": alive}))
"""


def test_every_warm_up_goes_through_a_fresh_jit_and_keeps_none() -> None:
    """The zygote's warm-up traces every program, a forked tracer's the most common one again, each under a
    new ``jit`` as a job's function is (a cached one would hit JAX's caches and copy too few pages), and
    none of those jitted functions outlives the warm-up: nothing a job uses depends on them."""
    done = subprocess.run(
        [sys.executable, "-c", CHECK_FRESH],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["zygote"] == [function.__name__.strip("_") for function, _ in tracer.WARM_PROGRAMS]
    assert got["child"] == ["warm_tree_function"]
    assert got["jits"] == len(tracer.WARM_PROGRAMS) + 1
    assert got["alive"] == 0
