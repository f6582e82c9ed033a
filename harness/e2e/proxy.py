"""An HTTPS proxy that plays the internet for the few public hosts the suite stands in for.

Nothing here reaches the internet, yet the Configuration packages' Civo Composition installs the
cluster-autoscaler chart from its public repository (https://kubernetes.github.io/autoscaler), as
a user's control plane would. provider-helm, like any Go program, sends requests for non-loopback
hosts through the proxy HTTPS_PROXY names (net/http's ProxyFromEnvironment; loopback is never
proxied, so its API servers are reached directly). This proxy tunnels a CONNECT for a host it
knows to the local server standing in for it (harness/e2e/charts.py: a certificate for that host,
of the CA provider-helm trusts) and refuses every other.
"""

from __future__ import annotations

import select
import socket
import socketserver
import threading
from dataclasses import dataclass

# An idle tunnel is closed after this long; a chart download is one burst.
IDLE_SECONDS = 60
CHUNK = 65536


@dataclass
class ConnectProxy:
    # host:port a client CONNECTs to -> the local port that serves it.
    routes: dict[str, int]
    port: int = 0
    _server: socketserver.ThreadingTCPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                request = self.rfile.readline(8192).decode("latin-1").split()
                while self.rfile.readline(8192).strip():
                    pass  # headers: nothing in them matters here
                target = request[1] if len(request) == 3 and request[0] == "CONNECT" else ""
                local = proxy.routes.get(target)
                if local is None:
                    self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                    return
                with socket.create_connection(("127.0.0.1", local)) as upstream:
                    self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    self.wfile.flush()
                    _tunnel(self.connection, upstream)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, name="connect-proxy", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _tunnel(client: socket.socket, upstream: socket.socket) -> None:
    """Copies bytes both ways until either side closes or the tunnel idles."""
    peers = {client: upstream, upstream: client}
    while True:
        readable, _, _ = select.select(list(peers), [], [], IDLE_SECONDS)
        if not readable:
            return
        for sock in readable:
            data = sock.recv(CHUNK)
            if not data:
                return
            peers[sock].sendall(data)
