"""DELETE /api/users/{external_user}: erase every submission of one of the caller's external users."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ServicesDep
from judge.service.schemas import API_ERRORS, UserErased

router = APIRouter(prefix="/api/users", tags=["submissions"], responses=API_ERRORS)


@router.delete(
    "/{external_user}",
    response_model=UserErased,
    summary="Erase everything of one external user: their submissions of this API key, with events, "
    "callback records and idempotency keys",
)
def erase_user(
    external_user: Annotated[str, Path(max_length=200)], services: ServicesDep, caller: CallerDep
) -> UserErased:
    if caller.key_id is None:
        raise ApiError(
            401,
            "unauthorized",
            "erasing a user's submissions needs an API key (Authorization: Bearer <API key>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    deleted = services.store.deletion.erase_user(caller.key_id, external_user)
    return UserErased(external_user=external_user, deleted=deleted)
