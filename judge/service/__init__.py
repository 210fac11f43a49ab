"""The REST service: a FastAPI app over the same engine as the CLI (``judge serve`` starts it).

app.py       the app factory (lifespan builds and starts ``state.Services``)
settings.py  every setting (one pydantic-settings class, ``JUDGE_*``)
routes/      one router per resource; deps.py their dependencies; schemas.py their bodies
state.py     the long-lived parts: engine, store, dispatcher, callbacks, limits, metrics
"""
