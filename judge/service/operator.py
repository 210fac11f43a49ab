"""What an operator's command asks of a running API node (``judge regrade``): a small HTTP client.

    regrade(client, key, submission="ID")            POST /api/submissions/{id}/regrade
    regrade(client, key, problem="slug", force=...)  POST /api/problems/{slug}/regrade (an operator key)

The key comes from the environment (``JUDGE_API_KEY``), never from the command line (``ps`` shows it).
Raises OperatorError with the API's error message.
"""

from __future__ import annotations

from typing import Any

import httpx

KEY_ENV = "JUDGE_API_KEY"


class OperatorError(Exception):
    pass


def regrade(
    client: httpx.Client,
    key: str,
    *,
    submission: str | None = None,
    problem: str | None = None,
    force: bool = False,
) -> dict[str, Any]:
    if (submission is None) == (problem is None):
        raise OperatorError("give exactly one of a submission id and a problem slug")
    headers = {"Authorization": f"Bearer {key}"}
    try:
        if submission is not None:
            answer = client.post(f"/api/v1/submissions/{submission}/regrade", headers=headers)
        else:
            params = {"force": "true"} if force else {}
            answer = client.post(f"/api/v1/problems/{problem}/regrade", headers=headers, params=params)
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
