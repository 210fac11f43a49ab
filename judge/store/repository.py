"""The store: one database and its aggregates, each a class of its own over the same transactions.

    store.submissions   Submissions      a new submission (idempotency key, quota), read by id, counted
    store.idempotency   IdempotencyKeys  the live record of an ``Idempotency-Key``, expiry
    store.listing       Listing          pages and counts of the listing
    store.attempts      Attempts         the queue: claims, results, hand-backs of grading nodes
    store.nodes         Nodes            grading nodes' heartbeats
    store.events        Events           progress events of an attempt
    store.callbacks     Callbacks        callback state, leases, delivery attempts
    store.deletion      Deletion         removal of submissions with everything that names them

Each method runs in its own short transaction (``Database.transaction``), as before the split; a caller
that needs several writes in one transaction (``judge.store.accounts``, ``judge.store.gradings``) opens
``store.transaction()`` and passes its session. Status changes are conditional UPDATEs, so two graders can
never both write a result:

    claim(id)           queued  -> running   (attempts + 1; the attempt's Claim is the write token)
    finish(claim, ...)  running -> done      only while the claim's attempt is the current one
    fail(claim, ...)    running -> failed    likewise
    release(claim)      running -> queued    a retry after a judge-side failure (``refund``: not counted)
    recover()           running -> queued    on start: work of a process that died is queued again

Distributed dispatch adds grading nodes (``nodes.heartbeat``, ``nodes.known``) and, because several nodes
grade at once, never ``recover()``: instead each claim records its node, and

    release_node(node)      running -> queued    a node hands back its own work (shutdown)
    reclaim_lost(cutoff)    running -> queued    work of nodes whose heartbeat stopped before ``cutoff``
    requeue_stale(cutoff)   queued (no message published since ``cutoff``): to be published again
"""

from __future__ import annotations

from judge.store.attempts import Attempts
from judge.store.callbacks import Callbacks
from judge.store.database import Database, database_url, make_engine, sqlite_url
from judge.store.deletion import Deletion
from judge.store.events import Events
from judge.store.idempotency import IdempotencyKeys
from judge.store.nodes import Nodes
from judge.store.pages import Listing
from judge.store.submissions import Submissions

__all__ = ["Store", "database_url", "make_engine", "sqlite_url"]


class Store(Database):
    """Submissions in one database. ``Store(url)`` connects; ``migrate()`` brings the schema to head."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.submissions = Submissions(self)
        self.idempotency = IdempotencyKeys(self)
        self.listing = Listing(self)
        self.attempts = Attempts(self)
        self.nodes = Nodes(self)
        self.events = Events(self)
        self.callbacks = Callbacks(self)
        self.deletion = Deletion(self)
