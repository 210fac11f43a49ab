"""Hostile output through the real app, engine and sandbox (issue 22, points 1 and 7): text the tracer
sends back (output keys, prints, exception messages) is made safe where it enters the trusted side, so a
lone surrogate or a bidirectional override is a verdict with visible escapes, never a 500, a retry or a
failed submission."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from judge.service.state import Services
from tests.conftest import FIXTURE_SLUG, default_backend
from tests.service_support import HEAVY, make_settings, running

pytestmark = [pytest.mark.slow, HEAVY]

SCALE = FIXTURE_SLUG

SURROGATE_KEY = """
import jax


def scale_tree(tree, factor):
    return {chr(0xD800): jax.tree.map(lambda leaf: leaf * factor, tree)}
"""

BIDI = """
import jax


def scale_tree(tree, factor):
    print("\\u202eDETPECCA")
    raise ValueError("\\u2066looks fine\\u2069")
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Services]]:
    settings = make_settings(tmp_path_factory.mktemp("hostile"), sandbox_slot_base=340, max_wait_s=120)
    with running(settings, backend=default_backend()) as pair:
        yield pair


def test_a_lone_surrogate_output_key_is_a_verdict_on_run_and_graded_once(
    api: tuple[TestClient, Services],
) -> None:
    client, services = api
    run = client.post(f"/api/problems/{SCALE}/run", json={"code": SURROGATE_KEY})
    assert run.status_code == 200, run.text
    body = run.json()
    assert body["verdict"] == "wrong_answer", body
    case = body["cases"][0]
    assert case["reason"] == "structure" and "\\ud800" in case["message"]
    assert "\\ud800" in case["output"]["json"]
    sid = client.post("/api/submissions", json={"problem": SCALE, "code": SURROGATE_KEY}).json()["id"]
    done = client.get(f"/api/submissions/{sid}?wait=120").json()
    assert done["status"] == "done" and done["verdict"] == "wrong_answer", done
    assert done["attempts"] == 1
    assert services.metrics.submissions_failed._value.get() == 0


def test_bidi_overrides_in_prints_and_messages_come_back_escaped(api: tuple[TestClient, Services]) -> None:
    client, _ = api
    body = client.post(f"/api/problems/{SCALE}/run", json={"code": BIDI}).json()
    assert "\\u202eDETPECCA" in body["stdout"] and "\u202e" not in body["stdout"]
    message = body["cases"][0]["message"]
    assert "\\u2066looks fine\\u2069" in message and "\u2066" not in message, message
