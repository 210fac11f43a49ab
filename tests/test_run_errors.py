"""A failed Run answers the same through ``POST .../run`` and ``POST .../run/events``
(``judge.service.run_errors``): the problem's own fault (its validator crashing, its reference failing) is
the judge's side, a 500 ``internal_error`` that says so, never ``503 ... try again shortly``; contention
(429 ``run_busy``) and the sandbox failing (503 ``sandbox_unavailable``) keep their ``Retry-After``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from judge.core.errors import JudgeError, ProblemError, ReferenceFailure
from judge.core.problems import Problem
from judge.core.progress import RunProgress
from judge.core.results import CaseResult, GradeResult
from judge.service.gate import RunBusy
from judge.service.run_errors import run_error
from judge.service.shares import ShareExceeded
from sandbox.backends import get_backend
from sandbox.errors import SandboxError
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running, sse_events

CODE = "def scale_tree(tree, factor):\n    return tree\n"
RUN = f"/api/v1/problems/{FIXTURE_SLUG}/run"
INPUTS = {"tree": {"a": [1.0, 2.0]}, "factor": 1.0}
#: Where a validator's failure is raised from: a server path that must not reach the client.
VALIDATOR = "/srv/problems/scale-tree/validator.py"


class _Failing(FakeEngine):
    """Every Run fails with ``failure``, raised where the engine raises it (the streamed Run's too)."""

    def __init__(self, failure: Exception) -> None:
        super().__init__()
        self.failure = failure

    def run(
        self,
        problem: Problem,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        dtype: str | None = None,
        on_case: Callable[[CaseResult], None] | None = None,
        on_progress: Callable[[RunProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> GradeResult:
        raise self.failure


def _plain(client: TestClient, body: dict[str, Any]) -> tuple[int, dict[str, Any], httpx.Headers]:
    answer = client.post(RUN, json=body)
    return answer.status_code, answer.json()["error"], answer.headers


def _streamed(client: TestClient, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The streamed Run's status and error: its ``error`` event's, or the refusal before any stream."""
    answer = client.post(f"{RUN}/events", json=body)
    if answer.status_code != 200:
        return answer.status_code, answer.json()["error"]
    [data] = [data for _, kind, data in sse_events(answer.text) if kind == "error"]
    return data["status"], data["error"]


def _blames_the_problem(error: dict[str, Any]) -> None:
    assert error["code"] == "internal_error"
    assert f"the problem {FIXTURE_SLUG!r} is broken on the judge's side" in error["message"]
    assert "not by this code" in error["message"] and "try again shortly" not in error["message"]
    assert VALIDATOR not in error["message"] and "ZeroDivisionError" not in error["message"]


CRASH = "ZeroDivisionError: division by zero"
PROBLEM_FAULTS = [
    pytest.param(ProblemError(VALIDATOR, f"validate() failed: {CRASH}"), "validator", id="validator"),
    pytest.param(ReferenceFailure(f"reference.py: {CRASH}"), "reference", id="reference"),
]


@pytest.mark.parametrize(("failure", "named"), PROBLEM_FAULTS)
def test_the_problems_fault_is_a_500_that_says_so_on_both_runs(
    tmp_path: Path, failure: JudgeError, named: str
) -> None:
    engine = _Failing(failure)
    with running(make_settings(tmp_path), backend=get_backend("process"), engine=engine) as (client, _):
        status, error, headers = _plain(client, {"code": CODE})
        assert status == 500, error
        _blames_the_problem(error)
        assert named in error["message"] and "retry-after" not in headers
        status, error = _streamed(client, {"code": CODE})
        assert status == 500, error
        _blames_the_problem(error)
        assert named in error["message"]


def test_a_crashing_validator_is_the_problems_fault_on_both_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real path: the Run's custom input goes through the problem's validator before any sandbox work
    (``checked_run``), and the validator raises."""

    def crashing(self: Problem, case: Any) -> list[str]:
        raise ProblemError(VALIDATOR, f"validate() failed: {CRASH}")

    monkeypatch.setattr(Problem, "violations", crashing)
    with running(make_settings(tmp_path), backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        status, error, _ = _plain(client, {"code": CODE, "inputs": INPUTS})
        assert status == 500, error
        _blames_the_problem(error)
        status, error = _streamed(client, {"code": CODE, "inputs": INPUTS})
        assert status == 500, error
        _blames_the_problem(error)


def test_a_failing_sandbox_is_still_a_503_to_retry_on_both_runs(tmp_path: Path) -> None:
    failing = _Failing(SandboxError("the executor died"))
    with running(make_settings(tmp_path), backend=get_backend("process"), engine=failing) as (client, _):
        status, error, headers = _plain(client, {"code": CODE})
        assert (status, error["code"], headers["retry-after"]) == (503, "sandbox_unavailable", "5")
        assert "try again shortly" in error["message"]
        status, error = _streamed(client, {"code": CODE})
        assert (status, error["code"]) == (503, "sandbox_unavailable")


@pytest.mark.parametrize(
    ("failure", "limit"),
    [(ShareExceeded("over your share", 3), "runs_per_client"), (RunBusy("every Run slot is busy", 4), None)],
)
def test_contention_is_a_429_with_retry_after(failure: ShareExceeded | RunBusy, limit: str | None) -> None:
    error = run_error(failure, FIXTURE_SLUG)
    assert (error.status, error.info.code, error.info.limit) == (429, "run_busy", limit)
    assert error.headers == {"Retry-After": str(failure.retry_after)}
    assert error.info.message == str(failure)
