"""Statement math as the page shows it: MathML from the server, delimiters that grow only where TeX's do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge.authoring.markdown import tex_to_mathml, to_html
from judge.authoring.statement import fill_statement
from judge.core.problems import Problem, ProblemSet
from tests.conftest import FIXTURES


def test_norm_bars_beside_a_root_do_not_stretch() -> None:
    mathml = tex_to_mathml(r"\lVert g \rVert = \sqrt{\sum_i g_i^2} + \lvert x \rvert", display=True)
    bars = re.findall(r"<mo[^>]*>&#x0*(?:2016|7C);</mo>", mathml)
    assert len(bars) == 4
    assert all('stretchy="false"' in bar for bar in bars), bars


def test_left_right_delimiters_still_stretch() -> None:
    mathml = tex_to_mathml(r"\min\left(1, \frac{c}{\lVert g \rVert}\right)", display=True)
    assert mathml.count('stretchy="true"') == 2
    assert mathml.count('stretchy="false"') == 2  # the norm bars inside the fraction


def test_statement_math_is_mathml_with_its_tex_source() -> None:
    html = to_html("Let $c$ be the limit:\n\n$$\n\\lVert g \\rVert \\le c\n$$\n")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in html
    assert 'display="block"' in html
    assert '<annotation encoding="application/x-tex">\\lVert g \\rVert \\le c</annotation>' in html
    assert "$" not in html


# --------------------------------------------------------------------- every statement, as the page shows it

ROOT = Path(__file__).resolve().parent.parent
PROBLEM_DIRS = [ROOT / "problems", FIXTURES]
STATEMENTS = [problem for directory in PROBLEM_DIRS for problem in ProblemSet(directory)]

#: What TeX the converter did not turn into MathML looks like in the page's text: a control word, a row
#: spacing such as `[2ex]`, an alignment `&`, or a dollar sign (code and the TeX annotations left aside).
LEFTOVER_TEX = re.compile(
    r"\\[A-Za-z]+|\\[^A-Za-z\s]|\[-?\d+(?:\.\d+)?(?:ex|em|pt|mu)\]|\$|(?<![\w;])&(?![#\w]+;)"
)


def shown_text(html: str) -> str:
    """The page's statement text outside code and outside the TeX annotations MathML carries; inside math
    the tokens are joined as they are drawn (``<mo>[</mo><mn>2ex</mn><mo>]</mo>`` reads ``[2ex]``)."""
    html = re.sub(r"<annotation\b.*?</annotation>", "", html, flags=re.S)
    html = re.sub(r"<(code|pre)\b.*?</\1>", "", html, flags=re.S)
    html = re.sub(
        r"<math\b.*?</math>", lambda m: " " + re.sub(r"<[^>]+>", "", m.group()) + " ", html, flags=re.S
    )
    return re.sub(r"<[^>]+>", " ", html)


def test_every_cases_row_has_its_condition_in_the_second_column() -> None:
    """Rows of a ``cases`` line up when each has two cells (value, condition) and no condition sits in
    the value's cell."""
    for problem in STATEMENTS:
        html = to_html(fill_statement(problem, ""))
        for row in re.findall(r"<mtr>(.*?)</mtr>", html, flags=re.S):
            cells = re.findall(r"<mtd\b[^>]*>(.*?)</mtd>", row, flags=re.S)
            assert len(cells) == 2, (problem.slug, row[:200])
            assert "if" not in re.sub(r"<[^>]+>", "", cells[0]), (
                problem.slug,
                "a condition in the value cell",
            )


@pytest.mark.parametrize("problem", STATEMENTS, ids=lambda problem: problem.slug)
def test_every_statement_renders_without_leftover_tex(problem: Problem) -> None:
    html = to_html(fill_statement(problem, ""))
    assert "<merror" not in html, "the converter reported a TeX error"
    leftovers = sorted({match.group() for match in LEFTOVER_TEX.finditer(shown_text(html))})
    assert leftovers == [], f"{problem.slug}: TeX left in the statement: {leftovers}"


def test_the_leftover_check_sees_what_it_is_for() -> None:
    html = to_html("$$\n\\begin{cases} a & b \\\\[2ex] c & d \\end{cases}\n$$\n\nand $\\foo$ text \\alpha")
    found = {match.group() for match in LEFTOVER_TEX.finditer(shown_text(html))}
    assert "\\alpha" in found
    # An escape the converter kept (before text escapes were handled, \text{max\_norm} showed "max\_norm").
    assert LEFTOVER_TEX.findall(shown_text("<math><mtext>max\\_norm</mtext></math>")) == ["\\_"]
    assert found, html
