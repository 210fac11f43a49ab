"""How every backend spells the sandboxed programs' command lines, their environment and their rlimits."""

from __future__ import annotations

import shutil
import sys

from sandbox.host.resource_limits import SandboxLimits

MIB = 1024 * 1024

#: XLA:CPU flags that cut compile time ~4x for the small programs graded here (measured in
#: bench/bench_grade.py): the judge compiles one program per case signature and rarely runs it long.
#: One LLVM module per program (``parallel_codegen_split_count=1``) takes another ~35% of the compile's
#: CPU time: splitting a small program into many modules to compile them on several threads costs more
#: than it saves, and an executor already compiles two programs at once (bench/bench_integrity.py).
FAST_COMPILE_XLA_FLAGS = (
    "--xla_cpu_use_fusion_emitters=false --xla_backend_optimization_level=0 "
    "--xla_llvm_disable_expensive_passes=true --xla_cpu_parallel_codegen_split_count=1"
)

#: glibc fills every block ``malloc`` returns with ``0x5a`` and every block it frees with ``0xa5``
#: (``MALLOC_PERTURB_``). XLA's CPU buffers come from ``malloc``: a buffer handed out uninitialised (an XLA
#: or kernel bug; issue 21's oversized custom-call result) holds fill bytes, never an earlier case's values.
#: Measured in bench/bench_malloc_perturb.py: compiles and small runs unchanged, a run pays 0.3-0.8 ms per MiB
#: of buffers it allocates, a tracer's trace and lowering ~6%. Set for executors, the only sandboxed
#: programs that hold hidden values or serve more than one job; a tracer is forked for one submission from
#: a zygote that never ran user code and holds nothing but that submission's code and public values, so
#: there it would only cost (page faults of the forked tracer: Run 0.96-1.00x without it, side by side).
MALLOC_PERTURB = "165"

#: Address space JAX needs to reserve at start-up regardless of real use (XLA maps large arenas).
_ADDRESS_SPACE_FLOOR_MB = 8 * 1024


#: The programs that run inside a sandbox (``sandbox.inside``), by role.
TRACER = "sandbox.inside.tracer"
EXECUTOR = "sandbox.inside.executor"
ZYGOTE = "sandbox.inside.zygote"


def program_argv(module: str, python: str = sys.executable) -> list[str]:
    # -E: ignore PYTHON* variables; -s: no user site; the working directory holds only the sandbox package;
    # -B: never write .pyc files; -u: unbuffered so captured output keeps its order.
    return [python, "-E", "-s", "-B", "-u", "-m", module]


def program_env(code_root: str, extra: dict[str, str] | None = None, *, module: str) -> dict[str, str]:
    """A minimal environment for the sandboxed program ``module`` (``TRACER``, ``EXECUTOR``, ``ZYGOTE``):
    nothing of the judge's own environment (secrets) is passed on; executors scrub their heap
    (``MALLOC_PERTURB``)."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "JAX_PLATFORMS": "cpu",
        "JAX_ENABLE_X64": "0",
        "XLA_FLAGS": FAST_COMPILE_XLA_FLAGS,
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "PYTHONHASHSEED": "0",
        "JUDGE_CODE_ROOT": code_root,
        # numpy's BLAS would start a thread pool per process; nothing inside needs it.
        "OPENBLAS_NUM_THREADS": "1",
    }
    if module == EXECUTOR:
        env["MALLOC_PERTURB_"] = MALLOC_PERTURB
    env.update(extra or {})
    return env


def executor_options(limits: SandboxLimits) -> list[str]:
    """The executor's own options that follow from the job's limits: its host device count, when more
    than one (``sandbox.inside.executor --devices``)."""
    return ["--devices", str(limits.devices)] if limits.devices > 1 else []


def rlimit_values(limits: SandboxLimits, *, nproc: bool = True) -> dict[str, tuple[int, int]]:
    """The rlimits of a sandboxed program by ``prlimit`` option name: (soft, hard). One source of truth."""
    memory = limits.memory_mb * MIB
    cpu = max(1, int(limits.cpu_time_s))
    address_space = (limits.memory_mb + _ADDRESS_SPACE_FLOOR_MB) * MIB
    values = {
        "cpu": (cpu, cpu + 1),
        "data": (memory, memory),
        "as": (address_space, address_space),
        "fsize": (64 * MIB, 64 * MIB),
        "core": (0, 0),
        "nofile": (256, 256),
    }
    if nproc:
        values["nproc"] = (limits.processes, limits.processes)
    return values


def rlimit_argv(limits: SandboxLimits, *, nproc: bool = True) -> list[str]:
    """A ``prlimit`` prefix that sets the rlimits of the command it runs (inherited by its children)."""
    prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
    options = [f"--{name}={soft}:{hard}" for name, (soft, hard) in rlimit_values(limits, nproc=nproc).items()]
    return [prlimit, *options, "--"]
