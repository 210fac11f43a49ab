"""The README's distributed set-up, as written: PostgreSQL's role and database made with the README's
own commands (as the postgres user, on the suite's private server), Redis, and the venv's ``judge serve``
with the settings every node needs; with no grading node yet, /readyz says the API node is ready but
submissions are not graded, and a submission is stored and queued, not lost."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import postgres, redis_server
from tests.conftest import FIXTURE_SLUG, ROOT
from tests.service_support import ServeProcess

README = ROOT / "README.md"
JUDGE = ROOT / ".venv" / "bin" / "judge"


def readme_commands() -> list[str]:
    """The SQL of the README's ``runuser -u postgres -- psql -c "..."`` lines, in order."""
    text = README.read_text()
    return re.findall(r'^runuser -u postgres -- psql -c "([^"]+)"$', text, re.MULTILINE)


@pytest.fixture
def servers() -> Iterator[tuple[postgres.PostgresServer, redis_server.RedisServer]]:
    for reason in (postgres.why_unavailable(), redis_server.why_unavailable()):
        if reason is not None:
            pytest.skip(reason)
    pg, redis = postgres.PostgresServer(), redis_server.RedisServer()
    try:
        pg.start()
        redis.start()
        yield pg, redis
    finally:
        redis.stop()
        pg.stop()


def test_the_readme_distributed_steps_work_as_written(
    servers: tuple[postgres.PostgresServer, redis_server.RedisServer], tmp_path: Path
) -> None:
    pg, redis = servers
    statements = readme_commands()
    assert statements == [
        "CREATE ROLE judge LOGIN PASSWORD 'judge'",
        "CREATE DATABASE judge OWNER judge",
    ]
    for sql in statements:  # the README's commands, pointed at the suite's private server
        subprocess.run(
            ["runuser", "-u", "postgres", "--", "psql", "-h", str(pg.base), "-p", str(pg.port), "-c", sql],
            check=True, capture_output=True, timeout=60, cwd=pg.base,
        )  # fmt: skip
    # `judge` is the venv's command, as the README says.
    assert subprocess.run([str(JUDGE), "--help"], capture_output=True, timeout=120).returncode == 0
    database = f"postgresql+psycopg://judge:judge@/judge?host={pg.base}&port={pg.port}"
    api = ServeProcess(
        tmp_path / "api",
        JUDGE_QUEUE_URL=redis.url,
        JUDGE_DATABASE_URL=database,
        JUDGE_SANDBOX="process",
        JUDGE_INSECURE="1",
        JUDGE_SANDBOX_SLOT_BASE="890",
    )
    try:
        api.start()
        ready = httpx.get(f"{api.url}/readyz", timeout=10)
        body = ready.json()
        assert ready.status_code == 200 and body["ready"] and body["dispatch"] == "celery"
        assert body["database"] == "ok" and body["queue"] == "ok" and body["nodes"] == 0
        assert body["submissions_ready"] is False and "no live grading node" in body["submissions_reason"]
        created = httpx.post(
            f"{api.url}/api/v1/submissions",
            json={"problem": FIXTURE_SLUG, "code": "def scale_tree(tree, factor):\n    return tree\n"},
            timeout=30,
        )
        assert created.status_code == 202
        time.sleep(0.5)
        status = httpx.get(f"{api.url}{created.headers['location']}", timeout=10).json()["status"]
        assert status == "queued"  # stored in the role's database, waiting for a grading node
    finally:
        api.stop()
