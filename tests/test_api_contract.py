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

from judge.core.problems import Problem
from judge.core.results import CaseCost, GradeResult, MistakeMatch, ProgramMark, ProgramView
from judge.core.verdicts import Verdict
from judge.dispatch.callbacks import URL_PATTERN
from judge.service.api_errors import _HTTP_CODES
from judge.service.apikeys import generate_key, hash_key
from judge.service.app import create_app
from judge.service.contract import ERROR_CODES
from judge.service.schemas import MAX_TAGS
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, ROOT
from tests.fakes import CaseCallback, FakeEngine
from tests.service_support import make_settings, running

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
    declared = {p["name"]: p for p in webhook["parameters"]}
    assert set(declared) >= {"webhook-id", "webhook-timestamp", "webhook-signature"}
    for old in ("X-Judge-Signature", "X-Judge-Timestamp", "X-Judge-Delivery"):
        assert declared[old]["deprecated"] is True
    body = webhook["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/SubmissionCallback"}
    # The same callback as a `callbacks` object of each submit (what generators read), its body a named
    # component schema: the submission less its delivery record and queue position.
    for path in ("/api/v1/submissions", "/api/v1/submissions/batch"):
        callbacks = schema["paths"][path]["post"]["callbacks"]["submissionFinished"]
        ((expression, item),) = callbacks.items()
        assert expression.startswith("{$request.body#/") and expression.endswith("callback_url}")
        assert item["post"]["requestBody"]["content"]["application/json"]["schema"] == body
    callback = components["SubmissionCallback"]
    assert "callback" not in callback["properties"] and "waiting" not in callback["properties"]
    assert set(callback["required"]) >= {"id", "status", "manifest", "links"}


#: The operators' problem-version routes: a key always (tests/test_problem_versions.py).
ADMIN = {"put_problem", "get_problem_versions", "retire_problem"}


def test_failures_security_and_sparse_reads_are_declared(schema: dict[str, Any]) -> None:
    """Every operation declares the 500 and 431 it may answer, every /api one the 503 with Retry-After;
    a key is optional where anonymous callers are served and required where one always is; a fields=
    read is the sparse SubmissionFields, listing items are typed, a redelivery has no body; the listing's
    times are date-time strings."""
    key_required = {
        "list_submissions", "erase_user", "list_workers", "regrade_problem", "get_regrade", "cancel_regrade",
    } | ADMIN  # fmt: skip
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert {"500", "431"} <= set(responses), (path, method)
            error = responses["500"]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/ErrorBody"}
            if path.startswith("/api/"):
                assert "Retry-After" in responses["503"]["headers"], (path, method)
            security = operation.get("security")
            if security is not None:
                name = operation["operationId"].removeprefix("legacy_")
                assert ({} in security) is (name not in key_required), (path, method, security)
    read = schema["paths"]["/api/v1/submissions/{submission_id}"]["get"]["responses"]["200"]
    options = read["content"]["application/json"]["schema"]["anyOf"]
    assert [o["$ref"].split("/")[-1] for o in options] == ["SubmissionPublic", "SubmissionFields"]
    sparse = schema["components"]["schemas"]["SubmissionFields"]
    assert "required" not in sparse and {"callback", "code", "result"} <= set(sparse["properties"])
    page = schema["components"]["schemas"]["SubmissionPage"]["properties"]
    assert {o["$ref"].split("/")[-1] for o in page["items"]["items"]["anyOf"]} == {
        "SubmissionSummary",
        "SubmissionFields",
    }
    redeliver = schema["paths"]["/api/v1/submissions/{submission_id}/callback"]["post"]["responses"]["202"]
    assert "content" not in redeliver
    listing = {p["name"]: p["schema"] for p in schema["paths"]["/api/v1/submissions"]["get"]["parameters"]}
    for name in ("created_after", "created_before"):
        assert listing[name]["anyOf"][0] == {"type": "string", "maxLength": 64, "format": "date-time"}
    batch = schema["paths"]["/api/v1/submissions/batch"]["post"]
    assert "Idempotency-Key" in {p["name"] for p in batch["parameters"]}
    assert "Idempotent-Replayed" in batch["responses"]["200"]["headers"]


