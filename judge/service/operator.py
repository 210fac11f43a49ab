"""What an operator's command asks of a running API node (``judge regrade``): a small HTTP client.

    regrade(client, key, submission="ID", notify=...)      POST /api/v1/submissions/{id}/regrade
    regrade(client, key, problem="slug", force=..., ...)   POST /api/v1/problems/{slug}/regrade (operators)
    regrade_job(client, key, "JOB")                        GET /api/v1/regrades/{job} (operators)

The key comes from the environment (``JUDGE_API_KEY``), never from the command line (``ps`` shows it).
Raises OperatorError with the API's error message.
"""

from __future__ import annotations

from typing import Any

import httpx

KEY_ENV = "JUDGE_API_KEY"


class OperatorError(Exception):
    pass


def call(client: httpx.Client, method: str, path: str, **kw: Any) -> dict[str, Any]:
    """One request of an operator's command: the JSON answer; OperatorError with the API's error message
    for an error status, no answer or an answer without JSON (``judge.service.problem_push`` too)."""
    try:
        answer = client.request(method, path, **kw)
    except httpx.HTTPError as exc:
        raise OperatorError(
            f"the judge at {client.base_url} does not answer ({type(exc).__name__})"
        ) from None
    try:
        body: dict[str, Any] = answer.json()
    except ValueError:
        raise OperatorError(f"the judge answered {answer.status_code} without JSON") from None
    if answer.status_code >= 400:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        raise OperatorError(f"{answer.status_code} {error.get('code', '?')}: {error.get('message', '')}")
    return body


def _answer(client: httpx.Client, method: str, path: str, key: str, params: dict[str, str]) -> dict[str, Any]:
    return call(client, method, path, headers={"Authorization": f"Bearer {key}"}, params=params)


def regrade(
    client: httpx.Client,
    key: str,
    *,
    submission: str | None = None,
    problem: str | None = None,
    force: bool = False,
    notify: bool = False,
    batch: int | None = None,
) -> dict[str, Any]:
    """A submission's regrade (``RegradeAccepted``) or a problem's (``RegradeJob``)."""
    if (submission is None) == (problem is None):
        raise OperatorError("give exactly one of a submission id and a problem slug")
    params = {"notify": "true"} if notify else {}
    if submission is not None:
        return _answer(client, "POST", f"/api/v1/submissions/{submission}/regrade", key, params)
    if force:
        params["force"] = "true"
    if batch is not None:
        params["batch"] = str(batch)
    return _answer(client, "POST", f"/api/v1/problems/{problem}/regrade", key, params)


def regrade_job(client: httpx.Client, key: str, job: str) -> dict[str, Any]:
    """How far a problem regrade got (``RegradeJob``)."""
    return _answer(client, "GET", f"/api/v1/regrades/{job}", key, {})
