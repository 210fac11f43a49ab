"""Which JAX backend this host grades on, read from its device files and environment without importing JAX.

The judge's own JAX process runs on the CPU (``judge.core.trusted_jax.import_jax``), and importing JAX with a
TPU present would take the chip (one process at a time may hold one): so the presence of an accelerator is
read from what its driver exposes. ``JUDGE_BACKEND`` (``cpu``, ``tpu``, ``gpu``) overrides what is found, for
a node that should grade on the CPU although a chip is present, or for tests.
"""

from __future__ import annotations

import glob
import importlib.util
import os
from collections.abc import Callable, Mapping

from judge.core.spec import GRADING_BACKENDS

#: Device files of each accelerator's driver (a TPU VM's chips; NVIDIA's and AMD's GPUs).
DEVICE_FILES: dict[str, tuple[str, ...]] = {
    "tpu": ("/dev/accel[0-9]*",),
    "gpu": ("/dev/nvidia[0-9]*", "/dev/kfd"),
}
#: Environment variables a TPU host's runtime sets.
TPU_ENVIRONMENT = ("TPU_ACCELERATOR_TYPE", "TPU_NAME", "TPU_WORKER_ID")


class BackendError(ValueError):
    """A backend name that is not one of ``GRADING_BACKENDS``."""


def parse_backend(name: str) -> str:
    """``name`` lowercased if it is a grading backend, else ``BackendError`` naming the choices."""
    value = name.strip().lower()
    if value not in GRADING_BACKENDS:
        raise BackendError(f"unknown backend {name!r}: one of {', '.join(GRADING_BACKENDS)}")
    return value


def detect_backend(
    env: Mapping[str, str] | None = None, exists: Callable[[str], list[str]] = glob.glob
) -> str:
    """The backend this host grades on: ``JUDGE_BACKEND`` when set, else a TPU, then a GPU, else ``cpu``."""
    environ = os.environ if env is None else env
    given = environ.get("JUDGE_BACKEND", "").strip()
    if given:
        return parse_backend(given)
    if any(environ.get(name) for name in TPU_ENVIRONMENT) or any(exists(p) for p in DEVICE_FILES["tpu"]):
        return "tpu"
    if any(exists(p) for p in DEVICE_FILES["gpu"]):
        return "gpu"
    return "cpu"


#: The modules that give JAX each accelerator (found without importing them).
PLUGINS: dict[str, tuple[str, ...]] = {
    "tpu": ("libtpu",),
    "gpu": ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "jax_rocm7_plugin"),
}


def jax_can_use(backend: str, find: Callable[[str], object] = importlib.util.find_spec) -> bool:
    """Whether this Python has the module that gives JAX ``backend`` (always, for the CPU)."""
    return backend == "cpu" or any(find(name) is not None for name in PLUGINS.get(backend, ()))
