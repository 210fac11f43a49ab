"""A problems repository of its own: only ``problems/`` and ``reference/``, checked by the judge installed
from a wheel built from this checkout (the way an author's CI pins a release).

The wheel goes into a fresh virtual environment that sees this checkout's installed dependencies through
a ``.pth`` line (``venv --system-site-packages`` would see the base interpreter's packages, not ``.venv``'s),
so nothing is downloaded but the wheel's build backend, and the judge it runs is the wheel's, never this
checkout's source. The repository is made from the test fixture package and one package written by the
installed ``judge new``; it passes ``judge check --werror``. Then copies of the fixture each carry one
mistake, and ``judge check`` gives exactly one finding for each, on the right file and line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures"
SLUG, FUNCTION = "scale-tree", "scale_tree"
#: hash("scale") % 3 is 2 under PYTHONHASHSEED=1 and 1 under PYTHONHASHSEED=2 (the reference check's seeds).
HASHED = "scale"

pytestmark = pytest.mark.slow


def _copy_source(destination: Path) -> None:
    """This checkout's files (tracked and new, not ignored) plus the page's built assets, for the build."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not name.startswith("tests/"):
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    dist = ROOT / "judge" / "web" / "static" / "dist"
    if dist.is_dir():
        shutil.copytree(dist, destination / "judge" / "web" / "static" / "dist", dirs_exist_ok=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin/`` folder of a virtual environment holding the judge installed from a wheel."""
    base = tmp_path_factory.mktemp("judge-wheel")
    source, wheels, venv = base / "source", base / "wheels", base / "venv"
    _copy_source(source)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w", str(wheels)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("jax_judge-*.whl")
    interpreter = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([str(interpreter), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "judge-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return venv / "bin"


def judge(bin_dir: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JUDGE_CACHE_DIR": str(repo / ".cache")}
    env.pop("JUDGE_PROBLEMS_DIR", None)
    return subprocess.run(
        [str(bin_dir / "judge"), *args], cwd=repo, env=env, capture_output=True, text=True, timeout=1200
    )


def add_fixture(repo: Path, slug: str = SLUG) -> Path:
    """The fixture package as ``problems/<slug>`` with its reference, every name renamed after the slug."""
    function = slug.replace("-", "_")
    root = repo / "problems" / slug
    shutil.copytree(FIXTURE / "problems" / SLUG, root, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "reference").mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE / "reference" / f"{FUNCTION}.py", repo / "reference" / f"{function}.py")
    for file in [
        *root.rglob("*.py"),
        *root.rglob("*.toml"),
        *root.rglob("*.md"),
        repo / "reference" / f"{function}.py",
    ]:
        file.write_text(file.read_text().replace(SLUG, slug).replace(FUNCTION, function))
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def line_with(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def test_the_installed_judge_is_the_wheel(installed: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [str(installed / "python"), "-c", "import judge; print(judge.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(installed.parent) in out.stdout and str(ROOT) not in out.stdout


def test_a_problems_repository_passes_with_werror(installed: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    add_fixture(repo)
    new = judge(installed, repo, "new", "double-tree", "--problems", "problems")
    assert new.returncode == 0, new.stderr
    (repo / "reference" / "double_tree.py").write_text(
        "import jax\n\n\ndef double_tree(tree, factor):\n"
        "    return jax.tree.map(lambda x: x * factor, tree)\n"
    )
    assert sorted(p.name for p in repo.iterdir()) == ["problems", "reference"]
    # An installed judge has no problems of its own: it reads ./problems by default.
    listed = judge(installed, repo, "problems", "--json")
    assert sorted(row["slug"] for row in json.loads(listed.stdout)) == ["double-tree", SLUG], listed.stderr
    out = judge(
        installed,
        repo,
        "check",
        "--problems",
        "problems",
        "--werror",
        "--sandbox",
        "process",
        "--insecure",
        "--format",
        "json",
        "-q",
    )
    report = json.loads(out.stdout)
    findings = [f for p in report["problems"] for c in p["checks"] for f in c["findings"]]
    assert out.returncode == 0 and report["ok"], json.dumps(findings, indent=1)
    assert sorted(p["problem"] for p in report["problems"]) == ["double-tree", SLUG]


#: slug -> (mistake, the file the one finding names, relative to the repository, and how to find its line)
Mistake = Callable[[Path, Path], tuple[str, int]]


def wrong_example(repo: Path, root: Path) -> tuple[str, int]:
    public = root / "cases" / "public.json"
    edit(public, '"expected": {"b": 1.5, "w": [3.0, 6.0]}', '"expected": {"b": 1.5, "w": [3.0, 7.0]}')
    return "cases/public.json", line_with(public, '"name": "example_1"')


def case_breaking_the_validator(repo: Path, root: Path) -> tuple[str, int]:
    generator = root / "generate_cases.py"
    edit(
        generator, '    "bare_vector": (5,),\n', '    "bare_vector": (5,),\n    "four_dims": (1, 1, 2, 2),\n'
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, str(generator)], check=True, capture_output=True, env=env, cwd=repo)
    hidden = root / "cases" / "hidden.json"
    return "cases/hidden.json", line_with(hidden, '"name": "four_dims"')


def nondeterministic_reference(repo: Path, root: Path) -> tuple[str, int]:
    reference = repo / "reference" / f"{root.name.replace('-', '_')}.py"
    edit(
        reference,
        "lambda leaf: leaf * factor",
        f'lambda leaf: leaf * factor * (1 + (hash("{HASHED}") % 3 + 1) * 2e-7)',
    )
    return f"../../reference/{reference.name}", line_with(reference, "def ")


def wrong_solution_in_accepted(repo: Path, root: Path) -> tuple[str, int]:
    solution = root / "solutions" / "accepted" / "adds_instead.py"
    function = root.name.replace("-", "_")
    solution.write_text(
        f"# Claims to be correct, but adds.\nimport jax\n\n\ndef {function}(tree, factor):\n"
        "    return jax.tree.map(lambda leaf: leaf + factor, tree)\n"
    )
    return "solutions/accepted/adds_instead.py", 5


def too_tight_tolerance(repo: Path, root: Path) -> tuple[str, int]:
    spec = root / "problem.toml"
    spec.write_text(spec.read_text() + "\n[compare.tolerance.bfloat16]\nulps = 0.1\n")
    return "problem.toml", line_with(spec, "[compare.tolerance.bfloat16]")


def malformed_spec(repo: Path, root: Path) -> tuple[str, int]:
    spec = root / "problem.toml"
    edit(spec, "traced = true", 'traced = "no"')
    return "problem.toml", line_with(spec, 'traced = "no"')


MISTAKES: dict[str, tuple[Mistake, str, str]] = {
    "wrong-example": (wrong_example, "examples", "written 7"),
    "breaks-validator": (case_breaking_the_validator, "cases", "4 dimensions"),
    "nondeterministic": (nondeterministic_reference, "reference", "not deterministic"),
    "wrong-accepted": (wrong_solution_in_accepted, "solutions", "expected accepted, got wrong_answer"),
    "tight-tolerance": (too_tight_tolerance, "solutions", "tolerance"),
    "malformed-spec": (malformed_spec, "spec", "valid boolean, not 'no'"),
}


def test_each_mistake_gives_one_precise_finding(installed: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    expected: dict[str, tuple[Path, int, str, str]] = {}
    for slug, (make, check, needle) in MISTAKES.items():
        root = add_fixture(repo, slug)
        rel, line = make(repo, root)
        expected[slug] = ((root / rel).resolve(), line, check, needle)
    out = judge(
        installed,
        repo,
        "check",
        "--problems",
        "problems",
        "--werror",
        "--sandbox",
        "process",
        "--insecure",
        "--format",
        "json",
        "-q",
    )
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    by_problem: dict[str, list[dict[str, Any]]] = {
        p["problem"]: [f for c in p["checks"] for f in c["findings"]] for p in report["problems"]
    }
    assert sorted(by_problem) == sorted(MISTAKES)
    for slug, (file, line, check, needle) in expected.items():
        findings = by_problem[slug]
        if slug == "tight-tolerance":
            # A bfloat16 tolerance under an ulp is also under the reference's own rounding (about an ulp
            # from float64): the accuracy check says so too, rightly.
            findings = [f for f in findings if f["check"] != "accuracy"]
        assert len(findings) == 1, (slug, json.dumps(findings, indent=1))
        (finding,) = findings
        assert finding["severity"] == "error" and finding["check"] == check, (slug, finding)
        assert Path(finding["file"]).resolve() == file and finding["line"] == line, (slug, finding)
        assert needle in finding["message"], (slug, finding)
        assert f":{line}" in finding["location"], (slug, finding)
    # The text format names the same file and line.
    text = judge(
        installed, repo, "check", "malformed-spec", "--problems", "problems", "--skip-solutions", "-q"
    )
    file, line, _, _ = expected["malformed-spec"]
    assert f"problems/malformed-spec/problem.toml:{line}: args.0.traced" in text.stdout, text.stdout
