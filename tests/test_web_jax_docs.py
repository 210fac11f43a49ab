"""The editor's JAX help (web/jax_names.py): cleaned signatures, docstrings as plain text, one line per
parameter, and the files in web/src made from the installed jax."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax import lax

ROOT = Path(__file__).resolve().parent.parent


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jax_names", ROOT / "web" / "jax_names.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


builder = _builder()
#: What the builder makes: (jax-names.json, jax-docs.json).
Built = tuple[dict[str, Any], dict[str, Any]]


@pytest.fixture(scope="module")
def built() -> Built:
    """What ``python web/jax_names.py`` makes: built in a fresh interpreter, as that command runs, since what
    ``dir(jax)`` lists grows with every submodule imported (a suite imports ``jax.experimental`` and more)."""
    path = ROOT / "web" / "jax_names.py"
    code = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('jax_names', {str(path)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules[spec.name] = module\n"
        "spec.loader.exec_module(module)\n"
        "print(json.dumps(module.build()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True, cwd=ROOT
    )
    names, docs = json.loads(done.stdout)
    return names, docs


def test_signatures_are_cleaned_for_reading() -> None:
    entry = builder.entry
    # A ufunc: its real inputs, not (*args: 'ArrayLike', out: 'None' = None, where: 'None' = None).
    assert entry("minimum", jnp.minimum).signature == "(x, y, /)"
    # No private parameter (_split_transpose), no annotations, plain defaults.
    assert entry("scan", lax.scan).signature == "(f, init, xs=None, length=None, reverse=False, unroll=1)"
    assert entry("split", jax.random.split).signature == "(key, num=2)"
    # NumPy's out=None, which jax.numpy refuses, is gone; where=, which jnp.sum takes, stays.
    total = entry("sum", jnp.sum).signature
    assert "out" not in total and "where=None" in total
    # jnp.array's *args only refuses extra positional arguments: keyword-only after it, marked with *.
    assert entry("array", jnp.array).signature.startswith("(object, dtype=None, *, copy=True")
    # A real *rest stays; a default that is no plain value reads as ...
    assert entry("map", jax.tree.map).signature == "(f, tree, *rest, is_leaf=None)"
    assert entry("jit", jax.jit).signature.startswith("(fun=..., /, *, in_shardings=..., out_shardings=...")
    for item in (jnp.minimum, lax.scan, jax.random.split, jnp.sum, jax.jit, jax.grad):
        signature = entry("f", item).signature
        assert "'" not in signature.replace("='auto'", "") and "ArrayLike" not in signature, signature


def test_summaries_and_parameters_are_plain_text() -> None:
    minimum = builder.entry("minimum", jnp.minimum)
    assert minimum.summary == "Return element-wise minimum of the input arrays."
    assert [name for name, _ in minimum.params] == ["x", "y"]
    split = builder.entry("split", jax.random.split)
    assert split.summary == "Splits a PRNG key into `num` new keys by adding a leading axis."
    assert dict(split.params)["key"] == "a PRNG key (from `key`, `split`, `fold_in`)."
    scan = builder.entry("scan", lax.scan)
    assert [name for name, _ in scan.params] == ["f", "init", "xs", "length", "reverse", "unroll"]
    # A parameter NumPy has and jnp refuses is not described either.
    assert "out" not in dict(builder.entry("sum", jnp.sum).params)
    # Too short a first sentence goes on to the next: "int or array, default=None." says too little.
    assert dict(builder.entry("sum", jnp.sum).params)["axis"].startswith("int or array, default=None. Axis")


def test_restructured_text_becomes_plain_text() -> None:
    rst = builder.rst_text
    assert (
        rst("See :func:`~jax.numpy.maximum` and :py:class:`jax.Array`.") == "See `maximum` and `jax.Array`."
    )
    assert rst("Like :obj:`numpy.minimum`, ``x`` and :math:`x^2`.") == "Like `numpy.minimum`, `x` and `x^2`."
    assert (
        rst("the :ref:`sharding guide <sharding>` and `Haskell-like`_")
        == "the sharding guide and Haskell-like"
    )
    assert rst("a `link <https://example.org>`__ is *only* **text**") == "a link is only text"
    assert rst("keeps `num` and *args") == "keeps `num` and *args"
    assert builder.summary("Sum.\n\nMore.") == "Sum."
    assert builder.summary("Given this::\n\n  code") == "Given this:"


def test_parameters_of_google_and_numpy_docstrings() -> None:
    google = (
        "Do it.\n\nArgs:\n  x: the input,\n    continued. More.\n  *rest: others.\n\nReturns:\n  y: no.\n"
    )
    assert builder.parameters(google) == [("x", "the input, continued. More."), ("rest", "others.")]
    numpy = "\n".join(["Do.", "", "Parameters", "---", "x : array", "    The input.", "n : int", "    Many."])
    numpy += "\n\nReturns\n-------\nz\n"
    assert builder.parameters(numpy) == [("x", "The input."), ("n", "Many.")]
    assert builder.parameters("No sections.") == []


def test_the_files_in_web_src_are_made_from_the_installed_jax(
    built: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """Regenerate with ``.venv/bin/python web/jax_names.py`` when jax (the lock) changes."""
    names, docs = built
    for file, fresh in (("jax-names.json", names), ("jax-docs.json", docs)):
        kept = json.loads((ROOT / "web" / "src" / file).read_text())
        assert kept["jax_version"] == jax.__version__, f"{file}: regenerate with web/jax_names.py"
        assert kept == json.loads(json.dumps(fresh)), f"{file} is stale: regenerate with web/jax_names.py"


def test_the_index_covers_the_modules_and_leaves_no_rst(built: Built) -> None:
    names, docs = built
    assert set(names["modules"]) == {"jax", "jax.numpy", "jax.lax", "jax.random", "jax.tree", "jax.nn"}
    for path in ("jax.jit", "jax.numpy.minimum", "jax.lax.scan", "jax.random.split", "jax.tree.map"):
        assert docs["docs"][path]["doc"], path
    raw = [
        path
        for path, entry in docs["docs"].items()
        if re.search(r":[a-z]+:`|``|\.\. ", " ".join([entry["doc"], *(line for _, line in entry["params"])]))
    ]
    assert raw == []
    # The completion list shows one line per option.
    longest = max(len(item["detail"]) for items in names["modules"].values() for item in items)
    assert longest <= builder.SIGNATURE_MAX


def test_the_docs_are_a_file_of_their_own_not_in_the_editor_chunk() -> None:
    """The editor's chunk holds the docs' URL, not their text; the file has its gzip copy beside it."""
    from judge.web.assets import DIST_DIR

    manifest = json.loads((DIST_DIR / "manifest.json").read_text())
    editor = (DIST_DIR / manifest["files"]["editor.js"]).read_text()
    (url,) = set(re.findall(r'"/static/(jax-docs-[A-Z0-9]{8}\.json)"', editor))
    assert "Return element-wise minimum of the input arrays." not in editor
    docs = json.loads((DIST_DIR / url).read_text())
    assert docs["docs"]["jax.numpy.minimum"]["sig"] == "(x, y, /)"
    assert (DIST_DIR / f"{url}.gz").is_file()
