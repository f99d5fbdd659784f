"""Connectors of every configured Connect cluster: the list, one connector, its lifecycle, offsets, plugins.

All through Kafka Connect's REST API (docs/connect.md): ``GET /connectors?expand=status&expand=info``
gives the whole list in one call per cluster; a connector's page reads its status (with each
failed task's trace in full), config (secrets masked, :mod:`seaway.console.masking`), topics and
offsets. Actions are POSTs to the console (CSRF-checked) that call Connect's endpoints: pause,
resume, stop, restart (the connector; with its tasks; only the failed ones), restart one task,
delete, reset or alter offsets (KIP-875; Connect requires the connector STOPPED and says so).
The form that creates and edits connectors is :mod:`seaway.console.pages.connect_form`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import Response
from seaway.console.errors import ConsoleError, LoginRequired
from seaway.console.masking import mask
from seaway.console.rest import ConnectApi
from seaway.console.web import Ctx, CtxDep, writable
from seaway.properties import format_properties

__all__ = ["password_keys", "router"]

router = APIRouter()

_ACTIONS = ("pause", "resume", "stop", "restart", "restart-all", "restart-failed", "restart-task", "delete")


def _summary(cluster: str, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    status = entry.get("status") or {}
    info = entry.get("info") or {}
    tasks = status.get("tasks") or []
    states = [t.get("state", "?") for t in tasks]
    workers = sorted({status.get("connector", {}).get("worker_id", "")} | {t.get("worker_id", "") for t in tasks})
    return {
        "cluster": cluster, "name": name, "type": status.get("type") or info.get("type") or "?",
        "state": status.get("connector", {}).get("state", "?"),
        "tasks": len(tasks), "running": states.count("RUNNING"), "failed": states.count("FAILED"),
        "workers": [w for w in workers if w], "class": (info.get("config") or {}).get("connector.class", "?"),
    }


async def connector_rows(ctx: Ctx) -> tuple[list[dict[str, Any]], list[str]]:
    """Every connector of every cluster (one call per cluster), and each unreachable cluster's error."""
    apis = ctx.connects()
    results = await asyncio.gather(*(ctx.console.connectors(api) for api in apis), return_exceptions=True)
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    for api, result in zip(apis, results, strict=True):
        if isinstance(result, LoginRequired):
            raise result
        if isinstance(result, ConsoleError):
            errors.append(result.message)
            continue
        if isinstance(result, BaseException):
            raise result
        rows += [_summary(api.name, name, entry) for name, entry in sorted(result.items())]
    return rows, errors


@router.get("/connectors")
async def connectors(ctx: CtxDep, q: str = "", state: str = "") -> Response:
    rows, errors = await connector_rows(ctx)
    needle = q.strip().lower()
    shown = [r for r in rows if (not needle or needle in r["name"].lower() or needle in r["class"].lower())
             and (not state or r["state"] == state or (state == "FAILED" and r["failed"]))]
    return ctx.render("connectors.html", rows=shown, total=len(rows), errors=errors, q=q, state=state)


async def password_keys(api: ConnectApi, connector_class: str | None) -> set[str]:
    """The plugin's PASSWORD-typed keys (empty when the plugin cannot be asked)."""
    if not connector_class:
        return set()
    try:
        return {d["name"] for d in await api.plugin_config(connector_class) if d.get("type") == "PASSWORD"}
    except ConsoleError:
        return set()


async def _topics(api: ConnectApi, name: str) -> list[str]:
    try:
        return await api.topics(name)
    except LoginRequired:
        raise
    except ConsoleError:
        return []  # topic tracking off (topic.tracking.enable=false): the section says none


async def _detail(ctx: Ctx, cluster: str, name: str) -> dict[str, Any]:
    api = ctx.connect(cluster)
    status, config, topics = await asyncio.gather(api.status(name), api.config(name), _topics(api, name))
    secret_keys = await password_keys(api, config.get("connector.class"))
    masked = mask(config, secret_keys)
    dlq = config.get("errors.deadletterqueue.topic.name") or None
    return {"cluster": cluster, "name": name, "status": status, "config": masked,
            "config_json": json.dumps(masked, indent=2), "config_properties": format_properties(
                {k: v or "" for k, v in masked.items()}),
            "topics": topics, "dlq": dlq,
            "failed_tasks": [t for t in status.get("tasks", []) if t.get("state") == "FAILED"]}


@router.get("/connectors/{cluster}/{name}")
async def connector(cluster: str, name: str, ctx: CtxDep) -> Response:
    return ctx.render("connector.html", c=await _detail(ctx, cluster, name), message=ctx.request.query_params.get("m"))


