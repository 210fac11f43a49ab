"""Keys without restarts: the keys file is read again when it changes, a name may carry two hashes while
its key is rotated, a file that no longer parses keeps the previous keys in force, and submissions belong
to a key's stable id, not to its name."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from judge.service.apikeys import (
    ApiKey,
    KeyFileError,
    KeyRing,
    generate_key,
    generate_key_id,
    hash_key,
    read_key_entries,
)
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

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
    assert ring.identify(key) is None and ring.identify("s") == ApiKey("static", "static")
    keys.write_text(f"new {hash_key(key)}\n")
    now[0] = 4.0
    assert ring.identify(key) is None  # not looked at yet
    now[0] = 10.0
    assert ring.identify(key) == ApiKey("new", "new") and ring.reloads == 1
    assert ring.names() == ["new", "static"]


def submit(client: TestClient, key: str) -> str:
    answer = client.post(
        "/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE}, headers=bearer(key)
    )
    assert answer.status_code == 202, answer.text
    return str(answer.json()["id"])


def test_submissions_belong_to_the_key_id_not_to_its_name(tmp_path: Path) -> None:
    first, successor, renamed = generate_key(), generate_key(), generate_key()
    first_id = generate_key_id()
    keys = tmp_path / "keys"
    keys.write_text(f"lms {hash_key(first)} id={first_id}\n")
    settings = make_settings(tmp_path, api_keys_file=keys, allow_anonymous=False)
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        sid = submit(client, first)
        record = services.store.submissions.get(sid)
        assert record is not None and (record.key_id, record.key_name) == (first_id, "lms")
        # The name goes to another client with an id of its own: it sees none of the first one's.
        keys.write_text(
            f"lms {hash_key(successor)} id={generate_key_id()}\nold {hash_key(first)} id={first_id}\n"
        )
        time.sleep(1.1)
        assert client.get(f"/api/v1/submissions/{sid}", headers=bearer(successor)).status_code == 404
        assert client.get("/api/v1/submissions", headers=bearer(successor)).json()["items"] == []
        assert client.delete("/api/v1/users/anyone", headers=bearer(successor)).json()["deleted"] == 0
        # The first client, renamed, keeps its submissions (same id), with a new key as well.
        keys.write_text(f"lms {hash_key(successor)} id=key_other\nold {hash_key(first)} id={first_id}\n"
                        f"old {hash_key(renamed)} id={first_id}\n")  # fmt: skip
        time.sleep(1.1)
        for key in (first, renamed):
            assert client.get(f"/api/v1/submissions/{sid}", headers=bearer(key)).status_code == 200
            listed = client.get("/api/v1/submissions", headers=bearer(key)).json()["items"]
            assert [item["id"] for item in listed] == [sid]


def test_a_key_line_without_an_id_owns_by_its_name(tmp_path: Path) -> None:
    """Keys made before ids existed: the name is the id, as the migration made it for their rows."""
    keys = tmp_path / "keys"
    keys.write_text(f"lms {hash_key('k1')}\nci {hash_key('k2')} id=key_ci\n")
    assert [(e.name, e.key_id) for e in read_key_entries(keys)] == [("lms", "lms"), ("ci", "key_ci")]
    ring = KeyRing({"ops": f"{hash_key('k3')} id=key_ops"}, keys)
    assert ring.identify("k1") == ApiKey("lms", "lms") and ring.identify("k3") == ApiKey("ops", "key_ops")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lms {h1} id=a\nlms {h2} id=b\n", "key 'lms' has two ids"),
        ("lms {h1} id=a\nci {h2} id=a\n", "id 'a' belongs to two keys"),
        ("lms {h1} id=\n", "keys:1: the id must be"),
        ("lms {h1} name=x\n", "keys:1: the id must be"),
        ("lms {h1} id=a b\n", "keys:1: expected"),
    ],
)
def test_key_ids_that_would_be_ambiguous_are_refused(tmp_path: Path, text: str, message: str) -> None:
    keys = tmp_path / "keys"
    keys.write_text(text.format(h1=hash_key("k1"), h2=hash_key("k2")))
    with pytest.raises(KeyFileError, match=message):
        read_key_entries(keys)
    with pytest.raises(KeyFileError):
        KeyRing({}, keys)  # the service does not start with it
