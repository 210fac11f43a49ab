"""The store against SQLite and a real PostgreSQL server (started by this module from Debian's packages).

Every status change is conditional, so a submission is claimed and finished exactly once whatever the
concurrency; migrations and models agree; event ids never go back.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from judge.store import CallbackState, NewSubmission, Status, Store, SubmissionFilter
from judge.store.migrate import current, upgrade
from judge.store.models import Base

#: The ``store`` fixture: SQLite and a real PostgreSQL (tests/stores.py).
pytest_plugins = ("tests.stores",)


def new(problem: str = "some-problem", **kw: str) -> NewSubmission:
    return NewSubmission(problem=problem, code="def f(x):\n    return x\n", manifest={"m": 1}, **kw)  # type: ignore[arg-type]


def test_migrations_reach_head_and_match_the_models(store: Store) -> None:
    assert current(store.engine) == "0010"
    store.migrate()  # a second start migrates nothing
    with store.engine.connect() as connection:
        diff = compare_metadata(
            MigrationContext.configure(connection, opts={"compare_type": True}), Base.metadata
        )
    assert diff == []


def test_create_then_get_round_trips_every_field(store: Store) -> None:
    created = store.submissions.create(
        new(key_name="platform", client_address="10.1.2.3", callback_url="http://h/cb")
    )
    got = store.submissions.get(created.id)
    assert got == created
    assert got.status is Status.QUEUED and got.attempts == 0 and got.result is None
    assert got.created_at.tzinfo is UTC
    assert got.callback_state is CallbackState.PENDING
    assert store.submissions.get("00000000-0000-0000-0000-000000000000") is None


def test_only_one_of_many_concurrent_claims_wins(store: Store) -> None:
    record = store.submissions.create(new())
    claims = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        claims.append(store.attempts.claim(record.id))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [c for c in claims if c is not None]
    assert len(won) == 1 and won[0].attempt == 1
    assert store.submissions.get(record.id).status is Status.RUNNING  # type: ignore[union-attr]


def test_a_result_is_written_once_and_never_by_a_stale_claim(store: Store) -> None:
    record = store.submissions.create(new())
    first = store.attempts.claim(record.id)
    assert first is not None
    store.attempts.recover()  # the grader "died": queued again
    second = store.attempts.claim(record.id)
    assert second is not None and second.attempt == 2
    assert not store.attempts.finish(first, {"verdict": "wrong"}, "wrong_answer", {}, ("result", {"n": 1}))
    assert store.attempts.finish(second, {"verdict": "accepted"}, "accepted", {"m": 2}, ("result", {"n": 2}))
    assert not store.attempts.finish(second, {"verdict": "again"}, "accepted", {}, ("result", {"n": 3}))
    done = store.submissions.get(record.id)
    assert done is not None and done.status is Status.DONE and done.result == {"verdict": "accepted"}
    assert done.manifest == {"m": 2} and done.attempts == 2 and done.finished_at is not None
    finals = [e for e in store.events.after(record.id) if e.kind == "result"]
    assert [e.data for e in finals] == [{"n": 2}]


def test_recover_queues_running_work_oldest_first(store: Store) -> None:
    ids = [store.submissions.create(new()).id for _ in range(4)]
    store.attempts.claim(ids[1])
    claim3 = store.attempts.claim(ids[3])
    assert claim3 is not None
    store.attempts.finish(claim3, {}, "accepted", {}, ("result", {}))
    assert store.attempts.recover() == [ids[0], ids[1], ids[2]]
    assert store.submissions.count(Status.QUEUED) == 3 and store.submissions.count(Status.DONE) == 1


def test_failed_and_released_transitions(store: Store) -> None:
    record = store.submissions.create(new())
    claim = store.attempts.claim(record.id)
    assert claim is not None and store.attempts.release(claim)
    assert store.submissions.get(record.id).status is Status.QUEUED  # type: ignore[union-attr]
    claim = store.attempts.claim(record.id)
    assert claim is not None and store.attempts.fail(claim, "the sandbox is down", ("failed", {"error": "x"}))
    failed = store.submissions.get(record.id)
    assert failed is not None and failed.status is Status.FAILED and failed.error == "the sandbox is down"
    assert store.attempts.claim(record.id) is None


def test_events_of_a_retried_attempt_are_replaced_and_ids_keep_growing(store: Store) -> None:
    record = store.submissions.create(new())
    claim = store.attempts.claim(record.id)
    assert claim is not None
    ids = [store.events.append(claim, "case", {"index": i}) for i in range(3)]
    known = [i for i in ids if i is not None]
    assert known == ids and known == sorted(known)
    store.attempts.recover()
    retry = store.attempts.claim(record.id)
    assert retry is not None
    assert store.events.after(record.id) == []  # the dead attempt's events are gone
    assert store.events.append(claim, "case", {"index": 9}) is None  # stale claim: refused
    new_id = store.events.append(retry, "case", {"index": 0})
    assert new_id is not None and new_id > max(i for i in ids if i is not None)
    assert [e.data for e in store.events.after(record.id, after=0)] == [{"index": 0}]
    assert store.events.after(record.id, after=new_id) == []


def test_callback_attempts_are_recorded_and_pending_ones_listed(store: Store) -> None:
    record = store.submissions.create(new(callback_url="http://127.0.0.1:9/cb"))
    claim = store.attempts.claim(record.id)
    assert claim is not None
    assert store.callbacks.pending() == []  # not finished yet
    store.attempts.finish(claim, {}, "accepted", {}, ("result", {}))
    assert store.callbacks.pending() == [record.id]
    store.callbacks.record_attempt(record.id, 1, "http://127.0.0.1:9/cb", 500, None)
    store.callbacks.record_attempt(record.id, 2, "http://127.0.0.1:9/cb", 200, None)
    store.callbacks.set_state(record.id, CallbackState.DELIVERED)
    assert [(a, s) for a, s, _, _ in store.callbacks.attempts(record.id)] == [(1, 500), (2, 200)]
    assert store.callbacks.pending() == []


def test_a_handed_off_callback_is_listed_and_taken_once(store: Store) -> None:
    """A grader without callback settings hands it off (try 0 a note); of API nodes racing to take it,
    one gets it, and it is pending again for that node's sender."""
    url = "http://127.0.0.1:9/cb"
    record = store.submissions.create(new(callback_url=url))
    claim = store.attempts.claim(record.id)
    assert claim is not None
    store.attempts.finish(claim, {}, "accepted", {}, ("result", {}))
    assert store.callbacks.hand_off(record.id, url, "not sent by grading node g")
    assert not store.callbacks.hand_off(record.id, url, "again")  # no longer pending
    got = store.submissions.get(record.id)
    assert got is not None and got.callback_state is CallbackState.HANDED_OFF
    assert store.callbacks.pending() == []
    [(sid, finished_at)] = store.callbacks.handed_off(10)
    assert sid == record.id and finished_at is not None and finished_at.tzinfo is not None
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(store.callbacks.take(record.id))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]
    assert store.callbacks.handed_off(10) == [] and store.callbacks.pending() == [record.id]
    assert [(a, s, e) for a, s, e, _ in store.callbacks.attempts(record.id)] == [
        (0, None, "not sent by grading node g")
    ]


