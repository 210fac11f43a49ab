"""The store's side of the platform API on SQLite and a real PostgreSQL (started by the suite): listing by
cursor in a stable order with filters and counts, one idempotency key per scope even under concurrent
writers, deletion with everything of a submission, retention and erasing an external user."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from judge.store import (
    Claim,
    Cursor,
    Deferred,
    IdempotencyKey,
    IdempotencyTaken,
    NewSubmission,
    Quota,
    QuotaExceeded,
    Status,
    Store,
    SubmissionFilter,
)
from judge.store.models import CallbackAttempt, IdempotencyRecord, Submission, SubmissionEvent

#: The ``store`` fixture: SQLite and a real PostgreSQL (tests/stores.py).
pytest_plugins = ("tests.stores",)


def new(key: str | None = "k", **kw: object) -> NewSubmission:
    return NewSubmission(problem="p", code="def f(x):\n    return x\n", manifest={}, key_name=key, **kw)  # type: ignore[arg-type]


def finish(store: Store, sid: str, verdict: str = "accepted") -> None:
    claim = store.attempts.claim(sid)
    assert claim is not None
    assert store.attempts.finish(claim, {"verdict": verdict}, verdict, {}, ("result", {"status": "done"}))


def test_pages_are_stable_newest_first_and_filtered(store: Store) -> None:
    ids = [
        store.submissions.create(new(external_user=f"u{i % 2}", tags={"c": str(i % 3)})).id for i in range(9)
    ]
    store.submissions.create(new("other"))
    # Several rows may share one created_at: the id breaks the tie, so no page repeats or skips one.
    same = datetime(2026, 1, 1, tzinfo=UTC)
    with store.engine.begin() as connection:
        connection.execute(update(Submission).where(Submission.id.in_(ids[:4])).values(created_at=same))
    for sid in ids[::2]:
        finish(store, sid, "wrong_answer")
    mine = SubmissionFilter(key_id="k")
    seen: list[str] = []
    after: Cursor | None = None
    while True:
        page = store.listing.page(mine, after=after, limit=2)
        if not page:
            break
        assert all(r.code == "" and r.result is None for r in page)  # the heavy columns stay unread
        seen += [r.id for r in page]
        after = Cursor(page[-1].created_at, page[-1].id)
    assert sorted(seen) == sorted(ids) and len(seen) == len(set(seen))
    full = store.listing.page(mine, limit=100, heavy=("code", "result"))
    assert [r.id for r in full] == seen and all(r.code for r in full)
    assert store.listing.count_matching(mine) == 9
    assert store.listing.count_matching(SubmissionFilter("k", external_user="u0")) == 5
    assert store.listing.count_matching(SubmissionFilter("k", verdict="wrong_answer")) == 5
    assert store.listing.count_matching(SubmissionFilter("k", status=Status.QUEUED)) == 4
    assert store.listing.count_matching(SubmissionFilter("k", tag=("c", "1"))) == 3
    assert (
        store.listing.count_matching(SubmissionFilter("k", created_before=same + timedelta(seconds=1))) == 4
    )
    assert store.listing.count_matching(SubmissionFilter("nobody")) == 0


def test_one_idempotency_key_per_scope_even_when_writers_race(store: Store) -> None:
    key = IdempotencyKey("key:k", "once", "h" * 64)
    won: list[str] = []
    lost: list[str] = []
    barrier = threading.Barrier(6)

    def create() -> None:
        barrier.wait()
        try:
            won.append(store.submissions.create(new(), key).id)
        except IdempotencyTaken:
            lost.append("taken")

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(lost) == 5
    assert len(store.submissions.ids()) == 1  # the losers stored nothing
    since = datetime.now(UTC) - timedelta(hours=1)
    hit = store.idempotency.live("key:k", "once", since)
    assert hit is not None and hit.submission_id == won[0] and hit.body_hash == "h" * 64
    assert store.idempotency.live("key:other", "once", since) is None  # scoped
    assert (
        store.idempotency.live("key:k", "once", datetime.now(UTC) + timedelta(seconds=1)) is None
    )  # expired
    assert store.idempotency.expire(datetime.now(UTC) + timedelta(seconds=1)) == 1


def test_delete_purge_and_erase_take_everything_of_a_submission(store: Store) -> None:
    a, b, c = (
        store.submissions.create(new(external_user=u), IdempotencyKey("key:k", u, "x")).id for u in "abc"
    )
    for sid in (a, b, c):
        finish(store, sid)
        store.callbacks.record_attempt(sid, 1, "http://h/cb", 200, None)
    assert store.deletion.delete(a) and not store.deletion.delete(a)
    with store.engine.begin() as connection:
        connection.execute(
            update(Submission)
            .where(Submission.id == b)
            .values(finished_at=datetime.now(UTC) - timedelta(days=10))
        )
    assert store.deletion.purge_finished(datetime.now(UTC) - timedelta(days=5)) == 1
    assert store.deletion.erase_user("other-key", "c") == 0 and store.deletion.erase_user("k", "c") == 1
    with store.engine.connect() as connection:
        for model in (Submission, SubmissionEvent, CallbackAttempt, IdempotencyRecord):
            assert connection.scalar(select(func.count()).select_from(model)) == 0, model


def test_a_deleted_submission_is_never_graded_or_stored(store: Store) -> None:
    sid = store.submissions.create(new()).id
    claim = store.attempts.claim(sid)
    assert isinstance(claim, Claim) and store.deletion.delete(sid)
    assert not store.attempts.finish(claim, {}, "accepted", {}, ("result", {}))
    assert store.attempts.claim(sid) is None and store.submissions.get(sid) is None


def test_quotas_hold_when_writers_race(store: Store) -> None:
    """Per-owner caps are counted with the new row in its transaction: twelve writers at once (as many
    API nodes would be) store exactly what the caps allow, for a key and for a keyless address."""
    quota = Quota(unfinished=5, queued=3)
    results: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(12)

    def create(submission: NewSubmission) -> None:
        barrier.wait()
        try:
            store.submissions.create(submission, quota=quota)
            outcome = "stored"
        except QuotaExceeded as exc:
            outcome = exc.limit
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=create, args=(new(),)) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count("stored") == 3 and results.count("queue_share") == 9
    # Running ones count against unfinished only: 3 running + 2 queued = the 5 unfinished allowed.
    for sid in store.submissions.ids():
        assert store.attempts.claim(sid) is not None
    store.submissions.create(new(), quota=quota)
    store.submissions.create(new(), quota=quota)
    with pytest.raises(QuotaExceeded) as refused:
        store.submissions.create(new(), quota=quota)
    assert refused.value.limit == "submissions_per_client" and refused.value.count == 5
    assert store.submissions.owner_counts("k", None) == {Status.QUEUED: 2, Status.RUNNING: 3}
    # Another key, and a keyless address, have caps of their own; an address does not count a key's.
    store.submissions.create(new("other"), quota=quota)
    for _ in range(3):
        store.submissions.create(new(None, client_address="10.0.0.1"), quota=quota)
    with pytest.raises(QuotaExceeded):
        store.submissions.create(new(None, client_address="10.0.0.1"), quota=quota)
    assert store.submissions.owner_counts(None, "10.0.0.1")[Status.QUEUED] == 3


def test_a_capped_claim_defers_past_the_owners_gradings(store: Store) -> None:
    """claim_within: at most ``cap`` of one owner's submissions run at once, even when claims race (as
    grading nodes would); the deferred ones stay queued and another owner is not held back."""
    mine = [store.submissions.create(new()).id for _ in range(8)]
    theirs = store.submissions.create(new("other")).id
    outcomes: list[object] = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(mine))

    def claim(sid: str) -> None:
        barrier.wait()
        outcome = store.attempts.claim_within(sid, "node-a", 2)
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=claim, args=(sid,)) for sid in mine]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    claims = [o for o in outcomes if isinstance(o, Claim)]
    assert len(claims) == 2 and all(
        isinstance(o, Deferred) and o.running == 2 for o in outcomes if o not in claims
    )
    assert store.submissions.owner_counts("k", None) == {Status.QUEUED: 6, Status.RUNNING: 2}
    assert isinstance(store.attempts.claim_within(theirs, "node-a", 2), Claim)
    claim_one = claims[0]
    assert isinstance(claim_one, Claim)
    assert store.attempts.finish(claim_one, {}, "accepted", {}, ("result", {}))
    deferred = next(sid for sid in mine if store.submissions.get(sid).status is Status.QUEUED)  # type: ignore[union-attr]
    assert isinstance(store.attempts.claim_within(deferred, "node-b", 2), Claim)
    # A deferred claim changed nothing: no attempt was counted.
    assert all(store.submissions.get(sid).attempts <= 1 for sid in mine)  # type: ignore[union-attr]
