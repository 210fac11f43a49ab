"""judge.core.sandboxes.Prestarted: the CLI's early tracer + executor pair is used only when its limits
fit."""

from __future__ import annotations

import pytest

from judge.core.sandboxes import Prestarted
from sandbox.backends import get_backend
from sandbox.host.resource_limits import SandboxLimits

pytestmark = pytest.mark.slow


def test_early_pair_is_handed_out_once_when_limits_match() -> None:
    source = Prestarted(get_backend("process"))
    early = source._pair
    first = source(SandboxLimits(case_time_s=3.0))  # judge-side limits may differ freely
    second = source(SandboxLimits())
    try:
        assert first is early
        assert second is not early  # never handed out twice
        assert second.tracer is not first.tracer and second.executor is not first.executor
    finally:
        first.close()
        second.close()
        source.close()


def test_early_pair_is_replaced_when_baked_limits_differ() -> None:
    source = Prestarted(get_backend("process"))
    early = source._pair
    assert early is not None
    fresh = source(SandboxLimits(memory_mb=1024))
    try:
        assert fresh is not early
        assert early.tracer.wait(10) is not None  # the unfit early pair was closed
        assert early.executor.wait(10) is not None
    finally:
        fresh.close()
        source.close()


def test_close_releases_an_unused_early_pair() -> None:
    source = Prestarted(get_backend("process"))
    early = source._pair
    assert early is not None
    source.close()
    assert early.tracer.wait(10) is not None and early.executor.wait(10) is not None
    source.close()  # idempotent
