"""judge.sandboxes.Prestarted: the CLI's early worker is used only when its baked-in limits fit."""

from __future__ import annotations

import pytest

from judge.sandboxes import Prestarted
from sandbox.backends import get_backend
from sandbox.limits import SandboxLimits

pytestmark = pytest.mark.slow


def test_early_worker_is_handed_out_once_when_limits_match() -> None:
    source = Prestarted(get_backend("process"))
    early = source._worker
    first = source(SandboxLimits(case_time_s=3.0))  # judge-side limits may differ freely
    second = source(SandboxLimits())
    try:
        assert first is early
        assert second is not early  # never handed out twice
    finally:
        first.close()
        second.close()
        source.close()


def test_early_worker_is_replaced_when_baked_limits_differ() -> None:
    source = Prestarted(get_backend("process"))
    early = source._worker
    assert early is not None
    fresh = source(SandboxLimits(memory_mb=1024))
    try:
        assert fresh is not early
        assert early.wait(10) is not None  # the unfit early worker was closed
    finally:
        fresh.close()


def test_close_releases_an_unused_early_worker() -> None:
    source = Prestarted(get_backend("process"))
    early = source._worker
    assert early is not None
    source.close()
    assert early.wait(10) is not None
    source.close()  # idempotent
