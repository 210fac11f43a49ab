"""A busy machine on demand: the mixed workload under which a judge used to fail instead of slowing down.

    with machine_load(LoadSpec(jax=4, spinners=8, io=2)) as load:   # bounded in time; everything killed
        ...                                                         # at exit (its own session)
        load.sample()                                               # load average, run-queue wait so far

Busy loops alone do not make a judge fail: they compete with the judge's workers one process each, and a
worker still gets its share. What does is the mix of a shared CI runner: many JAX processes importing and
compiling at once (each start of a sandboxed worker is one too), page cache evicted under the imports, and
fsync-heavy I/O. The components, each a process of one session led by a driver process that kills the
session when its time is up (``duration_s``) or when its parent goes away:

- ``jax``: loops of a fresh ``python -c 'import jax; compile'`` (a judge, a test, a notebook starting);
- ``spinners``: busy loops;
- ``evict``: drops the page cache of the virtualenv's files every second (``POSIX_FADV_DONTNEED``), so every
  JAX import reads its ~400 MB of libraries again, as under memory pressure;
- ``io``: writers of 1 MiB blocks with an ``fsync`` after each, in a temporary folder removed at exit;
- ``memory_mb``: resident memory held and touched (spread over the ``jax`` loops' host, not a cgroup).

Run ``python -m tests.load --seconds 60 --jax 4 --spinners 8`` to load the machine by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall_slack(seconds: float) -> float:
    """``seconds`` of wall-clock slack, stretched by how busy the host is now (the 1-minute load average
    per core, when above 1): a wall-time bound of a test is what load changes (the judge gives a party
    that got too little CPU up to ``sandbox.session.monitor.OVERLOAD_FACTOR`` times its limit), so the suite
    run beside other judges keeps asserting verdicts and structure exactly and times only as the host
    allows."""
    busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    return seconds * max(1.0, busy)


#: Compiled by every ``jax`` loop: a few small programs, like a grading's.
_JAX_SNIPPET = """
import jax, jax.numpy as jnp
for n in (8, 16, 32):
    jax.jit(lambda x: jnp.tanh(x @ x.T).sum(axis=0) * jnp.cos(x).mean()).lower(jnp.ones((n, n))).compile()
