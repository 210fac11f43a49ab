"""The store's side of the platform API on SQLite and a real PostgreSQL (started by the suite): listing by
cursor in a stable order with filters and counts, one idempotency key per scope even under concurrent
writers, deletion with everything of a submission, retention and erasing an external user."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from judge.store import (
    Claim,
    Cursor,
    IdempotencyKey,
    IdempotencyTaken,
    NewSubmission,
    Status,
    Store,
    SubmissionFilter,
    sqlite_url,
)
from judge.store.models import CallbackAttempt, IdempotencyRecord, Submission, SubmissionEvent
from tests.postgres import PostgresServer, why_unavailable


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        url = sqlite_url(tmp_path / "judge.sqlite3")
    else:
        url = request.getfixturevalue("postgres").new_database()
    store = Store(url)
    store.migrate()
    try:
        yield store
    finally:
        store.close()


def new(key: str | None = "k", **kw: object) -> NewSubmission:
    return NewSubmission(problem="p", code="def f(x):\n    return x\n", manifest={}, key_name=key, **kw)  # type: ignore[arg-type]


def finish(store: Store, sid: str, verdict: str = "accepted") -> None:
    claim = store.claim(sid)
    assert claim is not None
    assert store.finish(claim, {"verdict": verdict}, verdict, {}, ("result", {"status": "done"}))


def test_pages_are_stable_newest_first_and_filtered(store: Store) -> None:
    ids = [store.create(new(external_user=f"u{i % 2}", tags={"c": str(i % 3)})).id for i in range(9)]
    store.create(new("other"))
    # Several rows may share one created_at: the id breaks the tie, so no page repeats or skips one.
    same = datetime(2026, 1, 1, tzinfo=UTC)
    with store.engine.begin() as connection:
        connection.execute(update(Submission).where(Submission.id.in_(ids[:4])).values(created_at=same))
    for sid in ids[::2]:
        finish(store, sid, "wrong_answer")
    mine = SubmissionFilter(key_name="k")
    seen: list[str] = []
    after: Cursor | None = None
    while True:
        page = store.page(mine, after=after, limit=2)
        if not page:
            break
        assert all(r.code == "" and r.result is None for r in page)  # the heavy columns stay unread
        seen += [r.id for r in page]
        after = Cursor(page[-1].created_at, page[-1].id)
    assert sorted(seen) == sorted(ids) and len(seen) == len(set(seen))
    full = store.page(mine, limit=100, heavy=("code", "result"))
    assert [r.id for r in full] == seen and all(r.code for r in full)
    assert store.count_matching(mine) == 9
    assert store.count_matching(SubmissionFilter("k", external_user="u0")) == 5
    assert store.count_matching(SubmissionFilter("k", verdict="wrong_answer")) == 5
    assert store.count_matching(SubmissionFilter("k", status=Status.QUEUED)) == 4
    assert store.count_matching(SubmissionFilter("k", tag=("c", "1"))) == 3
    assert store.count_matching(SubmissionFilter("k", created_before=same + timedelta(seconds=1))) == 4
    assert store.count_matching(SubmissionFilter("nobody")) == 0


def test_one_idempotency_key_per_scope_even_when_writers_race(store: Store) -> None:
    key = IdempotencyKey("key:k", "once", "h" * 64)
    won: list[str] = []
    lost: list[str] = []
    barrier = threading.Barrier(6)

    def create() -> None:
        barrier.wait()
        try:
            won.append(store.create(new(), key).id)
        except IdempotencyTaken:
            lost.append("taken")

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(lost) == 5
    assert len(store.ids()) == 1  # the losers stored nothing
    since = datetime.now(UTC) - timedelta(hours=1)
    hit = store.idempotent("key:k", "once", since)
    assert hit is not None and hit.submission_id == won[0] and hit.body_hash == "h" * 64
    assert store.idempotent("key:other", "once", since) is None  # scoped
    assert store.idempotent("key:k", "once", datetime.now(UTC) + timedelta(seconds=1)) is None  # expired
    assert store.expire_idempotency(datetime.now(UTC) + timedelta(seconds=1)) == 1


def test_delete_purge_and_erase_take_everything_of_a_submission(store: Store) -> None:
    a, b, c = (store.create(new(external_user=u), IdempotencyKey("key:k", u, "x")).id for u in "abc")
    for sid in (a, b, c):
        finish(store, sid)
        store.record_callback_attempt(sid, 1, "http://h/cb", 200, None)
    assert store.delete(a) and not store.delete(a)
    with store.engine.begin() as connection:
        connection.execute(
            update(Submission)
            .where(Submission.id == b)
            .values(finished_at=datetime.now(UTC) - timedelta(days=10))
        )
    assert store.purge_finished(datetime.now(UTC) - timedelta(days=5)) == 1
    assert store.erase_user("other-key", "c") == 0 and store.erase_user("k", "c") == 1
    with store.engine.connect() as connection:
        for model in (Submission, SubmissionEvent, CallbackAttempt, IdempotencyRecord):
            assert connection.scalar(select(func.count()).select_from(model)) == 0, model


def test_a_deleted_submission_is_never_graded_or_stored(store: Store) -> None:
    sid = store.create(new()).id
    claim = store.claim(sid)
    assert isinstance(claim, Claim) and store.delete(sid)
    assert not store.finish(claim, {}, "accepted", {}, ("result", {}))
    assert store.claim(sid) is None and store.get(sid) is None
