"""The API through the real app, the real engine and the real sandbox (one app for the module).

Verdicts over HTTP equal the solution folders' (which `judge check` proves are `judge grade`'s); every bad
request is a 4xx that names what is wrong; error bodies never hold a traceback or a server path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.authoring.statement import RULES_HEADING
from judge.service.state import Services
from tests.conftest import FIXTURE_SLUG, FIXTURES, KINDS_SLUG, TUPLE_SLUG, default_backend
from tests.service_support import HEAVY, make_settings, running, solution, sse_events

pytestmark = [pytest.mark.slow, HEAVY]

SCALE, LERP, KINDS = FIXTURE_SLUG, TUPLE_SLUG, KINDS_SLUG
ACCEPTED = solution(SCALE, "accepted", "tree_util_map.py")


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Services]]:
    settings = make_settings(tmp_path_factory.mktemp("api"), sandbox_slot_base=300, max_wait_s=120)
    with running(settings, backend=default_backend()) as pair:
        yield pair


@pytest.fixture
def client(api: tuple[TestClient, Services]) -> TestClient:
    return api[0]


def assert_clean_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    text = response.text
    assert "Traceback" not in text and str(Path(__file__).resolve().parent.parent) not in text
    return body["error"]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------- problems


def test_problem_list_and_detail(client: TestClient) -> None:
    listed = client.get("/api/problems").json()
    assert {SCALE, LERP, KINDS} <= {p["slug"] for p in listed}
    detail = client.get(f"/api/problems/{SCALE}").json()
    assert detail["signature"] == "scale_tree(tree, factor)"
    assert [(a["name"], a["accepts"]) for a in detail["arguments"]] == [
        ("tree", ["object", "array", "number"]),
        ("factor", ["number"]),
    ]
    assert (
        "{{examples}}" not in detail["statement_markdown"] and "### Example 1" in detail["statement_markdown"]
    )
    # The generated rules section replaces {{rules}} (the page shows this statement as it is).
    assert "{{" not in detail["statement_markdown"] and RULES_HEADING in detail["statement_markdown"]
    html = detail["statement_html"]
    assert "<math" in html and 'encoding="application/x-tex"' in html and "$" not in html.split("<pre")[0]
    assert detail["examples"][0]["expected"]["json"] == {"b": 1.5, "w": [3.0, 6.0]}
    assert detail["hints"] and detail["starter_code"].startswith(("import", "def", '"""', "#"))
    assert any("Keep each leaf's dtype" in r for r in detail["requirements"])
    assert any("`factor`" in c for c in detail["constraints"])


def test_argument_kinds_are_described(client: TestClient) -> None:
    kinds = client.get(f"/api/problems/{KINDS}").json()
    described = {a["name"]: a for a in kinds["arguments"]}
    assert described["tokens"]["kind"] == "array" and described["tokens"]["dtype"] == "int32"
    assert described["tokens"]["ndim"] == [2] and described["tokens"]["accepts"] == ["array"]
    assert described["tokens"]["kind_text"] == "an int32 array with 2 dimensions"
    assert described["widths"]["kind"] == "int_tuple" and described["widths"]["traced"] is False
    assert described["pad_id"]["accepts"] == ["integer"] and described["pad_id"]["dtype"] is None
    offset = described["offset"]
    assert offset["accepts"] == ["integer"] and offset["traced"] is True
    assert offset["kind_text"] == "an int32 array with 0 dimensions (a scalar)"
    example = kinds["examples"][0]["expected"]["json"]
    assert example[1][0] == [True, True, True, False]  # a bool mask is JSON true/false


GOOD_KINDS = {"tokens": [[1, 2]], "lengths": [1], "offset": 0, "widths": [2, 4], "pad_id": 0}


