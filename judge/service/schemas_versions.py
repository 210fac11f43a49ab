"""The bodies of ``/api/v1/admin/problems`` (operators' problem versions)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judge.store.problem_versions import VersionRecord


class CheckFinding(BaseModel):
    model_config = ConfigDict(frozen=True)

    check: str = Field(description="The `judge check` check that found it (`check`: the check itself).")
    severity: str = Field(description="`error` (the version is rejected), `warning` or `note`.")
    where: str = Field(description="The file (under `problems/<slug>/`) and field or case it concerns.")
    message: str


class ProblemVersionState(BaseModel):
    """A problem version an operator pushed, and where its check stands."""

    model_config = ConfigDict(frozen=True)

    slug: str
    hash: str = Field(description="SHA-256 of every file grading reads: the `version.hash` it is served as.")
    short_hash: str
    revision: int
    state: Literal["checking", "live", "rejected", "retired"] = Field(
        description="`checking`: `judge check` runs on it; `live`: served by every node once it polls "
        "(the newest live version of a slug is the one new submissions get); `rejected`: the check "
        "failed (`findings` say why); `retired`: no longer served."
    )
    findings: list[CheckFinding] = Field(description="What the check found (errors reject it).")
    tenants: list[str] | None = Field(
        description="The tenants it is visible to (null: every caller). Others get 404 for the problem."
    )
    pushed_by: str | None = Field(description="The name of the operator key that pushed it.")
    created_at: datetime
    updated_at: datetime
    live_at: datetime | None

    @classmethod
    def of(cls, record: VersionRecord) -> ProblemVersionState:
        return cls(
            slug=record.slug,
            hash=record.hash,
            short_hash=record.short_hash,
            revision=record.revision,
            state=record.state.value,
            findings=[CheckFinding.model_validate(f) for f in record.findings],
            tenants=None if record.tenants is None else list(record.tenants),
            pushed_by=record.pushed_by,
            created_at=record.created_at,
            updated_at=record.updated_at,
            live_at=record.live_at,
        )


class ProblemVersionList(BaseModel):
    model_config = ConfigDict(frozen=True)

    slug: str
    versions: list[ProblemVersionState] = Field(description="Newest first.")
    served: str | None = Field(
        description="The hash of the version this node serves new submissions of the slug (null: none)."
    )
