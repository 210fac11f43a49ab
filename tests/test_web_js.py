"""The page's front-end unit tests (web/test/*.test.mjs) under Node's own test runner."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_front_end_unit_tests_pass() -> None:
    node = shutil.which("node")
    assert node, "Node.js is needed for the page's tests: run scripts/setup --test"
    assert (ROOT / "web" / "node_modules").is_dir(), "web/node_modules is missing: run scripts/setup --test"
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "web" / "test").glob("*.test.mjs"))
    assert tests, "no front-end tests found under web/test"
    proc = subprocess.run(
        [node, "--test", *tests], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert "# fail 0" in report and "# pass 0" not in report, report


def test_the_completion_names_come_from_the_installed_jax() -> None:
    """web/src/jax-names.json and jax-docs.json are made by web/jax_names.py from the locked jax
    (regenerated on an upgrade; tests/test_web_jax_docs.py checks their contents)."""
    import json

    import jax

    for file in ("jax-names.json", "jax-docs.json"):
        made = json.loads((ROOT / "web" / "src" / file).read_text())
        assert made["jax_version"] == jax.__version__, (
            f"{file}: regenerate: .venv/bin/python web/jax_names.py"
        )
    names = json.loads((ROOT / "web" / "src" / "jax-names.json").read_text())
    assert {"where", "sum", "zeros_like"} <= {item["label"] for item in names["modules"]["jax.numpy"]}
