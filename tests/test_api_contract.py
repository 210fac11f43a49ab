"""The API as a versioned, typed contract: /api/v1 with stable operationIds (the unversioned paths
deprecated), enums for verdicts and error codes, response headers, the event types, the callback as a
webhook, and limits that match the server's; then a typed client generated from /openapi.json alone by
a standard generator (openapi-python-client, in its own venv .venv/codegen) compiles, type-checks and
does a round trip against the app."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.service.apikeys import generate_key, hash_key
from judge.service.app import create_app
from judge.service.contract import ERROR_CODES
from judge.service.errors import _HTTP_CODES
from judge.service.schemas import MAX_TAGS
from judge.verdicts import Verdict
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, ROOT
from tests.service_support import FakeEngine, make_settings, running

GENERATOR = ROOT / ".venv" / "codegen" / "bin" / "openapi-python-client"
KEY = generate_key()


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    app = create_app(make_settings(tmp_path_factory.mktemp("contract")))
    document: dict[str, Any] = app.openapi()
    return document


def test_every_route_is_under_v1_with_a_stable_operation_id(schema: dict[str, Any]) -> None:
    operations = {(path, method): op for path, item in schema["paths"].items() for method, op in item.items()}
    v1 = {key: op for key, op in operations.items() if key[0].startswith("/api/v1/")}
    legacy = {key: op for key, op in operations.items() if key[0].startswith("/api/") and key not in v1}
    assert len(v1) == len(legacy) >= 14
    for (path, method), op in legacy.items():
        assert op["deprecated"] is True, path
        twin = v1[("/api/v1" + path[len("/api") :], method)]
        assert op["operationId"] == f"legacy_{twin['operationId']}"
        assert "deprecated" not in twin
    ids = [op["operationId"] for op in operations.values()]
    assert len(ids) == len(set(ids))
    assert v1[("/api/v1/submissions", "post")]["operationId"] == "create_submission"
    assert v1[("/api/v1/submissions", "get")]["operationId"] == "list_submissions"
    assert operations[("/healthz", "get")]["operationId"] == "healthz"


def test_enums_headers_events_and_webhook_are_declared(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    assert (
        components["Verdict"]["enum"] == [v.value for v in Verdict]
        and "not_run" in components["Verdict"]["enum"]
    )
    assert "not_run" in components["Verdict"]["description"]
    codes = components["ErrorInfo"]["properties"]["code"]["enum"]
    for code in (
        "forbidden",
        "not_found",
        "method_not_allowed",
        "invalid_callback_url",
        "idempotency_conflict",
    ):
        assert code in codes
    submit = schema["paths"]["/api/v1/submissions"]["post"]["responses"]
    assert "Location" in submit["202"]["headers"] and "Idempotent-Replayed" in submit["200"]["headers"]
    assert "Retry-After" in submit["429"]["headers"]
    assert "ETag" in schema["paths"]["/api/v1/problems/{slug}"]["get"]["responses"]["200"]["headers"]
    events = schema["paths"]["/api/v1/submissions/{submission_id}/events"]["get"]["x-event-types"]
    assert set(events) == {"status", "case", "result", "failed"}
    assert all(ref["$ref"].split("/")[-1] in components for ref in events.values())
    webhook = schema["webhooks"]["submissionFinished"]["post"]
    assert {p["name"] for p in webhook["parameters"]} >= {
        "X-Judge-Signature",
        "X-Judge-Timestamp",
        "X-Judge-Delivery",
    }
    assert webhook["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "SubmissionPublic"
    )


def test_limits_in_the_schema_match_the_server(schema: dict[str, Any]) -> None:
    create = schema["components"]["schemas"]["SubmissionCreate"]["properties"]
    url = next(o for o in create["callback_url"]["anyOf"] if o.get("type") == "string")
    assert url["format"] == "uri" and url["maxLength"] == 2048
    user = next(o for o in create["external_user"]["anyOf"] if o.get("type") == "string")
    assert user["maxLength"] == 200 and user["pattern"]
    assert create["problem"]["maxLength"] == 200
    assert f"at most {MAX_TAGS}" in create["tags"]["description"]


def test_every_error_code_the_judge_answers_with_is_declared() -> None:
    used = set(_HTTP_CODES.values()) | {"invalid_request", "internal_error", "bad_request"}
    pattern = re.compile(r'ApiError\(\s*\d{3},\s*"([a-z_]+)"')
    for source in (ROOT / "judge").rglob("*.py"):
        used |= set(pattern.findall(source.read_text()))
    assert used - set(ERROR_CODES) == set()


@pytest.fixture(scope="module")
def generated(schema: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not GENERATOR.exists():
        pytest.skip("the client generator is not installed: scripts/setup --test puts it in .venv/codegen")
    root = tmp_path_factory.mktemp("client")
    spec = root / "openapi.json"
    spec.write_text(json.dumps(schema))
    config = root / "config.json"
    config.write_text(json.dumps({"post_hooks": [], "package_name_override": "judge_client"}))
    package = root / "judge_client"
    run = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(spec), "--output-path", str(package), "--meta", "none",
         "--config", str(config)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Unable to" not in run.stdout, run.stdout  # every operation and model was generated
    sys.path.insert(0, str(root))
    try:
        yield str(package)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "judge_client" or m.startswith("judge_client.")]:
            del sys.modules[name]


def test_the_generated_client_type_checks(generated: str) -> None:
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--no-incremental", generated],
        capture_output=True, text=True, timeout=300, cwd=str(Path(generated).parent),
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout[-3000:]


def test_the_generated_client_does_a_round_trip(generated: str, tmp_path: Path) -> None:
    client_module = importlib.import_module("judge_client")
    submissions = importlib.import_module("judge_client.api.submissions")
    models = importlib.import_module("judge_client.models")
    create = importlib.import_module("judge_client.api.submissions.create_submission")
    get = importlib.import_module("judge_client.api.submissions.get_submission")
    listing = importlib.import_module("judge_client.api.submissions.list_submissions")
    delete = importlib.import_module("judge_client.api.submissions.delete_submission")
    problem = importlib.import_module("judge_client.api.problems.get_problem")
    assert submissions is not None
    settings = make_settings(tmp_path, api_keys={"lms": hash_key(KEY)})
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (test_client, _):
        api = client_module.AuthenticatedClient(base_url="http://testserver", token=KEY)
        api.set_httpx_client(test_client)
        test_client.headers["Authorization"] = f"Bearer {KEY}"
        detail = problem.sync(slug=FIXTURE_SLUG, client=api)
        assert isinstance(detail, models.ProblemDetail) and len(detail.version.hash_) == 64
        tags = models.SubmissionCreateTagsType0.from_dict({"course": "jax-101"})
        body = models.SubmissionCreate(
            problem=FIXTURE_SLUG, code="def scale_tree(tree, factor):\n    return tree\n",
            external_user="learner-1", tags=tags,
        )  # fmt: skip
        accepted = create.sync_detailed(client=api, body=body, idempotency_key="rt-1")
        assert accepted.status_code == 202 and isinstance(accepted.parsed, models.SubmissionAccepted)
        replay = create.sync_detailed(client=api, body=body, idempotency_key="rt-1")
        assert replay.status_code == 200 and replay.parsed.id == accepted.parsed.id
        done = get.sync(submission_id=accepted.parsed.id, client=api, wait=30.0)
        assert isinstance(done, models.SubmissionPublic)
        assert done.verdict == models.Verdict.ACCEPTED and done.external_user == "learner-1"
        assert done.result.verdict.value == "accepted"
        page = listing.sync(client=api, external_user="learner-1", count=True)
        assert isinstance(page, models.SubmissionPage) and page.total == 1
        missing = get.sync(submission_id="00000000-0000-0000-0000-000000000000", client=api)
        assert (
            isinstance(missing, models.ErrorBody)
            and missing.error.code == models.ErrorInfoCode.SUBMISSION_NOT_FOUND
        )
        assert delete.sync_detailed(submission_id=accepted.parsed.id, client=api).status_code == 204
