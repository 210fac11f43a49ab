"""API keys: random bearer tokens, stored only as hashes (``sha256:<hex>``) by the operator.

Keys are long random strings (``generate_key``), so a fast hash is enough: a stolen settings file reveals no
key, and no key can be guessed. Comparison runs over every configured hash in constant time.

A key line is ``NAME HASH [id=KEY_ID] [tenant=TENANT]``: the name is a label (logs, ``operator_keys``);
the id is the stable owner of the key's submissions, so a name given to another client later does not hand
it the old client's submissions, and a client keeps its submissions through a rename. The tenant is who
sees problems scoped to tenants (``judge.service.tenancy``); a key without one is its own tenant, named by
its id. A line without an id owns by
its name (keys made before ids existed: their stored submissions stay readable). One name has one id,
and one id one name.

``KeyRing`` holds the keys in force and reads the keys file again when it changes (no restart); a name
may carry two hashes (two lines, one id) while its key is rotated.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from judge.core.settings import Settings

_log = logging.getLogger(__name__)

PREFIX = "sha256:"
KEY_PREFIX = "jj_"
KEY_ID_PREFIX = "key_"
#: A key id: what the store records as a submission's owner (64 characters at most).
_KEY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_LINE_FORMAT = "'NAME sha256:<64 hex digits> [id=KEY_ID] [tenant=TENANT]'"


class KeyFileError(ValueError):
    pass


@dataclass(frozen=True)
class KeyEntry:
    """One configured hash: the key's ``name``, its ``hash`` and the stable ``key_id`` that owns what
    it submits (the name when the line gives no id)."""

    name: str
    hash: str
    key_id: str
    #: The tenant the key belongs to (``tenant=``); None: its own, named by its key id.
    tenant: str | None = None


@dataclass(frozen=True)
class ApiKey:
    """Who a presented key is."""

    name: str
    key_id: str
    tenant: str | None = None


def hash_key(key: str) -> str:
    return PREFIX + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def generate_key() -> str:
    """A new key: ``jj_`` and 43 URL-safe random characters (256 bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def generate_key_id() -> str:
    """A new key id: ``key_`` and 16 hex digits (never reused: random, not derived from the name)."""
    return KEY_ID_PREFIX + secrets.token_hex(8)


def valid_hash(value: str) -> bool:
    digest = value[len(PREFIX) :]
    return value.startswith(PREFIX) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


def parse_key(name: str, text: str, where: str) -> KeyEntry:
    """``HASH [id=KEY_ID]`` of key ``name`` (a keys-file line after its name, or an ``api_keys`` value).
    Raises KeyFileError naming ``where``."""
    parts = text.split()
    if not 1 <= len(parts) <= 3 or not valid_hash(parts[0].lower()) or len(name) > 64:
        raise KeyFileError(f"{where}: expected {_LINE_FORMAT}")
    fields: dict[str, str] = {}
    for part in parts[1:]:
        label, equals, value = part.partition("=")
        if not equals:
            raise KeyFileError(f"{where}: expected {_LINE_FORMAT}")
        if label not in ("id", "tenant"):
            raise KeyFileError(
                f"{where}: the id must be 'id=KEY_ID' and a tenant 'tenant=TENANT', not {label!r}"
            )
        if label in fields:
            raise KeyFileError(f"{where}: {label}= given twice")
        if not _KEY_ID.fullmatch(value):
            raise KeyFileError(f"{where}: the {label} must be '{label}=' and 1 to 64 of A-Z a-z 0-9 _ . : -")
        fields[label] = value
    return KeyEntry(name, parts[0].lower(), fields.get("id", name), fields.get("tenant"))


def read_key_entries(path: Path) -> list[KeyEntry]:
    """``NAME HASH [id=KEY_ID]`` per line, ``#`` starts a comment; a name may have several lines (a
    rotation). Raises KeyFileError naming the line (or the names whose ids disagree)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read ({exc.strerror})") from None
    entries: list[KeyEntry] = []
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        name, _, rest = text.partition(" ")
        entries.append(parse_key(name, rest, f"{path}:{number}"))
    check_entries(entries, str(path))
    return entries


def check_entries(entries: Iterable[KeyEntry], where: str) -> None:
    """One id per name and one name per id; raises KeyFileError saying which."""
    ids: dict[str, str] = {}
    names: dict[str, str] = {}
    for entry in entries:
        if ids.setdefault(entry.name, entry.key_id) != entry.key_id:
            raise KeyFileError(
                f"{where}: key {entry.name!r} has two ids ({ids[entry.name]!r} and {entry.key_id!r}); "
                "the lines of one key during a rotation share its id"
            )
        if names.setdefault(entry.key_id, entry.name) != entry.name:
            raise KeyFileError(
                f"{where}: id {entry.key_id!r} belongs to two keys ({names[entry.key_id]!r} and "
                f"{entry.name!r}); an id names one client"
            )


def read_keys_file(path: Path) -> dict[str, str]:
    """The file as name -> hash (the last line of a name wins). Raises KeyFileError naming the line."""
    return {entry.name: entry.hash for entry in read_key_entries(path)}


def static_entries(keys: Mapping[str, str]) -> list[KeyEntry]:
    """The ``api_keys`` setting (name -> ``HASH [id=KEY_ID]``) as entries; raises KeyFileError."""
    entries = [parse_key(name, value, f"api_keys[{name!r}]") for name, value in keys.items()]
    check_entries(entries, "api_keys")
    return entries


def identify(key: str, keys: Mapping[str, str]) -> str | None:
    """The name of the configured key ``key`` is, or None; constant time over all configured keys."""
    presented = hash_key(key)
    found = None
    for name, stored in keys.items():
        if hmac.compare_digest(presented, stored.lower()):
            found = name
    return found


def merged(static: list[KeyEntry], file: list[KeyEntry]) -> list[KeyEntry]:
    """The settings' keys and the file's: a name in both is the settings' (every line of it in the
    file is ignored). Raises KeyFileError when the two give one id to two names."""
    mine = {entry.name for entry in static}
    entries = [*static, *(entry for entry in file if entry.name not in mine)]
    check_entries(entries, "api_keys and api_keys_file")
    return entries


class KeyRing:
    """The API keys in force: the settings' ``api_keys`` and the keys file, which is read again when it
    changes (its mtime, size or inode; looked at most once per ``check_s``), so keys are added, rotated
    and revoked without a restart. A file that no longer parses (or clashes with the settings) keeps the
    keys of its last good version (and says why in the log) rather than locking every client out.
    """

    def __init__(
        self,
        static: Mapping[str, str],
        path: Path | None,
        *,
        check_s: float = 1.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Raises KeyFileError (a bad setting or file): the service does not start with it."""
        self._static = static_entries(static)
        self._path = path
        self._check_s = check_s
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._checked = float("-inf")
        self._entries = merged(self._static, read_key_entries(path) if path is not None else [])
        self._stamp = self._stat()
        self.reloads = 0
        self.last_error: str | None = None

    def _stat(self) -> tuple[int, int, int] | None:
        if self._path is None:
            return None
        try:
            info = self._path.stat()
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def _refresh(self) -> None:
        if self._path is None:
            return
        now = self._clock()
        with self._lock:
            if now - self._checked < self._check_s:
                return
            self._checked = now
            stamp = self._stat()
            if stamp == self._stamp:
                return
            try:
                self._entries = merged(self._static, read_key_entries(self._path))
            except KeyFileError as exc:
                self.last_error = str(exc)
                _log.error("API keys file not reloaded, the previous keys stay in force: %s", exc)
                return
            self._stamp = stamp
            self.reloads += 1
            self.last_error = None
            _log.info("API keys file reloaded: %d names", len({e.name for e in self._entries}))

    def names(self) -> list[str]:
        self._refresh()
        return sorted({entry.name for entry in self._entries})

    def identify(self, key: str) -> ApiKey | None:
        """Whose key ``key`` is, or None; constant time over every configured hash."""
        self._refresh()
        presented = hash_key(key)
        found = None
        for entry in self._entries:
            if hmac.compare_digest(presented, entry.hash):
                found = ApiKey(entry.name, entry.key_id, entry.tenant)
        return found


def all_api_keys(settings: Settings) -> dict[str, str]:
    """Keys from ``api_keys`` and ``api_keys_file`` as name -> hash (a name in both: the file's lines are
    ignored). Raises KeyFileError."""
    file = read_key_entries(settings.api_keys_file) if settings.api_keys_file else []
    return {entry.name: entry.hash for entry in merged(static_entries(settings.api_keys), file)}