"""


@dataclass(frozen=True)
class LoadSpec:
    jax: int = 4
    spinners: int = 8
    evict: bool = True
    io: int = 2
    memory_mb: int = 0
    #: The driver ends everything after this many seconds even if nobody stops it.
    duration_s: float = 600.0


@dataclass(frozen=True)
class LoadSample:
    loadavg_1m: float
    #: Share of the last interval processes spent runnable but not running (``/proc/pressure/cpu``).
    cpu_pressure_avg10: float | None


class Load:
    def __init__(self, proc: subprocess.Popen[bytes], spec: LoadSpec) -> None:
        self.proc = proc
        self.spec = spec
        self.started = time.monotonic()

    def sample(self) -> LoadSample:
        return LoadSample(os.getloadavg()[0], _cpu_pressure())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Kill the whole session (the driver and everything it started), then reap the driver."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        # A child that outlived the driver (it ignores SIGTERM) still holds the session id.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def machine_load(spec: LoadSpec | None = None, *, warm_s: float = 5.0) -> Iterator[Load]:
    """Start the workload, let it build up for ``warm_s``, yield it; stop it (all of it) at exit."""
    spec = spec or LoadSpec()
    argv = [sys.executable, "-m", "tests.load", "--driver", *_spec_args(spec)]
    proc = subprocess.Popen(argv, cwd=ROOT, start_new_session=True, stdin=subprocess.PIPE)
    load = Load(proc, spec)
    try:
        time.sleep(warm_s)
        yield load
    finally:
        load.stop()


def _spec_args(spec: LoadSpec) -> list[str]:
    out: list[str] = []
    for key, value in asdict(spec).items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            out.append(flag if value else "--no-" + key)
        else:
            out += [flag, str(value)]
    return out


def _cpu_pressure() -> float | None:
    try:
        text = Path("/proc/pressure/cpu").read_text()
    except OSError:
        return None
    for part in text.split():
        if part.startswith("avg10="):
            return float(part.removeprefix("avg10="))
    return None


# ------------------------------------------------------------------------------------------ the driver


def _spin() -> None:
    while True:
        pass


def _jax_loop() -> None:
    while True:
        subprocess.run([sys.executable, "-c", _JAX_SNIPPET], check=False, capture_output=True)


def _evict_loop(roots: list[str]) -> None:
    while True:
        for root in roots:
            for folder, _, files in os.walk(root):
                for name in files:
                    with contextlib.suppress(OSError):
                        fd = os.open(os.path.join(folder, name), os.O_RDONLY)
                        try:
                            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                        finally:
                            os.close(fd)
        time.sleep(1.0)


def _io_loop(folder: str) -> None:
    block = os.urandom(1 << 20)
    path = os.path.join(folder, f"io-{os.getpid()}")
    while True:
        with open(path, "wb") as handle:
            for _ in range(16):
                handle.write(block)
                handle.flush()
                os.fsync(handle.fileno())
        os.unlink(path)


def _memory_hog(mb: int) -> None:
    chunk = bytearray(mb << 20)
    while True:
        for i in range(0, len(chunk), 4096):
            chunk[i] = (chunk[i] + 1) & 0xFF
        time.sleep(1.0)


def _fork(target: object, *args: object) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.nice(0)
            target(*args)  # type: ignore[operator]
        finally:
            os._exit(0)
    return pid


def _driver(spec: LoadSpec) -> None:
    """Start every component in this session; end the session when time is up or stdin closes (the parent
    went away)."""
    folder = tempfile.mkdtemp(prefix="judge-load-")
    pids: list[int] = []

    def end(*_: object) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.killpg(0, signal.SIGKILL)  # the jax loops' own children too
        os._exit(0)

    signal.signal(signal.SIGTERM, end)
    try:
        pids += [_fork(_spin) for _ in range(spec.spinners)]
        pids += [_fork(_jax_loop) for _ in range(spec.jax)]
        pids += [_fork(_io_loop, folder) for _ in range(spec.io)]
        if spec.evict:
            import jax  # noqa: F401 (only to find the installed libraries)

            roots = [str(Path(sys.modules["jax"].__file__ or "").parent.parent)]
            pids.append(_fork(_evict_loop, roots))
        if spec.memory_mb:
            pids.append(_fork(_memory_hog, spec.memory_mb))
        deadline = time.monotonic() + spec.duration_s
        os.set_blocking(sys.stdin.fileno(), False)
        while time.monotonic() < deadline:
            try:
                if sys.stdin.buffer.read(1) == b"":
                    break  # the parent closed our stdin: it is gone
            except (BlockingIOError, TypeError):
                pass
            time.sleep(0.5)
    finally:
        end()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jax", type=int, default=LoadSpec.jax)
    parser.add_argument("--spinners", type=int, default=LoadSpec.spinners)
    parser.add_argument("--evict", action=argparse.BooleanOptionalAction, default=LoadSpec.evict)
    parser.add_argument("--io", type=int, default=LoadSpec.io)
    parser.add_argument("--memory-mb", type=int, default=LoadSpec.memory_mb)
    parser.add_argument("--duration-s", "--seconds", type=float, default=LoadSpec.duration_s)
    args = parser.parse_args()
    spec = LoadSpec(args.jax, args.spinners, args.evict, args.io, args.memory_mb, args.duration_s)
    if args.driver:
        _driver(spec)
        return
    with machine_load(spec, warm_s=0) as load:
        while load.alive():
            time.sleep(5)
            print(load.sample(), flush=True)


if __name__ == "__main__":
    main()
