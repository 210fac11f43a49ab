"""The catalog's "similar problems" links: problem.toml's ``similar``, what ``judge check`` says of a link,
the list's suggested order and the problem offered after an Accepted (``judge.web.order``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from judge.check import spec_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Severity
from judge.core.problems import ProblemSet, load_spec
from judge.core.spec import ProblemSpec
from judge.service.catalog import Catalog
from judge.service.schemas import ProblemSummary
from judge.web.order import next_problems, suggested_order
from tests.conftest import FIXTURE_SLUG, FIXTURES

ROOT = Path(__file__).resolve().parent.parent


def _summary(slug: str, difficulty: str = "medium", similar: tuple[str, ...] = ()) -> ProblemSummary:
    return ProblemSummary(
        slug=slug,
        title=slug.title(),
        difficulty=difficulty,  # type: ignore[arg-type]
        tags=[],
        similar=list(similar),
        function="f",
        signature="f(x)",
    )


def test_the_order_starts_easiest_and_walks_the_links_easier_first() -> None:
    catalog = [
        _summary("c", "hard", ("a",)),
        _summary("a", "easy", ("d", "b")),
        _summary("b", "medium", ("c",)),
        _summary("d", "hard"),
        _summary("e", "medium"),  # linked by nothing: placed once the links run out
    ]
    # a (the easiest) -> b (its easier link) -> c (b's link) -> back to a's other link d -> e.
    assert [p.slug for p in suggested_order(catalog)] == ["a", "b", "c", "d", "e"]


def test_the_order_places_every_problem_once_whatever_the_links() -> None:
    catalog = [_summary(f"p{i}", ("easy", "medium", "hard")[i % 3], (f"p{(i * 7) % 10}",)) for i in range(10)]
    order = [p.slug for p in suggested_order(catalog)]
    assert sorted(order) == sorted(p.slug for p in catalog)
    assert order[0] == "p0"  # the catalog's first easy problem


def test_after_an_accepted_the_links_come_first_then_the_order() -> None:
    catalog = [_summary("a", "easy", ("c",)), _summary("b"), _summary("c", "hard")]
    assert [p.slug for p in next_problems(catalog, "a")] == ["c", "b"]
    # The order is a, c (a's link), b: after b, which links nothing and comes last, the order from its start.
    assert [p.slug for p in suggested_order(catalog)] == ["a", "c", "b"]
    assert [p.slug for p in next_problems(catalog, "b")] == ["a", "c"]
    assert next_problems(catalog, "nope") == []


def test_the_catalog_lists_only_links_to_its_own_problems() -> None:
    summaries = {s.slug: s for s in Catalog(ProblemSet(ROOT / "problems")).summaries()}
    spec = load_spec(ROOT / "problems" / "sgd-momentum")
    assert "device-mesh-sharding" in spec.similar or "device-mesh-sharding" in summaries
    for item in summaries.values():
        assert set(item.similar) <= set(summaries), item.slug
    assert summaries["sgd-momentum"].similar[0] == "global-norm-clipping"
    # Every problem of the catalog is linked from another one, so the walk reaches it by a link.
    linked = {link for item in summaries.values() for link in item.similar}
    assert set(summaries) - linked <= {suggested_order(list(summaries.values()))[0].slug}


def _spec(**changes: object) -> dict[str, object]:
    import tomllib

    raw = tomllib.loads((FIXTURES / FIXTURE_SLUG / "problem.toml").read_text())
    raw.update(changes)
    return raw


@pytest.mark.parametrize(
    ("similar", "complaint"),
    [
        ([FIXTURE_SLUG], "names the problem itself"),
        (["lerp-trees", "lerp-trees"], "repeats"),
        (["Not A Slug"], "should match pattern"),
    ],
)
def test_a_bad_link_is_a_spec_error(similar: list[str], complaint: str) -> None:
    with pytest.raises(ValidationError, match=complaint):
        ProblemSpec.model_validate(_spec(similar=similar))


def _check_links(tmp_path: Path, similar: list[str]) -> Diagnostics:
    folder = tmp_path / "problems"
    for slug in (FIXTURE_SLUG, "lerp-trees"):
        shutil.copytree(FIXTURES / slug, folder / slug)
    toml = folder / FIXTURE_SLUG / "problem.toml"
    text = toml.read_text()
    listed = ", ".join(f'"{slug}"' for slug in similar)
    toml.write_text(text.replace("tags = ", f"similar = [{listed}]\ntags = ", 1))
    diag = Diagnostics(problem=FIXTURE_SLUG, base=tmp_path, check=spec_check.NAME)
    spec_check.check(CheckContext(root=folder / FIXTURE_SLUG, diag=diag))
    return diag


def _own(diag: Diagnostics) -> list[object]:
    """The spec check's own findings (the copied package cannot load its reference: not this check's)."""
    return [f for f in diag.findings if f.check == spec_check.NAME]


def test_check_notes_a_link_to_a_problem_not_yet_written_and_warns_on_a_typo(tmp_path: Path) -> None:
    diag = _check_links(tmp_path, ["lerp-trees", "kv-cache-update", "lerp-tree"])
    assert [f for f in diag.findings if f.check == spec_check.NAME and f.severity is Severity.ERROR] == []
    warnings = [f for f in diag.findings if f.severity is Severity.WARNING]
    assert len(warnings) == 1
    assert "'lerp-tree' is not in the catalog: did you mean 'lerp-trees'?" in warnings[0].message
    assert warnings[0].at == "similar.2" and warnings[0].line is not None
    notes = diag.notes_of(spec_check.NAME)
    assert notes == ["similar: 'kv-cache-update' is not in the catalog yet; it links nothing until it is"]


def test_check_is_silent_on_links_to_the_catalog(tmp_path: Path) -> None:
    diag = _check_links(tmp_path, ["lerp-trees"])
    assert _own(diag) == [] and diag.notes_of(spec_check.NAME) == []
