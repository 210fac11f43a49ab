"""The sandbox layer's waits take descriptors numbered 1024 and above (a service with many open connections
gets such numbers for its workers' pipes): ``poll`` has no FD_SETSIZE limit, ``select`` refuses them."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator

import pytest

from sandbox.host.waitfd import readable


@pytest.fixture
def crowded_descriptors() -> Iterator[None]:
    """About 1,100 descriptors open, so every new pipe gets a number past 1023."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 4096) if hard != resource.RLIM_INFINITY else 4096
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    base = os.open("/dev/null", os.O_RDONLY)
    held = [os.dup(base) for _ in range(1100)]
    try:
        assert max(held) >= 1024
        yield
    finally:
        for fd in [*held, base]:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_readable_takes_any_descriptor_number(crowded_descriptors: None) -> None:
    r, w = os.pipe()
    try:
        assert r >= 1024
        assert readable([r], 0.01) == []
        os.write(w, b"x")
        assert readable([r], 1.0) == [r]
    finally:
        os.close(r)
        os.close(w)
