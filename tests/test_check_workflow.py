"""The example workflow for a problems repository (``examples/problems-repo``): what it pins, caches and
runs, and its choice of problems on a pull request, run for real on a scratch git repository."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT

WORKFLOW = ROOT / "examples" / "problems-repo" / ".github" / "workflows" / "check.yml"


def load() -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    return data


def steps() -> dict[str, dict[str, Any]]:
    (job,) = load()["jobs"].values()
    return {step.get("name", step.get("uses", "")): step for step in job["steps"]}


def test_the_judge_is_pinned_and_caches_are_kept() -> None:
    env = load()["env"]
    assert re.fullmatch(r"jax-judge==\d+\.\d+\.\d+", env["JUDGE_VERSION"])
    cache = steps()["Cache pip downloads and expected outputs"]
    assert cache["uses"].startswith("actions/cache@")
    assert {".pip-cache", ".judge-cache"} <= set(cache["with"]["path"].split())
    assert env["JUDGE_CACHE_DIR"].endswith("/.judge-cache") and env["PIP_CACHE_DIR"].endswith("/.pip-cache")
    assert '"$JUDGE_VERSION"' in steps()["Install the pinned judge"]["run"]


def test_the_check_fails_on_warnings_and_reports_every_way() -> None:
    run = steps()["judge check"]["run"]
    for option in (
        "--werror",
        "--format github",
        "--junit-xml reports/judge-check.xml",
        "--problems problems",
    ):
        assert option in run
    upload = steps()["Keep the JUnit report"]
    assert upload["if"] == "always()" and upload["with"]["path"] == "reports/judge-check.xml"
    triggers = load()[True]  # YAML reads the key `on` as true
    assert {"pull_request", "push"} <= set(triggers) and triggers["push"]["branches"] == ["main"]


def _scope_script(event: str) -> str:
    script: str = steps()["Choose the problems to check"]["run"]
    return script.replace("${{ github.event_name }}", event)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def _scope(repo: Path, event: str, base: str) -> str:
    output = repo.parent / "github_output"
    output.write_text("")
    subprocess.run(
        ["bash", "-e", "-c", _scope_script(event)],
        cwd=repo,
        env={**os.environ, "BASE": base, "GITHUB_OUTPUT": str(output)},
        check=True,
        capture_output=True,
    )
    (line,) = output.read_text().splitlines()
    return line.removeprefix("problems=").strip()


def test_pull_requests_check_only_the_changed_problems(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for slug, module in (("alpha", "alpha_ref"), ("beta", "beta_ref"), ("gamma", "gamma_ref")):
        (repo / "problems" / slug).mkdir(parents=True)
        (repo / "problems" / slug / "problem.toml").write_text(f'slug = "{slug}"\nreference = "{module}"\n')
        (repo / "problems" / slug / "statement.md").write_text("Text.\n")
        (repo / "reference").mkdir(exist_ok=True)
        (repo / "reference" / f"{module}.py").write_text("def f(x):\n    return x\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "problems" / "alpha" / "statement.md").write_text("Other text.\n")
    (repo / "reference" / "beta_ref.py").write_text("def f(x):\n    return 2 * x\n")
    (repo / "README.md").write_text("Not a problem.\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "change")
    assert _scope(repo, "pull_request", base) == "alpha beta"
    assert _scope(repo, "push", base) == ""  # every problem on the default branch
    _git(repo, "rm", "-q", "-r", "problems/gamma")
    _git(repo, "commit", "-q", "-m", "remove gamma")
    assert _scope(repo, "pull_request", base) == "alpha beta"  # a removed problem is not checked