@pytest.mark.parametrize(
    ("inputs", "argument", "path"),
    [
        ({**GOOD_KINDS, "offset": 1.5}, "offset", "offset"),
        ({**GOOD_KINDS, "pad_id": [0]}, "pad_id", "pad_id"),
        ({**GOOD_KINDS, "widths": [2, [4]]}, "widths", "widths[1]"),
        ({**GOOD_KINDS, "pad_id": True}, "pad_id", "pad_id"),
    ],
)
def test_bad_int_and_static_run_inputs_are_422_naming_the_path(
    client: TestClient, inputs: dict[str, Any], argument: str, path: str
) -> None:
    response = client.post(f"/api/problems/{KINDS}/run", json={"code": "x = 1\n", "inputs": inputs})
    error = assert_clean_error(response, 422, "invalid_input")
    assert error["argument"] == argument and error["path"] == path, error


def test_unknown_problem_is_a_404_naming_it(client: TestClient) -> None:
    error = assert_clean_error(client.get("/api/problems/no-such-thing"), 404, "problem_not_found")
    assert "no-such-thing" in error["message"] and SCALE in error["message"]
    run = client.post("/api/problems/no-such-thing/run", json={"code": ACCEPTED})
    assert "no-such-thing" in assert_clean_error(run, 404, "problem_not_found")["message"]
    submit = client.post("/api/submissions", json={"problem": "nope", "code": ACCEPTED})
    assert assert_clean_error(submit, 404, "problem_not_found")["path"] == "problem"


# ---------------------------------------------------------------------------------------------- run


def test_run_examples_accepted_with_outputs_and_times(client: TestClient) -> None:
    result = client.post(f"/api/problems/{SCALE}/run", json={"code": ACCEPTED}).json()
    assert result["verdict"] == "accepted" and result["total"] == 2
    for case in result["cases"]:
        assert case["visibility"] == "public" and case["output"]["json"] == case["expected"]["json"]
        assert case["compile_ms"] is not None and case["run_ms"] is not None


def test_run_custom_input_gets_the_reference_output(client: TestClient) -> None:
    body = {"code": ACCEPTED, "inputs": {"tree": {"a": [6.0, 8.0]}, "factor": 0.5}}
    result = client.post(f"/api/problems/{SCALE}/run", json=body).json()
    (case,) = result["cases"]
    assert case["visibility"] == "custom" and case["verdict"] == "accepted"
    assert case["expected"]["json"] == {"a": [3.0, 4.0]}


def test_run_shows_prints_and_wrong_outputs(client: TestClient) -> None:
    code = (
        "import jax\n\ndef scale_tree(tree, factor):\n"
        "    print('hello from the learner')\n"
        "    return jax.tree.map(lambda leaf: leaf * 0.0, tree)\n"
    )
    result = client.post(f"/api/problems/{SCALE}/run", json={"code": code}).json()
    assert result["verdict"] == "wrong_answer"
    assert "hello from the learner" in result["stdout"]
    assert result["cases"][0]["output"]["json"] == {"b": 0.0, "w": [0.0, 0.0]}


@pytest.mark.parametrize(
    ("inputs", "argument", "path_part"),
    [
        ({"tree": {"w": [1.0, [2.0]]}, "factor": 1.0}, "tree", 'tree["w"][1]'),
        ({"tree": {"w": "abc"}, "factor": 1.0}, "tree", 'tree["w"]'),
        ({"tree": {"w": [1.0]}}, "factor", "factor"),
        ({"tree": {"w": [1.0]}, "factor": 1.0, "extra": 1}, "extra", "extra"),
        ({"tree": {"w": [1.0]}, "factor": [1.0]}, "factor", "factor"),
    ],
)
def test_bad_run_inputs_are_422_naming_argument_and_path(
    client: TestClient, inputs: dict[str, Any], argument: str, path_part: str
) -> None:
    response = client.post(f"/api/problems/{SCALE}/run", json={"code": ACCEPTED, "inputs": inputs})
    error = assert_clean_error(response, 422, "invalid_input")
    assert error["argument"] == argument and path_part in error["path"]


