"""Write a new migration from the difference between the models and the migrations (for maintainers).

    .venv/bin/python -m judge.store.revision "add a column"

Migrates a scratch SQLite database to head, compares it with ``judge.store.models`` and writes
``judge/store/migrations/versions/<rev>_<slug>.py``; review it (and test it on PostgreSQL) before committing.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from alembic import command

from judge.store.database import make_engine, sqlite_url
from judge.store.migrate import config, upgrade


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].strip():
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        engine = make_engine(sqlite_url(Path(scratch) / "scratch.sqlite3"))
        try:
            upgrade(engine)
            cfg = config()
            with engine.begin() as connection:
                cfg.attributes["connection"] = connection
                command.revision(cfg, message=argv[0], autogenerate=True)
        finally:
            engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
