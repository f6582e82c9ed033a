#!/usr/bin/env bash
# Prints everything the image's bytes depend on, one item a line: the build scripts, the wheels,
# SOURCE_DATE_EPOCH, the tag, the tools' versions, and which Debian packages the mirrors serve
# right now (the SHA256 of each suite's Packages index, from its InRelease). build.sh keys its
# image cache on the hash of this output, so an unchanged build is a copy, and a new package
# version, wheel or script is a rebuild.
#
# usage: inputs.sh <wheels-dir> <name:tag>   (DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR set)
set -euo pipefail

wheels="$1"
tag="$2"
here="$(dirname "$(realpath "$0")")"

echo "SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:?}"
echo "tag=$tag"
mmdebstrap --version
tar --version | head -n 1
# zlib writes the layer's gzip stream: another zlib may compress the same bytes differently.
python3 -c 'import sys, zlib; print(sys.version.split()[0], zlib.ZLIB_RUNTIME_VERSION)'
(cd "$here" && sha256sum build.sh rootfs.sh install-venv.sh write_image.py)
(cd "$wheels" && sha256sum ./*.whl)
for source in "$DEBIAN_MIRROR bookworm" "$DEBIAN_MIRROR bookworm-updates" \
  "$DEBIAN_SECURITY_MIRROR bookworm-security"; do
  read -r mirror suite <<<"$source"
  index="$(curl -fsSL --max-time 60 "$mirror/dists/$suite/InRelease" |
    awk '/^SHA256:/ { listing = 1; next } /^[^ ]/ { listing = 0 }
         listing && $3 == "main/binary-amd64/Packages.xz" { print $1 }')"
  [[ -n "$index" ]] || { echo "inputs: no package index for $suite at $mirror" >&2; exit 1; }
  echo "$mirror $suite $index"
done
