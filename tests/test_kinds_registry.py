"""The kinds' registry (``judge.kinds.registry.KINDS``) and the protocol every kind keeps: one module per
kind, each registered once under its own name; the spec's literal and the API's enum are the registry's
names; and every kind's scaffolded values convert, and cross to the sandbox under a wire tag the tracer
reads. A new kind is held to all of it without a line here."""

from __future__ import annotations

import importlib
import inspect
import json
import typing
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from judge.authoring.scaffold_kinds import ArgDecl
from judge.core.spec import ArgSpec
from judge.kinds.base import OPTIONAL_FIELDS, Kind
from judge.kinds.registry import KIND_NAMES, KINDS, kind_of, users_of
from judge.service.schemas import ArgumentPublic
from sandbox.inside.tracer import static_value

KINDS_DIR = Path(__file__).resolve().parent.parent / "judge" / "kinds"
#: The wire tags ``sandbox.inside.tracer.Signature`` reads (``_collect`` and ``build``).
TRACER_TAGS = {"number", "static", "function", "key", "tree"}


def _kind_classes() -> list[type[Kind]]:
    """Every concrete ``Kind`` defined in a module of ``judge/kinds``."""
    found = []
    for path in sorted(KINDS_DIR.glob("*.py")):
        module = importlib.import_module(f"judge.kinds.{path.stem}")
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, Kind) and value is not Kind and value.__module__ == module.__name__:
                found.append(value)
    return found


def test_every_kind_module_is_registered_once_under_its_name() -> None:
    classes = _kind_classes()
    assert sorted(type(kind).__name__ for kind in KINDS.values()) == sorted(c.__name__ for c in classes)
    assert all(name == kind.name for name, kind in KINDS.items())
    assert len(set(KIND_NAMES)) == len(KIND_NAMES)
    assert all(kind.fields <= set(OPTIONAL_FIELDS) for kind in KINDS.values())
    assert set(OPTIONAL_FIELDS) <= set(ArgSpec.model_fields)


def test_the_spec_literal_and_the_api_enum_are_the_registry() -> None:
    assert typing.get_args(ArgSpec.model_fields["kind"].annotation) == KIND_NAMES
    kind = ArgumentPublic.model_json_schema()["properties"]["kind"]
    assert tuple(kind["enum"]) == KIND_NAMES
    assert all(f"{name}: {KINDS[name].api_text}" in kind["description"] for name in KIND_NAMES)


def test_an_unknown_kind_is_refused_naming_the_kinds() -> None:
    with pytest.raises(ValidationError, match="Input should be 'pytree', 'number'"):
        ArgSpec.model_validate({"name": "a", "kind": "mask"})


def test_optional_fields_are_refused_on_kinds_that_do_not_use_them() -> None:
    assert users_of("dtype") == ["array"] and users_of("structure") == ["pytree"]
    for name in KIND_NAMES:
        if "structure" not in kind_of(name).fields:
            with pytest.raises(ValidationError, match="structure 'fixed' applies to kind 'pytree' only"):
                ArgSpec.model_validate({"name": "a", "kind": name, "structure": "fixed"})


@pytest.mark.parametrize("name", KIND_NAMES)
def test_a_static_kind_defaults_to_static_and_refuses_traced(name: str) -> None:
    kind = kind_of(name)
    decl = ArgDecl.parse(f"a:{name}")
    spec = decl.spec()
    assert spec.traced is not kind.static
    if kind.static:
        with pytest.raises(ValidationError, match=r"cannot be traced|must have traced = false"):
            ArgSpec.model_validate({**spec.model_dump(), "traced": True})


@pytest.mark.parametrize("name", KIND_NAMES)
def test_scaffolded_examples_convert_and_cross_under_a_tracer_tag(name: str) -> None:
    """Each kind's ``judge new`` examples are Run-panel JSON its converter takes; the session plan's wire
    form is JSON under one tag the tracer reads, with float32/uint32/... leaves for the traced ones; a
    static value comes back from the wire as the value the function would get."""
    decl = ArgDecl.parse(f"a:{name}")
    spec = decl.spec()
    kind = kind_of(name)
    for index in (0, 1):
        value = kind.from_json(spec, decl.example(index), "float32", "a")
        wire, leaves = kind.wire(spec, value)
        (tag,) = set(wire) - {"tuple"}  # "tuple": true marks a static tuple
        assert tag in TRACER_TAGS, wire
        assert json.loads(json.dumps(wire)) == wire
        assert all(isinstance(leaf, np.ndarray) for leaf in leaves)
        assert (not leaves) == (kind.static or not spec.traced)
        if tag == "static":
            assert static_value(json.loads(json.dumps(wire))) == value
        assert kind.describe(spec) and kind.accepts(spec)
