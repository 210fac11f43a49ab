"""glibc's ``MALLOC_PERTURB_`` in the executor: does it scrub XLA's CPU buffers, and what does it cost?

With ``MALLOC_PERTURB_=N`` glibc fills every ``malloc``ed block with ``N ^ 0xff`` and every freed block with
``N``, so a buffer XLA hands out uninitialised cannot carry what an earlier case left in that memory.

1. **Leak experiment.** Two real executors (``python -m sandbox.inside.executor``, the sandbox's XLA flags),
   one with the variable and one without, both with the custom-call contract check switched OFF (in this
   bench's child processes only), serve the attack of issue 21: a case runs on distinctive inputs, then a
   call to ``lapack_sgesdd_ffi`` that declares a result far larger than the kernel writes. The bench counts
   the earlier case's values (and all other non-fill bytes) in what comes back.
2. **Cost.** Two executors (contract check on, as shipped) compile and run the same programs,
   interleaved, ``--repeats`` times; the executor's own compile and run times are compared (medians, bests
   and the with/without ratios); then a tracer's trace and lowering of one program, in child processes.

    .venv/bin/python bench/bench_malloc_perturb.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from sandbox.host.command import EXECUTOR, MALLOC_PERTURB, program_argv, program_env
from sandbox.inside.lowering import Lowerer
from sandbox.shared.wire import Blobs, Frame, FrameLimits, encode_frame, encode_leaf, read_frame

ROOT = Path(__file__).resolve().parent.parent
LIMITS = FrameLimits(max_frame=256 * 1024 * 1024, max_json=16 * 1024 * 1024, max_json_depth=64)
PERTURB = MALLOC_PERTURB
#: The executor with its contract check switched off: only for the leak experiment, only in this bench.
UNCHECKED = (
    "import sandbox.inside.contracts as c; c.Contracts.check = lambda self, module: None; "
    "from sandbox.inside.executor import main; main()"
)
S: Any = jax.ShapeDtypeStruct
F32 = jnp.float32


def environment(perturb: bool) -> dict[str, str]:
    """The sandboxed programs' environment (``sandbox.host.command.program_env``), with or without the
    variable."""
    env = program_env(str(ROOT), module=EXECUTOR)
    if not perturb:
        del env["MALLOC_PERTURB_"]
    return {**env, "PYTHONPATH": str(ROOT)}


class Executor:
    """One executor process and its two channels."""

    def __init__(self, perturb: bool, checked: bool) -> None:
        read, self.write = os.pipe()
        env = environment(perturb)
        argv = (
            program_argv(EXECUTOR) if checked else [sys.executable, "-E", "-s", "-B", "-u", "-c", UNCHECKED]
        )
        self.process = subprocess.Popen(
            [*argv, "--result-fd", str(self.write)],
            stdin=subprocess.PIPE,
            pass_fds=(self.write,),
            cwd=ROOT,
            env=env,
        )
        os.close(self.write)
        self.results = os.fdopen(read, "rb", buffering=0)
        self.ids = 0
        assert self.reply().type == "ready"

    def reply(self) -> Frame:
        return read_frame(self.results, LIMITS)

    def send(self, message: dict[str, Any], blobs: list[bytes] | None = None) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(encode_frame(message, blobs or []))
        self.process.stdin.flush()

    def job(self, programs: list[tuple[bytes, list[np.ndarray[Any, Any]]]]) -> list[tuple[float, Any]]:
        """Compile and run each (module, leaves) in one job: [(compile_ms, run reply)]."""
        self.send({"type": "begin", "cpu_time_s": 60})
        out = []
        for module, leaves in programs:
            self.ids += 1
            inputs = [{"dtype": str(x.dtype), "shape": list(x.shape)} for x in leaves]
            self.send(
                {
                    "type": "program",
                    "id": self.ids,
                    "module": 0,
                    "inputs": inputs,
                    "max_output_bytes": 1 << 28,
                },
                [module],
            )
            compiled = self.reply()
            assert compiled.type == "compiled", compiled.message
            blobs = Blobs()
            nodes = [encode_leaf(x, blobs) for x in leaves]
            self.send(
                {"type": "run", "program": self.ids, "case": self.ids, "leaves": nodes},
                [bytes(b) for b in blobs.items],
            )
            out.append((float(compiled.message["compile_ms"]), self.reply()))
        self.send({"type": "end"})
        assert self.reply().type == "ended"
        return out

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.results.close()


def lowered(function: Callable[..., Any], *specs: Any) -> bytes:
    return Lowerer()(jax.jit(function).trace(*specs).jaxpr)


def leak(repeats: int) -> None:
    size = 16384  # 64 KiB: a size at which, without the variable, the attack reads the earlier case back
    marker = np.float32(1234.5)
    secret = np.full((size,), marker, np.float32)
    case = lowered(lambda x: [x * 2], S((size,), F32))
    results = (S((4, 4), F32), S((size,), F32), S((4, 4), F32), S((4, 4), F32), S((), jnp.int32))
    layouts = [(0, 1), (0,), (0, 1), (0, 1), ()]
    call = jax.ffi.ffi_call(
        "lapack_sgesdd_ffi",
        results,
        input_output_aliases={0: 0},
        input_layouts=[(0, 1)],
        output_layouts=layouts,
    )
    attack = lowered(lambda w: [call(w, mode=np.uint8(65))[1]], S((4, 4), F32))
    fill = np.frombuffer(bytes([int(PERTURB) ^ 0xFF]) * 4, np.float32)[0]
    freed = np.frombuffer(bytes([int(PERTURB)]) * 4, np.float32)[0]
    print(
        f"leak experiment: contract check OFF, two cases on {size} values of {marker}, then an svd call "
        f"declaring a {size}-value result for a 4x4 input ({repeats} jobs each)"
    )
    for perturb in (False, True):
        executor = Executor(perturb, checked=False)
        try:
            leaked = other = 0
            for _ in range(repeats):
                *_, (_, second) = executor.job(
                    [(case, [secret]), (case, [secret]), (attack, [np.eye(4, dtype=np.float32)])]
                )
                assert second.type == "result", second.message
                body = second.message["outputs"][0]["leaf"]
                out = np.frombuffer(second.blob(body["blob"]), np.float32)[4:]  # 4 values the kernel writes
                leaked += int(np.sum((out == marker) | (out == 2 * marker)))
                other += int(np.sum((out != fill) & (out != freed) & (out != 0)))
        finally:
            executor.close()
        total = repeats * (size - 4)
        label = f"MALLOC_PERTURB_={PERTURB}" if perturb else "no MALLOC_PERTURB_"
        print(
            f"  {label:22s} earlier case's values {leaked}/{total}, "
            f"other non-fill, non-zero values {other}/{total}"
        )


def programs() -> list[tuple[str, bytes, list[np.ndarray[Any, Any]]]]:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 64)).astype(np.float32)
    tree = [rng.standard_normal((256, 256)).astype(np.float32) for _ in range(4)]

    def mlp(*leaves: Any) -> Any:
        x = leaves[0]
        for layer in leaves[1:]:
            x = jnp.tanh(x @ layer)
        return [x, jax.grad(lambda y: jnp.sum(jnp.tanh(y @ leaves[1]) ** 2))(x)]

    def scan(x: Any) -> Any:
        return [jax.lax.scan(lambda c, row: (c * 0.9 + row, c.sum()), jnp.zeros(x.shape[1]), x)[1]]

    return [
        ("mlp 4x256^2 + grad", lowered(mlp, *(S(t.shape, F32) for t in tree)), tree),
        ("scan 64 steps", lowered(scan, S(w.shape, F32)), [w]),
        (
            "svd + solve 64x64",
            lowered(lambda a: [jnp.linalg.svd(a)[1], jnp.linalg.solve(a, a[0])], S(w.shape, F32)),
            [w],
        ),
        (
            "big elementwise 4M",
            lowered(lambda a: [jnp.exp(a) * 2 + 1], S((2048, 2048), F32)),
            [rng.standard_normal((2048, 2048)).astype(np.float32)],
        ),
    ]


def cost(repeats: int) -> None:
    work = programs()
    executors = {False: Executor(False, checked=True), True: Executor(True, checked=True)}
    times: dict[tuple[bool, str, str], list[float]] = {}
    try:
        for _ in range(repeats):
            for perturb in (False, True):
                replies = executors[perturb].job([(module, leaves) for _, module, leaves in work])
                for (name, _, _), (compile_ms, result) in zip(work, replies, strict=True):
                    assert result.type == "result", result.message
                    times.setdefault((perturb, name, "compile"), []).append(compile_ms)
                    times.setdefault((perturb, name, "run"), []).append(float(result.message["run_ms"]))
    finally:
        for executor in executors.values():
            executor.close()
    print(
        f"\ncost: executor-reported times over {repeats} interleaved jobs (ms), without / with the variable "
        "(ratio): median, and best (the least disturbed by other load)"
    )
    for name, _, _ in work:
        cells = []
        for what in ("compile", "run"):
            off, on = times[(False, name, what)], times[(True, name, what)]
            mid = statistics.median(on) / statistics.median(off)
            best = min(on) / min(off)
            cells.append(
                f"{what} {statistics.median(off):6.2f} / {statistics.median(on):6.2f} ({mid:4.2f}x), "
                f"best {min(off):6.2f} / {min(on):6.2f} ({best:4.2f}x)"
            )
        print(f"  {name:22s} " + "   ".join(cells))


#: A tracer's work per signature, in a child process: trace and lower a program, best of several rounds.
TRACE = """
import statistics, time, jax, jax.numpy as jnp
from sandbox.inside.lowering import Lowerer
lower = Lowerer()
specs = [jax.ShapeDtypeStruct((256, 256), jnp.float32)] * 4
def mlp(*leaves):
    x = leaves[0]
    for layer in leaves[1:]:
        x = jnp.tanh(x @ layer)
    return [x, jax.grad(lambda y: jnp.sum(jnp.tanh(y @ leaves[1]) ** 2))(x)]
times = []
for _ in range(40):
    started = time.perf_counter()
    lower(jax.jit(lambda *a: mlp(*a)).trace(*specs).jaxpr)
    times.append((time.perf_counter() - started) * 1000)
print(statistics.median(times[5:]))
"""


def tracer_cost(repeats: int) -> None:
    """A tracer's trace + lower of one program, with and without the variable, interleaved."""
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(max(1, repeats // 3)):
        for perturb in (False, True):
            env = environment(perturb)
            out = subprocess.run(
                [sys.executable, "-E", "-s", "-B", "-c", TRACE],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            times[perturb].append(float(out.stdout.split()[-1]))
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(
        f"\ntracer: trace + lower of the mlp program, median ms: "
        f"without {off:.2f} / with {on:.2f}  {on / off:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    opts = parser.parse_args()
    leak(max(1, opts.repeats // 3))
    cost(opts.repeats)
    tracer_cost(opts.repeats)


if __name__ == "__main__":
    main()
