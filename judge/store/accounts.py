"""Learner accounts in the judge's database (``JUDGE_ACCOUNTS``): the account, the submissions made while
signed in, and per problem the last code and the first solve.

    accounts = AccountStore(store)
    accounts.create(name, password_hash)          -> AccountRecord (raises NameTaken)
    accounts.link(account_id, submission_id, problem)
    accounts.save_code(account_id, problem, code)
    accounts.progress(account_id, problem=None)   -> {problem: ProblemProgress}
    accounts.erase(account_id)                    -> what went (code, history, solved set, the account)

Only hashes are stored (``judge.service.accounts`` makes them); a record's hash never shows in its repr.
The solved set is derived from the account's accepted submissions and kept in ``account_problems`` once
seen, so retention removing an old accepted submission does not unsolve its problem.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from judge.store.models import Account, AccountProblem, AccountSubmission, Submission, utcnow
from judge.store.repository import Store

#: Newest submissions of one problem listed in its history.
HISTORY_KEPT = 50
ACCEPTED = "accepted"


class NameTaken(Exception):
    """An account of that name (compared in lower case) exists already."""


@dataclass(frozen=True)
class AccountRecord:
    id: str
    name: str
    created_at: datetime
    password_hash: str = field(repr=False)


@dataclass(frozen=True)
class HistoryItem:
    """One of the account's submissions: its id and when it was made."""

    id: str
    at: datetime


@dataclass(frozen=True)
class ProblemProgress:
    """What an account has on one problem. ``verdict``: of the newest graded submission (None: none
    graded, or none kept); ``code`` and ``history`` are filled only for the problem asked about."""

    solved: bool = False
    verdict: str | None = None
    verdict_at: datetime | None = None
    code: str | None = None
    code_saved_at: datetime | None = None
    history: tuple[HistoryItem, ...] = ()


@dataclass(frozen=True)
class Erased:
    """What erasing an account removed."""

    submissions: int
    problems: int


@dataclass(frozen=True)
class Imported:
    """What importing a browser's progress added: problems whose code was taken (the account had none),
    and submissions that now belong to the account."""

    code: int
    submissions: int


def _record(row: Account) -> AccountRecord:
    return AccountRecord(id=row.id, name=row.name, created_at=row.created_at, password_hash=row.password_hash)


