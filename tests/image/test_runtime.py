"""The built runtime image, run the way Crossplane runs it: its entrypoint as UID/GID 2000,
mTLS with the certificates Crossplane mounts in TLS_SERVER_CERTS_DIR, plaintext only with
--insecure, and `crank render` through it reproducing the committed renders byte for byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

from hack import render as render_script
from harness.e2e.operability import Counted, SidePorts, counted, health_status, scrape
from harness.example_sets import STAGES, example_sets
from tests.image.conftest import CERTS_MOUNT, UNSHARE, Image, run_image
from tests.test_mtls import PKI, check_refused, check_served, mtls, write_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    """A CA, the function's server certificate and a client certificate, as Crossplane issues
    them, in a folder readable by UID 2000 (Kubernetes mounts Secret files 0644)."""
    certs = tmp_path_factory.mktemp("tls-server")
    certs.chmod(0o755)
    return write_pki(certs, "image test", file_mode=0o644)


def process_ids(pid: int) -> dict[str, list[int]]:
    """Real, effective, saved and filesystem UIDs and GIDs of a process."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Uid", "Gid"):
            fields[key] = [int(v) for v in value.split()]
    return fields


def test_serves_mtls_as_uid_2000_with_crossplanes_certificates(image: Image, pki: PKI) -> None:
    """And metrics and the health probe port beside it, set as examples/function.yaml sets
    them."""
    ports = SidePorts.free()
    env = {"TLS_SERVER_CERTS_DIR": CERTS_MOUNT, **ports.env()}
    with run_image(image, env=env, certs=pki.certs_dir) as running:
        assert process_ids(running.pid) == {"Uid": [2000] * 4, "Gid": [2000] * 4}
        check_served(mtls(running.address, pki, pki.client))
        check_refused(mtls(running.address, pki, None))
        check_refused(mtls(running.address, pki, pki.untrusted_client))
        check_refused(grpc.insecure_channel(running.address))
        with grpc.insecure_channel(f"127.0.0.1:{ports.health}") as channel:
            assert health_status(channel) == health_pb2.HealthCheckResponse.SERVING
        assert counted(scrape(ports)) == Counted(calls=1, memo_hits=0)


def test_plaintext_only_with_insecure(image: Image) -> None:
    with run_image(image, "--insecure") as running:
        assert process_ids(running.pid)["Uid"] == [2000] * 4
        check_served(grpc.insecure_channel(running.address))


def test_refuses_to_start_without_certificates_or_insecure(image: Image) -> None:
    config = image.config["config"]
    chrooted = [*UNSHARE, "chroot", f"--userspec={config['User']}", str(image.rootfs)]
    done = subprocess.run(
        [*chrooted, *config["Entrypoint"], "--address=127.0.0.1:0"],
        env=image.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "pass --insecure to serve plaintext" in done.stderr


def test_crank_render_through_the_image_reproduces_the_committed_renders(
    image: Image, crank: str, tmp_path: Path
) -> None:
    """What `make render-check` compares, with the function served from the image."""
    differing = []
    with run_image(image, "--insecure") as running:
        port = int(running.address.rsplit(":", 1)[1])
        for example in example_sets():
            for stage in STAGES:
                rendered = render_script.render(crank, example, stage, port, tmp_path, results=True)
                if rendered != example.rendered(stage).read_text():
                    differing.append(f"{example.name}/{stage}")
    assert differing == [], (
        f"renders through the image differ from the committed ones: {differing} (the image "
        "holds this checkout's function/: `make render` refreshes the renders after a change)"
    )


def test_image_holds_no_installers_or_build_tools(image: Image) -> None:
    site_packages = next((image.rootfs / "venv/fn/lib").glob("python3*/site-packages"))
    leftovers = sorted(
        str(path.relative_to(image.rootfs))
        for pattern in ("pip", "pip-*", "setuptools", "setuptools-*", "wheel", "wheel-*")
        for path in site_packages.glob(pattern)
    )
    leftovers += sorted(
        str(path.relative_to(image.rootfs))
        for path in (image.rootfs / "venv/fn/bin").glob("*")
        if path.name.startswith(("pip", "easy_install", "wheel"))
    )
    leftovers += [
        f"/{path}"
        for path in ("usr/share/python-wheels", "usr/lib/python3.11/ensurepip", "usr/bin/gcc")
        if (image.rootfs / path).exists()
    ]
    installed = (image.rootfs / "var/lib/dpkg/status").read_text()
    leftovers += [
        f"package {name}"
        for name in (
            "python3-pip-whl",
            "python3-setuptools-whl",
            "python3-venv",
            "python3-distutils",
            "apt",
        )
        if f"\nPackage: {name}\n" in f"\n{installed}"
    ]
    assert leftovers == []