def test_limits_in_the_schema_match_the_server(schema: dict[str, Any]) -> None:
    create = schema["components"]["schemas"]["SubmissionCreate"]["properties"]
    url = next(o for o in create["callback_url"]["anyOf"] if o.get("type") == "string")
    assert url["pattern"] == URL_PATTERN and url["maxLength"] == 2048
    user = next(o for o in create["external_user"]["anyOf"] if o.get("type") == "string")
    assert user["maxLength"] == 200 and user["pattern"]
    assert create["problem"]["maxLength"] == 200
    assert f"at most {MAX_TAGS}" in create["tags"]["description"]
    tags = next(o for o in create["tags"]["anyOf"] if o.get("type") == "object")
    assert tags["maxProperties"] == MAX_TAGS


@pytest.mark.parametrize(
    "overrides", [{}, {"max_code_bytes": 4096, "page_max": 75, "max_wait_s": 12.5, "batch_max": 7}]
)
def test_limits_that_are_settings_come_from_the_settings_the_app_is_built_with(
    tmp_path: Path, overrides: dict[str, Any]
) -> None:
    """code's maxLength (max_code_bytes, said to be bytes), the batch's maxItems (batch_max), the
    listing's limit (page_max) and wait (max_wait_s), as the server answering them is configured."""
    settings = make_settings(tmp_path, api_keys={"lms": hash_key(KEY)}, **overrides)
    document: dict[str, Any] = create_app(settings).openapi()
    components = document["components"]["schemas"]
    for model in ("SubmissionCreate", "RunRequest"):
        code = components[model]["properties"]["code"]
        assert code["maxLength"] == code["x-maxBytes"] == settings.max_code_bytes
        assert f"At most {settings.max_code_bytes} bytes of UTF-8" in code["description"]
    assert components["BatchCreate"]["properties"]["items"]["maxItems"] == settings.batch_max
    for prefix in ("/api/v1", "/api"):
        listing = {
            p["name"]: p["schema"] for p in document["paths"][f"{prefix}/submissions"]["get"]["parameters"]
        }
        assert listing["limit"]["maximum"] == settings.page_max
        read = document["paths"][f"{prefix}/submissions/{{submission_id}}"]["get"]["parameters"]
        assert {p["name"]: p["schema"] for p in read}["wait"]["maximum"] == settings.max_wait_s
    # The server answers past each bound with the 422 naming the setting, and accepts the bound itself.
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        client.headers["Authorization"] = f"Bearer {KEY}"
        too_long = "x" * (settings.max_code_bytes + 1)
        answer = client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": too_long})
        assert answer.status_code == 422 and answer.json()["error"]["limit"] == "max_code_bytes"
        batch = {"items": [{"problem": FIXTURE_SLUG, "code": "x"}] * (settings.batch_max + 1)}
        answer = client.post("/api/v1/submissions/batch", json=batch)
        assert answer.status_code == 422 and answer.json()["error"]["limit"] == "batch_max"
        sid = "00000000-0000-0000-0000-000000000000"
        answer = client.get(f"/api/v1/submissions/{sid}", params={"wait": settings.max_wait_s + 1})
        assert answer.status_code == 422 and answer.json()["error"]["limit"] == "max_wait_s"
        assert client.get(f"/api/v1/submissions/{sid}", params={"wait": 0}).status_code == 404
        answer = client.get("/api/v1/submissions", params={"limit": settings.page_max + 1})
        assert answer.status_code == 422 and answer.json()["error"]["limit"] == "page_max"
        assert client.get("/api/v1/submissions", params={"limit": settings.page_max}).status_code == 200


def test_each_event_stream_declares_its_own_event_types(schema: dict[str, Any]) -> None:
    """A streamed Run sends progress, result and error (judge/service/routes/run_events.py), not a
    submission's status, case, result and failed; every text/event-stream operation declares its own."""
    components = schema["components"]["schemas"]
    for prefix in ("/api/v1", "/api"):
        run = schema["paths"][f"{prefix}/problems/{{slug}}/run/events"]["post"]["x-event-types"]
        assert {kind: ref["$ref"].split("/")[-1] for kind, ref in run.items()} == {
            "progress": "RunProgress",
            "result": "RunResultEvent",
            "error": "RunErrorEvent",
        }
        submission = schema["paths"][f"{prefix}/submissions/{{submission_id}}/events"]["get"]
        assert set(submission["x-event-types"]) == {"status", "case", "result", "failed"}
    progress = set(components["RunProgress"]["properties"])
    assert progress >= {"phase", "traced", "compiled", "ran", "detail", "warmup"}
    assert {"starting", "queued", "retry_in_s", "start_failed"} <= set(
        components["WarmupProgress"]["properties"]
    )
    assert components["RunResultEvent"]["properties"]["result"]["$ref"].endswith("/GradeResult")
    error = components["RunErrorEvent"]["properties"]
    assert error["status"]["type"] == "integer" and error["error"]["$ref"].endswith("/ErrorInfo")
    # The names the Run stream sends are the ones declared.
    source = (ROOT / "judge" / "service" / "routes" / "run_events.py").read_text()
    sent = set(re.findall(r'send\("([a-z_]+)"', source))
    assert sent == set(run)
    for path, item in schema["paths"].items():
        for operation in item.values():
            content = operation["responses"].get("200", {}).get("content", {})
            if "text/event-stream" in content:
                assert operation.get("x-event-types"), path


