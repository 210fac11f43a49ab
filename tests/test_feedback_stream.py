"""A submission's event stream is typed in the OpenAPI schema: a ``case`` event carries a CaseResult (with
the feedback of issue 25: mistake, cost, program view) and a ``result`` event a GradeResult, so a client
generated from the schema reads the named mistake from the stream as it does from GET .../submissions/{id}."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.core.results import CaseResult, GradeResult, MistakeMatch, case_json
from judge.core.verdicts import Verdict
from judge.service.app import create_app
from judge.service.contract import CaseEvent, ResultEvent
from tests.service_support import make_settings


@pytest.fixture(scope="module")
def components(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    app = create_app(make_settings(Path(tmp_path_factory.mktemp("stream"))))
    schemas: dict[str, Any] = app.openapi()["components"]["schemas"]
    return schemas


def _ref(prop: dict[str, Any]) -> str:
    options = prop.get("anyOf", [prop])
    return str(next(o["$ref"] for o in options if "$ref" in o)).split("/")[-1]


def test_case_and_result_events_reference_the_result_models(components: dict[str, Any]) -> None:
    assert _ref(components["CaseEvent"]["properties"]["case"]) == "CaseResult"
    assert _ref(components["ResultEvent"]["properties"]["result"]) == "GradeResult"
    assert _ref(components["ResultEvent"]["properties"]["version_mismatch"]) == "VersionMismatch"
    case = components["CaseResult"]["properties"]
    assert _ref(case["mistake"]) == "MistakeMatch"
    assert _ref(case["cost"]) == "CaseCost"
    assert _ref(case["program"]) == "ProgramView"
    assert set(components["MistakeMatch"]["properties"]) == {"name", "note", "others"}
    # Output values as the API writes them (LeafValue's ``json``, its serialization alias).
    assert "json" in components["LeafValue"]["properties"]


def test_what_the_worker_publishes_is_what_the_schema_says() -> None:
    """The payloads judge/dispatch/grading_loop.py publishes validate against the declared event models."""
    mistake = MistakeMatch(name="No bias correction", note="Divide m and v by 1 - beta**t.", others=1)
    hidden = CaseResult(
        name="hidden 1", visibility="hidden", verdict=Verdict.WRONG_ANSWER, message="wrong", mistake=mistake
    )
    event = CaseEvent.model_validate({"index": 3, "case": case_json(hidden)})
    assert event.case.mistake == mistake and event.case.output is None
    result = GradeResult(
        problem="adamw",
        verdict=Verdict.WRONG_ANSWER,
        passed=0,
        total=1,
        cases=[hidden],
        backend="x",
        elapsed_ms=1,
    )
    final = ResultEvent.model_validate(
        {"status": "done", "verdict": "wrong_answer", "result": result.model_dump(mode="json")}
    )
    assert final.result.cases[0].mistake == mistake and final.version_mismatch is None
