"""``judge regrade``: the operator's command asks a running API node (judge.service.operator), with the
key from JUDGE_API_KEY; its refusals are the API's messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.service.apikeys import generate_key, hash_key
from judge.service.operator import OperatorError, regrade, regrade_job
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

KEY, OPERATOR = generate_key(), generate_key()


def test_regrade_through_the_api(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, api_keys={"lms": hash_key(KEY), "op": hash_key(OPERATOR)}, operator_keys=["op"]
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        body = {"problem": FIXTURE_SLUG, "code": "def scale_tree(tree, factor):\n    return tree\n"}
        sid = client.post(
            "/api/v1/submissions", json=body, headers={"Authorization": f"Bearer {KEY}"}
        ).json()["id"]
        client.get(f"/api/v1/submissions/{sid}?wait=30", headers={"Authorization": f"Bearer {KEY}"})
        one = regrade(client, KEY, submission=sid)
        assert (one["submission"], one["grading"], one["status"], one["notify"]) == (sid, 2, "queued", False)
        client.get(f"/api/v1/submissions/{sid}?wait=30", headers={"Authorization": f"Bearer {KEY}"})
        with pytest.raises(OperatorError, match="403 forbidden: API key 'lms' is not an operator key"):
            regrade(client, KEY, problem=FIXTURE_SLUG)
        job = regrade(client, OPERATOR, problem=FIXTURE_SLUG, force=True, notify=True, batch=3)
        assert (job["problem"], job["total"], job["batch"], job["notify"]) == (FIXTURE_SLUG, 1, 3, True)
        assert regrade_job(client, OPERATOR, job["id"])["id"] == job["id"]
        with pytest.raises(OperatorError, match="404 regrade_not_found"):
            regrade_job(client, OPERATOR, "nope")
        with pytest.raises(OperatorError, match="404 submission_not_found"):
            regrade(client, KEY, submission="00000000-0000-0000-0000-000000000000")
        with pytest.raises(OperatorError, match="exactly one"):
            regrade(client, KEY)


def test_the_command_needs_a_key_and_one_target(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    monkeypatch.delenv("JUDGE_API_KEY", raising=False)
    no_key = runner.invoke(app, ["regrade", "--problem", FIXTURE_SLUG])
    assert no_key.exit_code == 2 and "JUDGE_API_KEY" in no_key.output
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    both = runner.invoke(app, ["regrade", "--problem", FIXTURE_SLUG, "--submission", "x"])
    assert both.exit_code == 2 and "exactly one" in both.output
    also = runner.invoke(app, ["regrade", "--job", "j", "--submission", "x"])
    assert also.exit_code == 2 and "exactly one" in also.output
    # Nothing listens there: a refusal (exit 1) that says so, not a traceback.
    down = runner.invoke(app, ["regrade", "--submission", "x", "--url", "http://127.0.0.1:9"])
    assert down.exit_code == 1 and "does not answer" in down.output
