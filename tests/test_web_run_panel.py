"""The Run panel the server renders into the problem page (judge/web/run_panel.py): the text of each box,
numbers as the browser writes them, and the panel's boxes and examples in the HTML."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from judge.core.problems import ProblemSet
from judge.service.catalog import Catalog
from judge.web.run_panel import compact_json, format_input, js_number, run_panel
from tests.conftest import FIXTURE_SLUG
from tests.webtools import page_of

#: Numbers whose JavaScript text differs from Python's repr in every way it can: integral floats, the
#: thresholds of the exponent form, negative zero, the extremes of a double, ints past 2**53.
NUMBERS: list[int | float] = [
    3.0, 0.0, -0.0, 1, -7, 0.1, -0.2, 12.5, 100.0, 0.000123, 1e-6, 1.5e-6, 1e-7, -1e-7, 1.25e-7,
    123456789012345680000.0, 1e21, 1.2345e22, 2**53 + 1, 1e300, 5e-324, 1.7976931348623157e308,
    0.30000000000000004, 2.5e-5, 1234.5678,
]  # fmt: skip


def test_numbers_are_written_as_javascript_writes_them() -> None:
    """The box text is what the page sends back after JSON.parse: check it against Node's own answer."""
    node = shutil.which("node")
    assert node, "Node.js is needed for the page's tests: run scripts/setup --test"
    script = (
        "const xs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(xs.map((x) => JSON.stringify(x))));"
    )
    proc = subprocess.run(
        [node, "-e", script],
        input=json.dumps(NUMBERS),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert [js_number(n) for n in NUMBERS] == json.loads(proc.stdout)


def test_numbers_json_cannot_hold_are_null() -> None:
    assert [js_number(x) for x in (float("nan"), float("inf"), -float("inf"), 10**400)] == ["null"] * 4


def test_short_values_stay_on_one_line_with_spaces() -> None:
    assert compact_json({"w": [3.0, 0.0], "b": 4.0}) == '{"w": [3, 0], "b": 4}'
    assert format_input(1.0) == "1"
    assert format_input([]) == "[]" and format_input({}) == "{}"
    assert compact_json({"ok": True, "s": "é\n"}) == '{"ok": true, "s": "é\\n"}'


def test_long_trees_open_up_leaves_stay_on_one_line_and_the_text_parses_back() -> None:
    value = {"layers": [{"w": [0.6, 0.6, 0.6, 0.6]}, {"w": [0.6, 0.6, 0.6, 0.6]}, {"w": [0.6]}]}
    text = format_input(value)
    assert text == (
        '{\n  "layers": [\n    {"w": [0.6, 0.6, 0.6, 0.6]},\n    {"w": [0.6, 0.6, 0.6, 0.6]},\n'
        '    {"w": [0.6]}\n  ]\n}'
    )
    assert json.loads(text) == value
    # A long list of numbers is one line however long; a long list of lists has one row per line.
    row = [float(i) for i in range(30)]
    assert format_input(row) == "[" + ", ".join(str(i) for i in range(30)) + "]"
    text = format_input([row, row])
    assert text == "[\n  " + format_input(row) + ",\n  " + format_input(row) + "\n]"
    assert json.loads(text) == [row, row]


@pytest.fixture(scope="module")
def catalog(problems: ProblemSet) -> Catalog:
    return Catalog(problems)


@pytest.mark.parametrize("slug", ["scale-tree", "lerp-trees", "running-total", "shift-tokens"])
def test_every_argument_gets_a_box_with_the_first_example(catalog: Catalog, slug: str) -> None:
    detail = catalog.detail(slug)
    panel = run_panel(detail)
    assert [box.name for box in panel.boxes] == [arg.name for arg in detail.arguments]
    first = detail.examples[0].input
    for box, arg in zip(panel.boxes, detail.arguments, strict=True):
        assert box.id == f"arg-{arg.name}"
        if arg.choices:  # a function argument: a list of its choices, the example's selected
            assert box.accepts == "one of the listed functions"
            assert box.choices == arg.choices and box.selected == first[arg.name]
        else:
            assert box.accepts == ", ".join(arg.accepts)
            assert box.choices == []
        expected_dtype = {"pytree": "case", "array": arg.dtype or "case"}.get(arg.kind, "")
        assert box.leaf_dtype == expected_dtype
        assert box.description == arg.description
        assert json.loads(box.text) == first[arg.name]
        assert box.rows == min(12, max(2, box.text.count("\n") + 1))
        assert box.describedby.split()[:3] == [f"{box.id}-kinds", f"{box.id}-description", f"{box.id}-error"]
        assert ("json-rule" in box.describedby.split()) == (arg.kind == "pytree")
    assert panel.pytree_rule == any(arg.kind == "pytree" for arg in detail.arguments)
    assert panel.dtype == detail.run_panel_dtype
    assert [choice.label for choice in panel.examples] == [
        f"Example {i + 1}" for i in range(len(detail.examples))
    ]
    for choice, example in zip(panel.examples, detail.examples, strict=True):
        texts = json.loads(choice.inputs_json)
        assert {name: json.loads(text) for name, text in texts.items()} == example.input


def test_the_page_holds_the_boxes_labels_and_examples(catalog: Catalog) -> None:
    detail = catalog.detail(FIXTURE_SLUG)
    page = page_of(detail)
    panel = run_panel(detail)
    for box in panel.boxes:
        assert f'<label for="{box.id}"><code>{box.name}</code></label>' in page
        assert f'<span class="kinds" id="{box.id}-kinds">accepts {box.accepts}</span>' in page
        match = re.search(rf'<textarea id="{box.id}" name="{box.name}"[^>]*>\n(.*?)</textarea>', page, re.S)
        assert match is not None, box.id
        assert html.unescape(match.group(1)) == box.text
        assert f'<p class="input-error" id="{box.id}-error" role="alert" hidden></p>' in page
    options = re.findall(r'<option value="(\d+)" data-inputs="([^"]*)">([^<]*)</option>', page)
    assert [(int(v), label) for v, _, label in options] == [(c.index, c.label) for c in panel.examples]
    for (_, data, _), choice in zip(options, panel.examples, strict=True):
        assert html.unescape(data) == choice.inputs_json
    assert '<aside id="json-rule" class="json-rule" aria-labelledby="json-rule-title">' in page
    assert f"Float leaves you type here are <code data-case-dtype>{detail.run_panel_dtype}</code>" in page


def test_a_function_argument_is_a_select_and_an_int32_argument_says_int32(catalog: Catalog) -> None:
    page = page_of(catalog.detail("running-total"))
    select = re.search(r'<select id="arg-f" name="f"[^>]*>(.*?)</select>', page, re.S)
    assert select is not None
    assert re.findall(r'<option value="(\w+)"( selected)?>', select.group(1)) == [
        ("square", " selected"),
        ("sine", ""),
    ]
    assert '<textarea id="arg-f"' not in page
    kinds = page_of(catalog.detail("shift-tokens"))
    assert '<span class="leaf-dtype">leaves: <code>int32</code></span>' in kinds
    assert kinds.count('class="leaf-dtype"') == 3  # tokens, lengths, offset; not widths or pad_id


def test_a_problem_without_pytree_arguments_hides_the_list_rule(catalog: Catalog) -> None:
    page = page_of(catalog.detail("shift-tokens"))
    assert '<aside id="json-rule" class="json-rule" aria-labelledby="json-rule-title" hidden>' in page


def test_author_text_in_the_panel_is_escaped(catalog: Catalog) -> None:
    """A description or an example string cannot end its element or inject markup."""
    real = catalog.detail(FIXTURE_SLUG)
    hostile_arg = real.arguments[0].model_copy(update={"description": "<script>alert(1)</script>"})
    hostile_example = real.examples[0].model_copy(
        update={"input": {**real.examples[0].input, real.arguments[0].name: "</textarea><b>x</b>"}}
    )
    body = real.model_copy(
        update={"arguments": [hostile_arg, *real.arguments[1:]], "examples": [hostile_example]}
    )
    page = page_of(body)
    assert "<script>alert(1)" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/textarea&gt;&lt;b&gt;x&lt;/b&gt;" in page