class AccountStore:
    def __init__(self, store: Store) -> None:
        self.store = store

    # ------------------------------------------------------------------------------------ the account

    def create(self, name: str, password_hash: str) -> AccountRecord:
        row = Account(
            id=str(uuid.uuid4()),
            name=name,
            name_key=name.lower(),
            password_hash=password_hash,
            created_at=utcnow(),
        )
        try:
            with self.store.transaction() as session:
                session.add(row)
        except IntegrityError:
            raise NameTaken(name) from None
        return _record(row)

    def by_name(self, name: str) -> AccountRecord | None:
        with self.store.transaction() as session:
            row = session.scalar(select(Account).where(Account.name_key == name.lower()))
            return None if row is None else _record(row)

    def get(self, account_id: str) -> AccountRecord | None:
        with self.store.transaction() as session:
            row = session.get(Account, account_id)
            return None if row is None else _record(row)

    def signed_in(self, account_id: str, rehashed: str | None = None) -> None:
        """Record a sign-in (and the password's new hash when the hasher's parameters changed)."""
        values: dict[str, object] = {"last_signin_at": utcnow()}
        if rehashed is not None:
            values["password_hash"] = rehashed
        with self.store.transaction() as session:
            session.execute(update(Account).where(Account.id == account_id).values(**values))

    # ------------------------------------------------------------------------------------ progress

    def link(self, account_id: str, submission_id: str, problem: str) -> None:
        """The submission belongs to the account (made while signed in)."""
        with self.store.transaction() as session:
            session.add(
                AccountSubmission(
                    submission_id=submission_id, account_id=account_id, problem=problem, created_at=utcnow()
                )
            )

    def save_code(self, account_id: str, problem: str, code: str | None) -> datetime:
        """Keep ``code`` as the account's last code of ``problem`` (None: back to the starter); when."""
        now = utcnow()
        with self.store.transaction() as session:
            _upsert(session, account_id, problem, code=code, code_saved_at=now)
        return now

    def progress(self, account_id: str, problem: str | None = None) -> dict[str, ProblemProgress]:
        """The account's progress on every problem it has any on; with ``problem``, that one's code and
        history (newest first, at most HISTORY_KEPT) too. Newly seen solves are recorded."""
        with self.store.transaction() as session:
            rows = session.execute(
                select(AccountSubmission.problem, Submission.id, Submission.verdict, Submission.created_at)
                .join(Submission, Submission.id == AccountSubmission.submission_id)
                .where(AccountSubmission.account_id == account_id)
                .order_by(Submission.created_at.desc(), Submission.id)
            ).all()
            kept = {
                row.problem: row
                for row in session.scalars(
                    select(AccountProblem).where(AccountProblem.account_id == account_id)
                )
            }
            verdicts: dict[str, tuple[str, datetime]] = {}
            history: list[HistoryItem] = []
            accepted: set[str] = set()
            for slug, sid, verdict, created in rows:
                if verdict is not None and slug not in verdicts:
                    verdicts[slug] = (verdict, created)
                if verdict == ACCEPTED:
                    accepted.add(slug)
                if slug == problem and len(history) < HISTORY_KEPT:
                    history.append(HistoryItem(sid, created))
            now = utcnow()
            for slug in sorted(accepted):
                if slug not in kept or kept[slug].solved_at is None:
                    _upsert(session, account_id, slug, solved_at=now)
            solved = accepted | {slug for slug, row in kept.items() if row.solved_at is not None}
            out: dict[str, ProblemProgress] = {}
            for slug in solved | set(verdicts) | set(kept) | ({problem} if problem else set()):
                verdict, verdict_at = verdicts.get(slug, (None, None))
                row = kept.get(slug)
                mine = slug == problem
                out[slug] = ProblemProgress(
                    solved=slug in solved,
                    verdict=verdict,
                    verdict_at=verdict_at,
                    code=row.code if mine and row is not None else None,
                    code_saved_at=row.code_saved_at if mine and row is not None else None,
                    history=tuple(history) if mine else (),
                )
            return out

    def import_local(
        self, account_id: str, code: Mapping[str, str], submissions: Mapping[str, Iterable[str]]
    ) -> Imported:
        """Take a browser's progress into the account: the code of problems the account has no code of
        yet, and the submissions (ids) that are keyless, of that problem, and nobody's yet."""
        taken_code = taken_subs = 0
        with self.store.transaction() as session:
            have = set(
                session.scalars(
                    select(AccountProblem.problem).where(
                        AccountProblem.account_id == account_id, AccountProblem.code.is_not(None)
                    )
                )
            )
            now = utcnow()
            for slug, text in code.items():
                if slug not in have:
                    _upsert(session, account_id, slug, code=text, code_saved_at=now)
                    taken_code += 1
            for slug, ids in submissions.items():
                wanted = list(dict.fromkeys(ids))
                if not wanted:
                    continue
                owned = select(AccountSubmission.submission_id)
                free = session.execute(
                    select(Submission.id, Submission.created_at).where(
                        Submission.id.in_(wanted),
                        Submission.problem == slug,
                        Submission.key_id.is_(None),
                        Submission.id.not_in(owned),
                    )
                ).all()
                for sid, created in free:
                    session.add(
                        AccountSubmission(
                            submission_id=sid, account_id=account_id, problem=slug, created_at=created
                        )
                    )
                    taken_subs += 1
        return Imported(code=taken_code, submissions=taken_subs)

    # ------------------------------------------------------------------------------------ erasure

    def erase(self, account_id: str, batch: int = 500) -> Erased | None:
        """Remove the account with everything of it: its submissions (with their events and callback
        records), last code and solved set. None when there was no such account."""
        removed = 0
        while True:
            with self.store.transaction() as session:
                ids = list(
                    session.scalars(
                        select(AccountSubmission.submission_id)
                        .where(AccountSubmission.account_id == account_id)
                        .limit(batch)
                    )
                )
                if not ids:
                    break
                removed += self.store.deletion.delete_ids(session, ids)
        with self.store.transaction() as session:
            problems = session.execute(delete(AccountProblem).where(AccountProblem.account_id == account_id))
            gone = session.execute(delete(Account).where(Account.id == account_id))
            if not getattr(gone, "rowcount", 0):
                return None
        self.store.scrub()  # gone from the store's files too (judge.store.scrub)
        return Erased(submissions=removed, problems=int(getattr(problems, "rowcount", 0) or 0))


def _upsert(session: Session, account_id: str, problem: str, **values: object) -> None:
    """Set ``values`` on the account's row of ``problem``, creating it when missing: one INSERT ... ON
    CONFLICT DO UPDATE, so two requests creating the row at once (two tabs) both succeed."""
    dialect = session.get_bind().dialect.name
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    statement = insert(AccountProblem).values(account_id=account_id, problem=problem, **values)
    session.execute(
        statement.on_conflict_do_update(index_elements=["account_id", "problem"], set_=dict(values))
    )
