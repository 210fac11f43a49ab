"""GET /healthz, GET /readyz, GET /metrics (outside /api: for load balancers and Prometheus)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from judge.service.deps import ServicesDep
from judge.service.schemas import Health, Readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, summary="The process answers")
def healthz() -> Health:
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Readiness,
    summary="Ready to grade: the sandbox self-test passed and warm workers are ready",
    responses={503: {"model": Readiness, "description": "Not ready; `reason` says why."}},
)
def readyz(services: ServicesDep) -> JSONResponse:
    reason = services.readiness()
    stats = services.engine.stats()
    body = Readiness(ready=reason is None, reason=reason, backend=services.backend_name, workers=stats)
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if reason is None else 503)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
)
def metrics(services: ServicesDep) -> Response:
    return Response(services.metrics.render(), media_type=CONTENT_TYPE_LATEST)
