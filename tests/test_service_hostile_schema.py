"""Schemathesis over the whole API, valid and invalid requests alike (issue 22): no response is a 5xx,
every error is in the documented shape (``{"error": {"code", "message", ...}}``), and every status code
is one the schema declares. The engine is a fake (grading is test_service_schema.py's), so the run is
bounded by examples, not by sandbox time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, status_code_conformance

from judge.service.app import create_app
from judge.service.settings import Settings
from judge.service.state import Services
from sandbox.backends import get_backend
from tests.service_support import FakeEngine, make_settings, sandbox_ok

APP = create_app(Settings(), manage=False)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(scope="module", autouse=True)
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    directory: Path = tmp_path_factory.mktemp("hostile-schema")
    built = Services.build(
        make_settings(directory, max_wait_s=1),
        backend=get_backend("process"),
        engine=FakeEngine(),
        sandbox_check=sandbox_ok,
    )
    built.start()
    APP.state.services = built
    try:
        assert built.wait_ready(60), built.readiness()
        yield built
    finally:
        del APP.state.services
        built.stop()


def error_in_the_documented_shape(_ctx: Any, response: Any, _case: Any) -> bool | None:
    """Every 4xx and 5xx body is ``{"error": {"code": str, "message": str, ...}}`` and nothing else."""
    if response.status_code < 400:
        return None
    body = response.json()
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error.get("code"), str) and isinstance(error.get("message"), str), body
    assert "Traceback" not in response.text
    return True


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_every_error_in_its_documented_shape(case: schemathesis.Case[Any]) -> None:
    case.call_and_validate(
        checks=[not_a_server_error, status_code_conformance, error_in_the_documented_shape]
    )
