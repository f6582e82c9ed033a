"""A small Kubernetes API client over HTTPS with the admin client certificate.

Only what the e2e suite needs: get, list, create, server-side apply, merge patches (of the
object or its status), delete, and a watch stream. Everything is plain JSON over
`http.client`, so the suite sees exactly what the API server says.

Why not a client library (lightkube 1.0.1 and kubernetes 37 were read for this, stop 33): the
suite needs raw answers more than a typed client. lightkube has no `fieldValidation=Strict`,
which the example checks need (the API server otherwise prunes unknown fields silently); it
hands objects back as its models and raises httpx's errors, around which every wait and fault
test would be rebuilt for no gain; its watch resumes after a dropped stream as this one does, but
replays every object as ADDED after a 410, which the watch log must not take for a change. The
official client does strict validation but returns models for core kinds unless used as a raw
HTTP transport, which is what this module is, without a 30 MB dependency. What is ours is the suite's semantics: one
keep-alive connection per thread, transport failures named once (NO_ANSWER), a watch that
hides replays, and wait_for, which polls through restarts.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

# Plenty for one request to a local API server; a stuck call fails the test instead of hanging it.
REQUEST_TIMEOUT_SECONDS = 30
# The field manager the suite applies with, so managedFields show what the test itself wrote.
FIELD_MANAGER = "e2e-harness"


class ApiError(Exception):
    """A non-2xx answer from the API server, with its status code and Status message."""

    def __init__(self, status: int, method: str, path: str, body: str) -> None:
        self.status = status
        self.body = body
        try:
            message = json.loads(body).get("message", body)
        except ValueError:
            message = body
        super().__init__(f"{method} {path}: HTTP {status}: {message}")


@dataclass(frozen=True)
class Kind:
    """Where a kind lives in the API: group/version, plural resource name and scope."""

    api_version: str
    kind: str
    namespaced: bool = True

    @property
    def plural(self) -> str:
        """The resource name the API server serves the kind under: every kind the suite uses,
        built-in or CRD, is named by English's regular plural of its lower-cased kind."""
        lower = self.kind.lower()
        if lower.endswith("s"):
            return lower + "es"
        if lower.endswith("y"):
            return lower[:-1] + "ies"
        return lower + "s"

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
        return base


# A request that got no answer: refused, reset, dropped or timed out (TimeoutError is an OSError).
NO_ANSWER = (OSError, http.client.HTTPException)


def json_object(answer: Any) -> dict[str, Any]:
    """An answer the API server gives as a JSON object (an object, a list, a Status)."""
    assert isinstance(answer, dict), f"expected a JSON object, got {answer!r}"[:4000]
    return answer


