#!/usr/bin/env bash
# The runtime image's root filesystem as one tar (the image's only layer): Debian 12 (bookworm)
# from Debian's own packages with mmdebstrap, its python3 (3.11) and the function installed into
# /venv/fn from the wheels folder by install-venv.sh. No container registry is involved.
#
# Reproducible: with SOURCE_DATE_EPOCH set, mmdebstrap clamps every mtime and sorts the tar, so
# the same packages and wheels give the same bytes. Downloaded .deb files are kept in a cache
# outside the clone (file names carry versions, so a newer package is simply downloaded).
#
# usage: rootfs.sh <wheels-dir> <output.tar>   (as root; mmdebstrap's root mode)
set -euo pipefail

wheels="$(realpath "$1")"
output="$(realpath -m "$2")"
here="$(dirname "$(realpath "$0")")"
: "${SOURCE_DATE_EPOCH:?set SOURCE_DATE_EPOCH so that the root filesystem is reproducible}"
mirror="${DEBIAN_MIRROR:?set by build.sh}"
security_mirror="${DEBIAN_SECURITY_MIRROR:?set by build.sh}"
debs="${XDG_CACHE_HOME:-$HOME/.cache}/function-inference-clusters/debs"
mkdir -p "$debs"

# --variant=essential is the smallest set that still has dpkg and a shell; libstdc++6 is not in
# it, but grpcio's and protobuf's extension modules link it.
# Docs, man pages and translations are never unpacked (copyright files are kept).
# resolv.conf and hostname are copied from the build host: removed, because they would make
# the result depend on the host, and Kubernetes mounts its own.
mmdebstrap \
  --mode=root \
  --variant=essential \
  --include=python3,python3-venv,libstdc++6 \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
  --setup-hook="sync-in $debs /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives $debs" \
  --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
  --customize-hook="copy-in $wheels $here/install-venv.sh /tmp" \
  --customize-hook="chroot \"\$1\" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH sh /tmp/install-venv.sh /tmp/$(basename "$wheels")" \
  --customize-hook="rm -rf \"\$1\"/tmp/$(basename "$wheels") \"\$1\"/tmp/install-venv.sh" \
  --customize-hook='rm -f "$1"/etc/resolv.conf "$1"/etc/hostname' \
  bookworm "$output" \
  "deb $mirror bookworm main" \
  "deb $mirror bookworm-updates main" \
  "deb $security_mirror bookworm-security main"
