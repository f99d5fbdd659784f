"""Kafka Connect's and the schema registry's REST APIs, as the console calls them.

One :class:`RestBackend` per server (an ``httpx.AsyncClient`` with its TLS settings and a
connection pool, shared by every request), and per request a thin view bound to the user's
credentials: :class:`ConnectApi` and :class:`RegistryApi`. Configured credentials
(``connect.<name>.basic.auth.user.info``, the registry's ``basic.auth.*``) win; without them the
logged-in user's are sent, so Connect's and the registry's own authentication and roles decide
what each user may do.

A server listed with several URLs (``connect.main.url=http://w1:8083,http://w2:8083``) is asked
at the first that answers; a refused connection moves to the next. Answers are translated at
this edge: 401 becomes :class:`~seaway.console.errors.LoginRequired`, any other error status a
:class:`~seaway.console.errors.BackendError` carrying the server's own ``message`` and
``error_code`` (Connect's and Confluent's error envelope), transport failures a 502 naming the URL.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx
from seaway.console.decoding import MAX_REFERENCE_DEPTH, WriterSchema
from seaway.console.errors import BackendError, LoginRequired
from seaway.console.settings import HttpTarget

__all__ = ["ConnectApi", "Credentials", "RegistryApi", "RestBackend"]

Credentials = tuple[str, str] | None
_REGISTRY_JSON = "application/vnd.schemaregistry.v1+json"
_MAX_BODY = 32 << 20
"""A REST answer larger than this (32 MiB) is refused instead of parsed."""


def _references(raw: Any) -> tuple[tuple[str, str, int], ...]:
    """The registry's ``references`` list as ``(name, subject, version)`` tuples."""
    if not isinstance(raw, list):
        return ()
    try:
        return tuple((str(r["name"]), str(r["subject"]), int(r["version"])) for r in raw)
    except (KeyError, TypeError, ValueError):
        raise BackendError("registry", f"the schema's references are not name/subject/version objects: {raw!r:.200}") \
            from None


def _q(segment: str) -> str:
    """One path segment, every reserved character escaped (a connector named ``a b`` or ``x?y``)."""
    return quote(segment, safe="")


class RestBackend:
    """One REST server (several URLs of one cluster); close with :meth:`aclose`."""

    def __init__(self, label: str, target: HttpTarget, timeout: float = 20.0) -> None:
        self.label = label
        self.target = target
        self._client = httpx.AsyncClient(timeout=timeout, verify=target.verify, follow_redirects=False,
                                         limits=httpx.Limits(max_connections=32, max_keepalive_connections=16))
        self._preferred = 0

    async def aclose(self) -> None:
        await self._client.aclose()

    @property
    def needs_user(self) -> bool:
        """Whether requests carry the user's credentials (none are configured)."""
        return self.target.auth is None

    async def request(self, method: str, path: str, creds: Credentials, *, body: Any = None,
                      params: Mapping[str, Any] | None = None, content_type: str = "application/json",
                      raw: bool = False) -> Any:
        """The decoded JSON answer (None for an empty one), or the text when ``raw``."""
        auth = self.target.auth or creds
        headers = {"Accept": "application/json" if not raw else "text/plain, */*"}
        content: bytes | None = None
        if body is not None:
            content = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        urls = self.target.urls
        order = [*range(self._preferred, len(urls)), *range(self._preferred)]
        last: Exception | None = None
        for index in order:
            url = urls[index] + path
            try:
                response = await self._client.request(method, url, content=content, params=params, headers=headers,
                                                       auth=httpx.BasicAuth(*auth) if auth else None)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                last = exc
                continue
            except httpx.HTTPError as exc:
                raise BackendError(self.label, f"{method} {url}: {type(exc).__name__}: {exc}") from None
            self._preferred = index
            return self._answer(method, url, response, raw, configured=self.target.auth is not None)
        raise BackendError(self.label, f"no answer from {', '.join(urls)} ({type(last).__name__}: {last})")

    def _answer(self, method: str, url: str, response: httpx.Response, raw: bool, configured: bool) -> Any:
        if len(response.content) > _MAX_BODY:
            raise BackendError(self.label, f"{method} {url}: an answer of {len(response.content)} bytes is too large")
        if response.status_code == 401:
            if configured:
                raise BackendError(self.label, "the configured credentials were refused (401)", 502, code=401)
            raise LoginRequired(self.label)
        if response.status_code >= 400:
            message, code = response.text[:2000] or response.reason_phrase, response.status_code
            try:
                payload = response.json()
                if isinstance(payload, dict):
                    message = str(payload.get("message", message))
                    code = int(payload.get("error_code", code))
            except (ValueError, TypeError):
                pass
            status = response.status_code if response.status_code in (400, 403, 404, 409, 422) else 502
            raise BackendError(self.label, message, status, code=code)
        if raw:
            return response.text
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise BackendError(self.label, f"{method} {url}: the answer is not JSON") from None


