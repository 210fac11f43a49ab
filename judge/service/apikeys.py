"""API keys: random bearer tokens, stored only as hashes (``sha256:<hex>``) by the operator.

Keys are long random strings (``generate_key``), so a fast hash is enough: a stolen settings file reveals no
key, and no key can be guessed. Comparison runs over every configured hash in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from pathlib import Path

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