def test_non_finite_numbers_in_a_result_are_strict_json(client: TestClient) -> None:
    # Infinities in the output and an error ratio of infinity: strings and null in strict JSON.
    code = (
        "import jax\n\ndef scale_tree(tree, factor):\n"
        "    return jax.tree.map(lambda x: x * factor / 0.0, tree)\n"
    )
    response = client.post(f"/api/problems/{SCALE}/run", json={"code": code})
    assert response.status_code == 200
    body = json.loads(
        response.text, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}")
    )
    first = body["cases"][0]
    assert first["verdict"] == "wrong_answer" and first["error_ratio"] is None
    assert first["output"]["json"] == {"b": "Infinity", "w": ["Infinity", "Infinity"]}


def test_code_that_does_not_compile_is_a_verdict_not_an_error(client: TestClient) -> None:
    result = client.post(f"/api/problems/{SCALE}/run", json={"code": "def scale_tree(:\n"}).json()
    assert result["verdict"] == "compile_error" and "line 1" in result["message"]


# ---------------------------------------------------------------------------------------------- requests


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, "code"),
        ({"code": 5}, "code"),
        ({"code": ACCEPTED, "input": {}}, "input"),
        ({"code": ACCEPTED, "inputs": [1, 2]}, "inputs"),
    ],
)
def test_malformed_bodies_are_422_naming_the_field(client: TestClient, body: Any, path: str) -> None:
    error = assert_clean_error(client.post(f"/api/problems/{SCALE}/run", json=body), 422, "invalid_request")
    assert error["path"] == path and error["message"].startswith(path)


def test_invalid_json_is_422(client: TestClient) -> None:
    response = client.post(
        f"/api/problems/{SCALE}/run", content=b'{"code": "x",', headers={"content-type": "application/json"}
    )
    assert "JSON" in assert_clean_error(response, 422, "invalid_request")["message"]


