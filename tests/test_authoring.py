"""What a problem's author meets: TeX escapes that render, raw TeX that the statement check flags, decimal
bounds that hold for the cases' float32, the whole requirement sentence in a warning, and every argument
kind of problems/README.md offered by ``judge new --arg``."""

from __future__ import annotations

import re
import shutil
import typing
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from judge.authoring.markdown import formulas_left_raw, raw_tex, tex_to_mathml, unescape_text_commands
from judge.authoring.scaffold_kinds import ARRAY_DTYPES, KINDS, ArgDecl
from judge.check import requirements_check, spec_check, statement_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Severity
from judge.constraints import check_derived, check_max_abs, check_number, in_dtype
from judge.core.spec import ArgSpec
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "problems" / "scale-tree"
    shutil.copytree(FIXTURES / "scale-tree", root)
    shutil.copytree(FIXTURES.parent / "reference", tmp_path / "reference")
    return root


# ------------------------------------------------------------------------------------------------- TeX


@pytest.mark.parametrize(
    ("tex", "shown"),
    [
        (r"\text{max\_norm}", "<mtext>max_norm</mtext>"),
        (r"\texttt{add\_rows}[j]", '<mtext mathvariant="monospace">add_rows</mtext>'),
        (r"\text{50\% \& \#1 \$2}", "<mtext>50%&#x000A0;&amp;&#x000A0;#1&#x000A0;$2</mtext>"),
        (r"\text{\{a\} \textbackslash{}b}", "<mtext>{a}&#x000A0;&#x5C;b</mtext>"),
    ],
)
def test_text_escapes_render_as_their_characters(tex: str, shown: str) -> None:
    mathml = tex_to_mathml(tex, display=False)
    assert shown in mathml, mathml
    assert raw_tex(mathml) == []
    # The TeX source stays as written in the annotation.
    source = tex.replace("&", "&amp;")
    assert f'<annotation encoding="application/x-tex">{source}</annotation>' in mathml


def test_escapes_outside_text_commands_are_left_to_the_converter() -> None:
    tex = r"\{x\} + \text{a\_b} + c_{\text{d\_e}}"
    assert unescape_text_commands(tex) == r"\{x\} + \text{a_b} + c_{\text{d_e}}"


def test_what_the_renderer_leaves_raw_is_found() -> None:
    """Before escapes were handled, \\text{max\\_norm} showed its backslash; an unknown command still does."""
    from latex2mathml.converter import convert

    assert raw_tex(convert(r"\text{max\_norm}")) == [r"\_"]
    assert raw_tex(tex_to_mathml(r"\foo x + y", display=False)) == [r"\foo"]
    found = formulas_left_raw(
        "Fine $a\\_b$ and $\\text{c\\_d}$.\n\nBroken $\\nosuch + 1$.\n\n$$\n\\bar x\n$$\n"
    )
    assert found == [(3, r"\nosuch + 1", [r"\nosuch"])]


def test_the_statement_check_flags_raw_tex_at_its_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    statement = root / "statement.md"
    statement.write_text(statement.read_text() + "\nA note: $\\widehatt{x}$ and $\\text{max\\_norm}$.\n")
    ctx = CheckContext(root=root, diag=Diagnostics(problem=root.name, base=tmp_path))
    spec_check.check(ctx)
    ctx.diag.check = statement_check.NAME
    statement_check.check(ctx)
    (finding,) = ctx.diag.of(statement_check.NAME)
    assert finding.severity is Severity.ERROR
    assert r"\widehatt" in finding.message and "max" not in finding.message
    assert finding.line == len(statement.read_text().splitlines())


# ------------------------------------------------------------------------------ bounds in the case dtype


def test_a_decimal_bound_holds_for_its_float32_value() -> None:
    tenth = np.array([np.float32(0.1)], dtype=np.float32)
    assert float(tenth[0]) > 0.1  # float32(0.1) is 0.10000000149...
    assert check_max_abs(tenth, "x", 0.1) == []
    assert check_max_abs(np.array([0.10001], dtype=np.float32), "x", 0.1) != []
    assert check_max_abs(np.array([0.1], dtype=ml_dtypes.bfloat16), "x", 0.1) == []
    seven = float(np.float32(0.7))
    assert seven < 0.7
    assert check_derived(seven, "x", "the smallest value", ge=0.7) != []
    assert check_derived(seven, "x", "the smallest value", ge=0.7, dtype="float32") == []
    assert check_number(seven, "lr", ge=0.7, dtype="float32") == []
    assert check_number(float(np.float32(0.69)), "lr", ge=0.7, dtype="float32") != []
    assert in_dtype(0.1, "float32") == float(np.float32(0.1))
    assert in_dtype(0.1, "bfloat16") == float(ml_dtypes.bfloat16(0.1))
    assert in_dtype(0.1, None) == 0.1 and in_dtype(3, "int32") == 3


# ------------------------------------------------------------------------------ the requirements warning


def test_the_warning_quotes_the_whole_requirement_sentence(tmp_path: Path) -> None:
    """A sentence whose "must" comes after its 90th character was cut before that word."""
    root = _copy(tmp_path)
    long = (
        "Whatever the structure, the dtypes or the number of leaves of the tree that arrives here, each "
        "result leaf must keep the dtype of its input leaf."
    )
    assert long.index("must") > 90
    statement = root / "statement.md"
    statement.write_text(statement.read_text().replace("{{rules}}", long + "\n\n{{rules}}", 1))
    ctx = CheckContext(root=root, diag=Diagnostics(problem=root.name, base=tmp_path))
    spec_check.check(ctx)
    ctx.diag.check = requirements_check.NAME
    requirements_check.check(ctx)
    messages = [f.message for f in ctx.diag.of(requirements_check.NAME)]
    assert any(f'"{long}"' in m for m in messages), messages


# ------------------------------------------------------------------------------ judge new --arg kinds


def _readme_kinds() -> tuple[set[str], set[str]]:
    """The argument kinds and array dtypes problems/README.md lists ("Argument kinds")."""
    text = (ROOT / "problems" / "README.md").read_text()
    table = text[text.index("### Argument kinds") : text.index("A `key` argument is")]
    kinds = set(re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M))
    dtypes = set(re.findall(r'`"(case|int32|uint32|bool)"`', table))
    return kinds, dtypes


def test_judge_new_offers_every_kind_the_readme_lists() -> None:
    kinds, dtypes = _readme_kinds()
    assert kinds == set(KINDS) == set(typing.get_args(ArgSpec.model_fields["kind"].annotation))
    assert dtypes == set(ARRAY_DTYPES)
    for kind in kinds:
        assert ArgDecl.parse(f"a:{kind}").kind == kind
    for dtype in dtypes:
        assert ArgDecl.parse(f"a:array:{dtype}").dtype == dtype
