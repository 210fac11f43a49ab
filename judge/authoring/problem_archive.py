"""A problem package as one tar.gz: what ``judge push-problem`` sends and ``PUT /api/v1/admin/problems``
takes, laid out as a problems repository is, so the unpacked folder loads like the shipped problems:

    problems/<slug>/problem.toml, statement.md, starter.py, cases/..., validator.py, solutions/...
    reference/<module>.py                  the reference named by problem.toml's ``reference``

An uploaded archive is hostile input: ``unpack`` reads it member by member, writes only regular files and
folders under that layout, and refuses (``ArchiveError``, naming the member) absolute paths and ``..``,
links, devices and other special files, a member or a total past ``ArchiveLimits``, too many members,
another slug than the URL's, a missing or unparsable ``problem.toml`` (TOML is parsed as data; no file of
the package is imported or run here: ``judge check`` runs in a process of its own).
"""

from __future__ import annotations

import io
import re
import tarfile
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from judge.core.errors import JudgeError
from judge.core.problem_hash import package_hash

SPEC_FILE = "problem.toml"
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Characters a member name may hold (no control characters, no backslashes, no spaces at the ends).
_NAME = re.compile(r"^[A-Za-z0-9_.@+=,-]+( [A-Za-z0-9_.@+=,-]+)*$")
#: Folders of a package folder that are never packed (caches).
_SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})


class ArchiveError(JudgeError):
    """The archive is refused: ``message`` says what is wrong, ``where`` the member (or part) at fault."""

    def __init__(self, message: str, where: str = "archive") -> None:
        super().__init__(f"{where}: {message}")
        self.message = message
        self.where = where


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps on an uploaded archive: its compressed size, each member's size, their total and count."""

    max_bytes: int = 8 * 1024 * 1024
    max_member_bytes: int = 16 * 1024 * 1024
    max_total_bytes: int = 64 * 1024 * 1024
    max_members: int = 2000


@dataclass(frozen=True)
class Package:
    """An unpacked archive: ``root`` holds ``problems/<slug>/`` and ``reference/<module>.py``."""

    root: Path
    slug: str
    revision: int
    reference: str
    content_hash: str

    @property
    def folder(self) -> Path:
        return self.root / "problems" / self.slug


def pack(package: Path) -> bytes:
    """The tar.gz of the package folder ``package`` (``problems/<slug>``) and its reference module (in
    ``reference/`` beside the problems folder); raises ArchiveError when either is missing."""
    package = package.resolve()
    spec = _spec(package / SPEC_FILE, f"{package.name}/{SPEC_FILE}")
    reference = str(spec.get("reference", ""))
    source = package.parent.parent / "reference" / f"{reference}.py"
    if not _MODULE.match(reference) or not source.is_file():
        raise ArchiveError(f"no reference module {reference!r} at {source}", f"{package.name}/{SPEC_FILE}")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for file in sorted(package.rglob("*")):
            relative = file.relative_to(package)
            if _SKIPPED.intersection(relative.parts) or not (file.is_file() and not file.is_symlink()):
                continue
            _add_file(tar, f"problems/{package.name}/{relative.as_posix()}", file.read_bytes())
        _add_file(tar, f"reference/{reference}.py", source.read_bytes())
    return buffer.getvalue()


