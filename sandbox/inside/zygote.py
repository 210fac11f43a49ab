"""The zygote: a fork server that imported JAX once and forks one tracer per submission.

    python -m sandbox.inside.zygote --control-fd N [--seccomp-fd M] [--role tracer|executor]

With ``--role executor`` it is an executor zygote instead: it imports JAX and the executor (never starting
the XLA backend, never reading a program or holding a value) and each forked child confines itself to an
executor uid, sets the heap scrub (``executor.set_malloc_perturb``), starts its own backend and serves one
job (``executor.serve_forked``; the request also carries ``malloc_perturb``, ``cache_scope``,
``cache_entries``, ``devices`` and ``warm_up``). What follows is about tracers, and holds for both where it
is general.

It never runs user code and reads commands only from the judge, on its control socket (a Unix
``SOCK_SEQPACKET`` socket: one JSON message per packet, descriptors passed with ``SCM_RIGHTS``):

- ``fork`` {id, confine, uid, rlimits, tmp_bytes, shm_bytes} with three descriptors (the child's stdin, result
  channel and output): forks a child that makes them its fds 0, 3 and 1+2, closes everything else, confines
  itself (``sandbox.inside.confine``: its own mounts, uid, no capabilities, no_new_privs, seccomp) when
  ``confine`` is set and serves one job as a tracer (it starts an XLA backend of its own only if it runs the
  function for its prints). Replies ``forked`` {id, pid}
  with the child's pid also as ``SCM_CREDENTIALS`` (the kernel translates it into the judge's PID namespace);
- every child or orphan that exits is reaped and reported as ``exit`` {pid, code} (the zygote is a child
  subreaper, so a tracer's orphaned grandchildren come back to it).

Before reporting ``ready`` (which names them, ``warmed``) it imports JAX, traces a few fixed programs of
its own (``tracer.WARM_PROGRAMS``, each under a fresh ``jit`` as a job's function is) and lowers them to
StableHLO without a backend, in a single-threaded MLIR context its children inherit. This warms the
tracing and lowering machinery WITHOUT starting the XLA backend: it never compiles or creates an array, so
it has no XLA or MLIR threads and its children can start a backend of their own safely (forking after the
backend started deadlocks; the warm-up raises if a thread appeared).
It exits when the control socket closes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import struct
import sys
import traceback
from typing import Any

from sandbox.inside import confine, tracer
from sandbox.shared.wire import write_frame

#: What a zygote forks: tracers (``tracer.serve_forked``) or executors (``executor.serve_forked``).
ROLES = ("tracer", "executor")

PR_SET_CHILD_SUBREAPER = 36


def _warm() -> tuple[Any, list[str]]:
    cap = tracer.Captured()
    warmed = cap.warm_up()  # tracing and lowering need no backend: no thread, so forking stays safe
    tracer.freeze_heap()
    return cap, warmed


def _warm_executor() -> tuple[Any, list[str]]:
    """An executor zygote imports JAX, the executor and the JAX modules it starts with, loads the op
    policy's table and derives the usual sorts' comparators (``op_policy.Comparators.warm``: lowering
    without a backend), reads XLA's flags and makes its children's MLIR contexts, WITHOUT starting the XLA
    backend (a forked child of a process with a started backend deadlocks): each child starts its own. It
    never reads a program or holds a value. Returns what a child calls to become an executor
    (``executor.serve_forked`` with that policy, warm-up program and contexts)."""
    import functools

    from jax._src import compiler, xla_bridge  # imported here, once, for every child
    from jax._src.interpreters import mlir  # noqa: F401
    from jax._src.lib import xla_client  # type: ignore[attr-defined]  # noqa: F401
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]
    from jax.experimental import multihost_utils  # noqa: F401 (jax.device_put imports it on its first call)

    from sandbox.inside import executor, op_corpus, op_policy
    from sandbox.inside.broad_warm_up import broad_module
    from sandbox.inside.ir_contexts import IrContexts

    # jaxlib's LAPACK table is filled from SciPy's (an import of ~0.25 s): once here, not in every child.
    # It only writes function pointers into jaxlib's own table; no thread, no backend.
    executor._initialize_lapack()
    # JAX looks for PJRT plugins (an entry-point scan, ~12 ms) when a backend first starts: once here. It
    # registers factories only; the backend itself is each child's.
    discover = getattr(xla_bridge, "_discover_and_register_pjrt_plugins", None)
    if discover is not None:
        discover()
    policy = op_policy.Policy(op_corpus.load_table())
    policy.comparators.warm()
    warm = executor.warm_module(1)  # the children's warm-up program, lowered once (lowering needs no backend)
    broad = broad_module()  # and the broad one, compiled by the children the judge asks to warm up broadly
    # XLA parses its flags and builds its option messages on the first compile options (~5 ms of a child's
    # first compile): once here, where no backend is needed for it.
    compiler.get_compile_options(num_replicas=1, num_partitions=1)
    # Each child's MLIR contexts (its job's and its warm-up's), made once here with their dialects loaded.
    contexts = IrContexts(ir, executor.COMPILE_THREADS)
    contexts.stock(warm)
    tracer.freeze_heap()
    if xla_bridge._backends:
        raise RuntimeError("the executor zygote started an XLA backend: forking it would not be safe")
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise RuntimeError(f"the executor zygote has {threads} threads: forking it would not be safe")
    serve = functools.partial(
        executor.serve_forked, policy=policy, warm=warm, ir_contexts=contexts, broad=broad
    )
    return serve, [
        "imports",
        "LAPACK",
        "PJRT plugins",
        "sort comparators",
        "warm-up programs",
        "compile options",
        "MLIR contexts",
    ]


def _send(sock: socket.socket, message: dict[str, Any], creds_pid: int | None = None) -> None:
    data = json.dumps(message).encode()
    if creds_pid is not None:
        creds = struct.pack("iII", creds_pid, os.getuid(), os.getgid())
        try:
            sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])
            return
        except OSError:
            pass  # not allowed to name another pid: the judge falls back to the pid in the message
    sock.send(data)


def _child(
    sock: socket.socket, request: dict[str, Any], fds: list[int], cap: Any, bpf: bytes | None, role: str
) -> None:
    """The forked child: set up its descriptors, confine itself, serve one job (a tracer) or be the executor
    of one job (an executor). Never returns."""
    result_fd = 3
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        stdin_fd, channel_fd, output_fd = fds
        # Move the three descriptors above the standard ones first, so dup2 never overwrites one of them.
        moved = [os.dup(fd) for fd in (stdin_fd, channel_fd, output_fd)]
        sock.detach()
        os.dup2(moved[0], 0)
        os.dup2(moved[2], 1)
        os.dup2(moved[2], 2)
        os.dup2(moved[1], result_fd)
        os.closerange(4, 1 << 16)
        rlimits = {k: (int(v[0]), int(v[1])) for k, v in request["rlimits"].items()}
        if request.get("confine"):
            confine.confine(
                int(request["uid"]), rlimits, int(request["tmp_bytes"]), int(request["shm_bytes"]), bpf
            )
        else:
            confine.set_rlimits(rlimits)
        if role == "executor":
            cap(result_fd, request)
        else:
            tracer.serve_forked(cap, result_fd)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            write_frame(result_fd, {"type": "start_error", "message": f"{type(exc).__name__}: {exc}"[:2000]})
            traceback.print_exc()
    os._exit(70)


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(sock, {"type": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})


def serve(sock: socket.socket, bpf: bytes | None, role: str = "tracer") -> None:
    cap, warmed = _warm_executor() if role == "executor" else _warm()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    with contextlib.suppress(OSError):
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    import jax

    ready = {"type": "ready", "pid": os.getpid(), "jax": jax.__version__, "warmed": warmed, "role": role}
    _send(sock, ready)
    import select

    while True:
        watched: list[Any] = [sock, wake_r]
        readable, _, _ = select.select(watched, [], [])
        if wake_r in readable:
            with contextlib.suppress(OSError):
                while os.read(wake_r, 4096):
                    pass
            _reap(sock)
        if sock not in readable:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 3)
        except InterruptedError:
            continue
        if not data:
            return  # the judge closed the control socket
        request = json.loads(data)
        if request.get("type") != "fork" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            _send(sock, {"type": "fork_failed", "id": request.get("id"), "message": "malformed fork request"})
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            _send(sock, {"type": "fork_failed", "id": request.get("id"), "message": str(exc)})
            continue
        if pid == 0:
            _child(sock, request, fds, cap, bpf, role)
        for fd in fds:
            os.close(fd)
        _send(
            sock,
            {"type": "forked", "id": request["id"], "pid": pid},
            creds_pid=pid if os.getuid() == 0 else None,
        )


def main() -> None:
    parser = argparse.ArgumentParser(prog="sandbox.inside.zygote")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--seccomp-fd", type=int, default=None)
    parser.add_argument("--role", choices=ROLES, default="tracer")
    opts = parser.parse_args()
    bpf = None
    if opts.seccomp_fd is not None:
        with os.fdopen(opts.seccomp_fd, "rb") as handle:
            bpf = handle.read()
    sock = socket.socket(fileno=opts.control_fd)
    try:
        serve(sock, bpf, opts.role)
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