class Kube:
    """A client for one API server at https://127.0.0.1:<port>, authenticated by a client cert."""

    def __init__(self, port: int, ca_file: Path, cert_file: Path, key_file: Path) -> None:
        self.port = port
        self._context = ssl.create_default_context(cafile=str(ca_file))
        self._context.load_cert_chain(str(cert_file), str(key_file))
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPSConnection:
        # One keep-alive connection per thread: watches and the fake provider run in threads.
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPSConnection(
                "127.0.0.1", self.port, context=self._context, timeout=REQUEST_TIMEOUT_SECONDS
            )
            self._local.connection = connection
        return connection

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: dict[str, str] | None = None,
    ) -> Any:
        if query:
            path = f"{path}?{urllib.parse.urlencode(query)}"
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = content_type
        for attempt in range(2):
            connection = self._connection()
            try:
                connection.request(method, path, body=payload, headers=headers)
                response = connection.getresponse()
                text = response.read().decode()
                break
            except NO_ANSWER:
                # A keep-alive connection the server closed: reconnect once, then give up.
                connection.close()
                self._local.connection = None
                if attempt == 1:
                    raise
        if response.status >= 300:
            raise ApiError(response.status, method, path, text)
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            # Health endpoints (/readyz, /healthz) answer plain text.
            return text

    def _unless_missing(self, missing: Any, method: str, path: str, **options: Any) -> Any:
        """The answer, or `missing` when the API server answers 404: the object is gone, or
        its kind's CRD is not (or no longer) served."""
        try:
            return self.request(method, path, **options)
        except ApiError as error:
            if error.status == 404:
                return missing
            raise

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        found = self._unless_missing(None, "GET", kind.path(namespace, name))
        return None if found is None else json_object(found)

    def list(
        self, kind: Kind, namespace: str | None = None, labels: str | None = None
    ) -> list[dict[str, Any]]:
        query = {"labelSelector": labels} if labels else None
        found = self._unless_missing({"items": []}, "GET", kind.path(namespace), query=query)
        items: list[dict[str, Any]] = json_object(found)["items"]
        return items

    def create(self, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        return json_object(self.request("POST", kind.path(obj["metadata"].get("namespace")), obj))

    def apply(self, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply with forced ownership, as `kubectl apply --server-side` does."""
        obj = {"apiVersion": kind.api_version, "kind": kind.kind, **obj}
        return json_object(
            self.request(
                "PATCH",
                kind.path(obj["metadata"].get("namespace"), obj["metadata"]["name"]),
                obj,
                content_type="application/apply-patch+yaml",
                query={"fieldManager": FIELD_MANAGER, "force": "true"},
            )
        )

    def merge_patch(
        self,
        kind: Kind,
        name: str,
        patch: dict[str, Any],
        namespace: str | None = None,
        subresource: str = "",
        field_manager: str = "",
    ) -> dict[str, Any]:
        path = kind.path(namespace, name) + (f"/{subresource}" if subresource else "")
        query = {"fieldManager": field_manager} if field_manager else None
        content_type = "application/merge-patch+json"
        return json_object(self.request("PATCH", path, patch, content_type, query))

    def delete(self, kind: Kind, name: str, namespace: str | None = None) -> bool:
        """Deletes with background propagation; False when the object was already gone."""
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        answer = self._unless_missing(False, "DELETE", kind.path(namespace, name), body=options)
        return answer is not False

    def watch(
        self, kind: Kind, stop: threading.Event, resource_version: str = ""
    ) -> Iterator[dict[str, Any]]:
        """Yields watch events of one kind in all namespaces until `stop` is set.

        Reconnects when the server ends the stream, resuming from the last resourceVersion, so a
        consumer sees every change exactly once.
        """
        # resourceVersion per object already yielded: a watch restarted from scratch (after a
        # 410) replays every object as ADDED, which must not look like a change.
        seen: dict[tuple[str, str], str] = {}
        while not stop.is_set():
            query = {"watch": "1", "allowWatchBookmarks": "false", "timeoutSeconds": "60"}
            if resource_version:
                query["resourceVersion"] = resource_version
            path = f"{kind.path()}?{urllib.parse.urlencode(query)}"
            connection = http.client.HTTPSConnection(
                "127.0.0.1", self.port, context=self._context, timeout=90
            )
            try:
                connection.request("GET", path, headers={"Accept": "application/json"})
                response = connection.getresponse()
                if response.status >= 300:
                    # 404: the CRD is not served yet; 429: its storage is (re)initializing
                    # just after the CRD was created; 410: the resourceVersion expired.
                    # Each passes: look again shortly, from scratch after a 410.
                    response.read()
                    if response.status == 410:
                        resource_version = ""
                    stop.wait(1)
                    continue
                for line in response:
                    if stop.is_set():
                        return
                    event = json.loads(line)
                    if event["type"] == "ERROR":
                        # Usually 410 Gone: the resourceVersion expired; start afresh.
                        resource_version = ""
                        break
                    meta = event["object"]["metadata"]
                    resource_version = meta["resourceVersion"]
                    key = (meta.get("namespace", ""), meta["name"])
                    if event["type"] == "DELETED":
                        seen.pop(key, None)
                    elif seen.get(key) == resource_version:
                        continue
                    else:
                        seen[key] = resource_version
                    yield event
            except (*NO_ANSWER, ValueError):
                if stop.is_set():
                    return
                stop.wait(1)
            finally:
                connection.close()


def serving(api: Kube) -> bool:
    """Whether the API server answers /readyz now."""
    try:
        api.request("GET", "/readyz")
    except (ApiError, OSError, ValueError):
        return False
    return True


def answers_ok(url: str, ca_file: Path | None = None) -> bool:
    """Whether a loopback health or API endpoint answers 200 now (over HTTPS: trusting
    `ca_file`)."""
    context = ssl.create_default_context(cafile=str(ca_file)) if ca_file else None
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as answer:  # noqa: S310 (loopback)
            return bool(answer.status == 200)
    except OSError:
        return False


class WaitTimedOut(TimeoutError):
    """A wait_for that reached its deadline: a TimeoutError, but never taken by an enclosing
    wait_for for a transport error to poll past (TimeoutError is an OSError)."""


T = TypeVar("T")


def wait_for(
    description: str,
    probe: Callable[[], T | None],
    timeout: float,
    interval: float = 0.5,
) -> T:
    """Polls `probe` until it returns something truthy; fails with the last value seen.

    The deadline is what bounds the wait, never a fixed sleep: a probe that succeeds at once
    returns at once. An error answer, or a request that got no answer (an API server just
    restarted, or under load, refusing or dropping a connection), is a probe that has not
    passed yet, not the end of the wait: the fault tests poll right through restarts.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = probe()
        except WaitTimedOut:
            raise
        except (ApiError, *NO_ANSWER) as error:
            last = error
        else:
            last = value
            if value and not isinstance(value, (ApiError, *NO_ANSWER)):
                return value
        if time.monotonic() > deadline:
            raise WaitTimedOut(
                f"timed out after {timeout:.0f} s waiting for {description}; last: {last!r}"[:4000]
            )
        time.sleep(interval)


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    """The condition of that type on an object, or {} when it has none."""
    conditions: list[dict[str, Any]] = ((obj or {}).get("status") or {}).get("conditions") or []
    return next((entry for entry in conditions if entry.get("type") == kind), {})


def is_true(obj: dict[str, Any] | None, kind: str) -> bool:
    return condition(obj, kind).get("status") == "True"