def test_many_writers_at_once_lose_nothing(store: Store) -> None:
    created: list[str] = []
    lock = threading.Lock()

    def writer() -> None:
        for _ in range(10):
            record = store.submissions.create(new())
            claim = store.attempts.claim(record.id)
            assert claim is not None
            store.events.append(claim, "case", {"index": 0})
            assert store.attempts.finish(claim, {"ok": True}, "accepted", {}, ("result", {}))
            with lock:
                created.append(record.id)

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(created) == 60
    assert store.submissions.count(Status.DONE) == 60 and store.submissions.count() == 60


def test_submissions_of_keys_made_before_key_ids_stay_theirs(database_url: str) -> None:
    """0004 gives existing rows their key's name as owner id: a key line without an id (its id is its
    name) still lists and reads them; a key with an id of its own does not see them."""
    legacy = Store(database_url)
    try:
        upgrade(legacy.engine, "0003")
        with legacy.engine.begin() as connection:
            for sid, key in (
                ("00000000-0000-0000-0000-000000000001", "lms"),
                ("00000000-0000-0000-0000-000000000002", None),
            ):
                connection.execute(
                    text(
                        "INSERT INTO submissions (id, problem, code, status, attempts, manifest, key_name, "
                        "created_at) VALUES (:id, 'p', 'x', 'queued', 0, '{}', :key, :at)"
                    ),
                    {"id": sid, "key": key, "at": datetime(2026, 1, 1)},
                )
        legacy.migrate()
        assert current(legacy.engine) == "0010"
        old = legacy.submissions.get("00000000-0000-0000-0000-000000000001")
        assert old is not None and old.key_id == "lms" and old.key_name == "lms"
        anonymous = legacy.submissions.get("00000000-0000-0000-0000-000000000002")
        assert anonymous is not None and anonymous.key_id is None
        assert [r.id for r in legacy.listing.page(SubmissionFilter(key_id="lms"))] == [old.id]
        assert legacy.listing.page(SubmissionFilter(key_id="key_0123456789abcdef")) == []
        fresh = legacy.submissions.create(new(key_name="lms", key_id="key_0123456789abcdef"))
        assert fresh.key_id == "key_0123456789abcdef"
        assert [r.id for r in legacy.listing.page(SubmissionFilter(key_id="lms"))] == [old.id]
    finally:
        legacy.close()


def test_the_aggregates_write_in_the_transaction_of_the_caller_that_opened_it(store: Store) -> None:
    """One database under every aggregate: a deletion made in a caller's transaction (as the accounts'
    erasure does) is rolled back with it, and committed with it."""
    kept, gone = store.submissions.create(new()).id, store.submissions.create(new()).id
    with pytest.raises(RuntimeError), store.transaction() as session:
        assert store.deletion.delete_ids(session, [kept]) == 1
        raise RuntimeError("the caller fails after the deletion")
    assert store.submissions.get(kept) is not None
    with store.transaction() as session:
        assert store.deletion.delete_ids(session, [gone]) == 1
    assert store.submissions.get(gone) is None and store.submissions.ids() == [kept]