def test_every_error_code_the_judge_answers_with_is_declared() -> None:
    used = set(_HTTP_CODES.values()) | {"invalid_request", "internal_error", "bad_request"}
    # Raised as ApiError, or written as an error body by a middleware that answers before the routes
    # (the CSRF check) or by a node's own small HTTP server.
    patterns = (re.compile(r'ApiError\(\s*\d{3},\s*"([a-z_]+)"'), re.compile(r'"code": "([a-z_]+)"'))
    for source in (ROOT / "judge").rglob("*.py"):
        text = source.read_text()
        for pattern in patterns:
            used |= set(pattern.findall(text))
    assert {"csrf_failed", "not_found"} <= used
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


def test_the_generated_client_covers_every_submission_route_and_option(
    generated: str, tmp_path: Path
) -> None:
    """The generated client through every submission route and option: a batch with an Idempotency-Key
    (replayed, then a 409), ``fields`` answers (sparse, ``callback`` and ``code`` among them) parsed
    into SubmissionFields, typed listing items and a multi-get by ids, a redelivery (202, no body), the
    code, typed errors, and a real callback delivery parsed with the generated SubmissionCallback."""
    models = importlib.import_module("judge_client.models")
    client_module = importlib.import_module("judge_client")
    api_mod = "judge_client.api.submissions."
    batch = importlib.import_module(api_mod + "create_batch")
    get = importlib.import_module(api_mod + "get_submission")
    listing = importlib.import_module(api_mod + "list_submissions")
    redeliver = importlib.import_module(api_mod + "redeliver_callback")
    code = importlib.import_module(api_mod + "get_submission_code")
    types = importlib.import_module("judge_client.types")
    from tests.test_service_callbacks import Receiver

    receiver = Receiver([])
    receiver.thread.start()
    settings = make_settings(
        tmp_path, api_keys={"lms": hash_key(KEY)}, callback_hosts=["127.0.0.1"], callback_secret="s3cret"
    )
    source = "def scale_tree(tree, factor):\n    return tree\n"
    try:
        with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (
            test_client,
            services,
        ):
            api = client_module.AuthenticatedClient(base_url="http://testserver", token=KEY)
            api.set_httpx_client(test_client)
            test_client.headers["Authorization"] = f"Bearer {KEY}"
            items = [
                models.SubmissionCreate(problem=FIXTURE_SLUG, code=source, callback_url=receiver.url),
                models.SubmissionCreate(problem="no-such-problem", code=source),
            ]
            body = models.BatchCreate(items=items)
            first = batch.sync_detailed(client=api, body=body, idempotency_key="b-1")
            assert first.status_code == 200 and isinstance(first.parsed, models.BatchAccepted)
            assert [i.status_code for i in first.parsed.items] == [202, 404]
            assert first.parsed.items[1].error.code == models.ErrorInfoCode.PROBLEM_NOT_FOUND
            again = batch.sync_detailed(client=api, body=body, idempotency_key="b-1")
            assert again.headers["Idempotent-Replayed"] == "true"
            sid = first.parsed.items[0].submission.id
            assert again.parsed.items[0].submission.id == sid and len(services.store.submissions.ids()) == 1
            conflict = batch.sync_detailed(
                client=api, body=models.BatchCreate(items=items[:1]), idempotency_key="b-1"
            )
            assert conflict.status_code == 409 and isinstance(conflict.parsed, models.ErrorBody)
            assert conflict.parsed.error.code == models.ErrorInfoCode.IDEMPOTENCY_CONFLICT
            done = get.sync(submission_id=sid, client=api, wait=30.0)
            assert isinstance(done, models.SubmissionPublic) and done.verdict == models.Verdict.ACCEPTED
            receiver.wait_for(1)
            sparse = get.sync(submission_id=sid, client=api, fields="id,verdict,callback,code")
            assert isinstance(sparse, models.SubmissionFields)
            assert sparse.id == sid and sparse.code == source and sparse.verdict == models.Verdict.ACCEPTED
            assert isinstance(sparse.callback, models.CallbackStatus) and sparse.callback.url == receiver.url
            assert isinstance(sparse.status, types.Unset)  # absent, not null
            page = listing.sync(client=api, count=True)
            assert isinstance(page, models.SubmissionPage) and page.total == 1
            assert isinstance(page.items[0], models.SubmissionSummary) and page.items[0].id == sid
            slim = listing.sync(client=api, fields="id,status")
            assert isinstance(slim.items[0], models.SubmissionFields) and slim.items[0].id == sid
            unknown = "00000000-0000-0000-0000-000000000000"
            several = listing.sync(client=api, ids=f"{unknown},{sid}", fields="id,result")
            assert [i.id for i in several.items] == [sid] and several.missing == [unknown]
            assert isinstance(several.items[0].result, models.GradeResult)
            refused = listing.sync(client=api, created_after=None, tag="no colon")
            assert isinstance(refused, models.ErrorBody) and refused.error.path == "tag"
            answer = redeliver.sync_detailed(submission_id=sid, client=api)
            assert answer.status_code == 202 and answer.content == b"" and answer.parsed is None
            assert code.sync(submission_id=sid, client=api).code == source
            # The callback a platform receives parses into the generated model of its body.
            _headers, delivered, _at = receiver.requests[0]
            callback = models.SubmissionCallback.from_dict(json.loads(delivered))
            assert callback.id == sid and callback.verdict == models.Verdict.ACCEPTED
            assert isinstance(callback.result, models.GradeResult)
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()


