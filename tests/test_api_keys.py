"""Keys without restarts: the keys file is read again when it changes, a name may carry two hashes while
its key is rotated, and a file that no longer parses keeps the previous keys in force."""

from __future__ import annotations

import time
from pathlib import Path

from judge.service.apikeys import KeyRing, generate_key, hash_key
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.service_support import FakeEngine, make_settings, running

CODE = "def scale_tree(tree, factor):\n    return tree\n"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_keys_are_added_rotated_and_revoked_without_a_restart(tmp_path: Path) -> None:
    old, new, other = generate_key(), generate_key(), generate_key()
    keys = tmp_path / "keys"
    keys.write_text(f"lms {hash_key(old)}\n")
    settings = make_settings(tmp_path, api_keys_file=keys, allow_anonymous=False)
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        sid = client.post(
            "/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE}, headers=bearer(old)
        ).json()["id"]
        assert client.get("/api/v1/problems", headers=bearer(new)).status_code == 401
        # Rotation: the name carries both hashes; either key is the same client and sees its submissions.
        keys.write_text(f"lms {hash_key(old)}\nlms {hash_key(new)}\nci {hash_key(other)}\n")
        time.sleep(1.1)  # the file is looked at once a second at most
        assert client.get(f"/api/v1/submissions/{sid}", headers=bearer(new)).status_code == 200
        assert client.get(f"/api/v1/submissions/{sid}", headers=bearer(old)).status_code == 200
        assert client.get(f"/api/v1/submissions/{sid}", headers=bearer(other)).status_code == 404
        # The old key is revoked.
        keys.write_text(f"lms {hash_key(new)}\n")
        time.sleep(1.1)
        assert client.get("/api/v1/problems", headers=bearer(old)).status_code == 401
        assert client.get("/api/v1/problems", headers=bearer(new)).status_code == 200
        # A broken file keeps the last good keys in force, and says why.
        keys.write_text("lms not-a-hash\n")
        time.sleep(1.1)
        assert client.get("/api/v1/problems", headers=bearer(new)).status_code == 200
        assert services.api_keys.last_error is not None and "keys:1" in services.api_keys.last_error


def test_the_ring_looks_at_the_file_at_most_once_per_interval(tmp_path: Path) -> None:
    now = [0.0]
    key = generate_key()
    keys = tmp_path / "keys"
    keys.write_text("")
    ring = KeyRing({"static": hash_key("s")}, keys, check_s=5, clock=lambda: now[0])
    assert ring.identify(key) is None and ring.identify("s") == "static"
    keys.write_text(f"new {hash_key(key)}\n")
    now[0] = 4.0
    assert ring.identify(key) is None  # not looked at yet
    now[0] = 10.0
    assert ring.identify(key) == "new" and ring.reloads == 1
    assert ring.names() == ["new", "static"]
