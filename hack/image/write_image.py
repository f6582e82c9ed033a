"""Write a one-layer image as a `docker save`-format tarball (what `docker load`, `podman load`
and `crank xpkg build --embed-runtime-image-tarball` read) from a root filesystem tar.

The tarball holds the gzipped layer, the image config (entrypoint, user, port, environment,
the layer's diff ID) and manifest.json, every file under blobs/sha256/<digest> like Docker's own
`docker save`. Every byte is a function of the layer and the arguments (gzip without a file
name or time, fixed member metadata, `created` from SOURCE_DATE_EPOCH), so the same root
filesystem gives the same tarball and the same image ID.

usage: write_image.py <rootfs.tar> <image.tar> --tag=<name:tag>   (standard library only)
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

# What Crossplane relies on when it runs the function; the Dockerfile states the same values
# and tests/image/test_dockerfile.py holds the two together.
ENTRYPOINT = ["/venv/fn/bin/function"]
# Crossplane runs function pods as UID/GID 2000 by default; numeric, so that Kubernetes'
# runAsNonRoot check can verify it.
USER = "2000:2000"
# The gRPC port Crossplane dials (TLS certificates come from TLS_SERVER_CERTS_DIR), then the
# default metrics and plaintext health probe ports.
PORTS = ("9443/tcp", "8080/tcp", "8081/tcp")
ENV = [
    "PATH=/venv/fn/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    # Log lines reach `kubectl logs` as they are written, not when a buffer fills.
    "PYTHONUNBUFFERED=1",
    # The venv ships compiled bytecode; the non-root user must not try to write more.
    "PYTHONDONTWRITEBYTECODE=1",
]
# gzip level 6 is gzip's and Docker's default: a good size for little CPU.
GZIP_LEVEL = 6
CHUNK = 1 << 20


def copy_hashing(source: io.BufferedIOBase, *sinks: Any) -> str:
    """Copy source into every sink; return the sha256 of what was copied."""
    digest = hashlib.sha256()
    while chunk := source.read(CHUNK):
        digest.update(chunk)
        for sink in sinks:
            sink.write(chunk)
    return digest.hexdigest()


def image_config(diff_id: str, created: str) -> dict[str, Any]:
    return {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {
            "User": USER,
            "ExposedPorts": {port: {} for port in PORTS},
            "Env": ENV,
            "Entrypoint": ENTRYPOINT,
            "WorkingDir": "/",
        },
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
        "history": [
            {
                "created": created,
                "created_by": "hack/image: mmdebstrap bookworm + install-venv.sh (make image)",
            }
        ],
    }


def add_member(archive: tarfile.TarFile, name: str, data: io.BufferedIOBase, size: int) -> None:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o644
    info.mtime = 0
    archive.addfile(info, data)


def write(rootfs: Path, output: Path, tag: str, epoch: int) -> str:
    """Write the tarball; return the image ID (the config's digest)."""
    created = datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with tempfile.TemporaryDirectory(dir=output.parent) as tmp_name:
        layer = Path(tmp_name) / "layer.tar.gz"
        with (
            rootfs.open("rb") as source,
            layer.open("wb") as raw,
            gzip.GzipFile(
                filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL, mtime=0
            ) as compressed,
        ):
            diff_id = copy_hashing(source, compressed)
        with layer.open("rb") as compressed_layer:
            layer_digest = copy_hashing(compressed_layer)
        config = json.dumps(image_config(diff_id, created), sort_keys=True).encode()
        config_digest = hashlib.sha256(config).hexdigest()
        manifest = json.dumps(
            [
                {
                    "Config": f"blobs/sha256/{config_digest}",
                    "RepoTags": [tag],
                    "Layers": [f"blobs/sha256/{layer_digest}"],
                }
            ],
            sort_keys=True,
        ).encode()
        partial = Path(tmp_name) / "image.tar"
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as archive:
            add_member(archive, f"blobs/sha256/{config_digest}", io.BytesIO(config), len(config))
            with layer.open("rb") as data:
                add_member(archive, f"blobs/sha256/{layer_digest}", data, layer.stat().st_size)
            add_member(archive, "manifest.json", io.BytesIO(manifest), len(manifest))
        shutil.move(partial, output)
    return f"sha256:{config_digest}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("rootfs", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--tag", required=True, help="name:tag `docker load` gives the image")
    args = parser.parse_args()
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        raise SystemExit("set SOURCE_DATE_EPOCH: the image's created time must be fixed")
    image_id = write(args.rootfs, args.output, args.tag, int(epoch))
    print(f"{args.output}: image {image_id}, {args.output.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