class ConnectApi:
    """Kafka Connect's REST API (docs/connect.md), with one user's credentials."""

    def __init__(self, backend: RestBackend, creds: Credentials) -> None:
        self.backend = backend
        self.creds = creds

    @property
    def name(self) -> str:
        return self.backend.label.removeprefix("connect ")

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        return await self.backend.request(method, path, self.creds, **kwargs)

    async def info(self) -> dict[str, Any]:
        return dict(await self._call("GET", "/"))

    async def connectors_expanded(self) -> dict[str, Any]:
        """``GET /connectors?expand=status&expand=info``: name -> {"status": ..., "info": ...}."""
        return dict(await self._call("GET", "/connectors", params=[("expand", "status"), ("expand", "info")]))

    async def connector(self, name: str) -> dict[str, Any]:
        return dict(await self._call("GET", f"/connectors/{_q(name)}"))

    async def status(self, name: str) -> dict[str, Any]:
        return dict(await self._call("GET", f"/connectors/{_q(name)}/status"))

    async def config(self, name: str) -> dict[str, str]:
        return dict(await self._call("GET", f"/connectors/{_q(name)}/config"))

    async def topics(self, name: str) -> list[str]:
        answer = await self._call("GET", f"/connectors/{_q(name)}/topics")
        return list((answer or {}).get(name, {}).get("topics", []))

    async def offsets(self, name: str) -> list[dict[str, Any]]:
        return list((await self._call("GET", f"/connectors/{_q(name)}/offsets") or {}).get("offsets", []))

    async def put_config(self, name: str, config: Mapping[str, str]) -> dict[str, Any]:
        return dict(await self._call("PUT", f"/connectors/{_q(name)}/config", body=dict(config)))

    async def pause(self, name: str) -> None:
        await self._call("PUT", f"/connectors/{_q(name)}/pause")

    async def resume(self, name: str) -> None:
        await self._call("PUT", f"/connectors/{_q(name)}/resume")

    async def stop(self, name: str) -> None:
        await self._call("PUT", f"/connectors/{_q(name)}/stop")

    async def restart(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        await self._call("POST", f"/connectors/{_q(name)}/restart",
                         params={"includeTasks": str(include_tasks).lower(), "onlyFailed": str(only_failed).lower()})

    async def restart_task(self, name: str, task: int) -> None:
        await self._call("POST", f"/connectors/{_q(name)}/tasks/{task}/restart")

    async def delete(self, name: str) -> None:
        await self._call("DELETE", f"/connectors/{_q(name)}")

    async def alter_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        answer = await self._call("PATCH", f"/connectors/{_q(name)}/offsets", body={"offsets": offsets})
        return str((answer or {}).get("message", "offsets altered"))

    async def reset_offsets(self, name: str) -> str:
        answer = await self._call("DELETE", f"/connectors/{_q(name)}/offsets")
        return str((answer or {}).get("message", "offsets reset"))

    async def plugins(self) -> list[dict[str, Any]]:
        return list(await self._call("GET", "/connector-plugins", params={"connectorsOnly": "false"}))

    async def plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        return list(await self._call("GET", f"/connector-plugins/{_q(plugin)}/config"))

    async def validate(self, plugin: str, config: Mapping[str, str]) -> dict[str, Any]:
        return dict(await self._call("PUT", f"/connector-plugins/{_q(plugin)}/config/validate", body=dict(config)))

    async def metrics(self) -> str:
        return str(await self._call("GET", "/metrics", raw=True))


class RegistryApi:
    """Confluent Schema Registry's REST API (docs/schema-registry.md), with one user's credentials."""

    def __init__(self, backend: RestBackend, creds: Credentials) -> None:
        self.backend = backend
        self.creds = creds

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        if "body" in kwargs:
            kwargs.setdefault("content_type", _REGISTRY_JSON)
        return await self.backend.request(method, path, self.creds, **kwargs)

    async def subjects(self, deleted: bool = False) -> list[str]:
        return sorted(await self._call("GET", "/subjects", params={"deleted": str(deleted).lower()}))

    async def latest_schemas(self) -> list[dict[str, Any]]:
        """Every subject's latest version in one request (``GET /schemas?latestOnly=true``)."""
        return list(await self._call("GET", "/schemas", params={"latestOnly": "true"}))

    async def versions(self, subject: str, deleted: bool = True) -> list[int]:
        return list(await self._call("GET", f"/subjects/{_q(subject)}/versions",
                                     params={"deleted": str(deleted).lower()}))

    async def version(self, subject: str, version: int | str, deleted: bool = True) -> dict[str, Any]:
        return dict(await self._call("GET", f"/subjects/{_q(subject)}/versions/{version}",
                                     params={"deleted": str(deleted).lower()}))

    async def schema_by_id(self, schema_id: int) -> dict[str, Any]:
        return dict(await self._call("GET", f"/schemas/ids/{schema_id}"))

    async def writer_schema(self, schema_id: int) -> WriterSchema:
        """Schema ``schema_id`` with every schema its references lead to, for a decoder factory."""
        found = await self.schema_by_id(schema_id)
        references = _references(found.get("references"))
        return WriterSchema(schema_id, str(found.get("schemaType") or "AVRO"), str(found["schema"]), references,
                            await self.dependencies(references))

    async def dependencies(self, references: tuple[tuple[str, str, int], ...]) -> tuple[tuple[str, str], ...]:
        """``(name, schema text)`` of every schema ``references`` lead to, dependencies first.

        As the registry client's ``dependencies()``: each ``(subject, version)`` once, in the
        order a parser needs them; nesting past :data:`~seaway.console.decoding.MAX_REFERENCE_DEPTH`
        is refused (a cycle).
        """
        out: list[tuple[str, str]] = []
        seen: set[tuple[str, int]] = set()

        async def visit(name: str, subject: str, version: int, depth: int) -> None:
            if depth > MAX_REFERENCE_DEPTH:
                raise BackendError("registry", f"schema references nested more than {MAX_REFERENCE_DEPTH} deep "
                                   f"(at {subject} version {version}: a cycle?)")
            if (subject, version) in seen:
                return
            seen.add((subject, version))
            found = await self.version(subject, version)
            for inner in _references(found.get("references")):
                await visit(*inner, depth + 1)
            out.append((name, str(found["schema"])))

        for reference in references:
            await visit(*reference, 0)
        return tuple(out)

    async def global_config(self) -> str:
        return str((await self._call("GET", "/config")).get("compatibilityLevel", "BACKWARD"))

    async def subject_config(self, subject: str) -> str | None:
        try:
            answer = await self._call("GET", f"/config/{_q(subject)}")
        except BackendError as exc:
            if exc.code == 40408 or exc.status == 404:  # subject has no level of its own
                return None
            raise
        return str(answer.get("compatibilityLevel"))

    async def set_config(self, subject: str | None, level: str) -> None:
        path = "/config" if subject is None else f"/config/{_q(subject)}"
        await self._call("PUT", path, body={"compatibility": level})

    async def delete_subject_config(self, subject: str) -> None:
        await self._call("DELETE", f"/config/{_q(subject)}")

    async def check(self, subject: str, schema: str, schema_type: str, version: str = "latest") -> dict[str, Any]:
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        return dict(await self._call("POST", f"/compatibility/subjects/{_q(subject)}/versions/{version}",
                                     body=body, params={"verbose": "true"}))

    async def register(self, subject: str, schema: str, schema_type: str) -> int:
        body: dict[str, Any] = {"schema": schema}
        if schema_type != "AVRO":
            body["schemaType"] = schema_type
        return int((await self._call("POST", f"/subjects/{_q(subject)}/versions", body=body))["id"])

    async def delete_subject(self, subject: str, permanent: bool) -> list[int]:
        return list(await self._call("DELETE", f"/subjects/{_q(subject)}",
                                     params={"permanent": str(permanent).lower()}))

    async def delete_version(self, subject: str, version: int, permanent: bool) -> int:
        return int(await self._call("DELETE", f"/subjects/{_q(subject)}/versions/{version}",
                                    params={"permanent": str(permanent).lower()}))

    async def types(self) -> list[str]:
        return list(await self._call("GET", "/schemas/types"))

    async def metrics(self) -> str:
        return str(await self._call("GET", "/metrics", raw=True))
