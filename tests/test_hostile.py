"""Hostile submissions, graded end to end through every available sandbox backend.

Each test asserts the verdict AND that the host is unharmed. A hostile submission is a correct solution
with an attack bolted on: when the attack is contained the solution is graded as usual, and when it
"succeeds" the code raises ``ESCAPED`` so the breach cannot hide behind an accepted verdict. Attacks that
would harm the host through the insecure ``process`` backend (which isolates nothing by design) run only
on the secure backends.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.core.grader import grade, sandbox_limits
from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict
from sandbox.backends import get_backend
from sandbox.backends.base import Backend, GradingProcesses
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT, available_backends
from tests.load import wall_slack

pytestmark = pytest.mark.slow

SECURE = [name for name in available_backends() if not get_backend(name).insecure]
ALL = available_backends()

#: A correct solution of the fixture problem scale-tree (``tests/fixtures/problems``).
SOLUTION = """
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""


@pytest.fixture(scope="module")
def problem() -> Problem:
    return ProblemSet(FIXTURES).get(FIXTURE_SLUG)


def run(backend_name: str, problem: Problem, code: str, cases: int = 2) -> GradeResult:
    """Grade on a tracer forked from the backend's zygote (the warm pool's path) and a fresh executor,
    both ready before the grading starts (so ``GradeResult.elapsed_ms`` is the grading's own time)."""
    backend: Backend = get_backend(backend_name)
    try:
        limits = sandbox_limits(problem)
        pair = GradingProcesses(backend.fork_tracer(limits), backend.start_executor(limits))
        for worker in (pair.tracer, pair.executor):
            worker.wait_ready(120)
        return grade(problem, code, lambda _: pair, cases=problem.cases[:cases])
    finally:
        backend.close()


def fast(problem: Problem, **limits: float) -> Problem:
    """The problem with tighter limits so attacks that hit a limit cost seconds, not the default minute."""
    spec = problem.spec.model_copy(update={"limits": problem.spec.limits.model_copy(update=limits)})
    return Problem(spec, problem.root, problem.statement_source, problem.starter, problem.cases)


def attack(prelude: str) -> str:
    return f"import os, sys\n{prelude}\n{SOLUTION}"


