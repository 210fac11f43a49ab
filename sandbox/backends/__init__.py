"""The explicit registry of sandbox backends, by configuration name."""

from __future__ import annotations

from sandbox.backends.base import Backend
from sandbox.backends.bwrap import BwrapBackend
from sandbox.backends.docker import DockerBackend
from sandbox.backends.process import ProcessBackend

BACKENDS: dict[str, type[Backend]] = {
    BwrapBackend.name: BwrapBackend,
    DockerBackend.name: DockerBackend,
    ProcessBackend.name: ProcessBackend,
}


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise KeyError(f"unknown sandbox backend {name!r}; known: {', '.join(sorted(BACKENDS))}") from None
