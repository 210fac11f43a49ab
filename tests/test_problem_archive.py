"""A problem package as a tar.gz (``judge.authoring.problem_archive``): packed and unpacked to the same
content hash as the folder loads with; every hostile archive refused with a message naming what is wrong and
where, and nothing written outside the destination."""

from __future__ import annotations

import io
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.authoring.problem_archive import ArchiveError, ArchiveLimits, pack, unpack
from judge.core.problem_hash import problem_hash
from judge.core.problems import load_problem
from tests.conftest import FIXTURE_SLUG, FIXTURES

SLUG = FIXTURE_SLUG


def tar_gz(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def package_members(slug: str = SLUG) -> list[tuple[tarfile.TarInfo, bytes]]:
    """A well-formed package's members (the fixture problem's own files)."""
    members = []
    with tarfile.open(fileobj=io.BytesIO(pack(FIXTURES / SLUG)), mode="r:gz") as archive:
        for info in archive:
            data = archive.extractfile(info).read()  # type: ignore[union-attr]
            info.name = info.name.replace(f"problems/{SLUG}/", f"problems/{slug}/")
            members.append((info, data))
    return members


def test_a_packed_folder_unpacks_to_the_same_version_and_loads(tmp_path: Path) -> None:
    data = pack(FIXTURES / SLUG)
    package = unpack(data, tmp_path / "out", SLUG)
    loaded = load_problem(package.folder)
    original = load_problem(FIXTURES / SLUG)
    assert package.content_hash == problem_hash(original) == problem_hash(loaded)
    assert (package.slug, package.revision, package.reference) == (SLUG, 1, "scale_tree")
    assert not list(tmp_path.glob("out/problems/*/__pycache__"))


def test_a_changed_file_is_another_version(tmp_path: Path) -> None:
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES.parent, copy)
    (copy / "problems" / SLUG / "statement.md").write_text("# changed\n")
    first = unpack(pack(FIXTURES / SLUG), tmp_path / "a", SLUG)
    second = unpack(pack(copy / "problems" / SLUG), tmp_path / "b", SLUG)
    assert first.content_hash != second.content_hash


BAD_TOML = [
    (m[0], b"slug = [unclosed\n") if m[0].name.endswith("problem.toml") else m for m in package_members()
]

HOSTILE: dict[str, tuple[Callable[[], bytes], str, str]] = {
    "traversal": (lambda: tar_gz(file("problems/scale-tree/../../../evil.py")), "'..'", "evil.py"),
    "absolute": (lambda: tar_gz(file("/etc/evil")), "absolute", "/etc/evil"),
    "symlink": (
        lambda: tar_gz(special("problems/scale-tree/cases", tarfile.SYMTYPE, "/etc")),
        "links are not allowed",
        "problems/scale-tree/cases",
    ),
    "hardlink": (
        lambda: tar_gz(special("problems/scale-tree/x", tarfile.LNKTYPE, "/etc/passwd")),
        "links are not allowed",
        "problems/scale-tree/x",
    ),
    "device": (
        lambda: tar_gz(special("problems/scale-tree/dev", tarfile.CHRTYPE)),
        "devices, FIFOs",
        "problems/scale-tree/dev",
    ),
    "fifo": (
        lambda: tar_gz(special("problems/scale-tree/pipe", tarfile.FIFOTYPE)),
        "devices, FIFOs",
        "problems/scale-tree/pipe",
    ),
    "outside the layout": (lambda: tar_gz(file("setup.py")), "outside the package's layout", "setup.py"),
    "another slug": (lambda: tar_gz(file("problems/other/problem.toml")), "outside", "problems/other"),
    "control characters": (lambda: tar_gz(file("problems/scale-tree/a\nb")), "characters", "a"),
    "not gzip": (lambda: b"PK\x03\x04 a zip file", "not a readable tar.gz", "archive"),
    "truncated": (lambda: pack(FIXTURES / SLUG)[:-200], "not a readable tar.gz", "archive"),
    "no problem.toml": (lambda: tar_gz(file("problems/scale-tree/statement.md")), "missing", "problem.toml"),
    "bad toml": (lambda: tar_gz(*BAD_TOML), "not valid TOML", "problems/scale-tree/problem.toml"),
    "slug in the spec": (
        lambda: tar_gz(*package_members("scale-tree-2")),
        "outside the package's layout",
        "problems/scale-tree-2",
    ),
    "two references": (
        lambda: tar_gz(*package_members(), file("reference/other.py")),
        "exactly the reference module",
        "archive",
    ),
    "the same file twice": (
        lambda: tar_gz(*package_members(), file("reference/scale_tree.py")),
        "the same file twice",
        "reference/scale_tree.py",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_naming_what_and_where(case: str, tmp_path: Path) -> None:
    make, what, where = HOSTILE[case]
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError) as refused:
        unpack(make(), dest, SLUG)
    assert what in refused.value.message and where in refused.value.where, refused.value
    assert not (tmp_path / "evil.py").exists() and not Path("/etc/evil").exists()
    assert all(p.resolve().is_relative_to(dest.resolve()) for p in dest.rglob("*"))


def test_archives_past_the_limits_are_refused(tmp_path: Path) -> None:
    data = pack(FIXTURES / SLUG)
    with pytest.raises(ArchiveError, match="bytes, at most 100 allowed"):
        unpack(data, tmp_path / "a", SLUG, ArchiveLimits(max_bytes=100))
    with pytest.raises(ArchiveError, match="more than 3 members"):
        unpack(data, tmp_path / "b", SLUG, ArchiveLimits(max_members=3))
    big = tar_gz(file("problems/scale-tree/big.bin", b"\0" * 5_000_000))  # 5 MB of zeros: a tiny archive
    with pytest.raises(ArchiveError, match="at most 1000 per file") as refused:
        unpack(big, tmp_path / "c", SLUG, ArchiveLimits(max_member_bytes=1000))
    assert refused.value.where == "problems/scale-tree/big.bin"
    assert not (tmp_path / "c" / "problems" / SLUG / "big.bin").exists()
    many = tar_gz(*(file(f"problems/scale-tree/f{i}", b"y" * 600) for i in range(4)))
    with pytest.raises(ArchiveError, match="unpack to more than 2000 bytes"):
        unpack(many, tmp_path / "d", SLUG, ArchiveLimits(max_total_bytes=2000))


def test_a_bad_slug_in_the_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="not a problem slug"):
        unpack(pack(FIXTURES / SLUG), tmp_path, "../etc")