def test_limits_name_the_setting(client: TestClient, api: tuple[TestClient, Services]) -> None:
    settings = api[1].settings
    big = "x = 1\n" * (settings.max_code_bytes // 6 + 1)
    error = assert_clean_error(
        client.post(f"/api/problems/{SCALE}/run", json={"code": big}), 422, "limit_exceeded"
    )
    assert error["limit"] == "max_code_bytes" and error["path"] == "code"
    error = assert_clean_error(
        client.post("/api/submissions", json={"problem": SCALE, "code": big}), 422, "limit_exceeded"
    )
    assert error["limit"] == "max_code_bytes"
    deep: Any = [1.0]
    for _ in range(settings.max_input_depth + 1):
        deep = {"k": deep}
    body = {"code": ACCEPTED, "inputs": {"tree": deep, "factor": 1.0}}
    error = assert_clean_error(client.post(f"/api/problems/{SCALE}/run", json=body), 422, "limit_exceeded")
    assert error["limit"] == "max_input_depth" and error["argument"] == "tree"
    huge = b'{"code": "' + b"x" * (settings.max_body_bytes + 1) + b'"}'
    response = client.post(
        f"/api/problems/{SCALE}/run", content=huge, headers={"content-type": "application/json"}
    )
    assert assert_clean_error(response, 413, "limit_exceeded")["limit"] == "max_body_bytes"
    error = assert_clean_error(client.get("/api/submissions/x?wait=100000"), 422, "limit_exceeded")
    assert error["path"] == "wait" and error["limit"] == "max_wait_s"
    assert f"at most {settings.max_wait_s:g} seconds" in error["message"]
    error = assert_clean_error(client.get("/api/submissions/x?wait=-1"), 422, "invalid_request")
    assert error["path"] == "query.wait"


def test_chunked_body_over_the_limit_is_413(client: TestClient, api: tuple[TestClient, Services]) -> None:
    limit = api[1].settings.max_body_bytes

    def chunks() -> Iterator[bytes]:
        yield b'{"code": "'
        for _ in range(limit // 65536 + 2):
            yield b"x" * 65536
        yield b'"}'

    response = client.post(
        f"/api/problems/{SCALE}/run", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_clean_error(response, 413, "limit_exceeded")


@pytest.mark.parametrize(
    ("code", "needle"),
    [("def f():\n    pass\n\0\n", "line 3"), ("x = '\ud800'\n", "line 1")],
)
def test_source_that_is_not_text_is_422_with_the_line(client: TestClient, code: str, needle: str) -> None:
    body = json.dumps({"code": code}).encode()
    response = client.post(
        f"/api/problems/{SCALE}/run", content=body, headers={"content-type": "application/json"}
    )
    assert needle in assert_clean_error(response, 422, "invalid_code")["message"]


def test_unknown_submission_ids_are_404(client: TestClient) -> None:
    for sid in ("00000000-0000-0000-0000-000000000000", "not-an-id", "x" * 300):
        error = assert_clean_error(client.get(f"/api/submissions/{sid}"), 404, "submission_not_found")
        assert sid[:100] in error["message"]
        assert_clean_error(client.get(f"/api/submissions/{sid}/events"), 404, "submission_not_found")
    assert_clean_error(client.get("/api/nothing-here"), 404, "not_found")
    assert_clean_error(client.delete(f"/api/problems/{SCALE}"), 405, "method_not_allowed")


# ---------------------------------------------------------------------------------------------- submissions


@pytest.mark.parametrize(
    ("slug", "folder", "name"),
    [
        (SCALE, "accepted", "tree_util_map.py"),
        (SCALE, "trace_error", "python_if_on_factor.py"),
        (SCALE, "wrong_answer", "adds_factor.py"),
        (LERP, "accepted", "one_tree_map.py"),
        (LERP, "wrong_answer", "writes_into_start.py"),  # values right, an input container changed
    ],
)
def test_submissions_get_the_verdict_of_their_folder(
    client: TestClient, slug: str, folder: str, name: str
) -> None:
    path = FIXTURES / slug / "solutions" / folder / name
    accepted = client.post("/api/submissions", json={"problem": slug, "code": path.read_text()})
    assert (
        accepted.status_code == 202
        and accepted.headers["location"] == f"/api/v1/submissions/{accepted.json()['id']}"
    )
    done = client.get(f"{accepted.headers['location']}?wait=120").json()
    assert done["status"] == "done" and done["verdict"] == folder and done["result"]["verdict"] == folder
    result = done["result"]
    assert set(result) == {
        "problem", "verdict", "passed", "total", "message", "cases", "stdout", "stdout_truncated", "output",
        "backend", "elapsed_ms",
    }  # fmt: skip
    for case in result["cases"]:
        if case["visibility"] == "hidden":
            assert case["input"] is None and case["output"] is None and case["expected"] is None
    manifest = done["manifest"]
    assert manifest["problem"] == slug and len(manifest["problem_hash"]) == 64 and manifest["jax_version"]


def test_events_stream_every_case_then_the_result(client: TestClient) -> None:
    sid = client.post("/api/submissions", json={"problem": SCALE, "code": ACCEPTED}).json()["id"]
    with client.stream("GET", f"/api/submissions/{sid}/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response.read().decode())
    kinds = [kind for _, kind, _ in events]
    assert kinds[0] == "status" and kinds[-1] == "result"
    cases = [data for _, kind, data in events if kind == "case"]
    final = events[-1][2]
    assert [c["index"] for c in cases] == list(range(final["result"]["total"]))
    assert [c["case"] for c in cases] == final["result"]["cases"]
    hidden = [c["case"] for c in cases if c["case"]["visibility"] == "hidden"]
    assert hidden and all(c["input"] is None and c["expected"] is None for c in hidden)
    # Resuming after the last case replays only the result.
    last_case_id = [eid for eid, kind, _ in events if kind == "case"][-1]
    with client.stream(
        "GET", f"/api/submissions/{sid}/events", headers={"Last-Event-ID": last_case_id}
    ) as again:
        assert [kind for _, kind, _ in sse_events(again.read().decode())] == ["result"]


def test_metrics_and_health(client: TestClient) -> None:
    client.post(f"/api/problems/{SCALE}/run", json={"code": ACCEPTED})
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    text = client.get("/metrics").text
    for name in (
        "judge_queue_depth",
        "judge_gradings_running",
        "judge_grading_seconds_bucket",
        "judge_run_seconds_bucket",
        'judge_verdicts_total{kind="run",verdict="accepted"}',
        "judge_sandbox_start_failures_total",
        "judge_rejected_total",
    ):
        assert name in text, name
