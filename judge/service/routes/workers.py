"""GET /api/workers: the grading nodes (operators only: an API key named in ``operator_keys``)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from judge import __version__
from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ServicesDep
from judge.service.ratelimit import Principal
from judge.service.schemas import API_ERRORS, ErrorBody, VersionSkew, WorkerList, WorkerNode
from judge.service.state import Services
from judge.store import NodeState
from judge.store.models import utcnow

router = APIRouter(prefix="/api/workers", tags=["operations"], responses=API_ERRORS)

#: Nodes shown: those seen within this long (older rows are pruned by the nodes themselves).
SHOWN_FOR = timedelta(hours=1)


def require_operator(services: Services, caller: Principal) -> None:
    if caller.key_name is None:
        raise ApiError(
            401,
            "unauthorized",
            "an operator's API key is required (Authorization: Bearer <API key>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    operators = services.settings.operator_keys  # key names, or key ids
    if caller.key_name not in operators and caller.key_id not in operators:
        message = f"API key {caller.key_name!r} is not an operator key (operator_keys)"
        raise ApiError(403, "forbidden", message)


def _listing(services: Services) -> WorkerList:
    now = utcnow()
    if not services.distributed:  # the service grades in its own process: it is the only node
        import os
        import socket

        stats = services.engine.stats()
        local = WorkerNode(
            name="local",
            hostname=socket.gethostname(),
            pid=os.getpid(),
            backend=services.backend_name,
            version=__version__,
            state=NodeState.READY.value if services.readiness() is None else NodeState.UNREADY.value,
            detail=services.readiness(),
            alive=True,
            slots=services.settings.submission_concurrency,
            busy=services.dispatcher.running(),
            idle_workers=int(stats.get("idle") or 0),
            graded=0,
            started_at=now,
            last_seen=now,
        )
        return WorkerList(dispatch="local", nodes=[local], slots=local.slots, busy=local.busy)
    alive_after = now - timedelta(seconds=services.settings.node_timeout_s)
    nodes = [
        WorkerNode(
            name=n.name,
            hostname=n.hostname,
            pid=n.pid,
            backend=n.backend,
            version=n.version,
            state=n.state.value,
            detail=n.detail,
            alive=n.last_seen >= alive_after and n.state not in (NodeState.STOPPED, NodeState.LOST),
            slots=n.slots,
            busy=n.busy,
            idle_workers=n.idle_workers,
            graded=n.graded,
            started_at=n.started_at,
            last_seen=n.last_seen,
            problem_versions=n.problem_versions,
        )
        for n in services.store.nodes.known(seen_after=now - SHOWN_FOR)
    ]
    live = [n for n in nodes if n.alive and n.state == NodeState.READY.value]
    return WorkerList(
        dispatch="celery",
        nodes=nodes,
        slots=sum(n.slots for n in live),
        busy=sum(n.busy for n in live),
        version_skew=[VersionSkew.model_validate(skew) for skew in services.fleet.version_skew()],
    )


@router.get(
    "",
    response_model=WorkerList,
    summary="Grading nodes: state, slots, busy, last heartbeat (operators)",
    responses={403: {"model": ErrorBody, "description": "The API key is not an operator key."}},
)
async def list_workers(services: ServicesDep, caller: CallerDep) -> WorkerList:
    require_operator(services, caller)
    return await run_in_threadpool(_listing, services)
