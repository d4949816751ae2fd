"""The HTTP surface: Starlette routes over a `Replay`, testable in-process with its TestClient.

Reads only. Every path the Kubernetes API offers for get, list and watch is routed; any write
(POST, PUT, PATCH, DELETE) is answered 405 with a Status saying the replay is read-only. Errors
are `Status` objects worded as the API server words them, so kubectl prints
`Error from server (NotFound): deployments.apps "x" not found`.

Which position a read sees, first match wins: a continue token, `resourceVersion` with
`resourceVersionMatch=Exact`, the query parameters `position=N` or `at=TIME`, a path prefix
`/position/N/...` or `/at/TIME/...` (so `kubectl -s http://127.0.0.1:8001/position/40` reads
the cluster as of position 40), then the server's own (`--at`/`--position`, else the log's end);
a `resourceVersion` newer than that is honoured as "not older than".
"""

from __future__ import annotations

import asyncio
import base64
import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route

from engine.api.selectors import Selector, SelectorError, parse
from engine.api.state import Cluster
from replay.serve import resources, views, watch
from replay.serve.reading import Replay
from replay.serve.resources import Catalog, Resource

VERSION = {
    "major": "1",
    "minor": "30",
    "gitVersion": "v1.30.0+kreplay",
    "gitCommit": "",
    "gitTreeState": "clean",
    "buildDate": "1970-01-01T00:00:00Z",
    "goVersion": "",
    "compiler": "kreplay",
    "platform": "linux/amd64",
}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
WRITES = ["POST", "PUT", "PATCH", "DELETE"]
_ENCODE = msgspec.json.Encoder(order="deterministic").encode


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def json_response(body: Any, status: int = 200, content_type: str = "application/json") -> Response:
    return Response(_ENCODE(body), status_code=status, media_type=content_type)


def error_response(exc: ApiError) -> Response:
    return json_response(status_body(exc.code, exc.reason, exc.message, exc.details), exc.code)


def not_found(resource: Resource, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{resource.qualified} "{name}" not found',
        {"name": name, "group": resource.group, "kind": resource.plural},
    )


NO_SUCH_PATH = ApiError(404, "NotFound", "the server could not find the requested resource", {})