def test_the_generated_client_regrades_and_reads_gradings(generated: str, tmp_path: Path) -> None:
    """The generated client through the regrade routes: a submission's regrade (RegradeAccepted), its
    gradings (GradingList, typed items), a problem regrade (RegradeJob) and its progress, and their
    errors (409 regrade_conflict is declared and parsed; 404 regrade_not_found)."""
    models = importlib.import_module("judge_client.models")
    client_module = importlib.import_module("judge_client")
    create = importlib.import_module("judge_client.api.submissions.create_submission")
    get = importlib.import_module("judge_client.api.submissions.get_submission")
    regrade = importlib.import_module("judge_client.api.regrades.regrade_submission")
    gradings = importlib.import_module("judge_client.api.regrades.list_gradings")
    problem = importlib.import_module("judge_client.api.regrades.regrade_problem")
    job = importlib.import_module("judge_client.api.regrades.get_regrade")
    operator = generate_key()
    settings = make_settings(
        tmp_path, api_keys={"lms": hash_key(KEY), "op": hash_key(operator)}, operator_keys=["op"]
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (test_client, _):
        api = client_module.AuthenticatedClient(base_url="http://testserver", token=KEY)
        api.set_httpx_client(test_client)
        test_client.headers["Authorization"] = f"Bearer {KEY}"
        body = models.SubmissionCreate(
            problem=FIXTURE_SLUG, code="def scale_tree(tree, factor):\n    return tree\n"
        )
        sid = create.sync(client=api, body=body).id
        get.sync(submission_id=sid, client=api, wait=30.0)
        queued = regrade.sync(submission_id=sid, client=api, notify=False)
        assert isinstance(queued, models.RegradeAccepted) and (queued.submission, queued.grading) == (sid, 2)
        busy = regrade.sync(submission_id=sid, client=api)
        if isinstance(busy, models.ErrorBody):  # still queued or being graded
            assert busy.error.code == models.ErrorInfoCode.REGRADE_CONFLICT
        get.sync(submission_id=sid, client=api, wait=30.0)
        history = gradings.sync(submission_id=sid, client=api)
        assert isinstance(history, models.GradingList) and history.items[0].number == 1
        assert all(isinstance(item, models.GradingPublic) for item in history.items)
        test_client.headers["Authorization"] = f"Bearer {operator}"
        started = problem.sync(slug=FIXTURE_SLUG, client=api, force=True, batch=5)
        assert isinstance(started, models.RegradeJob) and started.total == 1 and started.batch == 5
        progress = job.sync(job_id=started.id, client=api)
        assert isinstance(progress, models.RegradeJob) and progress.id == started.id
        missing = job.sync(job_id="nope", client=api)
        assert isinstance(missing, models.ErrorBody)
        assert missing.error.code == models.ErrorInfoCode.REGRADE_NOT_FOUND


class _FeedbackEngine(FakeEngine):
    """Grades instantly, every case with the three kinds of feedback a real grading may attach."""

    def _result(self, problem: Problem, names: list[str], on_case: CaseCallback | None) -> GradeResult:
        result = super()._result(problem, names, on_case)
        view = ProgramView(
            jaxpr="{ lambda ; a:f32[3]. let\n    b:f32[3] = cholesky a\n  in (b,) }",
            stablehlo="%0 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0)",
            jaxpr_marks=[ProgramMark(line=2, kind="custom_call")],
            stablehlo_marks=[ProgramMark(line=1, kind="custom_call")],
        )
        cost = CaseCost(flops=29.0, reference_flops=10.0, flops_ratio=2.9, loops=4, reference_loops=1,
                        text="29 FLOPs (the reference: 10, 2.9x), 4 loops where the reference has 1",
                        )  # fmt: skip
        mistake = MistakeMatch(name="Adds factor", note="Adds the factor instead of multiplying.", others=1)
        cases = [
            c.model_copy(update={"mistake": mistake, "cost": cost, "program": view}) for c in result.cases
        ]
        return result.model_copy(update={"cases": cases})


def test_the_feedback_fields_are_typed_in_the_schema_and_a_run_reply_validates(
    schema: dict[str, Any], tmp_path: Path
) -> None:
    components = schema["components"]["schemas"]

    def refs(prop: dict[str, Any]) -> set[str]:
        return {r["$ref"].split("/")[-1] for r in prop.get("anyOf", [prop]) if "$ref" in r}

    case = components["CaseResult"]["properties"]
    assert (refs(case["mistake"]), refs(case["cost"]), refs(case["program"])) == (
        {"MistakeMatch"},
        {"CaseCost"},
        {"ProgramView"},
    )
    view = components["ProgramView"]
    assert set(view["required"]) >= {"jaxpr", "stablehlo"}
    for marks_field in ("jaxpr_marks", "stablehlo_marks"):
        assert view["properties"][marks_field]["items"] == {"$ref": "#/components/schemas/ProgramMark"}
    mark = components["ProgramMark"]
    assert set(mark["properties"]["kind"]["enum"]) == {"loop", "custom_call", "host_callback", "convert"}
    assert mark["properties"]["line"]["minimum"] == 1 and set(mark["required"]) == {"line", "kind"}
    mistake = components["MistakeMatch"]
    assert set(mistake["required"]) == {"name", "note"} and mistake["properties"]["others"]["minimum"] == 0
    cost = components["CaseCost"]["properties"]
    assert {"flops", "bytes_accessed", "loops", "flops_ratio", "bytes_ratio", "text"} <= set(cost)
    assert {"compile_ratio", "run_ratio", "reference_compile_ms", "reference_run_ms"} <= set(cost)
    run = schema["paths"]["/api/v1/problems/{slug}/run"]["post"]["responses"]["200"]["content"]
    assert run["application/json"]["schema"] == {"$ref": "#/components/schemas/GradeResult"}

    import jsonschema_rs

    validator = jsonschema_rs.Draft202012Validator(
        {"$ref": "#/components/schemas/GradeResult", "components": schema["components"]}
    )
    settings = make_settings(tmp_path)
    with running(settings, backend=get_backend("process"), engine=_FeedbackEngine()) as (client, _):
        response = client.post(f"/api/v1/problems/{FIXTURE_SLUG}/run", json={"code": "x = 1\n"})
        custom = client.post(
            f"/api/v1/problems/{FIXTURE_SLUG}/run",
            json={"code": "x = 1\n", "inputs": {"tree": {"w": [1.0, 2.0]}, "factor": 3.0}},
        )
    for reply in (response, custom):
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["cases"] and all(
            c["mistake"]["name"] == "Adds factor" and c["program"]["jaxpr_marks"] and c["cost"]["flops_ratio"]
            for c in body["cases"]
        ), body
        errors = [str(e) for e in validator.iter_errors(body)]
        assert errors == [], errors
    # The validator does check the nested feedback types: a mark of an unknown kind is refused.
    body = response.json()
    body["cases"][0]["program"]["jaxpr_marks"][0]["kind"] = "teleport"
    assert not validator.is_valid(body)
    body = response.json()
    del body["cases"][0]["mistake"]["note"]
    assert not validator.is_valid(body)
