"""The repository: every read and write of submissions, events and callback attempts.

Thread-safe: each method runs in its own short transaction. Status changes are conditional UPDATEs, so two
graders can never both write a result:

    claim(id)           queued  -> running   (attempts + 1; the attempt's Claim is the write token)
    finish(claim, ...)  running -> done      only while the claim's attempt is the current one
    fail(claim, ...)    running -> failed    likewise
    release(claim)      running -> queued    a retry after a judge-side failure (``refund``: not counted)
    recover()           running -> queued    on start: work of a process that died is queued again

Distributed dispatch adds grading nodes (``heartbeat``, ``nodes``) and, because several nodes grade at once,
never ``recover()``: instead each claim records its node, and

    release_node(node)      running -> queued    a node hands back its own work (shutdown)
    reclaim_lost(cutoff)    running -> queued    work of nodes whose heartbeat stopped before ``cutoff``
    requeue_stale(cutoff)   queued (no message published since ``cutoff``): to be published again
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Engine,
    and_,
    create_engine,
    delete,
    event,
    func,
    inspect,
    or_,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, defer, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from judge.store import listing
from judge.store.eventlog import fold, folded, unfold
from judge.store.models import (
    AccountSubmission,
    CallbackAttempt,
    Grading,
    GradingNode,
    IdempotencyRecord,
    Submission,
    SubmissionEvent,
    SubmissionTag,
    utcnow,
)
from judge.store.records import (
    CallbackState,
    Claim,
    Cursor,
    Deferred,
    EventRecord,
    IdempotencyHit,
    IdempotencyKey,
    IdempotencyTaken,
    NewSubmission,
    NodeBeat,
    NodeRecord,
    NodeState,
    Quota,
    QuotaExceeded,
    Status,
    SubmissionFilter,
    SubmissionRecord,
)
from judge.store.scrub import SECURE_DELETE, scrub

#: Columns a listing leaves out unless asked for (the bulk of a row: up to 64 KB of code, ~12 KB of result).
HEAVY_COLUMNS = ("code", "result")

#: Most submissions ``Store.total`` counts exactly; past it a count says "more than this many"
#: (``total_capped`` of a listing): an exact count of a million rows scans a million index entries.
COUNT_MAX = 10_000

#: Seconds a callback sender holds a callback it took (``take_callback``), by default; and how long a
#: finished submission's pending callback may wait for its first try before an API node takes it over.
CALLBACK_LEASE_S = 120.0

#: Seconds a SQLite writer waits for another writer's lock before it fails.
SQLITE_BUSY_TIMEOUT_S = 30


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def database_url(configured: str | None, data_dir: Path) -> str:
    """The database of a service or grading node: the ``database_url`` setting, else the SQLite file in its
    ``data_dir``."""
    return configured or sqlite_url(data_dir.resolve() / "judge.sqlite3")


def _sqlite_pragmas(synchronous: str) -> Callable[[Any, ConnectionPoolEntry], None]:
    def apply(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(SECURE_DELETE)
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
        finally:
            cursor.close()

    return apply


def make_engine(url: str, *, durable: bool = True) -> Engine:
    """An SQLAlchemy engine for ``url``; SQLite files get WAL, foreign keys and a busy timeout.

    ``durable``: SQLite syncs every commit to disk (``synchronous=FULL``), so what a 202 promised survives
    a power cut. Without it (``NORMAL``) a commit survives a killed process but maybe not a power cut:
    good enough for progress events, which a regrade rewrites anyway.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas("FULL" if durable else "NORMAL"))
        return engine
    return create_engine(url, pool_pre_ping=True)


def _record(row: Submission) -> SubmissionRecord:
    """The row as a record; a listing's deferred columns (``HEAVY_COLUMNS``) read as empty."""
    unloaded = inspect(row).unloaded
    return SubmissionRecord(
        id=row.id,
        problem=row.problem,
        code="" if "code" in unloaded else row.code,
        status=Status(row.status),
        verdict=row.verdict,
        result=None if "result" in unloaded else row.result,
        error=row.error,
        attempts=row.attempts,
        manifest=row.manifest,
        key_name=row.key_name,
        key_id=row.key_id,
        client_address=row.client_address,
        callback_url=row.callback_url,
        callback_state=CallbackState(row.callback_state) if row.callback_state else None,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        node=row.node,
        external_user=row.external_user,
        tags=row.tags,
        regrade_of=row.regrade_of,
        grading=row.grading or 1,
    )


def _owner(key_id: str | None, address: str | None) -> list[Any] | None:
    """The conditions that select one owner's submissions: an API key's id, or a keyless client's
    address (kept while unfinished); None when there is no owner to count (a keyless regrade)."""
    if key_id is not None:
        return [Submission.key_id == key_id]
    if address is not None:
        return [Submission.key_id.is_(None), Submission.client_address == address]
    return None