def _parse_time(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(400, "BadRequest", f"at={text!r}: expected an RFC 3339 time such as 2026-11-20T10:05:00Z") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ApiError(400, "BadRequest", f"{what}={text!r}: expected a non-negative integer") from None
    if value < 0:
        raise ApiError(400, "BadRequest", f"{what}={text!r}: expected a non-negative integer")
    return value


class Server:
    """What the routes share: the replay, the pace of watches and the app."""

    def __init__(self, replay: Replay, speed: float = 1.0, *, idle_poll: float = 1.0, at: datetime | None = None) -> None:
        self.replay = replay
        self.speed = speed
        self.at = at  # the server's --at, if it was started with one
        self.idle_poll = idle_poll  # how often a watch that has caught up looks for new events
        self.stopping = False
        self._stop: asyncio.Event | None = None

    def stop(self) -> None:
        """End every open watch now (the server is shutting down)."""
        self.stopping = True
        if self._stop is not None:
            self._stop.set()

    async def _sleep(self, seconds: float) -> bool:
        """Sleep, unless the server stops first; True if it did."""
        if self._stop is None:
            self._stop = asyncio.Event()
            if self.stopping:
                self._stop.set()
        try:
            await asyncio.wait_for(self._stop.wait(), max(0.0, seconds))
        except TimeoutError:
            return False
        return True

    # --- positions ---------------------------------------------------------------------------

    def asked_time(self, request: Request) -> datetime | None:
        """The virtual time a read asked for (`at=`, `/at/TIME/`, or the server's `--at`), if any:
        ages are counted up to it, not to the last event before it."""
        q, p = request.query_params, request.path_params
        if "position" in q:
            return None
        if "at" in q:
            return _parse_time(q["at"])
        if "position" in p:
            return None
        if "at" in p:
            return _parse_time(p["at"])
        return self.at

    def base_position(self, request: Request) -> int:
        """Where a read without a resourceVersion looks: query, path prefix, then the server's."""
        q = request.query_params
        p = request.path_params
        if "position" in q:
            return _int(q["position"], "position")
        if "at" in q:
            return self.replay.position_at(_parse_time(q["at"]))
        if "position" in p:
            return int(p["position"])
        if "at" in p:
            return self.replay.position_at(_parse_time(p["at"]))
        return self.replay.current()

    def read_position(self, request: Request) -> int:
        q = request.query_params
        base = self.base_position(request)
        head = self.replay.head()
        rv = q.get("resourceVersion", "")
        if rv in ("", "0"):
            return min(base, head)
        wanted = _int(rv, "resourceVersion")
        if wanted > head:
            raise ApiError(504, "Timeout", f"Too large resource version: {wanted}, current: {head}", {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1})
        if q.get("resourceVersionMatch") == "Exact":
            return wanted
        return max(min(base, head), wanted)

    def watch_position(self, request: Request) -> int:
        """A watch streams the events after its resourceVersion (none or "0": the read position)."""
        rv = request.query_params.get("resourceVersion", "")
        if rv in ("", "0"):
            return self.read_position(request)
        wanted = _int(rv, "resourceVersion")
        head = self.replay.head()
        if wanted > head:
            raise ApiError(504, "Timeout", f"Too large resource version: {wanted}, current: {head}")
        return wanted

    # --- discovery ---------------------------------------------------------------------------

    def catalog(self, cluster: Cluster) -> Catalog:
        return resources.catalog_for(views.held_kinds(cluster))

    async def catalog_for(self, request: Request) -> Catalog:
        position = self.base_position(request)
        cluster = await run_in_threadpool(self.replay.cluster, position)
        return self.catalog(cluster)

    @staticmethod
    def _aggregated_version(request: Request) -> str | None:
        """The apidiscovery version the client accepts first, if it asked for aggregated discovery."""
        for part in request.headers.get("accept", "").split(","):
            params = {k.strip(): v.strip() for k, _, v in (x.partition("=") for x in part.split(";")[1:])}
            if params.get("as") == "APIGroupDiscoveryList" and params.get("g") == "apidiscovery.k8s.io":
                if params.get("v") in resources.AGGREGATED:
                    return params["v"]
        return None

    async def root_core(self, request: Request) -> Response:
        version = self._aggregated_version(request)
        if version is None:
            return json_response(resources.api_versions())
        catalog = await self.catalog_for(request)
        return json_response(
            resources.aggregated(catalog, core=True, version=version),
            content_type=f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList",
        )

    async def root_groups(self, request: Request) -> Response:
        catalog = await self.catalog_for(request)
        version = self._aggregated_version(request)
        if version is None:
            return json_response(resources.group_list(catalog))
        return json_response(
            resources.aggregated(catalog, core=False, version=version),
            content_type=f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList",
        )

    async def group(self, request: Request) -> Response:
        catalog = await self.catalog_for(request)
        group = request.path_params["group"]
        versions = catalog.groups().get(group)
        if not versions:
            return error_response(NO_SUCH_PATH)
        return json_response(resources.api_group(group, versions))

    async def group_version(self, request: Request) -> Response:
        catalog = await self.catalog_for(request)
        group = request.path_params.get("group", "")
        version = request.path_params["version"]
        if not catalog.in_group_version(group, version):
            return error_response(NO_SUCH_PATH)
        return json_response(resources.resource_list(catalog, group, version))

    async def version(self, request: Request) -> Response:
        return json_response(VERSION)

    async def healthy(self, request: Request) -> Response:
        return Response("ok", media_type="text/plain")

    # --- resources ---------------------------------------------------------------------------

    async def write(self, request: Request) -> Response:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[request.method]
        return json_response(
            status_body(
                405,
                "MethodNotAllowed",
                f"the server does not allow this method on the requested resource ({verb}): "
                f"kreplay serve is a read-only replay of {self.replay.url}; "
                "change the cluster by adding operations to the history and replaying it",
                {},
            ),
            405,
        )

    async def resource(self, request: Request) -> Response:
        try:
            return await self._resource(request)
        except ApiError as exc:
            return error_response(exc)

    async def _resource(self, request: Request) -> Response:
        p = request.path_params
        q = request.query_params
        group, version, plural = p.get("group", ""), p["version"], p["plural"]
        namespace: str | None = p.get("namespace")
        name: str | None = p.get("name")
        subresource: str | None = p.get("subresource")
        if q.get("watch") in ("true", "1") and name is None:
            return await self._watch(request, group, version, plural, namespace, self.watch_position(request))
        position = self.read_position(request) if "continue" not in q else self._continue(q["continue"])[0]
        cluster = await run_in_threadpool(self.replay.cluster, position)
        resource = self.catalog(cluster).find(group, version, plural)
        if resource is None or (namespace is not None and not resource.namespaced):
            raise NO_SUCH_PATH
        as_table = "as=Table" in request.headers.get("accept", "")
        now = cluster.now or EPOCH
        asked = self.asked_time(request)
        if asked is not None and position == self.base_position(request) and asked > now:
            now = asked
        if name is not None:
            if resource.kind == "Pod" and subresource in ("log", "exec", "attach", "portforward"):
                raise ApiError(404, "NotFound", f"kreplay serve has no containers to read: the replay holds what the API held, not what pod {name}'s containers printed or ran", {"name": name, "kind": "pods"})
            if subresource not in (None, "status"):
                raise NO_SUCH_PATH
            if resource.namespaced and namespace is None:
                raise NO_SUCH_PATH
            found = views.one(cluster, resource, namespace or "", name)
            if found is None:
                raise not_found(resource, name)
            if as_table:
                return json_response(views.table([found], resource, now, str(position), include_object=q.get("includeObject", "Metadata")))
            return json_response(views.manifest_of(found, resource))
        labels, fields = self._selectors(request, resource)
        selected = views.select(views.items(cluster, resource, namespace), resource, labels, fields)
        start = self._continue(q["continue"])[1] if "continue" in q else 0
        limit = _int(q["limit"], "limit") if q.get("limit") else 0
        page = selected[start : start + limit] if limit else selected[start:]
        more = bool(limit) and start + limit < len(selected)
        token = self._token(position, start + limit) if more else ""
        if as_table:
            body = views.table(page, resource, now, str(position), include_object=q.get("includeObject", "Metadata"))
            body["metadata"]["continue"] = token or None
            return json_response(body)
        meta: dict[str, Any] = {"resourceVersion": str(position)}
        if token:
            meta["continue"] = token
            meta["remainingItemCount"] = len(selected) - start - limit
        return json_response(
            {
                "kind": f"{resource.kind}List",
                "apiVersion": resource.group_version,
                "metadata": meta,
                "items": [views.manifest_of(i, resource) for i in page],
            }
        )

    @staticmethod
    def _token(position: int, start: int) -> str:
        return base64.urlsafe_b64encode(f"{position}:{start}".encode()).decode()

    @staticmethod
    def _continue(token: str) -> tuple[int, int]:
        try:
            position, _, start = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
            return int(position), int(start)
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "BadRequest", f"continue key is not valid: {token!r}") from None

    @staticmethod
    def _selectors(request: Request, resource: Resource) -> tuple[Selector | None, list[views.FieldTerm]]:
        q = request.query_params
        try:
            labels = parse(q["labelSelector"]) if q.get("labelSelector") else None
        except SelectorError as exc:
            raise ApiError(400, "BadRequest", f"unable to parse requirement: {exc}") from None
        try:
            fields = views.parse_fields(q.get("fieldSelector", ""), resource.kind)
        except views.RequestError as exc:
            raise ApiError(400, "BadRequest", str(exc)) from None
        return labels, fields

    async def _watch(self, request: Request, group: str, version: str, plural: str, namespace: str | None, position: int) -> Response:
        q = request.query_params
        cluster = await run_in_threadpool(self.replay.cluster, position)
        resource = self.catalog(cluster).find(group, version, plural)
        if resource is None or (namespace is not None and not resource.namespaced):
            raise NO_SUCH_PATH
        labels, fields = self._selectors(request, resource)
        objects = [i for i in views.items(cluster, resource, namespace) if not isinstance(i, dict)]
        watcher = watch.Watcher(resource, namespace, labels, fields, objects)
        rv = q.get("resourceVersion", "")
        send_initial = q.get("sendInitialEvents") == "true" or rv in ("", "0")
        timeout = float(_int(q["timeoutSeconds"], "timeoutSeconds")) if q.get("timeoutSeconds") else math.inf
        return StreamingResponse(
            self._stream(
                watcher,
                position,
                cluster.now,
                as_table="as=Table" in request.headers.get("accept", ""),
                include_object=q.get("includeObject", "Metadata"),
                initial=send_initial,
                initial_end_bookmark=q.get("sendInitialEvents") == "true",
                bookmarks=q.get("allowWatchBookmarks") == "true",
                timeout=timeout,
            ),
            media_type="application/json",
        )

    async def _stream(
        self,
        watcher: watch.Watcher,
        position: int,
        virtual_start: datetime | None,
        *,
        as_table: bool,
        include_object: str,
        initial: bool,
        initial_end_bookmark: bool,
        bookmarks: bool,
        timeout: float,
    ) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout
        resource = watcher.resource

        def line(kind: str, obj: Any, at: datetime | None) -> bytes:
            body = watch.encode_object(obj, resource, at or EPOCH, as_table, include_object)
            return _ENCODE({"type": kind, "object": body}) + b"\n"

        if initial:
            for obj in watcher.initial():
                yield line("ADDED", obj, virtual_start)
        if initial_end_bookmark:
            yield _ENCODE(watch.bookmark(resource, position, initial_events_end=True)) + b"\n"
        bookmarked = position
        while loop.time() < deadline and not self.stopping:
            batch = await run_in_threadpool(self.replay.events_after, position, 500)
            if not batch:
                if bookmarks and bookmarked != position:
                    yield _ENCODE(watch.bookmark(resource, position)) + b"\n"
                    bookmarked = position
                if await self._sleep(min(self.idle_poll, deadline - loop.time())):
                    return
                continue
            for event in batch:
                if virtual_start is None:
                    virtual_start = event.at
                due = started + watch.delay(virtual_start, event.at, self.speed)
                wait = due - loop.time()
                if wait > 0:
                    if due > deadline:
                        await self._sleep(deadline - loop.time())
                        return
                    if await self._sleep(wait):
                        return
                position = event.position
                for kind, obj, at in watcher.feed(event):
                    yield line(kind, obj, at)

    # --- the app -----------------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        res = self.resource
        wr = self.write

        def resource_routes(prefix: str) -> list[BaseRoute]:
            paths = [
                f"{prefix}/namespaces/{{namespace}}/{{plural}}/{{name}}/{{subresource}}",
                f"{prefix}/namespaces/{{namespace}}/{{plural}}/{{name}}",
                f"{prefix}/namespaces/{{namespace}}/{{plural}}",
                f"{prefix}/{{plural}}/{{name}}/{{subresource}}",
                f"{prefix}/{{plural}}/{{name}}",
                f"{prefix}/{{plural}}",
            ]
            out: list[BaseRoute] = []
            for path in paths:
                out.append(Route(path, res, methods=["GET"]))
                out.append(Route(path, wr, methods=WRITES))
            return out

        return [
            Route("/version", self.version, methods=["GET"]),
            Route("/healthz", self.healthy, methods=["GET"]),
            Route("/readyz", self.healthy, methods=["GET"]),
            Route("/livez", self.healthy, methods=["GET"]),
            Route("/api", self.root_core, methods=["GET"]),
            Route("/apis", self.root_groups, methods=["GET"]),
            Route("/api/{version}", self.group_version, methods=["GET"]),
            *resource_routes("/api/{version}"),
            Route("/apis/{group}", self.group, methods=["GET"]),
            Route("/apis/{group}/{version}", self.group_version, methods=["GET"]),
            *resource_routes("/apis/{group}/{version}"),
        ]

    def app(self) -> Starlette:
        routes = self.routes()
        return Starlette(
            routes=[
                Mount("/position/{position:int}", routes=routes),
                Mount("/at/{at}", routes=routes),
                *routes,
            ],
            exception_handlers={404: self._no_route, 405: self._no_route},
        )

    async def _no_route(self, request: Request, exc: Exception) -> Response:
        if request.method in WRITES:
            return await self.write(request)
        return error_response(NO_SUCH_PATH)


def build_app(replay: Replay, speed: float = 1.0, *, idle_poll: float = 1.0, at: datetime | None = None) -> Starlette:
    return Server(replay, speed, idle_poll=idle_poll, at=at).app()
