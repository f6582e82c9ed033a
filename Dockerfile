# syntax=docker/dockerfile:1

# Runtime image of function-inference-clusters, for users with Docker. `make image` builds the
# same image without Docker (hack/image/); the two cannot drift apart because both install the
# same wheels with the same script, hack/image/install-venv.sh, on the same Debian and Python:
#
#   make wheels    # this checkout's wheel + the locked dependency wheels -> build/wheels
#   docker build --tag=function-inference-clusters:v0.2.0 .
#
# Debian 12's own python3 (3.11) rather than the python:3.11 image, whose Python lives in
# /usr/local and follows its own patch releases: make image installs Debian's packages too.
# The wheels are installed with no package index, so the build needs no PyPI access.
# tests/image/test_dockerfile.py checks that entrypoint, user, port, environment, Debian
# release and installed distributions match the image make image builds.
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE}

# One RUN, so that neither the wheels nor apt's lists end up in a layer; install-venv.sh
# removes pip, setuptools and Debian's venv/ensurepip packages once the function is installed.
RUN --mount=type=bind,source=build/wheels,target=/tmp/wheels \
    --mount=type=bind,source=hack/image/install-venv.sh,target=/tmp/install-venv.sh \
    apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv libstdc++6 \
    && sh /tmp/install-venv.sh /tmp/wheels \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log /var/cache/debconf/*-old

ENV PATH=/venv/fn/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

# Crossplane runs function pods as UID/GID 2000 by default; numeric so that Kubernetes'
# runAsNonRoot check can verify it.
USER 2000:2000

# gRPC port Crossplane dials (TLS certs come from TLS_SERVER_CERTS_DIR), then the default
# metrics port and plaintext gRPC health probe port.
EXPOSE 9443 8080 8081

ENTRYPOINT ["/venv/fn/bin/function"]
