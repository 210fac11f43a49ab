"""`judge doctor`: active backend, protections, and a self-test submission through the sandbox."""

from __future__ import annotations

import json

import pytest

from judge.core.doctor import diagnose
from sandbox.backends import get_backend
from tests.conftest import available_backends
from tests.test_cli import judge

pytestmark = pytest.mark.slow


@pytest.mark.skipif("bwrap" not in available_backends(), reason="bubblewrap is not usable on this host")
def test_doctor_reports_bwrap_with_every_protection_active() -> None:
    out = judge("doctor", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["backend"] == "bwrap" and report["insecure"] is False
    names = {p["name"]: p["active"] for p in report["protections"]}
    for required in (
        "namespaces",
        "seccomp",
        "uid drop",
        "rlimits",
        "cgroup memory",
        "cgroup pids",
        "cgroup cpu",
    ):
        assert names.get(required) is True, (required, names)
    assert report["self_test"]["ok"] is True


def test_doctor_text_names_backend_and_self_test() -> None:
    out = judge("doctor")
    assert out.returncode == 0, out.stderr
    assert "active sandbox backend:" in out.stdout
    assert "self-test: passed" in out.stdout


def test_doctor_refuses_insecure_backend_without_flag() -> None:
    out = judge("doctor", "--sandbox", "process")
    assert out.returncode == 1
    assert "insecure" in out.stderr


def test_process_backend_says_what_it_does_not_protect() -> None:
    report = diagnose(get_backend("process"))
    assert report.insecure
    inactive = {p.name for p in report.protections if not p.active}
    assert {"namespaces", "seccomp", "uid drop"} <= inactive
    assert report.self_test.ok, report.self_test.message


@pytest.mark.parametrize("name", [n for n in available_backends() if n != "process"])
def test_self_test_passes_on_every_secure_backend(name: str) -> None:
    report = diagnose(get_backend(name))
    assert report.self_test.ok, report.self_test.message
