"""Learner accounts (``JUDGE_ACCOUNTS``): the use-cases behind ``/account/...`` (routes/accounts.py).

    accounts.sign_up(name, password, address)   -> AccountRecord   (raises FieldError, SignInLimited)
    accounts.sign_in(name, password, address)   -> AccountRecord   (likewise)
    accounts.current(session)                   -> the signed-in account, or None
    accounts.page_state(account, session, slug) -> what the page's script needs (storage.js)

Passwords are hashed with Argon2id (argon2-cffi's ``PasswordHasher``, its default parameters) and never
stored, logged or returned; a sign-in of an unknown name costs one verification all the same, so the
time taken does not tell which names exist. Wrong name and wrong password get the same words. Sign-in
and sign-up attempts are rate-limited per client address and per name (``signin_rate_limit``).

A session is the signed cookie of Starlette's SessionMiddleware (judge/service/sessions.py) holding the
account's id and a CSRF token (judge/service/csrf.py); an erased account's cookie signs nobody in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from judge.core.settings import Settings
from judge.service.csrf import SESSION_TOKEN, csrf_token
from judge.service.ratelimit import RateLimiter
from judge.store import Store
from judge.store.accounts import AccountRecord, AccountStore, Erased, Imported, NameTaken, ProblemProgress

#: What the session cookie holds: the account's id (its CSRF token is ``csrf.SESSION_TOKEN``).
SESSION_ACCOUNT = "account"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
NAME_MIN, NAME_MAX = 3, 32
PASSWORD_MIN, PASSWORD_MAX = 10, 1024
#: One wording for a wrong name and a wrong password: it does not tell which names exist.
WRONG = "Wrong name or password."


class FieldError(Exception):
    """A form's input refused: ``field`` (``name``, ``password``, or None for the whole form), the
    words to show beside it, and the HTTP status to answer."""

    def __init__(self, field: str | None, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.status = status


class SignInLimited(Exception):
    """Too many sign-in or sign-up attempts: retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry in {retry_after} s")
        self.retry_after = retry_after


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an account name, or None."""
    if not NAME_MIN <= len(name) <= NAME_MAX:
        return f"A name has {NAME_MIN} to {NAME_MAX} characters."
    if not NAME_RE.fullmatch(name):
        return "A name uses letters, digits, '.', '_' and '-' only, and starts with a letter or digit."
    return None


def password_problem(password: str) -> str | None:
    """Why ``password`` cannot be a password, or None."""
    if len(password) < PASSWORD_MIN:
        return f"A password has at least {PASSWORD_MIN} characters (this one has {len(password)})."
    if len(password) > PASSWORD_MAX:
        return f"A password has at most {PASSWORD_MAX} characters."
    return None


@dataclass(frozen=True)
class Viewer:
    """Who is looking at a page while accounts are on: the account's name (None: signed out) and the
    session's CSRF token for the page's forms and requests (empty while signed out)."""

    name: str | None
    csrf: str


class Accounts:
    def __init__(self, store: Store, settings: Settings, limiter: RateLimiter) -> None:
        self.store = AccountStore(store)
        self.hasher = PasswordHasher()
        self.limiter = limiter
        self.max_code_bytes = settings.max_code_bytes
        self._decoy: str | None = None

    # ------------------------------------------------------------------------------------ sign-up, sign-in

    def _limit(self, address: str, name: str | None) -> None:
        retry_after = self.limiter.hit_signin(address, name)
        if retry_after is not None:
            raise SignInLimited(retry_after)

    def sign_up(self, name: str, password: str, address: str) -> AccountRecord:
        self._limit(address, None)
        name = name.strip()
        problem = name_problem(name)
        if problem is not None:
            raise FieldError("name", problem)
        problem = password_problem(password)
        if problem is not None:
            raise FieldError("password", problem)
        if self.store.by_name(name) is not None:
            raise FieldError("name", f"The name “{name}” is taken: choose another.", 409)
        try:
            return self.store.create(name, self.hasher.hash(password))
        except NameTaken:  # taken between the look-up and the insert
            raise FieldError("name", f"The name “{name}” is taken: choose another.", 409) from None

    def sign_in(self, name: str, password: str, address: str) -> AccountRecord:
        name = name.strip()
        self._limit(address, name or None)
        if not name or not password:
            missing = "name" if not name else "password"
            raise FieldError(missing, f"Enter your {missing}.")
        if len(password) > PASSWORD_MAX:  # no account has one: refused before any hashing
            raise FieldError(None, WRONG, 401)
        # A name no account can have (too long, NUL, ...) is not looked up: the database never sees it.
        account = self.store.by_name(name) if name_problem(name) is None else None
        if account is None:
            self._verify(self._decoy_hash(), password)  # the same cost as a known name
            raise FieldError(None, WRONG, 401)
        if not self._verify(account.password_hash, password):
            raise FieldError(None, WRONG, 401)
        rehashed = (
            self.hasher.hash(password) if self.hasher.check_needs_rehash(account.password_hash) else None
        )
        self.store.signed_in(account.id, rehashed)
        return account

    def _verify(self, password_hash: str, password: str) -> bool:
        try:
            return self.hasher.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def _decoy_hash(self) -> str:
        if self._decoy is None:
            self._decoy = self.hasher.hash("a decoy: unknown names cost one verification too")
        return self._decoy

    # ------------------------------------------------------------------------------------ sessions

    def current(self, session: MutableMapping[str, Any]) -> AccountRecord | None:
        """The session's account; a session of an erased account is signed out."""
        account_id = session.get(SESSION_ACCOUNT)
        if not isinstance(account_id, str):
            return None
        account = self.store.get(account_id)
        if account is None:
            session.pop(SESSION_ACCOUNT, None)
        return account

    @staticmethod
    def start_session(session: MutableMapping[str, Any], account: AccountRecord) -> None:
        """Sign ``account`` in: a fresh session with a new CSRF token (none from before sign-in lives on)."""
        session.clear()
        session[SESSION_ACCOUNT] = account.id
        csrf_token(session)

    @staticmethod
    def end_session(session: MutableMapping[str, Any]) -> None:
        session.clear()

    def viewer(self, session: MutableMapping[str, Any]) -> Viewer:
        """Who looks at a page. Signed out, the session is left as it is: a visitor who does not sign in
        gets no cookie (the sign-in and sign-up forms make their token)."""
        account = self.current(session)
        if account is None:
            return Viewer(name=None, csrf="")
        return Viewer(name=account.name, csrf=csrf_token(session))

    # ------------------------------------------------------------------------------------ progress

    def save_code(self, account: AccountRecord, problem: str, code: str | None) -> str:
        """Keep the last code; the time it was saved (ISO 8601)."""
        return self.store.save_code(account.id, problem, code).isoformat()

    def link(self, account: AccountRecord, submission_id: str, problem: str) -> None:
        self.store.link(account.id, submission_id, problem)

    def import_local(
        self, account: AccountRecord, code: Mapping[str, str], submissions: Mapping[str, list[str]]
    ) -> Imported:
        return self.store.import_local(account.id, code, submissions)

    def erase(self, account: AccountRecord, password: str) -> Erased:
        """Erase the account and everything of it, once its password is confirmed."""
        if not self._verify(account.password_hash, password):
            raise FieldError("password", "Wrong password: the account was not erased.", 401)
        erased = self.store.erase(account.id)
        return erased if erased is not None else Erased(submissions=0, problems=0)

    def page_state(
        self, account: AccountRecord, session: MutableMapping[str, Any], slug: str | None
    ) -> dict[str, Any]:
        """What the page's script (web/src/storage.js) reads in place of the browser's storage: every
        problem's solved mark and last verdict, and for ``slug`` the last code and the history."""
        progress = self.store.progress(account.id, slug)
        state: dict[str, Any] = {
            "id": account.id,
            "name": account.name,
            "csrf": session.get(SESSION_TOKEN) or csrf_token(session),
            "problems": {key: _summary(value) for key, value in sorted(progress.items())},
        }
        if slug is not None:
            mine = progress.get(slug, ProblemProgress())
            state["problem"] = {
                "slug": slug,
                "code": mine.code,
                "code_saved_at": mine.code_saved_at.isoformat() if mine.code_saved_at else None,
                "history": [{"id": item.id, "at": item.at.isoformat()} for item in mine.history],
            }
        return state


def _summary(progress: ProblemProgress) -> dict[str, Any]:
    return {
        "solved": progress.solved,
        "verdict": progress.verdict,
        "at": progress.verdict_at.isoformat() if progress.verdict_at else None,
    }


def claim_submission(
    accounts: Accounts | None, scope: Mapping[str, Any], submission_id: str, problem: str
) -> None:
    """A submission made while signed in belongs to the account (the page's history on any browser).
    Nothing without accounts, a session, or a signed-in account."""
    session = scope.get("session")
    if accounts is None or not isinstance(session, MutableMapping):
        return
    account = accounts.current(session)
    if account is not None:
        accounts.link(account, submission_id, problem)
