"""docs/architecture.md's module and check tables against the code, so that they cannot drift.

The module tables ("`judge/` modules, one job each" and "`sandbox/` modules, one job each") name, in
backticks in their first column, every module of the package (``name.py``; ``__init__.py`` is the package
itself) and every subpackage as one row of its own (``name/``: a subpackage's modules are described where
its room is, not here). A row may name several modules. The check table ("| check | proves |") names every
check of ``judge check``'s registry (``judge.check.runner.STEPS``), in the order the runner runs them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from judge.check.runner import CHECK_NAMES
from tests.conftest import ROOT

ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: The line that introduces each module table, and the package it describes.
MODULE_TABLES = {
    "`judge/` modules, one job each:": ROOT / "judge",
    "`sandbox/` modules, one job each:": ROOT / "sandbox",
    "`judge/authoring/` modules, one job each:": ROOT.joinpath("judge", "authoring"),
    "`judge/core/` modules, one job each:": ROOT.joinpath("judge", "core"),
    "`judge/feedback/` modules, one job each:": ROOT.joinpath("judge", "feedback"),
    "`judge/grading/` modules, one job each:": ROOT.joinpath("judge", "grading"),
    "`sandbox/backends/` modules, one job each:": ROOT.joinpath("sandbox", "backends"),
    "`sandbox/host/` modules, one job each:": ROOT.joinpath("sandbox", "host"),
    "`sandbox/session/` modules, one job each:": ROOT.joinpath("sandbox", "session"),
    "`sandbox/shared/` modules, one job each:": ROOT.joinpath("sandbox", "shared"),
}
CHECK_TABLE_HEADER = "| check | proves |"


def table_after(text: str, marker: str) -> list[list[str]]:
    """The body rows (cells stripped) of the first Markdown table after the line ``marker``."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == marker)
    except StopIteration:
        raise AssertionError(f"docs/architecture.md has no line {marker!r}") from None
    while start < len(lines) and not lines[start].startswith("|"):
        start += 1
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    if len(table) < 2 or not set(table[1].replace("|", "").strip()) <= {"-", " ", ":"}:
        raise AssertionError(f"no Markdown table after {marker!r}")
    # A cell may hold an escaped pipe (`tpu\|gpu`): split only on the unescaped ones.
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in table[2:]]


def named(cell: str) -> list[str]:
    """The names a first cell gives in backticks."""
    return re.findall(r"`([^`]+)`", cell)


def modules(package: Path) -> set[str]:
    """A package's modules (``name.py``) and subpackages (``name/``), as a table row names them."""
    files = {p.name for p in package.glob("*.py") if p.name != "__init__.py"}
    return files | {f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()}


@dataclass(frozen=True)
class Drift:
    missing: list[str]  # in the code, in no row
    stale: list[str]  # in a row, not in the code
    twice: list[str]  # in more than one row


def module_drift(text: str, marker: str, package: Path) -> Drift:
    rows = [named(row[0]) for row in table_after(text, marker)]
    listed = [name for row in rows for name in row]
    actual = modules(package)
    return Drift(
        missing=sorted(actual - set(listed)),
        stale=sorted(set(listed) - actual),
        twice=sorted({name for name in listed if listed.count(name) > 1}),
    )


def check_rows(text: str) -> list[str]:
    return [name for row in table_after(text, CHECK_TABLE_HEADER) for name in named(row[0])]


@pytest.mark.parametrize("marker", MODULE_TABLES, ids=lambda m: m.split("`")[1])
def test_every_module_has_one_row_and_every_row_a_module(marker: str) -> None:
    package = MODULE_TABLES[marker]
    drift = module_drift(ARCHITECTURE.read_text(), marker, package)
    where = f"{package.name}/ and docs/architecture.md"
    assert not drift.missing, f"{where}: modules without a row: {drift.missing}"
    assert not drift.stale, f"{where}: rows naming no module: {drift.stale}"
    assert not drift.twice, f"{where}: modules named by two rows: {drift.twice}"


def test_the_check_table_is_the_registry_in_run_order() -> None:
    rows = check_rows(ARCHITECTURE.read_text())
    missing, stale = sorted(set(CHECK_NAMES) - set(rows)), sorted(set(rows) - set(CHECK_NAMES))
    assert not missing, f"checks of judge check without a row in docs/architecture.md: {missing}"
    assert not stale, f"rows of docs/architecture.md naming no check of judge check: {stale}"
    assert rows == list(CHECK_NAMES), "the check table is not in the order judge check runs them"


# ------------------------------------------------------------------------- the reading, on a doctored doc

DOCTORED = """\
Intro.

`pkg/` modules, one job each:

| module | job |
| --- | --- |
| `a.py`, `b.py` | two modules, one row |
| `gone.py` | a module that was removed |
| `sub/` | a subpackage, one row |
| `a.py` | named twice |

| check | proves |
| --- | --- |
| `spec` | a \\| pipe |
"""


def test_the_reading_finds_missing_stale_and_twice_named_modules(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py", "__init__.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()  # not a package: needs no row
    drift = module_drift(DOCTORED, "`pkg/` modules, one job each:", tmp_path)
    assert drift == Drift(missing=["c.py"], stale=["gone.py"], twice=["a.py"])
    assert check_rows(DOCTORED) == ["spec"]
    with pytest.raises(AssertionError, match="no line"):
        table_after(DOCTORED, "`other/` modules, one job each:")
