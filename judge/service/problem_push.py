"""What ``judge push-problem`` and ``judge retire-problem`` ask of a running API node: a small HTTP client.

    push(client, key, folder, tenants, wait_s)   PUT /api/v1/admin/problems/{slug}, then GET until checked
    retire(client, key, slug, content_hash)      POST /api/v1/admin/problems/{slug}/retire

The key comes from the environment (``JUDGE_API_KEY``, an operator key), never from the command line.
Raises OperatorError with the API's error message (or ArchiveError for a folder that cannot be packed).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from judge.authoring.problem_archive import pack
from judge.service.operator import call

#: Seconds between looks at a version being checked.
POLL_S = 2.0


def push(
    client: httpx.Client, key: str, folder: Path, *, tenants: list[str] | None = None, wait_s: float = 0.0
) -> dict[str, Any]:
    """Push the package folder (``problems/<slug>``); the version's state, after waiting up to ``wait_s``
    for its check to end."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/octet-stream"}
    slug = folder.resolve().name
    params = {"tenant": tenants} if tenants else None
    version = call(
        client, "PUT", f"/api/v1/admin/problems/{slug}", content=pack(folder), headers=headers, params=params
    )
    deadline = time.monotonic() + wait_s
    while version.get("state") == "checking" and time.monotonic() < deadline:
        time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
        listing = call(client, "GET", f"/api/v1/admin/problems/{slug}", headers=headers)
        version = next((v for v in listing["versions"] if v["hash"] == version["hash"]), version)
    return version


def retire(client: httpx.Client, key: str, slug: str, content_hash: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"}
    params = {"hash": content_hash} if content_hash else None
    return call(client, "POST", f"/api/v1/admin/problems/{slug}/retire", headers=headers, params=params)
