"""50 submissions at once to a real ``judge serve``: all accepted (the bound is above 50), all graded,
none lost or graded twice. (The 429s past a bound are tested deterministically in test_service_access.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.store import Status, Store, sqlite_url
from tests.conftest import FIXTURE_SLUG
from tests.service_support import HEAVY, ServeProcess, solution

pytestmark = [pytest.mark.slow, HEAVY]

SCALE = FIXTURE_SLUG  # served from the fixture problems (ServeProcess)
COUNT = 50


def wait_done(client: httpx.Client, sid: str, rounds: int = 5) -> dict[str, Any]:
    """The submission once finished (``?wait=`` is bounded by max_wait_s, so ask again a few times)."""
    for _ in range(rounds):
        response = client.get(f"/api/submissions/{sid}", params={"wait": 60})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if body["status"] in ("done", "failed"):
            break
    return body


def test_fifty_concurrent_submissions_are_all_graded_once(tmp_path: Path) -> None:
    server = ServeProcess(tmp_path, JUDGE_QUEUE_SIZE="64", JUDGE_SANDBOX_SLOT_BASE="400")
    try:
        server.start()
        accepted_code = solution(SCALE, "accepted", "tree_util_map.py")
        # Mostly submissions that fail to compile (each still takes a sandbox worker and a result), a few
        # that run every case; each text is unique so every stored row can be matched to its request.
        bodies = [
            {
                "problem": SCALE,
                "code": (accepted_code if i % 10 == 0 else "def scale_tree(:\n") + f"\n# {i}\n",
            }
            for i in range(COUNT)
        ]

        async def post_all() -> list[httpx.Response]:
            limits = httpx.Limits(max_connections=COUNT)
            async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as client:
                return await asyncio.gather(*(client.post("/api/submissions", json=b) for b in bodies))

        responses = asyncio.run(post_all())
        assert [r.status_code for r in responses] == [202] * COUNT, [
            r.text for r in responses if r.status_code != 202
        ]
        ids = [r.json()["id"] for r in responses]
        assert len(set(ids)) == COUNT
        with httpx.Client(base_url=server.url, timeout=90) as client:
            results = [wait_done(client, sid) for sid in ids]
            metrics = client.get("/metrics").text
        for i, result in enumerate(results):
            assert result["status"] == "done", result
            assert result["verdict"] == ("accepted" if i % 10 == 0 else "compile_error")
            assert result["attempts"] == 1
        store = Store(sqlite_url(tmp_path / "judge.sqlite3"))
        try:
            assert store.submissions.count() == COUNT and store.submissions.count(Status.DONE) == COUNT
            for sid, body in zip(ids, bodies, strict=True):
                record = store.submissions.get(sid)
                assert record is not None and record.code == body["code"]
                finals = [e for e in store.events.after(sid) if e.kind in ("result", "failed")]
                assert len(finals) == 1
        finally:
            store.close()
        assert 'judge_rejected_total{reason="queue_full"}' not in metrics or (
            'judge_rejected_total{reason="queue_full"} 0.0' in metrics
        )
    finally:
        server.stop()
    assert server.session_processes() == []
