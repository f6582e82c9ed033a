#!/usr/bin/env bash
# `make image`: the runtime image as a `docker save`-format tarball, without a Docker daemon and
# without any container registry. Installs what it needs (mmdebstrap, from Debian) when missing.
#
#   1. wheels.py      this checkout's wheel + the locked dependency wheels -> build/wheels/
#   2. inputs.sh      everything the image depends on; unchanged inputs -> the cached image
#   3. rootfs.sh      Debian 12 root filesystem with the function in /venv/fn -> build/rootfs.tar
#   4. mmtarfilter    drop device nodes: a container runtime provides /dev itself
#   5. write_image.py the tarball -> build/image.tar, kept in the cache under the inputs' hash
#
# IMAGE_REBUILD=1 builds even when the cache has the image, and then fails unless the rebuild
# is byte-identical to it: the reproducibility check.
#
# usage: build.sh <image.tar> <name:tag>   (as root; SOURCE_DATE_EPOCH must be set)
set -euo pipefail

output="$(realpath -m "$1")"
tag="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/hack/image"
build="$(dirname "$output")"
images="${XDG_CACHE_HOME:-$HOME/.cache}/function-inference-clusters/images"
# Cached images are 60 MB each; a few cover switching between branches.
keep_images=3
: "${SOURCE_DATE_EPOCH:?set SOURCE_DATE_EPOCH (the Makefile does) so that the image is reproducible}"
export SOURCE_DATE_EPOCH
export DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
export DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

if [[ "$(id -u)" != 0 ]]; then
  echo "make image: needs root (mmdebstrap's root mode installs Debian packages into a chroot)" >&2
  exit 1
fi
if ! command -v mmdebstrap >/dev/null || ! command -v mmtarfilter >/dev/null; then
  echo "make image: installing mmdebstrap from Debian" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi

mkdir -p "$build" "$images"
python3 "$here/wheels.py"
key="$(bash "$here/inputs.sh" "$build/wheels" "$tag" | sha256sum | cut -c1-16)"
cached="$images/$key.tar"
if [[ -z "${IMAGE_REBUILD:-}" && -f "$cached" ]]; then
  cp "$cached" "$output"
  echo "make image: inputs unchanged ($key), $output copied from $images (IMAGE_REBUILD=1 rebuilds)"
  exit 0
fi

bash "$here/rootfs.sh" "$build/wheels" "$build/rootfs-with-dev.tar"
mmtarfilter --path-exclude='/dev/*' <"$build/rootfs-with-dev.tar" >"$build/rootfs.tar"
rm "$build/rootfs-with-dev.tar"
python3 "$here/write_image.py" "$build/rootfs.tar" "$output" --tag="$tag"
rm "$build/rootfs.tar"

if [[ -f "$cached" ]]; then
  if ! cmp --silent "$cached" "$output"; then
    echo "make image: NOT reproduced: the rebuild differs from $cached (same inputs $key)" >&2
    exit 1
  fi
  echo "make image: reproduced: byte-identical to the earlier build with the same inputs ($key)"
else
  cp "$output" "$cached.partial"
  mv "$cached.partial" "$cached"
fi
# shellcheck disable=SC2012 # cache file names are hex digests
ls -t "$images"/*.tar | tail -n +$((keep_images + 1)) | xargs -r rm -f
