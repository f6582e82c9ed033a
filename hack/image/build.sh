#!/usr/bin/env bash
# `make image`: the runtime image as a `docker save`-format tarball, without a Docker daemon and
# without any container registry. Installs what it needs (mmdebstrap, from Debian) when missing.
#
#   1. wheels.py      this checkout's wheel + the locked dependency wheels -> build/wheels/
#   2. rootfs.sh      Debian 12 root filesystem with the function in /venv/fn -> build/rootfs.tar
#   3. mmtarfilter    drop device nodes: a container runtime provides /dev itself
#   4. write_image.py the tarball -> build/image.tar
#
# usage: build.sh <image.tar> <name:tag>   (as root; SOURCE_DATE_EPOCH must be set)
set -euo pipefail

output="$(realpath -m "$1")"
tag="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/hack/image"
build="$(dirname "$output")"
: "${SOURCE_DATE_EPOCH:?set SOURCE_DATE_EPOCH (the Makefile does) so that the image is reproducible}"
export SOURCE_DATE_EPOCH

if [[ "$(id -u)" != 0 ]]; then
  echo "make image: needs root (mmdebstrap's root mode installs Debian packages into a chroot)" >&2
  exit 1
fi
if ! command -v mmdebstrap >/dev/null || ! command -v mmtarfilter >/dev/null; then
  echo "make image: installing mmdebstrap from Debian" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi

mkdir -p "$build"
python3 "$here/wheels.py"
bash "$here/rootfs.sh" "$build/wheels" "$build/rootfs-with-dev.tar"
mmtarfilter --path-exclude='/dev/*' <"$build/rootfs-with-dev.tar" >"$build/rootfs.tar"
rm "$build/rootfs-with-dev.tar"
python3 "$here/write_image.py" "$build/rootfs.tar" "$output" --tag="$tag"
rm "$build/rootfs.tar"
