"""Problem versions operators push at runtime, as rows of ``problem_versions``, and the catalog revision.

A version's life: ``checking`` (stored, ``judge check`` under way) -> ``live`` (served) or ``rejected``
(the check's findings say why); ``live`` or ``checking`` -> ``retired`` (no longer served; submissions
still held for it end ``failed`` after ``version_hold_s``). Every change of state raises the single
``problem_catalog.revision`` in the same transaction, so a node learns that the live set changed by reading
one integer (``revision``), and loads the live versions (``live``) only then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from judge.store.models import ProblemCatalogRevision, ProblemVersionRow, utcnow
from judge.store.repository import Store


class VersionState(StrEnum):
    CHECKING = "checking"
    LIVE = "live"
    REJECTED = "rejected"
    RETIRED = "retired"


@dataclass(frozen=True)
class VersionRecord:
    """A stored problem version, without its archive (``archive`` reads that)."""

    slug: str
    hash: str
    revision: int
    state: VersionState
    findings: list[dict[str, Any]]
    tenants: tuple[str, ...] | None
    pushed_by: str | None
    created_at: datetime
    updated_at: datetime
    live_at: datetime | None

    @property
    def short_hash(self) -> str:
        return self.hash[:12]


def _record(row: ProblemVersionRow) -> VersionRecord:
    return VersionRecord(
        slug=row.slug,
        hash=row.hash,
        revision=row.revision,
        state=VersionState(row.state),
        findings=list(row.findings or []),
        tenants=None if row.tenants is None else tuple(str(t) for t in row.tenants),
        pushed_by=row.pushed_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
        live_at=row.live_at,
    )


_METADATA = [c for c in ProblemVersionRow.__table__.columns if c.name != "archive"]


class ProblemVersions:
    """The ``problem_versions`` table of one ``Store``."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def _bump(session: Session) -> None:
        bumped = session.execute(
            update(ProblemCatalogRevision)
            .where(ProblemCatalogRevision.id == 1)
            .values(revision=ProblemCatalogRevision.revision + 1)
        )
        if getattr(bumped, "rowcount", 0) == 0:  # a database migrated without the row: make it
            session.add(ProblemCatalogRevision(id=1, revision=1))

    def revision(self) -> int:
        """The catalog's revision: it grows with every change of a version's state (one cheap read)."""
        with self.store.transaction() as session:
            value = session.scalar(
                select(ProblemCatalogRevision.revision).where(ProblemCatalogRevision.id == 1)
            )
        return int(value or 0)

    def push(
        self,
        slug: str,
        content_hash: str,
        revision: int,
        archive: bytes,
        *,
        tenants: Sequence[str] | None,
        pushed_by: str | None,
    ) -> tuple[VersionRecord, bool]:
        """Store a version to be checked: (its record, True). The same package pushed again: (the stored
        record, False), unchanged, unless it was rejected or retired: then it is checked again (its tenants
        as given now)."""
        now = utcnow()
        with self.store.transaction() as session:
            row = session.scalar(
                select(ProblemVersionRow).where(
                    ProblemVersionRow.slug == slug, ProblemVersionRow.hash == content_hash
                )
            )
            if row is not None and row.state in (VersionState.CHECKING, VersionState.LIVE):
                return _record(row), False
            if row is None:
                row = ProblemVersionRow(slug=slug, hash=content_hash, created_at=now)
                session.add(row)
            row.revision = revision
            row.archive = archive
            row.state = VersionState.CHECKING.value
            row.findings = []
            row.tenants = None if tenants is None else list(tenants)
            row.pushed_by = pushed_by
            row.updated_at = now
            row.live_at = None
            self._bump(session)
            session.flush()
            return _record(row), True

    def settle(self, slug: str, content_hash: str, *, live: bool, findings: list[dict[str, Any]]) -> bool:
        """``checking -> live`` (``live``) or ``-> rejected``, with the check's findings; False when it is no
        longer being checked (retired meanwhile)."""
        now = utcnow()
        state = VersionState.LIVE if live else VersionState.REJECTED
        with self.store.transaction() as session:
            done = session.execute(
                update(ProblemVersionRow)
                .where(
                    ProblemVersionRow.slug == slug,
                    ProblemVersionRow.hash == content_hash,
                    ProblemVersionRow.state == VersionState.CHECKING.value,
                )
                .values(state=state.value, findings=findings, updated_at=now, live_at=now if live else None)
            )
            if getattr(done, "rowcount", 0) == 0:
                return False
            self._bump(session)
            return True

    def retire(self, slug: str, content_hash: str | None = None) -> list[VersionRecord]:
        """``live``/``checking -> retired`` for one version of ``slug`` (or every one); those retired."""
        conditions = [
            ProblemVersionRow.slug == slug,
            ProblemVersionRow.state.in_([VersionState.LIVE.value, VersionState.CHECKING.value]),
        ]
        if content_hash is not None:
            conditions.append(ProblemVersionRow.hash == content_hash)
        with self.store.transaction() as session:
            rows = list(session.scalars(select(ProblemVersionRow).where(*conditions)))
            for row in rows:
                row.state = VersionState.RETIRED.value
                row.updated_at = utcnow()
            if rows:
                self._bump(session)
            session.flush()
            return [_record(row) for row in rows]

    def versions(self, slug: str | None = None, state: VersionState | None = None) -> list[VersionRecord]:
        """Versions (of ``slug``, in ``state``), newest first; without their archives."""
        query = select(*_METADATA).order_by(ProblemVersionRow.created_at.desc(), ProblemVersionRow.id.desc())
        if slug is not None:
            query = query.where(ProblemVersionRow.slug == slug)
        if state is not None:
            query = query.where(ProblemVersionRow.state == state.value)
        with self.store.transaction() as session:
            return [_record(ProblemVersionRow(**row._mapping)) for row in session.execute(query)]

    def get(self, slug: str, content_hash: str) -> VersionRecord | None:
        return next((v for v in self.versions(slug) if v.hash == content_hash), None)

    def archive(self, slug: str, content_hash: str) -> bytes | None:
        with self.store.transaction() as session:
            data = session.scalar(
                select(ProblemVersionRow.archive).where(
                    ProblemVersionRow.slug == slug, ProblemVersionRow.hash == content_hash
                )
            )
        return None if data is None else bytes(data)
