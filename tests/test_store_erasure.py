"""Erased means erased: after a delete, a user's erasure or a retention purge, none of the submission's
bytes (its code, external user, tags, result, events) is left in any file of the SQLite store, the
write-ahead log included, read back byte by byte (issue: erased data stayed in the WAL, 3-6 copies)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from judge.store import Store, sqlite_url
from judge.store.accounts import AccountStore
from judge.store.models import utcnow
from judge.store.records import NewSubmission

#: ``database_url``: SQLite and a real PostgreSQL (tests/stores.py).
pytest_plugins = ("tests.stores",)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(folder: Path) -> Iterator[Store]:
    store = Store(sqlite_url(folder / "judge.sqlite3"))
    store.migrate()
    try:
        yield store
    finally:
        store.close()


def files_holding(folder: Path, marker: bytes) -> list[str]:
    """The files of ``folder`` (the database, its -wal and -shm) whose bytes contain ``marker``."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and marker in p.read_bytes())


def submit(store: Store, marker: str, *, user: str) -> str:
    """A finished submission carrying ``marker`` in its code (long: overflow pages too), tags, external
    user, result and events."""
    code = f"def f(x):\n    # {marker}\n    return x\n" + f"# {marker} padding\n" * 400
    record = store.submissions.create(
        NewSubmission(
            problem="some-problem",
            code=code,
            manifest={"m": 1},
            external_user=user,
            tags={"cohort": marker},
        )
    )
    claim = store.attempts.claim(record.id)
    assert claim is not None
    store.events.append(claim, "case", {"message": marker})
    assert store.attempts.finish(
        claim, {"verdict": "accepted", "note": marker}, "accepted", {}, ("result", {"m": marker})
    )
    return record.id


def erase_by_delete(store: Store, sid: str, user: str, cut: datetime) -> None:
    assert store.deletion.delete(sid)


def erase_by_user(store: Store, sid: str, user: str, cut: datetime) -> None:
    assert store.deletion.erase_user(None, user) == 1


def erase_by_retention(store: Store, sid: str, user: str, cut: datetime) -> None:
    assert store.deletion.purge_finished(cut) == 1  # finished before ``cut``: the erased one only


def test_an_erased_account_leaves_no_name_code_or_submission_in_the_files(store: Store, folder: Path) -> None:
    accounts = AccountStore(store)
    name, marker = f"learner-{uuid.uuid4().hex[:12]}", f"gone-{uuid.uuid4().hex}"
    account = accounts.create(name, "$argon2id$not-a-real-hash")
    sid = submit(store, marker, user="u")
    accounts.link(account.id, sid, "some-problem")
    accounts.save_code(account.id, "some-problem", f"# {marker} last code")
    assert files_holding(folder, marker.encode()) and files_holding(folder, name.encode())
    assert accounts.erase(account.id) is not None
    for gone in (marker, name, sid, account.id):
        assert files_holding(folder, gone.encode()) == [], gone


@pytest.mark.parametrize("erase", [erase_by_delete, erase_by_user, erase_by_retention])
def test_erased_bytes_are_in_no_file_of_the_store(
    store: Store, folder: Path, erase: Callable[[Store, str, str, datetime], None]
) -> None:
    kept_marker, gone_marker = f"kept-{uuid.uuid4().hex}", f"gone-{uuid.uuid4().hex}"
    gone_user = f"user-{uuid.uuid4().hex}"
    sid = submit(store, gone_marker, user=gone_user)
    cut = utcnow() + timedelta(microseconds=1)
    submit(store, kept_marker, user="someone-else")
    before = files_holding(folder, gone_marker.encode())
    assert before, "the marker must be in the files before (else the test proves nothing)"
    assert files_holding(folder, gone_user.encode())
    erase(store, sid, gone_user, cut)
    assert files_holding(folder, gone_marker.encode()) == []
    assert files_holding(folder, gone_user.encode()) == []
    assert files_holding(folder, sid.encode()) == []
    assert store.submissions.get(sid) is None
    kept = files_holding(folder, kept_marker.encode())
    assert kept, "the other submission is still there"


def test_the_store_scrubs_while_a_reader_holds_an_old_snapshot_once_it_lets_go(
    store: Store, folder: Path
) -> None:
    """A reader in the middle of a transaction keeps the log busy: the scrub waits (bounded) and says so;
    the next one, after the reader is gone, takes the bytes out."""
    marker = f"gone-{uuid.uuid4().hex}"
    sid = submit(store, marker, user="u")
    with store.engine.connect() as reader:
        reader.exec_driver_sql("BEGIN")
        reader.exec_driver_sql("SELECT count(*) FROM submissions").fetchone()
        with store.engine.begin() as writer:
            writer.exec_driver_sql("DELETE FROM submission_events WHERE submission_id = ?", (sid,))
            writer.exec_driver_sql("DELETE FROM submissions WHERE id = ?", (sid,))
        from judge.store.scrub import scrub

        assert scrub(store.engine, wait_s=0.3) is False
        reader.exec_driver_sql("COMMIT")
    assert store.scrub() is True
    assert files_holding(folder, marker.encode()) == []


def test_a_deletion_on_postgresql_vacuums_the_tables(database_url: str) -> None:
    """On PostgreSQL the scrub is a VACUUM of the submission tables (docs/api.md says what remains)."""
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only")
    store = Store(database_url)
    store.migrate()
    try:
        sid = submit(store, f"gone-{uuid.uuid4().hex}", user="u")
        assert store.deletion.delete(sid) and store.submissions.get(sid) is None
        assert store.scrub() is True
        with store.engine.connect() as connection:
            vacuumed = connection.exec_driver_sql(
                "SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'submissions'"
            ).scalar()
        assert vacuumed is not None
    finally:
        store.close()
