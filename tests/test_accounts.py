"""Learner accounts (JUDGE_ACCOUNTS) through the real app: sign-up and sign-in, sessions, CSRF, the
account's code, submissions and solved set, import, erasure, and nothing at all with the setting off."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from itsdangerous import TimestampSigner

from judge.core.verdicts import Verdict
from judge.service.routes.accounts import safe_next
from judge.service.state import Services
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, TUPLE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

PASSWORD = "correct horse battery"


@pytest.fixture
def judge(tmp_path: Path) -> Iterator[tuple[TestClient, Services]]:
    settings = make_settings(tmp_path, accounts=True, accounts_secret="s" * 40)
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as pair:
        yield pair


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


def meta_csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)"', page)
    assert found, page
    return found.group(1)


def sign_up(client: TestClient, name: str = "ada", password: str = PASSWORD, next_path: str = "/") -> str:
    """Sign up (and so in); the CSRF token of the signed-in session."""
    token = csrf_of(client.get("/account/signup").text)
    answer = client.post(
        "/account/signup",
        data={"name": name, "password": password, "csrf_token": token, "next": next_path},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    return meta_csrf(client.get("/").text)


def sign_in(client: TestClient, name: str, password: str) -> httpx.Response:
    token = csrf_of(client.get("/account/signin").text)
    answer: httpx.Response = client.post(
        "/account/signin",
        data={"name": name, "password": password, "csrf_token": token},
        follow_redirects=False,
    )
    return answer


def submit(client: TestClient, csrf: str, slug: str = FIXTURE_SLUG, code: str = "x = 1") -> str:
    answer = client.post(
        "/api/v1/submissions", json={"problem": slug, "code": code}, headers={"X-CSRF-Token": csrf}
    )
    assert answer.status_code == 202, answer.text
    sid: str = answer.json()["id"]
    assert client.get(f"/api/v1/submissions/{sid}?wait=30").json()["status"] == "done"
    return sid


def account_state(page: str) -> str:
    found = re.search(r'<script type="application/json" id="account-state">(.*?)</script>', page, re.S)
    assert found, "no account state in the page"
    return found.group(1)


# ------------------------------------------------------------------------------------ sign-up and sign-in


def test_sign_up_signs_in_and_the_header_names_the_account(judge: tuple[TestClient, Services]) -> None:
    client, services = judge
    assert 'href="/account/signin' in client.get("/").text  # signed out: the "Sign in" link
    sign_up(client, "Ada.L")
    page = client.get("/").text
    assert '<a href="/account" class="account-link">Ada.L</a>' in page
    assert 'action="/account/signout"' in page
    assert "Solved in your account" in page
    # The password is never stored: only an Argon2id hash of it.
    assert services.accounts is not None
    record = services.accounts.store.by_name("ada.l")
    assert record is not None and record.password_hash.startswith("$argon2id$")
    assert PASSWORD not in record.password_hash and PASSWORD not in repr(record)


def test_session_cookie_is_httponly_lax_and_secure_over_https(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    plain = client.get("/account/signin").headers["set-cookie"].lower()
    assert "httponly" in plain and "samesite=lax" in plain and "secure" not in plain
    secure = TestClient(client.app, base_url="https://testserver")
    answer = secure.get("/account/signin").headers["set-cookie"].lower()
    assert "httponly" in answer and "samesite=lax" in answer and "secure" in answer


def test_sign_up_errors_name_the_field(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    token = csrf_of(client.get("/account/signup").text)
    short = client.post("/account/signup", data={"name": "bob", "password": "short", "csrf_token": token})
    assert short.status_code == 400
    assert 'id="password-error"' in short.text and "at least 10 characters" in short.text
    assert 'aria-describedby="password-help password-error"' in short.text
    bad_name = client.post("/account/signup", data={"name": "a b", "password": PASSWORD, "csrf_token": token})
    assert bad_name.status_code == 400 and 'id="name-error"' in bad_name.text
    sign_up(client, "bob")
    other = TestClient(client.app)
    token = csrf_of(other.get("/account/signup").text)
    taken = other.post("/account/signup", data={"name": "BOB", "password": PASSWORD, "csrf_token": token})
    assert taken.status_code == 409 and 'id="name-error"' in taken.text and "is taken" in taken.text


def test_wrong_name_and_wrong_password_read_the_same(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    sign_up(client, "carol")
    fresh = TestClient(client.app)
    wrong_password = sign_in(fresh, "carol", "not the password")
    wrong_name = sign_in(fresh, "nobody-here", PASSWORD)
    assert wrong_password.status_code == wrong_name.status_code == 401
    for answer in (wrong_password, wrong_name):
        assert "Wrong name or password." in answer.text
        assert 'aria-describedby="form-error"' in answer.text
        assert "not the password" not in answer.text and PASSWORD not in answer.text
    assert sign_in(fresh, "Carol", PASSWORD).status_code == 303


def test_hostile_sign_in_fields_get_the_same_refusal(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    sign_up(client, "uma")
    fresh = TestClient(client.app)
    for name, password in (
        ("uma", "p" * 200_000),  # no hashing of a megabyte
        ("u\x00ma", PASSWORD),  # never sent to the database
        ("x" * 5000, PASSWORD),
    ):
        answer = sign_in(fresh, name, password)
        assert answer.status_code == 401, (name[:10], answer.status_code)
        assert "Wrong name or password." in answer.text
    token = csrf_of(fresh.get("/account/signin").text)
    raw = b"name=%FF%FE&password=%FF&csrf_token=" + token.encode()
    answer = fresh.post(
        "/account/signin", content=raw, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert answer.status_code < 500


def test_accounts_on_several_api_nodes_need_a_shared_secret(tmp_path: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="accounts_secret is unset"):
        make_settings(tmp_path, accounts=True, queue_url="redis://127.0.0.1:6379/0")
    make_settings(tmp_path, accounts=True, queue_url="redis://127.0.0.1:6379/0", accounts_secret="k" * 40)


def test_passwords_are_never_logged(
    judge: tuple[TestClient, Services], caplog: pytest.LogCaptureFixture
) -> None:
    client, _ = judge
    with caplog.at_level(logging.DEBUG):
        sign_up(client, "dora", "a secret that must not show")
        sign_in(TestClient(client.app), "dora", "a wrong secret to hide")
    assert "must not show" not in caplog.text and "wrong secret" not in caplog.text


def test_sign_in_attempts_are_rate_limited(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, accounts=True, accounts_secret="s" * 40, signin_rate_limit="3/minute")
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        answers = [sign_in(client, "eve", f"guess number {i}").status_code for i in range(4)]
        assert answers == [401, 401, 401, 429]
        last = sign_in(client, "eve", "guess")
        assert "Too many attempts" in last.text and int(last.headers["Retry-After"]) >= 1


def test_next_goes_to_a_page_of_this_site_only(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    token = csrf_of(client.get("/account/signup").text)
    data = {"name": "fay", "password": PASSWORD, "csrf_token": token}
    answer = client.post("/account/signup", data={**data, "next": "//evil.example/"}, follow_redirects=False)
    assert answer.headers["location"] == "/"
    for hostile in ("/\t/evil.example/", "/\\evil.example", "https://evil.example/", "/\n/evil.example"):
        assert safe_next(hostile) == "/", hostile
    assert safe_next(f"/problems/{FIXTURE_SLUG}") == f"/problems/{FIXTURE_SLUG}"
    client.cookies.clear()
    sign_in_page = client.get(f"/account/signin?next=/problems/{FIXTURE_SLUG}").text
    assert f'name="next" value="/problems/{FIXTURE_SLUG}"' in sign_in_page


# ------------------------------------------------------------------------------------ CSRF and sessions


def test_forms_and_fetches_without_the_token_are_refused(judge: tuple[TestClient, Services]) -> None:
    client, services = judge
    client.get("/account/signup")  # a session with a token
    refused = client.post("/account/signup", data={"name": "gil", "password": PASSWORD, "csrf_token": "x"})
    assert refused.status_code == 403 and "form expired" in refused.text
    assert services.accounts is not None and services.accounts.store.by_name("gil") is None
    csrf = sign_up(client, "gil")
    put = client.put(f"/account/code/{FIXTURE_SLUG}", json={"code": "y = 2"})
    assert put.status_code == 403 and put.json()["error"]["code"] == "csrf_failed"
    wrong = client.put(f"/account/code/{FIXTURE_SLUG}", json={"code": "y"}, headers={"X-CSRF-Token": "nope"})
    assert wrong.status_code == 403
    # The API too, while signed in: another site cannot submit or run as the learner.
    submit_without = client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": "x = 1"})
    assert submit_without.status_code == 403
    run_without = client.post(f"/api/v1/problems/{FIXTURE_SLUG}/run", json={"code": "x = 1"})
    assert run_without.status_code == 403
    signout = client.post("/account/signout", data={"csrf_token": "forged"}, follow_redirects=False)
    assert signout.status_code == 403
    assert client.put(
        f"/account/code/{FIXTURE_SLUG}", json={"code": "y"}, headers={"X-CSRF-Token": csrf}
    ).is_success
    # Without the session cookie (an API client), nothing changes: no token needed.
    anonymous = TestClient(client.app)
    assert (
        anonymous.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": "x"}).status_code == 202
    )


def test_a_cookie_signed_with_another_secret_signs_nobody_in(judge: tuple[TestClient, Services]) -> None:
    client, services = judge
    csrf = sign_up(client, "hal")
    assert services.accounts is not None
    account = services.accounts.store.by_name("hal")
    assert account is not None
    import base64
    import json

    payload = base64.b64encode(json.dumps({"account": account.id, "csrf": csrf}).encode())
    forged = TimestampSigner("another secret " * 3).sign(payload).decode()
    other = TestClient(client.app)
    other.cookies.set("judge_session", forged)
    page = other.get("/").text
    assert "account-state" not in page and 'class="account-link">Sign in' in page
    answer = other.put(f"/account/code/{FIXTURE_SLUG}", json={"code": "z"}, headers={"X-CSRF-Token": csrf})
    assert answer.status_code == 401


def test_sign_out_ends_the_session(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    csrf = sign_up(client, "ivy")
    answer = client.post("/account/signout", data={"csrf_token": csrf}, follow_redirects=False)
    assert answer.status_code == 303
    assert "account-state" not in client.get("/").text
    assert (
        client.put(
            f"/account/code/{FIXTURE_SLUG}", json={"code": "z"}, headers={"X-CSRF-Token": csrf}
        ).status_code
        == 401
    )


# ------------------------------------------------------------------------------------ progress


def test_submissions_code_and_solved_set_follow_the_account(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    csrf = sign_up(client, "joan")
    sid = submit(client, csrf)
    saved = client.put(
        f"/account/code/{FIXTURE_SLUG}",
        json={"code": "def f(x):\n    return x  # mine"},
        headers={"X-CSRF-Token": csrf},
    )
    assert saved.status_code == 200 and "saved_at" in saved.json()
    # Another browser: a fresh client that only signs in.
    other = TestClient(client.app)
    assert sign_in(other, "joan", PASSWORD).status_code == 303
    state = account_state(other.get(f"/problems/{FIXTURE_SLUG}").text)
    assert sid in state and "# mine" in state and '"solved": true' in state
    listing = account_state(other.get("/").text)
    assert f'"{FIXTURE_SLUG}": {{"at"' in listing and '"solved": true' in listing and "# mine" not in listing
    # An anonymous submission is nobody's.
    anonymous = TestClient(client.app)
    free = anonymous.post("/api/v1/submissions", json={"problem": TUPLE_SLUG, "code": "x"}).json()["id"]
    assert free not in account_state(other.get(f"/problems/{TUPLE_SLUG}").text)


def test_a_problem_stays_solved_when_retention_removes_the_submission(
    judge: tuple[TestClient, Services],
) -> None:
    client, services = judge
    csrf = sign_up(client, "kai")
    sid = submit(client, csrf)
    assert '"solved": true' in account_state(client.get("/").text)  # seen once: recorded
    assert services.store.deletion.delete(sid)
    state = account_state(client.get(f"/problems/{FIXTURE_SLUG}").text)
    assert '"solved": true' in state and sid not in state


def test_a_wrong_answer_is_not_solved(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, accounts=True, accounts_secret="s" * 40)
    engine = FakeEngine(Verdict.WRONG_ANSWER)
    with running(settings, backend=get_backend("process"), engine=engine) as (client, _):
        csrf = sign_up(client, "lee")
        submit(client, csrf)
        state = account_state(client.get("/").text)
        assert '"verdict": "wrong_answer"' in state and '"solved": false' in state


def test_code_saves_are_checked(judge: tuple[TestClient, Services]) -> None:
    client, services = judge
    csrf = sign_up(client, "max")
    headers = {"X-CSRF-Token": csrf}
    unknown = client.put("/account/code/no-such-problem", json={"code": "x"}, headers=headers)
    assert unknown.status_code == 404 and unknown.json()["error"]["path"] == "slug"
    big = "x" * (services.settings.max_code_bytes + 1)
    assert client.put(f"/account/code/{FIXTURE_SLUG}", json={"code": big}, headers=headers).status_code == 413
    assert (
        client.put(f"/account/code/{FIXTURE_SLUG}", json={"code": None}, headers=headers).status_code == 200
    )


def test_import_takes_a_browsers_progress_but_not_others_submissions(
    judge: tuple[TestClient, Services],
) -> None:
    client, _ = judge
    anonymous = TestClient(client.app)
    mine = anonymous.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": "x = 1"}).json()["id"]
    assert anonymous.get(f"/api/v1/submissions/{mine}?wait=30").json()["status"] == "done"
    csrf = sign_up(client, "ned")
    theirs_client = TestClient(client.app)
    their_csrf = sign_up(theirs_client, "oda")
    theirs = submit(theirs_client, their_csrf)
    body = {
        "code": {FIXTURE_SLUG: "# from before", TUPLE_SLUG: "# tuple"},
        "submissions": {FIXTURE_SLUG: [mine, theirs, "not-an-id"]},
    }
    answer = client.post("/account/import", json=body, headers={"X-CSRF-Token": csrf})
    assert answer.status_code == 200 and answer.json() == {"code": 2, "submissions": 1}
    state = account_state(client.get(f"/problems/{FIXTURE_SLUG}").text)
    assert mine in state and theirs not in state and "# from before" in state and '"solved": true' in state
    # Code the account has already stays.
    again = client.post(
        "/account/import", json={"code": {FIXTURE_SLUG: "# newer?"}}, headers={"X-CSRF-Token": csrf}
    )
    assert again.json() == {"code": 0, "submissions": 0}
    unknown = client.post("/account/import", json={"code": {"nope": "x"}}, headers={"X-CSRF-Token": csrf})
    assert unknown.status_code == 404


# ------------------------------------------------------------------------------------ erasure


def test_erasing_the_account_erases_its_code_history_and_solved_set(
    judge: tuple[TestClient, Services],
) -> None:
    client, services = judge
    csrf = sign_up(client, "pia")
    assert services.accounts is not None
    account = services.accounts.store.by_name("pia")
    assert account is not None
    sid = submit(client, csrf)
    client.put(f"/account/code/{FIXTURE_SLUG}", json={"code": "# pia"}, headers={"X-CSRF-Token": csrf})
    other = TestClient(client.app)
    other_csrf = sign_up(other, "quin")
    kept = submit(other, other_csrf)
    wrong = client.post("/account/erase", data={"password": "not it at all", "csrf_token": csrf})
    assert wrong.status_code == 401 and 'id="password-error"' in wrong.text
    assert services.store.submissions.get(sid) is not None
    erased = client.post("/account/erase", data={"password": PASSWORD, "csrf_token": csrf})
    assert erased.status_code == 200 and "was erased" in erased.text
    assert services.store.submissions.get(sid) is None and services.store.submissions.get(kept) is not None
    assert services.accounts.store.by_name("pia") is None
    assert services.accounts.store.progress(account.id) == {}
    assert sign_in(TestClient(client.app), "pia", PASSWORD).status_code == 401
    assert "account-state" not in client.get("/").text


# ------------------------------------------------------------------------------------ accounts off


def test_a_visitor_who_does_not_sign_in_gets_no_cookie(judge: tuple[TestClient, Services]) -> None:
    client, _ = judge
    for path in ("/", f"/problems/{FIXTURE_SLUG}"):
        assert "set-cookie" not in client.get(path).headers, path
    assert client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": "x"}).status_code == 202
    assert not client.cookies


def test_with_accounts_off_no_account_route_exists_and_no_link_shows(tmp_path: Path) -> None:
    with running(make_settings(tmp_path), backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        for path in ("/account", "/account/signin", "/account/signup"):
            assert client.get(path).status_code == 404, path
        for path in ("/account/signin", "/account/signup", "/account/signout", "/account/import"):
            assert client.post(path, data={}).status_code in (404, 405), path
        assert client.put(f"/account/code/{FIXTURE_SLUG}", json={"code": "x"}).status_code in (404, 405)
        page = client.get("/")
        assert "Sign in" not in page.text and "/account" not in page.text
        assert "set-cookie" not in page.headers
        assert "Solved in this browser" in page.text


def test_the_operator_erases_an_account_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from judge.cli import app
    from judge.store import Store, sqlite_url
    from judge.store.accounts import AccountStore

    url = sqlite_url(tmp_path / "judge.sqlite3")
    store = Store(url)
    store.migrate()
    accounts = AccountStore(store)
    account = accounts.create("Rae", "$argon2id$x")
    accounts.save_code(account.id, FIXTURE_SLUG, "# rae")
    store.close()
    monkeypatch.setenv("JUDGE_DATABASE_URL", url)
    runner = CliRunner()
    erased = runner.invoke(app, ["erase-account", "rae"])
    assert erased.exit_code == 0, erased.output
    assert "erased account 'Rae': 0 submissions, 1 problems" in erased.output
    again = runner.invoke(app, ["erase-account", "rae"])
    assert again.exit_code == 1 and "no account named 'rae'" in again.output
