"""Statement math as the page shows it: MathML from the server, delimiters that grow only where TeX's do."""

from __future__ import annotations

import re

from judge.service.markdown import tex_to_mathml, to_html


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
