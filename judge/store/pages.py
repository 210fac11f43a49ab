"""Pages and counts of submissions for the listing (``GET /api/submissions``): runs the queries
``judge.store.listing`` builds. ``Store.listing``."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import (
    func,
    select,
    tuple_,
)
from sqlalchemy.orm import defer

from judge.store import listing
from judge.store.database import Database
from judge.store.models import (
    Submission,
)
from judge.store.records import (
    Cursor,
    SubmissionFilter,
    SubmissionRecord,
)
from judge.store.rows import record

#: Columns a listing leaves out unless asked for (the bulk of a row: up to 64 KB of code, ~12 KB of result).
HEAVY_COLUMNS = ("code", "result")

#: Most submissions ``Listing.total`` counts exactly; past it a count says "more than this many"
#: (``total_capped`` of a listing): an exact count of a million rows scans a million index entries.
COUNT_MAX = 10_000


class Listing:
    """Pages of submissions, newest first, and how many match."""

    def __init__(self, db: Database) -> None:
        self.db = db

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
        with self.db.transaction() as session:
            return [record(row) for row in session.scalars(query)]

    def count_matching(self, chosen: SubmissionFilter) -> int:
        """How many submissions match ``chosen`` (every page together), exactly: a scan of every match."""
        query = select(func.count()).select_from(listing.matching(chosen)[0].subquery())
        with self.db.transaction() as session:
            return int(session.scalar(query) or 0)

    def total(self, chosen: SubmissionFilter, most: int | None = None) -> tuple[int, bool]:
        """(how many submissions match ``chosen``, False) when at most ``most`` (COUNT_MAX) do; else
        (``most``, True): counting stops past ``most`` matches, so a count costs what ``most`` index
        entries cost however many rows match (``count=true`` of a listing)."""
        most = COUNT_MAX if most is None else most
        capped = listing.matching(chosen)[0].limit(most + 1).subquery()
        with self.db.transaction() as session:
            found = int(session.scalar(select(func.count()).select_from(capped)) or 0)
        return (most, True) if found > most else (found, False)
