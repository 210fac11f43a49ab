# The judge's image: one image for `judge serve` (API node) and `judge worker` (grading node).
#
# No registry is needed: the base is Debian 12 made locally (scripts/image base: debootstrap + podman
# import), chosen by the BASE_IMAGE build argument, and Python packages come from a wheelhouse built on
# the host from requirements/runtime.lock (scripts/image wheels), installed offline with their hashes.
#
#   scripts/image build      # base, wheelhouse, then: podman build --build-arg BASE_IMAGE=... -t jax-judge .
#
# The default user is the unprivileged `judge`. The bwrap sandbox needs root (it drops user code to a
# separate uid per slot), so serve and worker containers run as root with the privileges README.md
# ("Container image") lists; commands that run no sandbox (judge problems, judge check --help, ...) do not.
ARG BASE_IMAGE=localhost/jax-judge-base:bookworm

FROM ${BASE_IMAGE} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Debian 12's own packages at the release's current versions (the base image pins the release).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/judge
COPY .cache/wheelhouse /wheels
COPY requirements/runtime.lock requirements/runtime.lock
RUN python3 -m venv .venv \
    && .venv/bin/python -m pip install --no-cache-dir --no-index --find-links /wheels --require-hashes \
        -r requirements/runtime.lock
COPY pyproject.toml README.md ./
COPY judge judge
COPY sandbox sandbox
COPY reference reference
COPY problems problems
RUN .venv/bin/python -m pip install --no-cache-dir --no-index --find-links /wheels --no-deps -e . \
    && .venv/bin/python -m compileall -q -j 0 .venv judge sandbox reference

FROM ${BASE_IMAGE}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        python3 bubblewrap python3-seccomp util-linux ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/judge \
        --shell /usr/sbin/nologin judge
COPY --from=build /opt/judge /opt/judge
ENV PATH=/opt/judge/.venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    JUDGE_DATA_DIR=/var/lib/judge \
    JUDGE_HOST=0.0.0.0 \
    JUDGE_PORT=8000
WORKDIR /var/lib/judge
USER 10001:10001
EXPOSE 8000
# serve and worker both answer /healthz on JUDGE_PORT.
HEALTHCHECK --interval=15s --timeout=5s --start-period=180s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('JUDGE_PORT', '8000'), timeout=4)"]
CMD ["judge", "serve"]
