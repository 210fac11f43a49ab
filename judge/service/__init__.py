"""The REST service: a FastAPI app over the same engine as the CLI (``judge serve`` starts it).

app.py       the app factory (lifespan builds and starts ``state.Services``)
routes/      one router per resource; deps.py their dependencies; schemas.py their bodies
state.py     the long-lived parts: engine, store, dispatcher, callbacks, limits, metrics

Settings (``judge.core.settings``) and metrics (``judge.dispatch.metrics``) live below, shared with the
grading nodes (``judge.dispatch.node``), which import nothing from here.
"""
