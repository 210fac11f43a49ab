"""Access and limits of the HTTP layer: API keys, anonymous access, rate limits, CORS, the queue bound.

The engine is a fake here (these rules do not depend on grading); the same app with the real engine is
tested in test_service_api.py.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from judge.core.settings import Settings
from judge.service.apikeys import KeyFileError, all_api_keys, generate_key, hash_key, identify, read_keys_file
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

SCALE = FIXTURE_SLUG  # served from the fixture problems (make_settings)
CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")  # never started: the fake engine grades


def test_keys_are_hashed_and_identified_in_constant_time() -> None:
    key = generate_key()
    assert key.startswith("jj_") and len(key) > 40
    keys = {"platform": hash_key(key), "other": hash_key(generate_key())}
    assert identify(key, keys) == "platform"
    assert identify(key + "x", keys) is None
    assert identify("", keys) is None
    assert key not in str(keys)


def test_keys_file_lines_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "keys"
    good.write_text(f"# operator's keys\nplatform {hash_key('k1')}  # the LMS\n\nci {hash_key('k2')}\n")
    assert read_keys_file(good) == {"platform": hash_key("k1"), "ci": hash_key("k2")}
    bad = tmp_path / "bad"
    bad.write_text("platform not-a-hash\n")
    with pytest.raises(KeyFileError, match=r"bad:1: expected"):
        read_keys_file(bad)


def test_api_keys_and_anonymous_access(tmp_path: Path) -> None:
    key_a, key_b = generate_key(), generate_key()
    settings = make_settings(
        tmp_path, api_keys={"a": hash_key(key_a), "b": hash_key(key_b)}, allow_anonymous=False
    )
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, _):
        anonymous = client.get("/api/problems")
        assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"] == "Bearer"
        assert anonymous.json()["error"]["code"] == "unauthorized"
        wrong = client.get("/api/problems", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "unknown API key" in wrong.json()["error"]["message"]
        basic = client.get("/api/problems", headers={"Authorization": "Basic YTpi"})
        assert basic.status_code == 401
        a = {"Authorization": f"Bearer {key_a}"}
        b = {"Authorization": f"Bearer {key_b}"}
        assert client.get("/api/problems", headers=a).status_code == 200
        sid = client.post("/api/submissions", json={"problem": SCALE, "code": CODE}, headers=a).json()["id"]
        assert client.get(f"/api/submissions/{sid}?wait=60", headers=a).json()["status"] == "done"
        # Another key cannot see it, nor can anyone without a key.
        assert client.get(f"/api/submissions/{sid}", headers=b).status_code == 404
        assert client.get(f"/api/submissions/{sid}/events", headers=b).status_code == 404
        # Health, readiness and metrics stay open for the operator's probes.
        assert client.get("/healthz").status_code == 200 and client.get("/readyz").status_code == 200


def test_stored_submission_records_who_sent_it(tmp_path: Path) -> None:
    key = generate_key()
    settings = make_settings(tmp_path, api_keys={"lms": hash_key(key)})
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        mine = client.post(
            "/api/submissions",
            json={"problem": SCALE, "code": CODE},
            headers={"Authorization": f"Bearer {key}"},
        ).json()["id"]
        anon = client.post("/api/submissions", json={"problem": SCALE, "code": CODE}).json()["id"]
        record, other = services.store.submissions.get(mine), services.store.submissions.get(anon)
        assert record is not None and record.key_name == "lms"
        assert other is not None and other.key_name is None
        # The address is kept while the per-client cap counts the submission (until it finishes).
        assert other.client_address == ("testclient" if not other.finished else None)
        # An anonymous submission is readable by whoever holds its (unguessable) id.
        assert client.get(f"/api/submissions/{anon}").status_code == 200


def test_rate_limits_per_address_and_per_key(tmp_path: Path) -> None:
    key = generate_key()
    settings = make_settings(
        tmp_path,
        api_keys={"k": hash_key(key)},
        rate_limit="5/minute",
        anonymous_rate_limit="3/minute",
    )
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, _):
        codes = [client.get("/api/problems").status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        limited = client.get("/api/problems")
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert limited.json()["error"]["code"] == "rate_limited"
        headers = {"Authorization": f"Bearer {key}"}
        codes = [client.get("/api/problems", headers=headers).status_code for _ in range(6)]
        assert codes == [200] * 5 + [429]
        metrics = client.get("/metrics").text
        assert 'judge_rejected_total{reason="rate_limit"} 3.0' in metrics


def test_cors_allows_configured_origins_only(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, cors_origins="https://learn.example, https://lms.example")
    assert settings.cors_origins == ["https://learn.example", "https://lms.example"]
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, _):
        preflight = client.options(
            f"/api/problems/{SCALE}/run",
            headers={
                "Origin": "https://learn.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,authorization",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://learn.example"
        simple = client.get("/api/problems", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in simple.headers


def test_full_queue_is_429_with_retry_after_and_nothing_accepted_is_lost(tmp_path: Path) -> None:
    gate = threading.Event()
    engine = FakeEngine(delay=lambda: gate.wait(30))
    settings = make_settings(tmp_path, queue_size=3, submission_concurrency=1)
    with running(settings, backend=PROCESS, engine=engine) as (client, services):
        first = client.post("/api/submissions", json={"problem": SCALE, "code": f"# 0\n{CODE}"})
        deadline = time.monotonic() + 60
        while services.dispatcher.running() == 0:  # the first one is being graded (and blocked)
            assert time.monotonic() < deadline
            time.sleep(0.01)
        answers = [first] + [
            client.post("/api/submissions", json={"problem": SCALE, "code": f"# {i}\n{CODE}"})
            for i in range(1, 8)
        ]
        accepted = [r.json()["id"] for r in answers if r.status_code == 202]
        refused = [r for r in answers if r.status_code == 429]
        # One grading (blocked) plus three waiting fit; the rest are refused, and only those.
        assert len(accepted) == 4 and len(refused) == 4
        assert all(
            r.json()["error"]["code"] == "queue_full" and int(r.headers["retry-after"]) >= 1 for r in refused
        )
        assert services.dispatcher.depth() == 3 and services.dispatcher.running() == 1
        gate.set()
        for sid in accepted:
            assert client.get(f"/api/submissions/{sid}?wait=60").json()["status"] == "done"
        assert sorted(engine.graded) == sorted(f"# {i}\n{CODE}" for i in range(4))


def test_settings_reject_bad_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="callback_secret"):
        Settings(callback_hosts=["hooks.example"])
    with pytest.raises(ValueError, match="rate limit"):
        Settings(rate_limit="lots")
    monkeypatch.setenv("JUDGE_QUEUE_SIZE", "7")
    monkeypatch.setenv("JUDGE_API_KEYS", '{"ci": "' + hash_key("x") + '"}')
    file = tmp_path / "judge.toml"
    file.write_text(
        'queue_size = 99\nmax_wait_s = 12.5\ncallback_hosts = ["a.example"]\ncallback_secret = "s"\n'
    )
    monkeypatch.setenv("JUDGE_SETTINGS_FILE", str(file))
    settings = Settings()
    assert settings.queue_size == 7  # the environment wins over the file
    assert settings.max_wait_s == 12.5 and settings.callback_hosts == ["a.example"]
    assert all_api_keys(settings) == {"ci": hash_key("x")}
    assert settings.workers == settings.submission_concurrency + settings.run_reserve + settings.spare_workers


def test_input_size_count_and_wait_limits_name_their_setting(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, max_input_bytes=2000, max_input_elements=50, max_wait_s=5)
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, _):
        many = {"tree": {"a": [1.0] * 30, "b": [[2.0] * 5] * 5}, "factor": 1.0}
        response = client.post(f"/api/problems/{SCALE}/run", json={"code": CODE, "inputs": many})
        error = response.json()["error"]
        assert response.status_code == 422 and error["limit"] == "max_input_elements"
        assert error["argument"] == "tree" and error["path"].startswith("tree[")
        large = {"tree": {"a": [0.123456789] * 190}, "factor": 1.0}
        response = client.post(f"/api/problems/{SCALE}/run", json={"code": CODE, "inputs": large})
        assert response.status_code == 422 and response.json()["error"]["limit"] == "max_input_bytes"
        sid = client.post("/api/submissions", json={"problem": SCALE, "code": CODE}).json()["id"]
        response = client.get(f"/api/submissions/{sid}", params={"wait": 6})
        error = response.json()["error"]
        assert response.status_code == 422 and error["limit"] == "max_wait_s" and error["path"] == "wait"
        ok = {"tree": {"a": [1.0, 2.0]}, "factor": 1.0}
        assert client.post(f"/api/problems/{SCALE}/run", json={"code": CODE, "inputs": ok}).status_code == 200