def _add_file(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def unpack(data: bytes, dest: Path, slug: str, limits: ArchiveLimits = ArchiveLimits()) -> Package:
    """Unpack the archive of problem ``slug`` into the empty folder ``dest``; its Package. Raises
    ArchiveError for anything but a well-formed package of that problem within ``limits``."""
    if not _SLUG.match(slug):
        raise ArchiveError("not a problem slug (lower-case words joined by '-')", "slug")
    if len(data) > limits.max_bytes:
        raise ArchiveError(f"{len(data)} bytes, at most {limits.max_bytes} allowed")
    total = count = 0
    references: list[str] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar:  # read one at a time: the count is capped as they come
                count += 1
                if count > limits.max_members:
                    raise ArchiveError(f"more than {limits.max_members} members")
                path = _member_path(member.name, slug)
                if member.isdir():
                    (dest / path).mkdir(parents=True, exist_ok=True)
                    continue
                _regular(member)
                if member.size > limits.max_member_bytes:
                    raise ArchiveError(
                        f"{member.size} bytes, at most {limits.max_member_bytes} per file", str(path)
                    )
                total += member.size
                if total > limits.max_total_bytes:
                    raise ArchiveError(
                        f"the files unpack to more than {limits.max_total_bytes} bytes", str(path)
                    )
                if path.parts[0] == "reference":
                    references.append(path.stem)
                _write(tar, member, dest / path, path)
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise ArchiveError(f"not a readable tar.gz ({type(exc).__name__}: {str(exc)[:200]})") from None
    spec_path = f"problems/{slug}/{SPEC_FILE}"
    spec = _spec(dest / spec_path, spec_path)
    if spec.get("slug") != slug:
        raise ArchiveError(f"slug is {str(spec.get('slug'))[:64]!r}, not {slug!r} as the URL says", spec_path)
    revision = spec.get("revision", 1)
    if not isinstance(revision, int) or isinstance(revision, bool) or not 1 <= revision <= 1_000_000:
        raise ArchiveError("revision must be a whole number from 1 to 1000000", spec_path)
    reference = spec.get("reference")
    if references != [reference]:
        found = ", ".join(f"reference/{r}.py" for r in references) or "none"
        raise ArchiveError(
            f"the archive must hold exactly the reference module problem.toml names "
            f"(reference/{str(reference)[:64]}.py); found {found}"
        )
    assert isinstance(reference, str)
    source = (dest / "reference" / f"{reference}.py").read_text(errors="replace")
    content_hash = package_hash(dest / "problems" / slug, f"{reference}.py", source)
    return Package(root=dest, slug=slug, revision=revision, reference=reference, content_hash=content_hash)


def _member_path(name: str, slug: str) -> PurePosixPath:
    """The member's path, within the layout; ArchiveError otherwise."""
    where = name[:200] if name.isprintable() else repr(name[:200])
    if not name or name.startswith("/") or "\\" in name or "\x00" in name:
        raise ArchiveError("an absolute or malformed path", where)
    path = PurePosixPath(name)
    parts = [p for p in path.parts if p != "."]
    if any(p == ".." for p in parts):
        raise ArchiveError("a path that leaves the archive ('..')", where)
    if not parts or any(not _NAME.match(p) or len(p) > 128 for p in parts):
        raise ArchiveError("a path with characters other than letters, digits and ._-@+=, ", where)
    clean = PurePosixPath(*parts)
    top = parts[0]
    if top == "problems" and (len(parts) == 1 or parts[1] == slug):
        return clean
    if top == "reference" and (len(parts) == 1 or (len(parts) == 2 and parts[1].endswith(".py"))):
        return clean
    raise ArchiveError(
        f"outside the package's layout (problems/{slug}/... and reference/<module>.py only)", where
    )


def _regular(member: tarfile.TarInfo) -> None:
    if member.issym() or member.islnk():
        raise ArchiveError("links are not allowed", member.name[:200])
    if not member.isfile():
        raise ArchiveError("devices, FIFOs and other special files are not allowed", member.name[:200])


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, path: PurePosixPath) -> None:
    source = tar.extractfile(member)
    if source is None:
        raise ArchiveError("not a regular file", str(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        raise ArchiveError("the same file twice", str(path))
    with source, open(target, "xb") as out:
        remaining = member.size
        while remaining > 0:
            chunk = source.read(min(1 << 20, remaining))
            if not chunk:
                raise ArchiveError("the archive ends inside this file", str(path))
            out.write(chunk)
            remaining -= len(chunk)


def _spec(file: Path, where: str) -> dict[str, object]:
    """problem.toml parsed as data; ArchiveError when it is missing or not TOML."""
    try:
        text = file.read_text()
    except FileNotFoundError:
        raise ArchiveError("missing: every package has one", where) from None
    except UnicodeDecodeError:
        raise ArchiveError("not UTF-8 text", where) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ArchiveError(f"not valid TOML ({exc})", where) from None