def _owner_lock_key(key_id: str | None, address: str | None) -> int:
    """A signed 64-bit advisory-lock key for one owner (PostgreSQL)."""
    owner = f"key:{key_id}" if key_id is not None else f"address:{address}"
    return int.from_bytes(hashlib.sha256(f"judge-owner:{owner}".encode()).digest()[:8], "big", signed=True)


class _Refused(Exception):
    """Rolls a transaction back from inside ``with self._session()``."""

    def __init__(self, outcome: Deferred | QuotaExceeded) -> None:
        super().__init__()
        self.outcome = outcome


def _node(row: GradingNode) -> NodeRecord:
    values = {f.name: getattr(row, f.name) for f in fields(NodeRecord)}
    return NodeRecord(**{**values, "state": NodeState(row.state)})


def _event(row: SubmissionEvent) -> EventRecord:
    return EventRecord(
        id=row.id,
        submission_id=row.submission_id,
        attempt=row.attempt,
        kind=row.kind,
        data=row.data,
        created_at=row.created_at,
    )


class Store:
    """Submissions in one database. ``Store(url)`` connects; ``migrate()`` brings the schema to head."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # Progress events are many small commits: on SQLite they go through connections that do not
        # fsync each one (the final event is written with the result, durably); on PostgreSQL their
        # transactions do not wait for the WAL flush (synchronous_commit off).
        self._events_engine = make_engine(url, durable=False) if self.dialect == "sqlite" else self.engine
        self._event_sessions = sessionmaker(self._events_engine, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def migrate(self) -> None:
        """Apply every Alembic migration that this database has not seen yet."""
        from judge.store.migrate import upgrade

        upgrade(self.engine)

    def close(self) -> None:
        self.engine.dispose()
        self._events_engine.dispose()

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    def transaction(self) -> AbstractContextManager[Session]:
        """One short transaction, for the store's other tables (``judge.store.accounts``)."""
        return self._session()

    def delete_ids(self, session: Session, ids: Sequence[str]) -> int:
        """Remove these submissions with their events, callback attempts, idempotency keys and account
        links, inside ``session``'s transaction; how many submissions went."""
        return self._delete_ids(session, ids) if ids else 0

    # ------------------------------------------------------------------------------------ submissions

    def create(
        self,
        new: NewSubmission,
        idempotency: IdempotencyKey | None = None,
        quota: Quota | None = None,
    ) -> SubmissionRecord:
        """Store an accepted submission as ``queued`` and return it (with its new id).

        ``idempotency``: stored in the same transaction, naming the new submission; raises
        IdempotencyTaken (nothing stored) when a live record of that key exists already (a concurrent
        request won: look it up). Call ``expire_idempotency`` first so that an expired one is gone.

        ``quota``: its owner's caps, counted with the new row in the same transaction (the row is
        written first, which takes SQLite's write lock; PostgreSQL takes an advisory lock per owner),
        so concurrent API nodes cannot pass them together; raises QuotaExceeded (nothing stored).
        """
        row = Submission(
            id=str(uuid.uuid4()),
            problem=new.problem,
            code=new.code,
            status=Status.QUEUED.value,
            attempts=0,
            manifest=new.manifest,
            key_name=new.key_name,
            key_id=new.key_id if new.key_id is not None else new.key_name,
            client_address=new.client_address,
            callback_url=new.callback_url,
            callback_state=CallbackState.PENDING.value if new.callback_url else None,
            created_at=utcnow(),
            external_user=new.external_user,
            tags=dict(new.tags) if new.tags else None,
            regrade_of=new.regrade_of,
        )
        owner = _owner(row.key_id, row.client_address)
        try:
            with self._session() as session:
                session.add(row)
                session.add_all(
                    SubmissionTag(
                        submission_id=row.id,
                        name=name,
                        value=value,
                        key_id=row.key_id,
                        problem=row.problem,
                        created_at=row.created_at,
                        status=row.status,
                        verdict=row.verdict,
                    )
                    for name, value in (row.tags or {}).items()
                )
                if quota is not None and owner is not None:
                    session.flush()
                    self._lock_owner(session, row.key_id, row.client_address)
                    counts = self._status_counts(session, owner)
                    unfinished = counts.get(Status.QUEUED.value, 0) + counts.get(Status.RUNNING.value, 0)
                    if unfinished > quota.unfinished:
                        raise _Refused(
                            QuotaExceeded("submissions_per_client", unfinished - 1, quota.unfinished)
                        )
                    if counts.get(Status.QUEUED.value, 0) > quota.queued:
                        queued = counts[Status.QUEUED.value] - 1
                        raise _Refused(QuotaExceeded("queue_share", queued, quota.queued))
                if idempotency is not None:
                    session.flush()  # the submission first: the key's foreign key names it
                    session.add(
                        IdempotencyRecord(
                            scope=idempotency.scope,
                            key=idempotency.key,
                            body_hash=idempotency.body_hash,
                            submission_id=row.id,
                            created_at=row.created_at,
                        )
                    )
        except IntegrityError:
            if idempotency is None:
                raise
            raise IdempotencyTaken(idempotency.key) from None
        except _Refused as refused:
            assert isinstance(refused.outcome, QuotaExceeded)
            raise refused.outcome from None
        return _record(row)

    def _lock_owner(self, session: Session, key_id: str | None, address: str | None) -> None:
        """Serialize one owner's quota checks until the transaction ends (PostgreSQL; SQLite's single
        writer already does)."""
        if self.dialect == "postgresql":
            session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _owner_lock_key(key_id, address)})

    @staticmethod
    def _status_counts(session: Session, owner: list[Any]) -> dict[str, int]:
        """The owner's queued and running submissions, regrades left out (a submission graded before has
        a ``finished_at``): an operator's regrade of a problem never holds a learner's own submissions
        back (the submit caps, ``gradings_per_client``); a learner's own regrade is counted when it is
        asked for (``judge.store.gradings``)."""
        unfinished = Submission.status.in_((Status.QUEUED.value, Status.RUNNING.value))
        first = Submission.finished_at.is_(None)
        query = (
            select(Submission.status, func.count())
            .where(unfinished, first, *owner)
            .group_by(Submission.status)
        )
        return {status: int(n) for status, n in session.execute(query)}

    def owner_counts(self, key_id: str | None, address: str | None) -> dict[Status, int]:
        """Queued and running submissions of one owner (an API key's id, or a keyless address)."""
        owner = _owner(key_id, address)
        if owner is None:
            return {Status.QUEUED: 0, Status.RUNNING: 0}
        with self._session() as session:
            counts = self._status_counts(session, owner)
        return {s: counts.get(s.value, 0) for s in (Status.QUEUED, Status.RUNNING)}

    # ------------------------------------------------------------------------------------ idempotency

    def idempotent(self, scope: str, key: str, since: datetime) -> IdempotencyHit | None:
        """The live record (created at or after ``since``) of an idempotency key in ``scope``, if any."""
        query = select(IdempotencyRecord).where(
            IdempotencyRecord.scope == scope,
            IdempotencyRecord.key == key,
            IdempotencyRecord.created_at >= since,
        )
        with self._session() as session:
            row = session.scalar(query)
            return None if row is None else IdempotencyHit(row.submission_id, row.body_hash, row.created_at)

    def expire_idempotency(self, before: datetime, scope: str | None = None, key: str | None = None) -> int:
        """Forget idempotency keys created before ``before`` (only that one key when given); how many."""
        query = delete(IdempotencyRecord).where(IdempotencyRecord.created_at < before)
        if scope is not None and key is not None:
            query = query.where(IdempotencyRecord.scope == scope, IdempotencyRecord.key == key)
        with self._session() as session:
            return int(getattr(session.execute(query), "rowcount", 0) or 0)

    # ------------------------------------------------------------------------------------ listing

    def page(
        self,
        chosen: SubmissionFilter,
        *,
        after: Cursor | None = None,
        limit: int = 50,
        heavy: Sequence[str] = (),
    ) -> list[SubmissionRecord]:
        """Up to ``limit`` submissions matching ``chosen``, newest first (created_at, then id, both
        descending: a stable order), strictly after ``after``. Columns of ``HEAVY_COLUMNS`` not named
        in ``heavy`` are not read (they read as empty)."""
        # The page's ids first, from the indexes alone (every filter's column is in its index), then
        # their rows: the database never reads the row of a submission that is not on the page (joining
        # a tag's rows to a common problem's, by hash, read 8,000 rows for 50).
        ids, created, ident = listing.matching(chosen)
        if after is not None:
            # A row-value comparison: both databases read it as one range of the (key, created_at, id)
            # index (the equivalent OR of two conditions made PostgreSQL scan half the key's rows).
            ids = ids.where(tuple_(created, ident) < tuple_(after.created_at, after.id))
        on_page = ids.order_by(created.desc(), ident.desc()).limit(limit).subquery()
        skipped = [defer(getattr(Submission, name)) for name in HEAVY_COLUMNS if name not in heavy]
        query = (
            select(Submission)
            .join(on_page, on_page.c.id == Submission.id)
            .order_by(Submission.created_at.desc(), Submission.id.desc())
            .options(*skipped)
        )
        with self._session() as session:
            return [_record(row) for row in session.scalars(query)]

    def count_matching(self, chosen: SubmissionFilter) -> int:
        """How many submissions match ``chosen`` (every page together), exactly: a scan of every match."""
        query = select(func.count()).select_from(listing.matching(chosen)[0].subquery())
        with self._session() as session:
            return int(session.scalar(query) or 0)

    def total(self, chosen: SubmissionFilter, most: int | None = None) -> tuple[int, bool]:
        """(how many submissions match ``chosen``, False) when at most ``most`` (COUNT_MAX) do; else
        (``most``, True): counting stops past ``most`` matches, so a count costs what ``most`` index
        entries cost however many rows match (``count=true`` of a listing)."""
        most = COUNT_MAX if most is None else most
        capped = listing.matching(chosen)[0].limit(most + 1).subquery()
        with self._session() as session:
            found = int(session.scalar(select(func.count()).select_from(capped)) or 0)
        return (most, True) if found > most else (found, False)

    # ------------------------------------------------------------------------------------ deletion

    def _delete_ids(self, session: Session, ids: Sequence[str]) -> int:
        # Explicit rather than relying on ON DELETE CASCADE alone (SQLite needs foreign_keys=ON for it).
        for model in (
            SubmissionEvent,
            CallbackAttempt,
            IdempotencyRecord,
            AccountSubmission,
            Grading,
            SubmissionTag,
        ):
            session.execute(delete(model).where(model.submission_id.in_(ids)))
        result = session.execute(delete(Submission).where(Submission.id.in_(ids)))
        return int(getattr(result, "rowcount", 0) or 0)

    def delete(self, submission_id: str) -> bool:
        """Remove a submission with its events, callback attempts and idempotency key; False if absent.
        Like every deletion, it is gone from the store's files too when this returns (``scrub``)."""
        with self._session() as session:
            removed = self._delete_ids(session, [submission_id]) == 1
        if removed:
            self.scrub()
        return removed

    def scrub(self) -> bool:
        """Take what deletions left out of the store's files (``judge.store.scrub``)."""
        return scrub(self.engine)

    def purge_finished(self, before: datetime, batch: int = 500) -> int:
        """Remove finished submissions (done or failed) that finished before ``before``; how many."""
        finished = Submission.status.in_([Status.DONE.value, Status.FAILED.value])
        total = 0
        while True:
            with self._session() as session:
                ids = list(
                    session.scalars(
                        select(Submission.id).where(finished, Submission.finished_at < before).limit(batch)
                    )
                )
                if not ids:
                    break
                total += self._delete_ids(session, ids)
        if total:
            self.scrub()
        return total

    def erase_user(self, key_id: str | None, external_user: str, batch: int = 500) -> int:
        """Remove every submission of one external user of one API key (its id; any status); how many."""
        owner = Submission.key_id.is_(None) if key_id is None else Submission.key_id == key_id
        total = 0
        while True:
            with self._session() as session:
                ids = list(
                    session.scalars(
                        select(Submission.id)
                        .where(owner, Submission.external_user == external_user)
                        .limit(batch)
                    )
                )
                if not ids:
                    break
                total += self._delete_ids(session, ids)
        if total:
            self.scrub()
        return total

    def get(self, submission_id: str) -> SubmissionRecord | None:
        with self._session() as session:
            row = session.get(Submission, submission_id)
            return None if row is None else _record(row)

    def count(self, status: Status | None = None) -> int:
        query = select(func.count()).select_from(Submission)
        if status is not None:
            query = query.where(Submission.status == status.value)
        with self._session() as session:
            return int(session.scalar(query) or 0)

    def oldest_queued_age(self) -> float:
        """Seconds since the oldest queued submission was created (0 when none is queued)."""
        query = select(func.min(Submission.created_at)).where(Submission.status == Status.QUEUED.value)
        with self._session() as session:
            oldest = session.scalar(query)
        if oldest is None:
            return 0.0
        if oldest.tzinfo is None:  # SQLite's MIN() bypasses the column type: naive UTC
            oldest = oldest.replace(tzinfo=UTC)
        return max(0.0, (utcnow() - oldest).total_seconds())

    def unfinished(self) -> list[str]:
        """Ids of queued submissions, oldest first."""
        query = (
            select(Submission.id)
            .where(Submission.status == Status.QUEUED.value)
            .order_by(Submission.created_at, Submission.id)
        )
        with self._session() as session:
            return list(session.scalars(query))

    def recover(self) -> list[str]:
        """Queue again what was running when its grader died; then every queued id, oldest first.

        Only for a dispatcher that knows no other grader is alive (the in-process one, at start).
        """
        with self._session() as session:
            session.execute(
                update(Submission)
                .where(Submission.status == Status.RUNNING.value)
                .values(status=Status.QUEUED.value)
            )
        return self.unfinished()

    def claim(self, submission_id: str, node: str | None = None) -> Claim | None:
        """``queued -> running`` for one grader; None when it is not queued (taken, finished, unknown).

        ``node``: the grading node that takes it (distributed dispatch), recorded so that its work is
        queued again if it dies. The earlier attempt's progress events are dropped: a stream shows the
        attempt that counts.
        """
        claimed = self.claim_within(submission_id, node, None)
        assert not isinstance(claimed, Deferred)
        return claimed

    def claim_within(
        self, submission_id: str, node: str | None, gradings_cap: int | None
    ) -> Claim | Deferred | None:
        """``claim``, unless its owner already has ``gradings_cap`` gradings running (on any node): then
        Deferred, and it stays queued. The claim is written first and the owner's running gradings
        counted after it in the same transaction (under an advisory lock per owner on PostgreSQL), so
        nodes claiming at once cannot pass the cap together."""
        try:
            with self._session() as session:
                claimed = session.execute(
                    update(Submission)
                    .where(Submission.id == submission_id, Submission.status == Status.QUEUED.value)
                    .values(
                        status=Status.RUNNING.value,
                        attempts=Submission.attempts + 1,
                        started_at=utcnow(),
                        node=node,
                    )
                    .returning(Submission.attempts, Submission.key_id, Submission.client_address)
                ).first()
                if claimed is None:
                    return None
                attempt, key_id, address = claimed
                owner = _owner(key_id, address)
                if gradings_cap is not None and owner is not None:
                    self._lock_owner(session, key_id, address)
                    running = self._status_counts(session, owner).get(Status.RUNNING.value, 0)
                    if running > gradings_cap:
                        raise _Refused(Deferred(running - 1))
                session.execute(delete(SubmissionEvent).where(SubmissionEvent.submission_id == submission_id))
                return Claim(submission_id, int(attempt))
        except _Refused as refused:
            assert isinstance(refused.outcome, Deferred)
            return refused.outcome

    def _settle(self, claim: Claim, values: dict[str, Any], final: tuple[str, dict[str, Any]] | None) -> bool:
        with self._session() as session:
            done = session.scalar(
                update(Submission)
                .where(
                    Submission.id == claim.submission_id,
                    Submission.status == Status.RUNNING.value,
                    Submission.attempts == claim.attempt,
                )
                .values(**values)
                .returning(Submission.id)
            )
            if done is None:
                return False
            if final is not None:
                # The attempt's progress events are folded into the final one (``eventlog``).
                attempt = (SubmissionEvent.submission_id == claim.submission_id) & (
                    SubmissionEvent.attempt == claim.attempt
                )
                earlier = session.execute(
                    select(SubmissionEvent.id, SubmissionEvent.kind, SubmissionEvent.data)
                    .where(attempt)
                    .order_by(SubmissionEvent.id)
                ).all()
                if earlier:
                    session.execute(delete(SubmissionEvent).where(attempt))
                kind, data = final
                session.add(
                    SubmissionEvent(
                        submission_id=claim.submission_id,
                        attempt=claim.attempt,
                        kind=kind,
                        data=fold(data, [(i, k, d) for i, k, d in earlier], values.get("result")),
                        created_at=utcnow(),
                    )
                )
            return True

    def finish(
        self,
        claim: Claim,
        result: dict[str, Any],
        verdict: str,
        manifest: dict[str, Any],
        final: tuple[str, dict[str, Any]],
    ) -> bool:
        """Store the result and the final event together: ``running -> done``. False (nothing written)
        when the claim is stale (another attempt owns the submission, or it is finished)."""
        values = {
            "status": Status.DONE.value,
            "result": result,
            "verdict": verdict,
            "manifest": manifest,
            "finished_at": utcnow(),
            "client_address": None,  # kept only while the per-client cap counts it (unfinished)
        }
        return self._settle(claim, values, final)

    def fail(self, claim: Claim, error: str, final: tuple[str, dict[str, Any]]) -> bool:
        """The judge could not grade it: ``running -> failed`` with the reason (no user data in it)."""
        values = {
            "status": Status.FAILED.value,
            "error": error,
            "finished_at": utcnow(),
            "client_address": None,
        }
        return self._settle(claim, values, final)

    def release(self, claim: Claim, *, refund: bool = False) -> bool:
        """Give the submission back to the queue (``running -> queued``) for another attempt. ``refund``:
        the attempt does not count (the judge had no capacity to grade it: it never really began), so the
        next claim has the same attempt number; the caller writes nothing more with ``claim``."""
        values: dict[str, Any] = {"status": Status.QUEUED.value}
        if refund:
            values["attempts"] = Submission.attempts - 1
        return self._settle(claim, values, None)

    # ------------------------------------------------------------------------------------ distributed

    def release_node(self, node: str, submission_id: str | None = None) -> list[str]:
        """``running -> queued`` for the work ``node`` holds (or only ``submission_id`` of it): the node
        hands it back. The attempt number stays, so a late result of the handed-back attempt is refused."""
        conditions = [Submission.status == Status.RUNNING.value, Submission.node == node]
        if submission_id is not None:
            conditions.append(Submission.id == submission_id)
        with self._session() as session:
            return list(
                session.scalars(
                    update(Submission)
                    .where(*conditions)
                    .values(status=Status.QUEUED.value, node=None, enqueued_at=utcnow())
                    .returning(Submission.id)
                )
            )

    def held_by(self, node: str) -> list[str]:
        """The submissions ``node`` is grading now (``running`` claims recorded with its name)."""
        running = Submission.status == Status.RUNNING.value
        query = select(Submission.id).where(running, Submission.node == node)
        with self._session() as session:
            return list(session.scalars(query))

    def reclaim_lost(self, cutoff: datetime) -> list[str]:
        """Queue again (``running -> queued``) what nodes hold whose last heartbeat is older than
        ``cutoff`` (or that stopped without handing it back); mark those nodes ``lost``. The ids, to be
        published again."""
        gone = select(GradingNode.name).where(
            or_(
                GradingNode.last_seen < cutoff,
                GradingNode.state.in_([NodeState.STOPPED.value, NodeState.LOST.value]),
            )
        )
        with self._session() as session:
            ids = list(
                session.scalars(
                    update(Submission)
                    .where(Submission.status == Status.RUNNING.value, Submission.node.in_(gone))
                    .values(status=Status.QUEUED.value, node=None, enqueued_at=utcnow())
                    .returning(Submission.id)
                    .execution_options(synchronize_session=False)
                )
            )
            session.execute(
                update(GradingNode)
                .where(
                    GradingNode.last_seen < cutoff,
                    GradingNode.state.not_in([NodeState.STOPPED.value, NodeState.LOST.value]),
                )
                .values(state=NodeState.LOST.value)
            )
        return ids

    def requeue_stale(self, cutoff: datetime, limit: int) -> list[str]:
        """Up to ``limit`` queued submissions (oldest first) whose queue message was last published before
        ``cutoff`` (or never, by creation time); their publish time becomes now. The ids, to publish."""
        last = func.coalesce(Submission.enqueued_at, Submission.created_at)
        oldest = (
            select(Submission.id)
            .where(Submission.status == Status.QUEUED.value, last < cutoff)
            .order_by(Submission.created_at, Submission.id)
            .limit(limit)
        )
        with self._session() as session:
            return list(
                session.scalars(
                    update(Submission)
                    .where(
                        Submission.id.in_(oldest.scalar_subquery()),
                        Submission.status == Status.QUEUED.value,
                        last < cutoff,
                    )
                    .values(enqueued_at=utcnow())
                    .returning(Submission.id)
                    .execution_options(synchronize_session=False)
                )
            )

    def heartbeat(self, beat: NodeBeat) -> None:
        """Record a grading node's state now (the row is created by its first beat)."""
        values = {f.name: getattr(beat, f.name) for f in fields(beat) if f.name != "name"}
        values |= {"state": beat.state.value, "last_seen": utcnow()}
        with self._session() as session:
            updated = session.execute(
                update(GradingNode).where(GradingNode.name == beat.name).values(**values)
            )
            if getattr(updated, "rowcount", 0) == 0:
                session.add(GradingNode(name=beat.name, **values))

    def nodes(self, seen_after: datetime | None = None) -> list[NodeRecord]:
        """Grading nodes (those seen after ``seen_after``), most recently started first."""
        query = select(GradingNode).order_by(GradingNode.started_at.desc(), GradingNode.name)
        if seen_after is not None:
            query = query.where(GradingNode.last_seen >= seen_after)
        with self._session() as session:
            return [_node(row) for row in session.scalars(query)]

    def prune_nodes(self, before: datetime) -> int:
        """Forget nodes not seen since ``before`` that hold no work; how many rows went."""
        busy = select(Submission.node).where(
            Submission.status == Status.RUNNING.value, Submission.node.is_not(None)
        )
        with self._session() as session:
            result = session.execute(
                delete(GradingNode).where(GradingNode.last_seen < before, GradingNode.name.not_in(busy))
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def ping(self) -> None:
        """Raise (an SQLAlchemy error) unless the database answers."""
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    # ------------------------------------------------------------------------------------ events

    def append_event(self, claim: Claim, kind: str, data: dict[str, Any]) -> int | None:
        """Record a progress event of the claimed attempt; None (not recorded) when the claim is stale."""
        with self._event_sessions() as session, session.begin():
            if self.dialect == "postgresql":
                session.execute(text("SET LOCAL synchronous_commit TO OFF"))
            current = session.scalar(
                select(Submission.attempts).where(
                    Submission.id == claim.submission_id, Submission.status == Status.RUNNING.value
                )
            )
            if current != claim.attempt:
                return None
            row = SubmissionEvent(
                submission_id=claim.submission_id,
                attempt=claim.attempt,
                kind=kind,
                data=data,
                created_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return row.id

    def events_after(self, submission_id: str, after: int = 0, limit: int = 500) -> list[EventRecord]:
        """Events of the submission with an id above ``after``, in order (a finished grading's folded
        events unfolded: ``eventlog``)."""
        query = (
            select(SubmissionEvent)
            .where(SubmissionEvent.submission_id == submission_id, SubmissionEvent.id > after)
            .order_by(SubmissionEvent.id)
            .limit(limit)
        )
        events: list[EventRecord] = []
        with self._session() as session:
            rows = list(session.scalars(query))
            result = None
            if any(folded(row.data) for row in rows):
                result = session.scalar(select(Submission.result).where(Submission.id == submission_id))
            for row in rows:
                for ident, kind, data in unfold(row.id, row.kind, row.data, result):
                    if ident > after:
                        events.append(replace(_event(row), id=ident, kind=kind, data=data))
        return events[:limit]

    # ------------------------------------------------------------------------------------ callbacks

    def record_callback_attempt(
        self, submission_id: str, attempt: int, url: str, status_code: int | None, error: str | None
    ) -> None:
        with self._session() as session:
            session.add(
                CallbackAttempt(
                    submission_id=submission_id,
                    attempt=attempt,
                    url=url,
                    status_code=status_code,
                    error=error,
                    created_at=utcnow(),
                )
            )

    def set_callback_state(self, submission_id: str, state: CallbackState) -> None:
        """Set the callback's state; its sender's lease ends (a redelivery's sender takes a new one)."""
        with self._session() as session:
            session.execute(
                update(Submission)
                .where(Submission.id == submission_id)
                .values(callback_state=state.value, callback_sender=None, callback_lease_until=None)
            )

    def reopen_callback(self, submission_id: str) -> bool:
        """Set a settled (delivered or failed) callback pending again, for a redelivery: a conditional
        update, so of several API nodes asked at once exactly one reopens it (True); False when it was
        not settled (a delivery is under way)."""
        settled = [CallbackState.DELIVERED.value, CallbackState.FAILED.value]
        with self._session() as session:
            updated = session.execute(
                update(Submission)
                .where(Submission.id == submission_id, Submission.callback_state.in_(settled))
                .values(
                    callback_state=CallbackState.PENDING.value,
                    callback_sender=None,
                    callback_lease_until=None,
                )
            )
            return bool(getattr(updated, "rowcount", 0))

    def lease_callback(self, submission_id: str, sender: str, lease_s: float) -> bool:
        """Hold a pending callback for ``sender`` for ``lease_s`` seconds from now (before each try, and
        over the wait for the next): True when it was free (no lease, or one that has passed) or already
        ``sender``'s; False while another sender's lease runs (that one delivers it) or it is no longer
        pending."""
        now = utcnow()
        free = or_(
            Submission.callback_lease_until.is_(None),
            Submission.callback_lease_until < now,
            Submission.callback_sender == sender,
        )
        with self._session() as session:
            pending = Submission.callback_state == CallbackState.PENDING.value
            return _lease(session, submission_id, sender, now + timedelta(seconds=lease_s), pending, free)

    def release_callback_leases(self, sender: str, submission_ids: Sequence[str]) -> int:
        """End ``sender``'s leases on these callbacks (it stops without sending them): another sender may
        take them at once. How many it held."""
        if not submission_ids:
            return 0
        with self._session() as session:
            updated = session.execute(
                update(Submission)
                .where(Submission.id.in_(list(submission_ids)), Submission.callback_sender == sender)
                .values(callback_sender=None, callback_lease_until=utcnow())
            )
            return int(getattr(updated, "rowcount", 0) or 0)

    def hand_off_callback(self, submission_id: str, url: str, note: str) -> bool:
        """Leave a pending callback to an API node (the caller cannot send it): its state becomes
        ``handed_off`` and ``note`` is recorded as try 0 (not a delivery try). False when it was not
        pending (delivered, failed, deleted)."""
        with self._session() as session:
            if not _move_callback(session, submission_id, CallbackState.PENDING, CallbackState.HANDED_OFF):
                return False
            session.add(
                CallbackAttempt(
                    submission_id=submission_id,
                    attempt=0,
                    url=url,
                    status_code=None,
                    error=note,
                    created_at=utcnow(),
                )
            )
        return True

    def handed_off_callbacks(
        self, limit: int, orphaned_after_s: float = CALLBACK_LEASE_S
    ) -> list[tuple[str, datetime | None]]:
        """(id, finished_at) of at most ``limit`` finished submissions whose callback an API node may take
        (``take_callback``), the longest finished first: handed off by a grading node without callback
        settings, or pending with its sender gone: a lease that has passed (the sender died mid-delivery),
        or no lease though it finished over ``orphaned_after_s`` ago (it died before its first try)."""
        query = (
            select(Submission.id, Submission.finished_at)
            .where(_takeable(utcnow(), orphaned_after_s))
            .order_by(Submission.finished_at, Submission.id)
            .limit(limit)
        )
        with self._session() as session:
            return [(sid, finished) for sid, finished in session.execute(query)]

    def take_callback(
        self,
        submission_id: str,
        sender: str = "api",
        lease_s: float = CALLBACK_LEASE_S,
        orphaned_after_s: float = CALLBACK_LEASE_S,
    ) -> bool:
        """Take a callback to send it (state ``pending``, leased to ``sender`` for ``lease_s`` seconds):
        a handed-off one, or a pending one whose sender is gone (``handed_off_callbacks``). True for
        exactly one of the API nodes asking (a conditional update), False for the others."""
        now = utcnow()
        with self._session() as session:
            return _lease(
                session,
                submission_id,
                sender,
                now + timedelta(seconds=lease_s),
                _takeable(now, orphaned_after_s),
            )

    def callback_attempts(self, submission_id: str) -> list[tuple[int, int | None, str | None, datetime]]:
        """(attempt, HTTP status, error, time) of every delivery attempt, in order (try 0: a note of a
        node that could not send it, ``hand_off_callback``)."""
        query = (
            select(CallbackAttempt)
            .where(CallbackAttempt.submission_id == submission_id)
            .order_by(CallbackAttempt.id)
        )
        with self._session() as session:
            return [(r.attempt, r.status_code, r.error, r.created_at) for r in session.scalars(query)]

    def pending_callbacks(self) -> list[str]:
        """Finished submissions whose callback has not been delivered or given up on yet."""
        query = (
            select(Submission.id)
            .where(
                Submission.callback_state == CallbackState.PENDING.value,
                Submission.status.in_([Status.DONE.value, Status.FAILED.value]),
            )
            .order_by(Submission.finished_at)
        )
        with self._session() as session:
            return list(session.scalars(query))

    def ids(self, problem: str | None = None) -> Sequence[str]:
        """Every submission id (oldest first), for tests and maintenance."""
        query = select(Submission.id).order_by(Submission.created_at, Submission.id)
        if problem is not None:
            query = query.where(Submission.problem == problem)
        with self._session() as session:
            return list(session.scalars(query))


#: Statuses and verdicts most submissions have: a filter on one of them is broad, on the others narrow.
def _takeable(now: datetime, orphaned_after_s: float) -> Any:
    """The condition on a submission's callback that an API node may take it: the submission finished,
    and its callback handed off, or pending with its sender's lease passed, or with no lease though
    finished ``orphaned_after_s`` ago."""
    pending = Submission.callback_state == CallbackState.PENDING.value
    return and_(
        Submission.status.in_([Status.DONE.value, Status.FAILED.value]),
        or_(
            Submission.callback_state == CallbackState.HANDED_OFF.value,
            and_(pending, Submission.callback_lease_until < now),
            and_(
                pending,
                Submission.callback_lease_until.is_(None),
                Submission.finished_at < now - timedelta(seconds=orphaned_after_s),
            ),
        ),
    )


def _lease(session: Session, submission_id: str, sender: str, until: datetime, *conditions: Any) -> bool:
    """Lease the submission's callback to ``sender`` until ``until`` (its state ``pending``) where the
    conditions hold (a conditional update): False when they do not, so of several senders one gets it."""
    updated = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, *conditions)
        .values(
            callback_state=CallbackState.PENDING.value, callback_sender=sender, callback_lease_until=until
        )
    )
    return bool(getattr(updated, "rowcount", 0))


def _move_callback(session: Session, submission_id: str, old: CallbackState, new: CallbackState) -> bool:
    """Move a submission's callback from state ``old`` to ``new`` (a conditional update): False when it
    was not in ``old``, so of several callers exactly one moves it."""
    updated = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, Submission.callback_state == old.value)
        .values(callback_state=new.value)
    )
    return bool(getattr(updated, "rowcount", 0))
