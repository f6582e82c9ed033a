# syntax=docker/dockerfile:1

# Runtime image of function-inference-clusters.
#
# Both stages run on the same image, so the venv built in the first stage is
# used on exactly the Debian (12, bookworm) and Python (3.11) it was built for:
# the venv's bin/python links to /usr/local/bin/python3.11, which exists in
# both stages, and compiled wheels (grpcio, pydantic-core) match the runtime's
# glibc and ABI. This is the simplest correct layout. (The upstream Python
# function template builds on one Debian and runs on distroless Debian 12,
# which breaks as soon as the two Debian releases ship different Python
# minors.) The price is a bigger image that also holds a shell and pip.
#
# No `--platform=$BUILDPLATFORM` on the build stage: the wheels are
# platform-specific, so the venv must be built for the target platform.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build

ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# .dockerignore limits the context to what the wheel needs (pyproject.toml,
# README.md, function/).
WORKDIR /build
COPY . .

# Install the project and its pinned dependencies into a fresh venv. The path
# must stay the same in the runtime stage, or the scripts' shebangs break.
RUN python -m venv /venv/fn \
    && /venv/fn/bin/pip install .

FROM ${PYTHON_IMAGE} AS image

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/venv/fn/bin:${PATH}

COPY --from=build /venv/fn /venv/fn

# Crossplane runs function pods as UID/GID 2000 by default; numeric so that
# Kubernetes' runAsNonRoot check can verify it.
USER 2000:2000

# gRPC port Crossplane dials (TLS certs come from TLS_SERVER_CERTS_DIR).
EXPOSE 9443

ENTRYPOINT ["/venv/fn/bin/function"]
