"""CLI parity and the service's commands: ``judge run`` prints the Run endpoint's JSON, ``judge serve``
fails closed, ``judge hash-key`` makes hashes the service accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.service.apikeys import identify
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT, default_backend
from tests.service_support import HEAVY, SOLUTIONS, make_settings, running

SCALE = FIXTURE_SLUG
ACCEPTED = SOLUTIONS[SCALE] / "accepted" / "tree_util_map.py"
#: `judge run` grades the fixture problems, as the services of these tests serve them.
PROBLEMS = ["--problems", str(FIXTURES)]
#: Measured times (the cost line's time ratios among them), which differ between any two runs.
TIMES = (
    "compile_ms", "run_ms", "elapsed_ms", "reference_compile_ms", "reference_run_ms", "compile_ratio",
    "run_ratio", "text",
)  # fmt: skip


def judge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("cli"), sandbox_slot_base=650)
    with running(settings, backend=default_backend()) as (test_client, _):
        yield test_client


@pytest.mark.slow
@HEAVY
@pytest.mark.parametrize("custom", [False, True])
def test_judge_run_json_equals_the_run_endpoint(client: TestClient, custom: bool) -> None:
    inputs = {"tree": {"a": [6.0, 8.0], "b": [[0.0]]}, "factor": 0.5}
    args = ["run", SCALE, str(ACCEPTED), *PROBLEMS, "--json", "--sandbox", default_backend().name]
    if default_backend().insecure:
        args.append("--insecure")
    body: dict[str, Any] = {"code": ACCEPTED.read_text()}
    if custom:
        args += [f"--input={name}={json.dumps(value)}" for name, value in inputs.items()]
        body["inputs"] = inputs
    out = judge(*args)
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    api = client.post(f"/api/problems/{SCALE}/run", json=body).json()
    assert without_times(cli) == without_times(api)
    assert cli["verdict"] == "accepted" and cli["total"] == (1 if custom else 2)


@pytest.mark.parametrize(
    ("inputs", "needle"),
    [
        (['tree={"a": [1, [2]]}', "factor=1"], 'tree["a"][1]: list mixes'),
        (["tree=", "factor=1"], "--input tree: not valid JSON"),
        (["factor"], "expected NAME=JSON"),
        (['tree={"a": [1]}'], "factor: missing argument"),
    ],
)
def test_judge_run_bad_inputs_exit_2_naming_the_path(inputs: list[str], needle: str) -> None:
    args = ["run", SCALE, str(ACCEPTED), *PROBLEMS, "--sandbox", "process", "--insecure"]
    out = judge(*args, *(f"--input={i}" for i in inputs))
    assert out.returncode == 2 and needle in out.stderr, out.stderr


def test_hash_key_generates_a_key_the_service_accepts() -> None:
    out = judge("hash-key", "--name", "lms")
    assert out.returncode == 0
    lines = dict(line.split(":", 1) for line in out.stdout.splitlines() if line.startswith(("key", "hash")))
    key = lines["key"].split()[0]
    digest = lines["hash"].strip()
    assert identify(key, {"lms": digest}) == "lms"
    assert f"lms {digest}" in out.stdout


def test_serve_fails_closed_without_a_secure_sandbox(tmp_path: Any) -> None:
    out = judge("serve", "--port", "0", env={"JUDGE_SANDBOX": "process", "JUDGE_DATA_DIR": str(tmp_path)})
    assert out.returncode == 2
    assert "refusing to start" in out.stderr and "isolates nothing" in out.stderr
    assert not (tmp_path / "judge.sqlite3").exists()


def test_serve_rejects_bad_settings() -> None:
    out = judge("serve", env={"JUDGE_QUEUE_SIZE": "0"})
    assert out.returncode == 2 and "queue_size" in out.stderr
