"""Alembic migrations of the judge's database (script location ``judge.store:migrations``)."""
