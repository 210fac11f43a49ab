"""Schemathesis over the whole API, valid and invalid requests alike (issues 22 and 40): no response is
a 5xx, every error is in the documented shape (``{"error": {"code", "message", ...}}``), and every
response conforms to the schema (its status code, content type, headers and body); invalid data is
refused, and no operation that declares a key required serves a request without one. Anonymous and
with an API key (the operations only a key may use). The engine is a fake (grading is
test_service_schema.py's), so the run is bounded by examples, not by sandbox time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.config import SchemathesisConfig

from judge.core.settings import Settings
from judge.service.apikeys import generate_key, hash_key
from judge.service.app import create_app
from judge.service.regrading import RegradeRunner
from judge.service.state import Services
from sandbox.backends import get_backend
from tests.fakes import FakeEngine
from tests.service_support import make_settings, sandbox_ok

KEY = generate_key()

APP = create_app(Settings(), manage=False)
#: Invalid data must get one of these: schemathesis's defaults, and 413 (a body over max_body_bytes) and
#: 431 (headers over 16 KiB), the documented answers to data too large to read.
REJECTED = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "431"]
CONFIG = SchemathesisConfig.from_dict(
    {"checks": {"negative_data_rejection": {"expected-statuses": REJECTED}}}
)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)


@pytest.fixture(scope="module", autouse=True)
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    directory: Path = tmp_path_factory.mktemp("hostile-schema")
    built = Services.build(
        make_settings(
            directory,
            max_wait_s=1,
            api_keys={"lms": hash_key(KEY)},
            callback_hosts=["127.0.0.1"],
            callback_secret="s3cret",
            # Schemathesis presents wrong keys on purpose: each must get its 401, not the 429 that
            # slows down a key guesser.
            failed_auth_rate_limit="100000/minute",
        ),
        backend=get_backend("process"),
        engine=FakeEngine(),
        sandbox_check=sandbox_ok,
    )
    built.start(RegradeRunner)
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


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    ignored_auth,
    error_in_the_documented_shape,
]


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_every_response_as_documented(case: schemathesis.Case[Any]) -> None:
    case.call_and_validate(checks=CHECKS)


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_with_an_api_key_too(case: schemathesis.Case[Any]) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"}, checks=CHECKS)
