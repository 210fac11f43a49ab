"""Erased means erased: what a deletion leaves in the store's files, and taking it out.

A deleted row of SQLite (the embedded store) survives in two places: in its database page until the page
is reused, and in the write-ahead log, whose frames keep every earlier image of the pages it touched
(the insert of the code, each update of the result) until a checkpoint resets the log. So every SQLite
connection has ``secure_delete`` on (SQLite overwrites deleted content, freed overflow pages of long
code included, with zeros), and after a deletion ``scrub`` checkpoints the log into the database and
truncates it to zero bytes: then neither file holds the deleted bytes (tested by reading the files).

PostgreSQL keeps a deleted row's bytes in its heap page until VACUUM reclaims the space and in WAL segments
until they are recycled and overwritten; ``scrub`` runs VACUUM on the submission tables (autovacuum would,
later) and docs/api.md says what remains and for how long (the operator's WAL retention).

    scrub(engine)     after a deletion: True once nothing deleted is left in the store's files
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import Engine

log = logging.getLogger(__name__)

#: What each SQLite connection runs (with the other pragmas of ``make_engine``).
SECURE_DELETE = "PRAGMA secure_delete=ON"

#: The tables a deletion touches (``Store.delete_ids``, an account's erasure), vacuumed on PostgreSQL.
TABLES = (
    "submissions",
    "submission_events",
    "submission_tags",
    "callback_attempts",
    "idempotency_keys",
    "gradings",
    "accounts",
    "account_submissions",
    "account_problems",
)

#: How long ``scrub`` tries to take the SQLite log back to zero while readers still use it.
SCRUB_WAIT_S = 10.0
#: Milliseconds one checkpoint attempt waits for readers before ``scrub`` tries again.
CHECKPOINT_TURN_MS = 100


def scrub(engine: Engine, wait_s: float = SCRUB_WAIT_S) -> bool:
    """Take deleted rows out of ``engine``'s files now (see the module's docstring). True when done; False
    when SQLite's log could not be reset within ``wait_s`` (a reader kept an old snapshot throughout: the
    next scrub resets it) or PostgreSQL refused the VACUUM. Never raises for a store that is merely busy."""
    if engine.dialect.name == "sqlite":
        return _checkpoint(engine, wait_s)
    if engine.dialect.name == "postgresql":
        return _vacuum(engine)
    return True


def _checkpoint(engine: Engine, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        with engine.connect() as connection:
            # The checkpoint waits for readers through the busy handler: in short turns here (the
            # connection's own busy timeout, 30 s, would hold a DELETE that long behind one reader).
            timeout_ms = int(connection.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0)
            connection.exec_driver_sql(f"PRAGMA busy_timeout={CHECKPOINT_TURN_MS}")
            try:
                row = connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                connection.exec_driver_sql(f"PRAGMA busy_timeout={timeout_ms}")
        busy = row is None or int(row[0]) != 0
        if not busy:
            return True
        if time.monotonic() >= deadline:
            log.warning("the SQLite log still holds deleted rows: a reader kept it busy for %g s", wait_s)
            return False
        time.sleep(0.05)


def _vacuum(engine: Engine) -> bool:
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            for table in TABLES:
                connection.exec_driver_sql(f"VACUUM {table}")
    except Exception as exc:  # another VACUUM runs, or the role may not: autovacuum does it later
        log.warning("VACUUM after a deletion failed: %s: %s", type(exc).__name__, exc)
        return False
    return True
