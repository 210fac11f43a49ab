"""No lost work: SIGKILL a real ``judge serve`` with submissions queued and running, start it again, and
every submission is graded exactly once (one result each; those cut short were graded again, once)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from judge.store import Status, Store, sqlite_url
from tests.conftest import FIXTURE_SLUG
from tests.service_support import HEAVY, ServeProcess, solution

pytestmark = [pytest.mark.slow, HEAVY]

SCALE = FIXTURE_SLUG  # served from the fixture problems (ServeProcess)
# Loading takes ~2 s (a sleep at import), so a grading is surely running when the server dies.
SLOW_ACCEPTED = "import time\ntime.sleep(2)\n" + solution(SCALE, "accepted", "tree_util_map.py")


def test_sigkill_with_queued_and_running_work_loses_nothing(tmp_path: Path) -> None:
    env = {"JUDGE_SUBMISSION_CONCURRENCY": "1", "JUDGE_SANDBOX_SLOT_BASE": "500"}
    first = ServeProcess(tmp_path, **env)
    try:
        first.start()
        with httpx.Client(base_url=first.url, timeout=30) as client:
            ids = [
                client.post(
                    "/api/submissions", json={"problem": SCALE, "code": f"{SLOW_ACCEPTED}\n# {i}\n"}
                ).json()["id"]
                for i in range(4)
            ]
            deadline = time.monotonic() + 60
            while client.get(f"/api/submissions/{ids[0]}").json()["status"] != "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            statuses = [client.get(f"/api/submissions/{sid}").json()["status"] for sid in ids]
        assert statuses[0] == "running" and "queued" in statuses[1:], statuses
        first.kill()
        time.sleep(0.5)
        assert first.session_processes() == [], "sandboxes outlived the killed server"
    finally:
        first.stop()

    store = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    try:
        before = {sid: store.submissions.get(sid) for sid in ids}
        assert all(r is not None and r.status in (Status.QUEUED, Status.RUNNING) for r in before.values())
        second = ServeProcess(tmp_path, **env)
        try:
            second.start()
            with httpx.Client(base_url=second.url, timeout=90) as client:
                for sid in ids:
                    for _ in range(4):
                        body = client.get(f"/api/submissions/{sid}", params={"wait": 60}).json()
                        if body["status"] == "done":
                            break
                    assert body["status"] == "done" and body["verdict"] == "accepted", body
        finally:
            second.stop()
        assert second.session_processes() == []
        for sid in ids:
            record = store.submissions.get(sid)
            assert record is not None and record.status is Status.DONE
            was_running = before[sid].status is Status.RUNNING  # type: ignore[union-attr]
            assert record.attempts == (2 if was_running else 1), (sid, record.attempts)
            finals = [e for e in store.events.after(sid) if e.kind == "result"]
            assert len(finals) == 1 and finals[0].attempt == record.attempts
    finally:
        store.close()