# ----------------------------------------------------------------------------------- containment (secure)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize("backend", SECURE)
def test_no_network_to_the_host(backend: str, problem: Problem, listener: tuple[int, list[object]]) -> None:
    port, accepted = listener
    code = attack(f"""
import socket
for family, address in ((socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_INET6, ("::1", {port}))):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(address)
    except OSError:
        continue
    raise RuntimeError("ESCAPED: connected to the host")
""")
    result = run(backend, problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert accepted == []


SECRET_PATHS = [
    "/etc/shadow",
    "/root",
    str(ROOT / "problems"),
    str(ROOT / "reference"),
    str(ROOT / "judge"),
    str(ROOT / ".cache"),
]


@pytest.mark.parametrize("backend", SECURE)
def test_cannot_read_secrets_or_the_judges_files(backend: str, problem: Problem) -> None:
    code = attack(f"""
for path in {SECRET_PATHS!r}:
    try:
        if os.path.isdir(path):
            found = os.listdir(path)
        else:
            with open(path, "rb") as f:
                found = f.read(64)
    except OSError:
        continue
    if found:
        raise RuntimeError("ESCAPED: read " + path)
""")
    result = run(backend, problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message


@pytest.mark.parametrize("backend", SECURE)
def test_parent_environment_is_not_visible(
    backend: str, problem: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_TEST_SECRET", "hunter2-judge-secret")
    code = attack("""
import glob
blobs = [repr(dict(os.environ)).encode()]
for path in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
    try:
        with open(path, "rb") as f:
            blobs.append(f.read())
    except OSError:
        pass
if any(b"hunter2-judge-secret" in blob for blob in blobs):
    raise RuntimeError("ESCAPED: saw the judge's environment")
""")
    result = run(backend, problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert "hunter2" not in result.stdout


@pytest.mark.parametrize("backend", SECURE)
def test_cannot_write_outside_private_tmp(backend: str, problem: Problem, tmp_path: Path) -> None:
    targets = [
        str(ROOT / "escaped.txt"),
        "/usr/escaped.txt",
        "/etc/escaped.txt",
        str(tmp_path / "escaped.txt"),
        "/root/escaped.txt",
        "/var/tmp/escaped.txt",
    ]
    code = attack(f"""
for path in {targets!r}:
    try:
        with open(path, "w") as f:
            f.write("x")
    except OSError:
        continue
    raise RuntimeError("ESCAPED: wrote " + path)
with open("/tmp/private.txt", "w") as f:  # the private tmpfs is writable
    f.write("ok")
""")
    result = run(backend, problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert not any(Path(t).exists() for t in targets)


@pytest.mark.parametrize("backend", SECURE)
def test_fork_bomb_is_contained(backend: str, problem: Problem) -> None:
    code = attack("""
while True:
    try:
        os.fork()
    except OSError:
        pass
""")
    result = run(backend, fast(problem, case_time_s=5), code)
    assert result.verdict in {
        Verdict.RUNTIME_ERROR,
        Verdict.TIME_LIMIT_EXCEEDED,
        Verdict.MEMORY_LIMIT_EXCEEDED,
    }
    assert result.elapsed_ms < 60_000
    assert subprocess.run(["true"]).returncode == 0  # the host can still start processes


@pytest.mark.parametrize("backend", SECURE)
def test_thread_bomb_is_contained(backend: str, problem: Problem) -> None:
    code = attack("""
import threading, time
threads = []
while True:
    try:
        t = threading.Thread(target=time.sleep, args=(3600,), daemon=True)
        t.start()
        threads.append(t)
    except RuntimeError:
        break
raise RuntimeError(f"stopped at {len(threads)} threads")
""")
    result = run(backend, fast(problem, case_time_s=5), code)
    assert result.verdict in {
        Verdict.RUNTIME_ERROR,
        Verdict.TIME_LIMIT_EXCEEDED,
        Verdict.MEMORY_LIMIT_EXCEEDED,
    }
    assert "ESCAPED" not in result.message


@pytest.mark.parametrize("backend", SECURE)
def test_killing_the_parent_does_not_hurt_the_judge(backend: str, problem: Problem) -> None:
    code = attack("""
import signal
for pid in (os.getppid(), 1):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
""")
    result = run(backend, problem, code)
    # Whatever the sandbox makes of it, the judge is alive to grade, and the verdict is a user verdict.
    assert result.verdict in {Verdict.ACCEPTED, Verdict.RUNTIME_ERROR}
    assert run(backend, problem, SOLUTION).verdict is Verdict.ACCEPTED


@pytest.mark.parametrize("backend", SECURE)
def test_detached_grandchild_does_not_outlive_the_run(backend: str, problem: Problem, tmp_path: Path) -> None:
    # The kernel keeps 15 characters of a process name: the unique part must fit in them, or another
    # backend's orphan test running alongside would be mistaken for this one's.
    marker = f"o{os.getpid() % 10**7}x{time.monotonic_ns() % 10**6}"[:15]
    code = attack(f"""
import time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        sys.argv[0] = {marker!r}
        try:
            import ctypes
            ctypes.CDLL(None).prctl(15, {marker!r}.encode(), 0, 0, 0)
        except Exception:
            pass
        time.sleep(3600)
    os._exit(0)
time.sleep(0.2)
""")
    result = run(backend, problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message
    time.sleep(1.0)
    ps = subprocess.run(["ps", "-eo", "pid,comm,args"], capture_output=True, text=True).stdout
    assert marker not in ps


# ----------------------------------------------------------------------------------- limits (every backend)


@pytest.mark.parametrize("backend", ALL)
def test_memory_bomb_is_memory_limit_exceeded(backend: str, problem: Problem) -> None:
    code = attack("""
import numpy as np
hog = np.ones((8 * 1024**3) // 8)
""")
    result = run(backend, fast(problem, memory_mb=1024), code)
    assert result.verdict is Verdict.MEMORY_LIMIT_EXCEEDED, result.message


@pytest.mark.parametrize("backend", ALL)
def test_memory_bomb_inside_jit_is_memory_limit_exceeded(backend: str, problem: Problem) -> None:
    code = (
        SOLUTION
        + """
_inner = scale_tree


def scale_tree(tree, factor):
    # An 8 GiB intermediate a sort must materialize (its middle element cannot be had without it).
    hog = jnp.sort(jnp.arange(2 * 1024**3, dtype=jnp.float32) * factor)
    return jax.tree.map(lambda leaf: leaf + (hog[1024**3] * 0).astype(leaf.dtype), _inner(tree, factor))
"""
    )
    result = run(backend, fast(problem, memory_mb=1024), code)
    assert result.verdict is Verdict.MEMORY_LIMIT_EXCEEDED, result.message


@pytest.mark.parametrize("backend", ALL)
def test_a_16_gib_output_is_output_limit_exceeded(backend: str, problem: Problem) -> None:
    code = (
        SOLUTION
        + """
_inner = scale_tree


def scale_tree(tree, factor):
    hog = jnp.full((4 * 1024**3,), factor, jnp.float32)  # a 16 GiB output
    return {"out": _inner(tree, factor), "hog": hog}
"""
    )
    result = run(backend, problem, code)
    assert result.verdict is Verdict.OUTPUT_LIMIT_EXCEEDED, result.message


@pytest.mark.parametrize("backend", ALL)
def test_a_large_output_under_the_cap_is_graded_but_not_shown(backend: str, problem: Problem) -> None:
    """24 M numbers under a key nobody asked for: within the output cap, so graded (a wrong structure),
    but the public case says what it held instead of rendering it (which took the judge gigabytes)."""
    code = (
        SOLUTION
        + """
_inner = scale_tree


def scale_tree(tree, factor):
    return {"out": _inner(tree, factor), "junk": jnp.zeros((24 * 1024**2,), jnp.uint8)}
"""
    )
    result = run(backend, problem, code, cases=1)
    assert result.verdict is Verdict.WRONG_ANSWER, result.message
    (case,) = result.cases
    assert case.output is not None and case.output.omitted and case.output.json_value is None
    assert "25,165,8" in case.output.text and "uint8[25165824]" in case.output.text, case.output.text
    assert case.expected is not None and not case.expected.omitted  # the reference's is small: shown
    assert len(result.model_dump_json()) < 100_000


@pytest.mark.parametrize("backend", ALL)
@pytest.mark.parametrize(
    "body",
    [
        "while True:\n        pass",
        "import time\n    time.sleep(10**9)",
        "while True:\n        try:\n            pass\n        except BaseException:\n            pass",
    ],
    ids=["busy-loop", "sleep-forever", "ignores-sigterm"],
)
def test_loops_cost_one_time_limit(backend: str, problem: Problem, body: str) -> None:
    # Module level runs on the main thread: ignore SIGTERM and SIGINT there (the judge kills with SIGKILL).
    prelude = (
        "import signal\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    )
    code = f"{prelude}def scale_tree(tree, factor):\n    {body}\n"
    result = run(backend, fast(problem, case_time_s=3), code, cases=4)
    assert result.verdict is Verdict.TIME_LIMIT_EXCEEDED, result.message
    assert [c.verdict for c in result.cases] == [Verdict.TIME_LIMIT_EXCEEDED] + [Verdict.NOT_RUN] * 3
    assert result.elapsed_ms < (3 + wall_slack(10)) * 1000, "one case limit, not one per case"


@pytest.mark.parametrize("backend", ALL)
def test_output_flood_is_cut_and_still_graded(backend: str, problem: Problem) -> None:
    code = attack("""
chunk = "flood " * 10000 + "\\n"
for _ in range(3000):  # ~180 MB
    sys.stdout.write(chunk)
""")
    result = run(backend, problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert result.stdout_truncated
    assert len(result.stdout) <= problem.spec.limits.output_bytes + 200


@pytest.mark.parametrize("backend", ALL)
@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "os._exit(0)"])
def test_exiting_before_returning_is_a_runtime_error(backend: str, problem: Problem, exit_call: str) -> None:
    code = (
        SOLUTION
        + f"""
import os, sys
_inner = scale_tree


def scale_tree(tree, factor):
    {exit_call}
    return _inner(tree, factor)
"""
    )
    result = run(backend, problem, code)
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "exit" in result.cases[0].message


@pytest.mark.parametrize("backend", ALL)
def test_printing_a_fake_verdict_changes_nothing(backend: str, problem: Problem) -> None:
    code = """
import sys, json, struct
fake = json.dumps({"type": "case_result", "index": 0, "status": "ok", "verdict": "accepted"}).encode()
sys.stdout.buffer.write(struct.pack(">I", len(fake)) + fake)
print('{"verdict": "accepted", "passed": 2, "total": 2}')
print("ACCEPTED")


def scale_tree(tree, factor):
    return tree
"""
    result = run(backend, problem, code)
    assert result.verdict is Verdict.WRONG_ANSWER


@pytest.mark.parametrize("backend", ALL)
def test_replacing_jax_jit_does_not_escape_tracing(backend: str, problem: Problem) -> None:
    code = """
import jax
import jax.numpy as jnp

jax.jit = lambda f, *args, **kwargs: f  # try to run un-jitted so a Python `if` works


def scale_tree(tree, factor):
    if factor != 1:
        tree = jax.tree.map(lambda leaf: leaf * factor, tree)
    return tree
"""
    result = run(backend, problem, code)
    assert result.verdict is Verdict.TRACE_ERROR
    assert "if factor != 1" in result.cases[0].message


@pytest.mark.parametrize("backend", ALL)
def test_switching_on_x64_is_undone(backend: str, problem: Problem) -> None:
    code = "import jax\njax.config.update('jax_enable_x64', True)\n" + SOLUTION
    result = run(backend, problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message


@pytest.mark.parametrize("backend", ALL)
def test_host_callbacks_are_rejected(backend: str, problem: Problem) -> None:
    code = (
        SOLUTION
        + """
import numpy as np
_inner = scale_tree


def scale_tree(tree, factor):
    shape = jax.ShapeDtypeStruct((), jnp.float32)
    factor = jax.pure_callback(lambda x: np.asarray(x, np.float32), shape, factor)
    return jax.tree.map(lambda leaf: (leaf * factor).astype(leaf.dtype), tree)
"""
    )
    result = run(backend, problem, code)
    assert result.verdict is Verdict.TRACE_ERROR
    assert "pure_callback" in result.cases[0].message and "host callbacks" in result.cases[0].message


@pytest.mark.parametrize("backend", ALL)
def test_judge_still_grades_correctly_after_the_attacks(backend: str, problem: Problem) -> None:
    result = run(backend, problem, SOLUTION, cases=len(problem.cases))
    assert result.verdict is Verdict.ACCEPTED, result.message