@router.get("/connectors/{cluster}/{name}/status")
async def connector_status(cluster: str, name: str, ctx: CtxDep) -> Response:
    """The status section alone (htmx refreshes it every few seconds)."""
    api = ctx.connect(cluster)
    status = await api.status(name)
    return ctx.render("_connector_status.html", c={"cluster": cluster, "name": name, "status": status})


def _back(cluster: str, name: str, message: str) -> str:
    return f"/connectors/{quote(cluster, safe='')}/{quote(name, safe='')}?m={quote(message, safe='')}"


@router.post("/connectors/{cluster}/{name}/action")
async def action(cluster: str, name: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    what = form.get("action")
    if what not in _ACTIONS:
        raise ConsoleError(f"unknown action {what!r}; expected one of {', '.join(_ACTIONS)}", 400)
    try:
        target = await _act(ctx.connect(cluster), cluster, name, what, form.get("task"))
    finally:
        ctx.console.changed_connectors()  # after the change: no list fetched meanwhile is kept
    return ctx.redirect(target)


async def _act(api: ConnectApi, cluster: str, name: str, what: str, task: str) -> str:
    """Run one lifecycle action; where to go next."""
    if what == "pause":
        await api.pause(name)
    elif what == "resume":
        await api.resume(name)
    elif what == "stop":
        await api.stop(name)
    elif what == "restart":
        await api.restart(name, include_tasks=False, only_failed=False)
    elif what == "restart-all":
        await api.restart(name, include_tasks=True, only_failed=False)
    elif what == "restart-failed":
        await api.restart(name, include_tasks=True, only_failed=True)
    elif what == "restart-task":
        if not task.isdigit():
            raise ConsoleError("restart-task needs a task number", 400)
        await api.restart_task(name, int(task))
    else:
        await api.delete(name)
        return f"/connectors?m={quote(f'deleted {name}', safe='')}"
    return _back(cluster, name, f"{what} requested")


@router.get("/connectors/{cluster}/{name}/offsets")
async def offsets_section(cluster: str, name: str, ctx: CtxDep) -> Response:
    """The offsets section, loaded after the page (a source's offsets take the worker a read of its topic)."""
    offsets: list[dict[str, Any]] | None = None
    error: str | None = None
    try:
        offsets = await ctx.connect(cluster).offsets(name)
    except LoginRequired:
        raise
    except ConsoleError as exc:
        error = exc.message
    return ctx.render("_connector_offsets.html", c={"cluster": cluster, "name": name, "offsets": offsets,
                                                     "offsets_error": error,
                                                     "offsets_json": json.dumps(offsets or [], indent=2)})


@router.post("/connectors/{cluster}/{name}/offsets")
async def offsets(cluster: str, name: str, ctx: CtxDep) -> Response:
    """``op=reset`` (DELETE /offsets) or ``op=alter`` with the offsets as JSON (PATCH /offsets)."""
    form = await writable(ctx)
    api = ctx.connect(cluster)
    if form.get("op") == "reset":
        message = await api.reset_offsets(name)
    elif form.get("op") == "alter":
        try:
            parsed = json.loads(form.get("offsets") or "[]")
        except ValueError as exc:
            raise ConsoleError(f"the offsets are not JSON: {exc}", 400) from None
        if isinstance(parsed, dict) and "offsets" in parsed:
            parsed = parsed["offsets"]
        if not isinstance(parsed, list) or not all(isinstance(o, dict) for o in parsed):
            raise ConsoleError('the offsets must be a JSON list of {"partition": {...}, "offset": {...}}', 400)
        message = await api.alter_offsets(name, parsed)
    else:
        raise ConsoleError("op must be reset or alter", 400)
    return ctx.redirect(_back(cluster, name, message))


@router.get("/connectors/{cluster}/{name}/dlq")
async def dead_letter_queue(cluster: str, name: str, ctx: CtxDep) -> Response:
    """The connector's dead letter queue in the message browser (its error-context headers decoded)."""
    config = await ctx.connect(cluster).config(name)
    topic = config.get("errors.deadletterqueue.topic.name")
    if not topic:
        raise ConsoleError(f"connector {name} has no dead letter queue (errors.deadletterqueue.topic.name)", 404)
    return ctx.redirect(f"/topics/{quote(topic, safe='')}/messages?mode=newest")


@router.get("/plugins/{cluster}")
async def plugins(cluster: str, ctx: CtxDep) -> Response:
    found = await ctx.connect(cluster).plugins()
    return ctx.render("plugins.html", cluster=cluster, plugins=found)
