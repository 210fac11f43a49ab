"""Schemathesis against the app's own OpenAPI schema (real app, real engine and sandbox): no 5xx, every
response conforms to the schema (status code, content type, headers, body). Bounded in examples."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from judge.core.settings import Settings
from judge.service.app import create_app
from judge.service.regrading import RegradeRunner
from judge.service.state import Services
from tests.conftest import default_backend
from tests.service_support import HEAVY, make_settings

pytestmark = [pytest.mark.slow, HEAVY]


# The app whose schema is tested; its services are started by the fixture below (not by its lifespan).
APP = create_app(Settings(), manage=False)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(scope="module", autouse=True)
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    directory: Path = tmp_path_factory.mktemp("schema")
    built = Services.build(make_settings(directory, sandbox_slot_base=600), backend=default_backend())
    built.start(RegradeRunner)
    APP.state.services = built
    try:
        assert built.wait_ready(180), built.readiness()
        yield built
    finally:
        del APP.state.services
        built.stop()


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case: schemathesis.Case[Any]) -> None:
    case.call_and_validate(
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ]
    )
