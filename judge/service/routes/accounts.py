"""``/account/...``: learner accounts (only with ``JUDGE_ACCOUNTS`` on; otherwise none of these exist).

Pages rendered by the server (templates account_form.html and account.html):

    GET  /account/signin, /account/signup    the forms (``?next=/problems/...``: where to go after)
    POST /account/signin, /account/signup    303 to ``next`` signed in, or the form again with the error
                                             beside its field (400, 401 wrong name or password, 409 name
                                             taken, 429 too many attempts, 403 an expired form)
    POST /account/signout                    303 to the list, signed out
    GET  /account                            the account: name, problems solved, erase
    POST /account/erase                      erases the account and everything of it (password again)

JSON for the page's script (X-CSRF-Token header; 401 when signed out):

    PUT  /account/code/{slug}      {"code": str | null}   the last code of a problem (null: the starter)
    POST /account/import           {"code": {slug: str}, "submissions": {slug: [id]}}  a browser's
                                   progress from before sign-in: {"code": n, "submissions": n} taken

The routes are thin: the use-cases are ``judge.service.accounts.Accounts``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from judge.service.accounts import Accounts, FieldError, SignInLimited
from judge.service.api_errors import ApiError
from judge.service.csrf import csrf_token, token_matches
from judge.store.accounts import AccountRecord

if TYPE_CHECKING:
    from judge.web.routes import Pages, ProblemBodies

FORM_PATHS = ("/account/signin", "/account/signup", "/account/signout", "/account/erase")
#: Submissions of one problem an import may carry (the page keeps 20).
IMPORT_SUBMISSIONS_MAX = 50

FormText = Annotated[str, Form()]


class CodeBody(BaseModel):
    code: str | None = Field(description="The code in the editor; null: back to the starter code.")


class ImportBody(BaseModel):
    code: dict[str, str] = Field(default_factory=dict)
    submissions: dict[str, list[str]] = Field(default_factory=dict)


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this site only (never another host), else the list."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    if any(ord(char) < 0x21 or ord(char) == 0x7F for char in target):  # browsers drop tabs and newlines
        return "/"
    return target


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def build_router(
    pages: Pages, accounts: Callable[[], Accounts | None], catalog: Callable[[], ProblemBodies]
) -> APIRouter:
    """``pages``: the web's ``judge.web.routes.Pages``; ``accounts()``: the service's Accounts."""
    router = APIRouter(prefix="/account", include_in_schema=False)

    def service() -> Accounts:
        current = accounts()
        if current is None:  # accounts off in the running services: as if no route existed
            raise ApiError(404, "not_found", "learner accounts are off on this judge")
        return current

    def form(
        request: Request,
        mode: str,
        *,
        status_code: int = 200,
        error: FieldError | None = None,
        name: str = "",
        next_path: str = "/",
    ) -> HTMLResponse:
        context = {
            "mode": mode,
            "title": "Sign in" if mode == "signin" else "Create an account",
            "csrf": csrf_token(request.session),
            "error": error,
            "name": name,
            "next": next_path,
        }
        return pages.render(request, "account_form.html", context, status_code)

    def checked_form(request: Request, presented: str) -> bool:
        return token_matches(request.session, presented)

    expired = FieldError(None, "This form expired (or came from another site): please send it again.", 403)

    @router.get("/signin", response_class=HTMLResponse)
    def signin_page(request: Request, next: str | None = None) -> HTMLResponse:
        service()
        return form(request, "signin", next_path=safe_next(next))

    @router.get("/signup", response_class=HTMLResponse)
    def signup_page(request: Request, next: str | None = None) -> HTMLResponse:
        service()
        return form(request, "signup", next_path=safe_next(next))

    def signed_in_or_form(
        request: Request, mode: str, name: str, password: str, presented: str, next_path: str
    ) -> Response:
        users = service()
        target = safe_next(next_path)
        if not checked_form(request, presented):
            return form(request, mode, status_code=403, error=expired, name=name, next_path=target)
        try:
            if mode == "signup":
                account = users.sign_up(name, password, _address(request))
            else:
                account = users.sign_in(name, password, _address(request))
        except FieldError as error:
            return form(request, mode, status_code=error.status, error=error, name=name, next_path=target)
        except SignInLimited as limited:
            too_many = FieldError(
                None, f"Too many attempts from here: try again in {limited.retry_after} s.", 429
            )
            response = form(request, mode, status_code=429, error=too_many, name=name, next_path=target)
            response.headers["Retry-After"] = str(limited.retry_after)
            return response
        users.start_session(request.session, account)
        return RedirectResponse(target, status_code=303)

    @router.post("/signin", response_class=HTMLResponse)
    def signin(
        request: Request,
        name: FormText = "",
        password: FormText = "",
        csrf_token: FormText = "",
        next: FormText = "/",
    ) -> Response:
        return signed_in_or_form(request, "signin", name, password, csrf_token, next)

    @router.post("/signup", response_class=HTMLResponse)
    def signup(
        request: Request,
        name: FormText = "",
        password: FormText = "",
        csrf_token: FormText = "",
        next: FormText = "/",
    ) -> Response:
        return signed_in_or_form(request, "signup", name, password, csrf_token, next)

    @router.post("/signout")
    def signout(request: Request, csrf_token: FormText = "") -> Response:
        users = service()
        if not checked_form(request, csrf_token):
            return account_page(request, users, status_code=403, error=expired)
        users.end_session(request.session)
        return RedirectResponse("/", status_code=303)

    def account_page(
        request: Request,
        users: Accounts,
        *,
        status_code: int = 200,
        error: FieldError | None = None,
        erased: bool = False,
    ) -> HTMLResponse:
        account = users.current(request.session)
        solved = 0
        if account is not None:
            solved = sum(
                p["solved"] for p in users.page_state(account, request.session, None)["problems"].values()
            )
        context = {
            "title": "Your account",
            "account": account,
            "solved": solved,
            "csrf": csrf_token(request.session),
            "error": error,
            "erased": erased,
        }
        return pages.render(request, "account.html", context, status_code)

    @router.get("", response_class=HTMLResponse)
    def account(request: Request) -> HTMLResponse:
        return account_page(request, service())

    @router.post("/erase", response_class=HTMLResponse)
    def erase(request: Request, password: FormText = "", csrf_token: FormText = "") -> HTMLResponse:
        users = service()
        if not checked_form(request, csrf_token):
            return account_page(request, users, status_code=403, error=expired)
        current = users.current(request.session)
        if current is None:
            return account_page(request, users, status_code=401)
        try:
            users.erase(current, password)
        except FieldError as error:
            return account_page(request, users, status_code=error.status, error=error)
        users.end_session(request.session)
        return account_page(request, users, erased=True)

    # ------------------------------------------------------------------------------------ JSON

    def signed_in(request: Request) -> tuple[Accounts, AccountRecord]:
        users = service()
        current = users.current(request.session)
        if current is None:
            raise ApiError(401, "signed_out", "sign in first: this keeps progress in an account")
        return users, current

    def known(slug: str, path: str) -> None:
        if slug not in {p.slug for p in catalog().summaries()}:
            raise ApiError(404, "problem_not_found", f"no problem {slug[:100]!r}", path=path)

    def sized(code: str, path: str, limit: int) -> None:
        size = len(code.encode())
        if size > limit:
            raise ApiError(
                413, "code_too_large", f"the code has {size} bytes; the limit is {limit}", path=path
            )

    @router.put("/code/{slug}")
    def save_code(slug: str, body: CodeBody, request: Request) -> dict[str, str]:
        users, current = signed_in(request)
        known(slug, "slug")
        if body.code is not None:
            sized(body.code, "code", users.max_code_bytes)
        return {"saved_at": users.save_code(current, slug, body.code)}

    @router.post("/import")
    def import_local(body: ImportBody, request: Request) -> dict[str, int]:
        users, current = signed_in(request)
        for slug, code in body.code.items():
            known(slug, f"code.{slug[:100]}")
            sized(code, f"code.{slug[:100]}", users.max_code_bytes)
        ids: dict[str, list[str]] = {}
        for slug, items in body.submissions.items():
            known(slug, f"submissions.{slug[:100]}")
            if len(items) > IMPORT_SUBMISSIONS_MAX:
                raise ApiError(
                    422,
                    "too_many_submissions",
                    f"at most {IMPORT_SUBMISSIONS_MAX} submissions of one problem",
                    path=f"submissions.{slug[:100]}",
                )
            ids[slug] = [_canonical(item) for item in items if _canonical(item)]
        imported = users.import_local(current, body.code, ids)
        return {"code": imported.code, "submissions": imported.submissions}

    return router


def _canonical(text: str) -> str:
    """A submission id as stored (lower-case UUID), or "" for anything else."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return ""
