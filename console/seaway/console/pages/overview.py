"""``/``: the overview, and ``/health``: broker, workers and registry up or down with their key figures.

The overview counts what the other pages list (topics from cached metadata, connectors and
their failures from one ``expand=status`` call per Connect cluster, groups from the lag
watcher, subjects from one registry call) and embeds the health cards, which refresh
themselves every 5 s (``hx-trigger="every 5s"``) so rates show as soon as two scrapes exist.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from seaway.console.errors import ConsoleError, LoginRequired
from seaway.console.metrics import Snapshot, broker_figures, connect_figures, registry_figures
from seaway.console.web import Ctx, CtxDep

__all__ = ["router"]

router = APIRouter()


async def _counts(ctx: Ctx) -> dict[str, Any]:
    async def topics() -> Any:
        return len([t for t in (await ctx.kafka.topics()) if not t.startswith("__")])

    async def connectors() -> Any:
        total = failed = 0
        for api in ctx.connects():
            expanded = await ctx.console.connectors(api)
            total += len(expanded)
            for entry in expanded.values():
                status = entry.get("status") or {}
                states = [status.get("connector", {}).get("state")] + [t.get("state") for t in status.get("tasks", [])]
                failed += "FAILED" in states
        return (total, failed)

    async def subjects() -> Any:
        return len(await ctx.registry().subjects()) if ctx.has_registry() else None

    results = await asyncio.gather(topics(), connectors(), subjects(), return_exceptions=True)
    for r in results:
        if isinstance(r, LoginRequired):
            raise r
    shown = [None if isinstance(r, BaseException) else r for r in results]
    errors = [r.message for r in results if isinstance(r, ConsoleError)]
    groups = ctx.console.lag.groups
    lagging = sum(1 for g in groups.values() if g.status in ("WARNING", "ERROR"))
    return {"topics": shown[0], "connectors": shown[1], "subjects": shown[2], "groups": len(groups),
            "lagging": lagging, "errors": errors}


async def _snapshots(ctx: Ctx) -> dict[str, list[Snapshot]]:
    console = ctx.console
    out: dict[str, list[Snapshot]] = {"broker": [], "connect": [], "registry": []}
    try:
        cluster_id, controller, brokers = await ctx.kafka.brokers()
        text = await console.broker_metrics() if console.settings.metrics_urls else None
        figures: dict[str, str] = {}
        if text is not None:
            url = console.settings.metrics_urls[0]
            figures, console.scrapes[url] = await asyncio.to_thread(broker_figures, text, console.scrapes.get(url))
        for broker_id, host, port in brokers:
            label = f"broker {broker_id} {host}:{port}" + (" (controller)" if broker_id == controller else "")
            out["broker"].append(Snapshot(label, True, figures if broker_id == (brokers[0][0]) else {}))
        if not brokers:
            out["broker"].append(Snapshot(ctx.kafka.bootstrap, False, error="no broker in the metadata"))
        if cluster_id:
            out["broker"][0].figures = {"cluster id": cluster_id, **out["broker"][0].figures}
        if text is None and console.metrics_error:
            out["broker"][0].error = f"no figures from /metrics: {console.metrics_error}"
    except ConsoleError as exc:
        out["broker"].append(Snapshot(ctx.kafka.bootstrap, False, error=exc.message))

    async def worker(api: Any) -> Snapshot:
        url = api.backend.target.url
        try:
            info = await api.info()
            text = await api.metrics()
            figures, console.scrapes[url] = connect_figures(text, console.scrapes.get(url))
            return Snapshot(f"{api.name}: {url}", True, {"version": str(info.get("version")), **figures})
        except LoginRequired:
            raise
        except ConsoleError as exc:
            return Snapshot(f"{api.name}: {url}", False, error=exc.message)

    async def registry() -> Snapshot:
        api = ctx.registry()
        url = api.backend.target.url
        try:
            text = await api.metrics()
            figures, console.scrapes[url] = registry_figures(text, console.scrapes.get(url))
            return Snapshot(url, True, figures)
        except LoginRequired:
            raise
        except ConsoleError as exc:
            return Snapshot(url, False, error=exc.message)

    out["connect"] = list(await asyncio.gather(*(worker(api) for api in ctx.connects())))
    if ctx.has_registry():
        out["registry"] = [await registry()]
    return out


@router.get("/")
async def overview(ctx: CtxDep) -> Response:
    return ctx.render("overview.html", counts=await _counts(ctx), lag_error=ctx.console.lag.last_error)


@router.get("/health")
async def health(ctx: CtxDep) -> Response:
    return ctx.render("health.html", snapshots=await _snapshots(ctx))


@router.get("/health/cards")
async def health_cards(ctx: CtxDep) -> Response:
    return ctx.render("_health_cards.html", snapshots=await _snapshots(ctx))
