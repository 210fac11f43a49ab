"""The CI smoke run (``scripts/run --smoke``, i.e. ``python -m judge.service.smoke``) passes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_smoke_run_starts_runs_one_example_and_stops_cleanly() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "judge.service.smoke", "--timeout", "240"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "accepted (3/3 examples)" in out.stderr and "smoke run passed" in out.stderr
