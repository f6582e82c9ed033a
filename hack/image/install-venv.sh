#!/bin/sh
# Installs the function into /venv/fn from a folder of wheels (build/wheels: this checkout's
# wheel and the locked dependencies), then removes every installer. Runs as root inside the
# target root filesystem: `make image` runs it in the mmdebstrap root (hack/image/rootfs.sh), the
# Dockerfile in its build. One script for both is what keeps the two images the same.
#
# Needs Debian 12's python3 and python3-venv in the root; usage: install-venv.sh <wheels-dir>
set -eu

wheels="$1"
venv=/venv/fn
# Installers and build tools Debian's python3-venv brings (ensurepip, the pip/setuptools wheels
# it installs from, distutils and its lib2to3); the function needs none of them at run time.
installer_packages="python3-venv python3.11-venv python3-pip-whl python3-setuptools-whl
  python3-distutils python3-lib2to3"

# Only the wheels in $wheels may be installed: no index, no caller-provided find-links or
# constraints, no cache left behind.
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT PIP_REQUIREMENT
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
# Running pip and venv must not leave bytecode of the system's Python behind; pip still compiles
# the installed packages itself (checked-hash .pyc when SOURCE_DATE_EPOCH is set, so rebuilds
# are identical), which the non-root runtime user could not write at start-up.
export PYTHONDONTWRITEBYTECODE=1

python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --no-index --find-links="$wheels" function-inference-clusters
"$venv/bin/python" -m pip check
"$venv/bin/python" -m pip uninstall --quiet --yes pip setuptools
# shellcheck disable=SC2086 # a list of package names
dpkg --purge $installer_packages >/dev/null
