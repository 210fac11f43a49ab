"""Loading problems maps case files to lines only when a defect needs a line: every process that loads the
problems (judge grade, the service, each worker) paid seconds for line maps nobody read."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from judge.authoring import positions
from judge.check import reference_check
from judge.core.errors import ProblemError
from judge.core.problems import ProblemSet, load_problem
from tests.conftest import FIXTURE_SLUG, FIXTURES


def test_a_sound_problem_set_loads_without_line_maps(monkeypatch: pytest.MonkeyPatch) -> None:
    mapped: list[str] = []
    # The JSON source map every line map is made from (json_lines swallows its errors: count the calls).

    def calculate(text: str) -> dict[str, Any]:
        mapped.append(text)
        return {}

    monkeypatch.setattr(positions, "calculate", calculate)
    assert FIXTURE_SLUG in {p.slug for p in ProblemSet(FIXTURES)}
    assert mapped == [], "a case file was mapped to lines though nothing was wrong"


def test_a_defect_in_a_case_file_still_names_its_line(tmp_path: Path) -> None:
    root = tmp_path / "problems" / FIXTURE_SLUG
    shutil.copytree(FIXTURES / FIXTURE_SLUG, root)
    hidden = root / "cases" / "hidden.json"
    data = json.loads(hidden.read_text())
    data["cases"][1]["dtype"] = "float16"
    hidden.write_text(json.dumps(data, indent=1))
    with pytest.raises(ProblemError) as caught:
        load_problem(root)
    line = next(n for n, text in enumerate(hidden.read_text().splitlines(), 1) if '"float16"' in text)
    assert caught.value.line == line
    assert "float16" in str(caught.value)


def test_the_reference_s_separate_runs_get_this_process_s_xla_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even none: a caller that imported JAX before the judge runs the reference in-process without the
    sandbox's flags, and separate runs that set them differed in the last bits (a false "not
    deterministic")."""
    started: list[dict[str, str]] = []

    class Never:
        returncode = 0

        def __init__(self, *args: object, env: dict[str, str], **kwargs: object) -> None:
            started.append(env)

        def poll(self) -> int:
            return 0

        def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes]:
            return b"", b""

    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.setattr(subprocess, "Popen", Never)
    with reference_check.SeparateRuns(FIXTURES / FIXTURE_SLUG, timeout_s=1.0):
        pass
    assert [env["XLA_FLAGS"] for env in started] == ["", ""]
