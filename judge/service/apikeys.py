"""API keys: random bearer tokens, stored only as hashes (``sha256:<hex>``) by the operator.

Keys are long random strings (``generate_key``), so a fast hash is enough: a stolen settings file reveals no
key, and no key can be guessed. Comparison runs over every configured hash in constant time.

``KeyRing`` holds the keys in force and reads the keys file again when it changes (no restart); a name
may carry two hashes (two lines) while its key is rotated.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)

PREFIX = "sha256:"
KEY_PREFIX = "jj_"


class KeyFileError(ValueError):
    pass


def hash_key(key: str) -> str:
    return PREFIX + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def generate_key() -> str:
    """A new key: ``jj_`` and 43 URL-safe random characters (256 bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def valid_hash(value: str) -> bool:
    digest = value[len(PREFIX) :]
    return value.startswith(PREFIX) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


def identify(key: str, keys: Mapping[str, str]) -> str | None:
    """The name of the configured key ``key`` is, or None; constant time over all configured keys."""
    presented = hash_key(key)
    found = None
    for name, stored in keys.items():
        if hmac.compare_digest(presented, stored.lower()):
            found = name
    return found


def read_keys_file(path: Path) -> dict[str, str]:
    """``NAME HASH`` per line, ``#`` starts a comment. Raises KeyFileError naming the line."""
    keys: dict[str, str] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read ({exc.strerror})") from None
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2 or not valid_hash(parts[1].lower()):
            raise KeyFileError(f"{path}:{number}: expected 'NAME sha256:<64 hex digits>'")
        keys[parts[0]] = parts[1].lower()
    return keys


def read_key_hashes(path: Path) -> dict[str, list[str]]:
    """Like ``read_keys_file``, but a name may carry several hashes (a line each): during a rotation the
    old and the new key both work under the one name. Raises KeyFileError naming the line."""
    keys: dict[str, list[str]] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read ({exc.strerror})") from None
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2 or not valid_hash(parts[1].lower()):
            raise KeyFileError(f"{path}:{number}: expected 'NAME sha256:<64 hex digits>'")
        keys.setdefault(parts[0], []).append(parts[1].lower())
    return keys


class KeyRing:
    """The API keys in force: the settings' ``api_keys`` and the keys file, which is read again when it
    changes (its mtime, size or inode; looked at most once per ``check_s``), so keys are added, rotated
    and revoked without a restart. A file that no longer parses keeps the keys of its last good version
    (and says why in the log) rather than locking every client out.
    """

    def __init__(
        self, static: Mapping[str, str], path: Path | None, *, check_s: float = 1.0, clock: Any = None
    ) -> None:
        import threading
        import time

        self._static = {name: [stored.lower()] for name, stored in static.items()}
        self._path = path
        self._check_s = check_s
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._checked = float("-inf")
        self._file: dict[str, list[str]] = read_key_hashes(path) if path is not None else {}
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
                self._file = read_key_hashes(self._path)
            except KeyFileError as exc:
                self.last_error = str(exc)
                _log.error("API keys file not reloaded, the previous keys stay in force: %s", exc)
                return
            self._stamp = stamp
            self.reloads += 1
            self.last_error = None
            _log.info("API keys file reloaded: %d names", len(self._file))

    def names(self) -> list[str]:
        self._refresh()
        return sorted({*self._file, *self._static})

    def identify(self, key: str) -> str | None:
        """The name of the key ``key`` is, or None; constant time over every configured hash. A name in
        both the settings and the file: the settings' hash counts (as ``Settings.all_api_keys``)."""
        self._refresh()
        presented = hash_key(key)
        merged = {**self._file, **self._static}
        found = None
        for name, hashes in merged.items():
            for stored in hashes:
                if hmac.compare_digest(presented, stored):
                    found = name
        return found
