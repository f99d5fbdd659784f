"""Consumer groups: the list (from the lag watcher's samples), one group, resetting its offsets, deleting it.

The list shows what :mod:`seaway.console.lagwatch` sampled last (state, members, total lag, its
status and a sparkline of its trend), so it answers from memory whatever the number of
groups. A group's page describes the group afresh (members, their client ids, hosts and
assignments), samples its lag now (committed offset, end offset, lag and status per
partition), and refreshes that section every few seconds.

Resetting offsets is kafka-consumer-groups.sh's ``--reset-offsets`` (:mod:`seaway.console.reset`):
the dry run shows the plan, and "Execute" applies exactly the plan shown (each new offset is
checked against the partition's range again), only while the group is inactive.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import Response
from seaway.cli.groups import kafka_state
from seaway.console.errors import ConsoleError
from seaway.console.reset import METHODS, ResetRequest, inactive_or_refuse, plan_reset
from seaway.console.web import Ctx, CtxDep, writable

__all__ = ["router"]

router = APIRouter()

PAGE_SIZE = 200


@router.get("/groups")
async def groups(ctx: CtxDep, q: str = "", status: str = "", page: int = 1) -> Response:
    watch = ctx.console.lag
    if not watch.samples:
        await watch.sample()  # the first page after start does not show an empty list
    needle = q.strip().lower()
    rows = [g for _, g in sorted(watch.groups.items()) if (not needle or needle in g.group_id.lower())
            and (not status or g.status == status)]
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    page = min(max(1, page), pages)
    return ctx.render("groups.html", rows=rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE], total=len(rows),
                      page=page, pages=pages, q=q, status_filter=status, error=watch.last_error,
                      interval=ctx.console.settings.lag_sample_interval_ms)


async def _group(ctx: Ctx, group: str) -> dict[str, object]:
    desc = await ctx.kafka.describe_group(group)
    state = kafka_state(desc.state)
    lag = await ctx.console.lag.sample_group(group, state, desc)
    members = []
    for m in desc.members or []:
        assigned = sorted((tp.topic, tp.partition) for tp in (m.assignment.topic_partitions if m.assignment else []))
        members.append({"id": m.member_id, "client": m.client_id, "host": m.host, "assigned": assigned})
    coordinator = getattr(desc, "coordinator", None)
    return {"id": group, "state": state, "members": members, "lag": lag,
            "assignor": getattr(desc, "partition_assignor", "") or "",
            "coordinator": f"{coordinator.id} ({coordinator.host}:{coordinator.port})" if coordinator else "—",
            "topics": sorted({r.topic for r in lag.partitions})}


@router.get("/groups/{group}")
async def group(group: str, ctx: CtxDep) -> Response:
    return ctx.render("group.html", g=await _group(ctx, group), methods=METHODS, plan=None, request_=None,
                      message=ctx.request.query_params.get("m"), reset_error=None)


@router.get("/groups/{group}/lag")
async def group_lag(group: str, ctx: CtxDep) -> Response:
    """The lag section alone (htmx refreshes it)."""
    return ctx.render("_group_lag.html", g=await _group(ctx, group))


def _request(form_topics: list[str], method: str, value: str) -> ResetRequest:
    topics = tuple(t.strip() for raw in form_topics for t in raw.replace("\n", " ").split(" ") if t.strip())
    return ResetRequest(method, topics, value.strip())


@router.post("/groups/{group}/reset")
async def reset(group: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    request = _request(form.getlist("topic"), form.get("method"), form.get("value"))
    if form.get("execute") == "true":
        try:
            plan = {(row["topic"], int(row["partition"])): int(row["new"]) for row in json.loads(form.get("plan"))}
        except (ValueError, KeyError, TypeError):
            raise ConsoleError("the plan to execute is missing or malformed: run the dry run again", 400) from None
        await inactive_or_refuse(ctx.kafka, group)
        marks = await ctx.kafka.watermarks(list(plan))
        for (topic, partition), offset in plan.items():
            low, high = marks.get((topic, partition), (None, None))
            if low is None or high is None or not low <= offset <= high:
                raise ConsoleError(f"{topic}-{partition}: offset {offset} is no longer within [{low}, {high}]: "
                                   "run the dry run again", 409)
        await ctx.kafka.alter_group_offsets(group, plan)
        ctx.console.lag.poke()
        done = f"offsets of {len(plan)} partition(s) reset"
        return ctx.redirect(f"/groups/{quote(group, safe='')}?m={quote(done, safe='')}")
    g = await _group(ctx, group)
    try:
        rows = await plan_reset(ctx.kafka, group, request)
    except ConsoleError as exc:
        return ctx.render("group.html", exc.status, g=g, methods=METHODS, plan=None, request_=request,
                          message=None, reset_error=exc.message)
    plan_json = json.dumps([{"topic": r.topic, "partition": r.partition, "new": r.new} for r in rows])
    return ctx.render("group.html", g=g, methods=METHODS, plan=rows, plan_json=plan_json, request_=request,
                      message=None, reset_error=None)


@router.post("/groups/{group}/delete")
async def delete(group: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    if form.get("confirm") != group:
        raise ConsoleError(f"type the group's name ({group}) to confirm its deletion", 400)
    await ctx.kafka.delete_group(group)
    ctx.console.lag.forget(group)
    return ctx.redirect("/groups")
