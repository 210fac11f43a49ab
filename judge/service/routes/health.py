"""GET /healthz, GET /readyz, GET /metrics (outside /api: for load balancers and Prometheus)."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from judge.service.deps import ServicesDep
from judge.service.schemas import DegradedDependency, Health, Readiness
from judge.store import NodeState

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, summary="The process answers")
def healthz() -> Health:
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Readiness,
    summary="Ready: the sandbox self-test passed, warm workers are ready, the database and queue answer",
    responses={503: {"model": Readiness, "description": "Not ready; `reason` says why."}},
)
def readyz(services: ServicesDep) -> JSONResponse:
    reason = services.readiness()
    stats = services.engine.stats()
    nodes = free = None
    submissions = reason
    if services.distributed:
        try:
            live = [n for n in services.fleet.live_nodes() if n.state is NodeState.READY]
            nodes, free = len(live), sum(max(0, n.slots - n.busy) for n in live)
        except Exception:  # the database is down: already the reason
            pass
        if submissions is None and not nodes:
            submissions = (
                "no live grading node: submissions are stored and queued, but nothing grades them until a "
                "`judge worker` is up (Run still works)"
            )
    busy = services.health.run_busy() if reason is None else None
    body = Readiness(
        runs="not_ready" if reason is not None else "busy" if busy is not None else "ready",
        runs_reason=busy,
        ready=reason is None,
        reason=reason,
        backend=services.backend_name,
        workers=stats,
        dispatch="celery" if services.distributed else "local",
        database=services.health.database_status(),
        queue=services.health.queue_status(),
        nodes=nodes,
        free_slots=free,
        submissions_ready=submissions is None,
        submissions_reason=submissions,
        degraded=[DegradedDependency(**asdict(outage)) for outage in services.degraded()],
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if reason is None else 503)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
)
def metrics(services: ServicesDep) -> Response:
    services.degraded()  # a dependency that is down is probed first, so a recovery shows at once
    return Response(services.metrics.render(), media_type=CONTENT_TYPE_LATEST)
