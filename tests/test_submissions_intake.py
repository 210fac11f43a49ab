"""The submission intake (``judge.submissions.intake``) without HTTP, on a real store (SQLite and
PostgreSQL): a new submission takes a place in the queue and is stored once; a retry with the same key and
body answers it; another body is a typed conflict; a key deleted with its submission is free again; a
refused quota or a full queue stores nothing and gives the place back."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext

import pytest

from judge.dispatch import QueueFull
from judge.dispatch.base import Reservation
from judge.store import IdempotencyKey, NewSubmission, Quota, QuotaExceeded, Store
from judge.submissions import intake
from judge.submissions.callbacks import check_redeliverable
from judge.submissions.refusals import IdempotencyConflict, NotRedeliverable
from judge.submissions.streams import StreamLease

#: The ``store`` fixture: SQLite and a real PostgreSQL (tests/stores.py).
pytest_plugins = ("tests.stores",)

ROOMY = Quota(unfinished=100, queued=100)


class Places:
    """A queue of ``room`` places: the reservations it handed out, committed or given back."""

    def __init__(self, room: int = 10) -> None:
        self.room = room
        self.committed: list[str] = []
        self.cancelled = 0

    def reserve(self) -> Reservation:
        if self.room <= len(self.committed):
            raise QueueFull("the grading queue is full", retry_after=3)
        places = self

        class Held(Reservation):
            def commit(self, submission_id: str) -> None:
                places.committed.append(submission_id)

            def cancel(self) -> None:
                places.cancelled += 1

        return Held()


def no_lock() -> AbstractContextManager[object]:
    return nullcontext()


def made(store: Store, places: Places, quota: Quota = ROOMY) -> intake.Intake:
    return intake.Intake(store, places.reserve, quota, idempotency_ttl_s=3600, owner_lock=no_lock)


def new(code: str = "def f(x):\n    return x\n") -> NewSubmission:
    return NewSubmission(problem="p", code=code, manifest={}, key_name="k", key_id="k")


def test_a_retry_with_the_same_key_and_body_answers_the_stored_submission(store: Store) -> None:
    places = Places()
    accept = made(store, places).accept
    key = IdempotencyKey(intake.scope("key", "k"), "once", intake.body_hash({"code": "a"}))
    first, created = accept(new, key)
    again, created_again = accept(new, key)
    assert created and not created_again and again.id == first.id
    assert places.committed == [first.id] and store.submissions.ids() == [first.id]


def test_another_body_under_the_same_key_is_a_conflict_that_names_the_key(store: Store) -> None:
    accept = made(store, Places()).accept
    accept(new, IdempotencyKey("key:k", "once", intake.body_hash({"code": "a"})))
    with pytest.raises(IdempotencyConflict) as refused:
        accept(new, IdempotencyKey("key:k", "once", intake.body_hash({"code": "b"})))
    assert refused.value.names_key and "'once' was used for another request body" in refused.value.message
    assert len(store.submissions.ids()) == 1


def test_a_key_whose_submission_was_deleted_makes_a_new_submission(store: Store) -> None:
    accept = made(store, Places()).accept
    key = IdempotencyKey("key:k", "gone", "h" * 64)
    record, _ = accept(new, key)
    store.deletion.delete(record.id)  # its key goes with it: a new submission, not a conflict
    again, created = accept(new, key)
    assert created and again.id != record.id


def test_a_refused_quota_stores_nothing_and_gives_the_place_back(store: Store) -> None:
    places = Places()
    accept = made(store, places, Quota(unfinished=1, queued=1)).accept
    accept(new, None)
    with pytest.raises(QuotaExceeded) as refused:
        accept(new, None)
    assert refused.value.limit == "submissions_per_client"
    assert places.cancelled == 1 and len(places.committed) == 1 and len(store.submissions.ids()) == 1


def test_a_full_queue_stores_nothing(store: Store) -> None:
    accept = made(store, Places(room=0)).accept
    with pytest.raises(QueueFull):
        accept(new, None)
    assert store.submissions.ids() == []


def test_concurrent_requests_with_one_key_store_one_submission(store: Store) -> None:
    places = Places(room=100)
    accept = made(store, places).accept
    key = IdempotencyKey("key:k", "race", "h" * 64)
    barrier = threading.Barrier(4)
    answers: list[str] = []

    def post() -> None:
        barrier.wait()
        answers.append(accept(new, key)[0].id)

    threads = [threading.Thread(target=post) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(answers)) == 1 and len(store.submissions.ids()) == 1 and len(places.committed) == 1


def test_a_callback_is_redelivered_only_once_the_submission_finished(store: Store) -> None:
    plain = store.submissions.create(new())
    with pytest.raises(NotRedeliverable) as refused:
        check_redeliverable(plain)
    assert refused.value.reason == "no_callback"
    called = store.submissions.create(
        NewSubmission(problem="p", code="x", manifest={}, callback_url="https://example.test/hook")
    )
    with pytest.raises(NotRedeliverable) as refused:
        check_redeliverable(called)
    assert refused.value.reason == "not_finished" and "queued" in refused.value.message


def test_a_stream_lease_is_released_once() -> None:
    released: list[str] = []

    class Shares:
        def release(self, owner: str) -> None:
            released.append(owner)

    lease = StreamLease(Shares(), "client")
    lease.release()
    lease.release()
    assert released == ["client"]
