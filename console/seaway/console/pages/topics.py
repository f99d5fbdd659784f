"""Topics: the list, one topic (partitions, configs, consumers), create, delete, produce, and the message browser.

The list pages through the cluster's topics (:data:`PAGE_SIZE` a page, filtered by name) and asks
only for the shown topics' end offsets (two ListOffsets calls for the page), so it costs the
same with 10 topics or 10,000. Sizes come from the brokers' ``kafka_log_log_size`` gauges when
``metrics.urls`` names their ``/metrics`` (Kafka's admin API has no size without
DescribeLogDirs, which Seaway's broker does not serve); otherwise the column shows "—".

The message browser (:mod:`seaway.console.messages`) streams its rows: the page's head is sent
at once and each batch of decoded records follows as it is read.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse
from markupsafe import Markup
from seaway.console.decoding import FrameDecoder
from seaway.console.errors import ConsoleError
from seaway.console.messages import MODES, BrowseQuery, Record, plan_browse, read
from seaway.console.web import Ctx, CtxDep, writable

__all__ = ["PAGE_SIZE", "router"]

router = APIRouter()

PAGE_SIZE = 100
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


async def _sizes(ctx: Ctx) -> dict[tuple[str, int], int] | None:
    return await ctx.console.topic_sizes()


@router.get("/topics")
async def topics(ctx: CtxDep, q: str = "", internal: bool = False, page: int = 1) -> Response:
    known = await ctx.kafka.topics()
    needle = q.strip().lower()
    names = sorted(n for n, t in known.items() if (internal or not t.internal) and (not needle or needle in n.lower()))
    pages = max(1, -(-len(names) // PAGE_SIZE))
    page = min(max(1, page), pages)
    shown = names[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    partitions = [(n, p.id) for n in shown for p in known[n].partitions]
    marks, sizes = await asyncio.gather(ctx.kafka.watermarks(partitions), _sizes(ctx))
    rows = []
    for name in shown:
        info = known[name]
        keys = [(name, p.id) for p in info.partitions]
        counted = [marks[k] for k in keys if k in marks]
        rows.append({"name": name, "partitions": len(info.partitions), "replication": info.replication_factor,
                     "messages": sum(high - low for low, high in counted) if counted else None,
                     "end": sum(high for _, high in counted) if counted else None,
                     "size": sum(sizes.get(k, 0) for k in keys) if sizes is not None else None,
                     "error": info.error, "internal": info.internal})
    return ctx.render("topics.html", rows=rows, total=len(names), page=page, pages=pages, q=q, internal=internal)


@router.get("/topics/new")
async def new_topic(ctx: CtxDep) -> Response:
    return ctx.render("topic_new.html", error=None, values={})


@router.post("/topics")
async def create_topic(ctx: CtxDep) -> Response:
    form = await writable(ctx)
    name = form.get("name").strip()
    values = dict(form.items())
    try:
        if not _TOPIC_NAME.match(name) or name in (".", ".."):
            raise ConsoleError(f"invalid topic name {name!r}: 1-249 characters of letters, digits, '.', '_', '-'", 400)
        try:
            partitions = int(form.get("partitions") or "1")
            replication = int(form.get("replication") or "-1")
        except ValueError:
            raise ConsoleError("partitions and replication factor must be integers", 400) from None
        configs: dict[str, str] = {}
        for line in form.get("configs").splitlines():
            if line.strip() and not line.strip().startswith("#"):
                key, sep, value = line.partition("=")
                if not sep or not key.strip():
                    raise ConsoleError(f"configs: expected key=value, got {line.strip()!r}", 400)
                configs[key.strip()] = value.strip()
        await ctx.kafka.create_topic(name, partitions, replication, configs)
    except ConsoleError as exc:
        return ctx.render("topic_new.html", exc.status, error=exc.message, values=values)
    return ctx.redirect(f"/topics/{quote(name, safe='')}")


@router.get("/topics/{topic}")
async def topic(topic: str, ctx: CtxDep) -> Response:
    info = await ctx.kafka.topic(topic)
    if info is None:
        raise ConsoleError(f"topic {topic} does not exist", 404)
    keys = [(topic, p.id) for p in info.partitions]
    marks, sizes, configs = await asyncio.gather(ctx.kafka.watermarks(keys), _sizes(ctx),
                                                 ctx.kafka.topic_configs(topic))
    partitions = [{"id": p.id, "leader": p.leader, "replicas": p.replicas, "isrs": p.isrs,
                   "low": marks.get((topic, p.id), (None, None))[0], "high": marks.get((topic, p.id), (None, None))[1],
                   "size": None if sizes is None else sizes.get((topic, p.id))} for p in info.partitions]
    consumers = sorted(g.group_id for g in ctx.console.lag.groups.values()
                       if any(r.topic == topic for r in g.partitions))
    overrides = [c for c in configs if c.source == "DYNAMIC_TOPIC_CONFIG"]
    return ctx.render("topic.html", topic=topic, info=info, partitions=partitions, configs=configs,
                      overrides=overrides, consumers=consumers, message=ctx.request.query_params.get("m"))


@router.post("/topics/{topic}/config")
async def alter_config(topic: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    key = form.get("key").strip()
    if not key:
        raise ConsoleError("the config key is empty", 400)
    value: str | None = None if form.get("op") == "delete" else form.get("value").strip()
    await ctx.kafka.alter_topic_configs(topic, {key: value})
    done = f"{key} reset to the default" if value is None else f"{key} set to {value}"
    return ctx.redirect(f"/topics/{quote(topic, safe='')}?m={quote(done, safe='')}")


@router.post("/topics/{topic}/delete")
async def delete_topic(topic: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    if form.get("confirm") != topic:
        raise ConsoleError(f"type the topic's name ({topic}) to confirm its deletion", 400)
    await ctx.kafka.delete_topic(topic)
    return ctx.redirect("/topics?q=")


def _avro_frame(schema_id: int, schema_text: str, value_text: str) -> bytes:
    import fastavro

    try:
        value = json.loads(value_text)
    except ValueError as exc:
        raise ConsoleError(f"the value is not JSON: {exc}", 400) from None
    parsed = fastavro.parse_schema(json.loads(schema_text))
    out = io.BytesIO()
    out.write(b"\0" + schema_id.to_bytes(4, "big"))
    try:
        fastavro.schemaless_writer(out, parsed, value)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConsoleError(f"the value does not fit the schema: {exc}", 400) from None
    return out.getvalue()


@router.post("/topics/{topic}/produce")
async def produce(topic: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    headers: list[tuple[str, bytes]] = []
    for line in form.get("headers").splitlines():
        if line.strip():
            key, sep, value = line.partition("=")
            if not sep:
                raise ConsoleError(f"headers: expected key=value, got {line.strip()!r}", 400)
            headers.append((key.strip(), value.encode()))
    partition = int(form["partition"]) if form.get("partition").strip().isdigit() else None
    key_bytes = form.get("key").encode() if form.get("key") != "" else None
    text = form.get("value")
    value_bytes: bytes | None
    if form.get("format") == "avro":
        subject = form.get("subject").strip() or f"{topic}-value"
        latest = await ctx.registry().version(subject, "latest", deleted=False)
        value_bytes = _avro_frame(int(latest["id"]), str(latest["schema"]), text)
    else:
        value_bytes = text.encode() if text != "" or form.get("null_value") != "on" else None
    where = await ctx.kafka.produce(topic, partition, key_bytes, value_bytes, headers)
    done = f"produced to partition {where[0]} at offset {where[1]}"
    return ctx.redirect(f"/topics/{quote(topic, safe='')}?m={quote(done, safe='')}")


def _query(topic: str, params: dict[str, str], ceiling: int) -> BrowseQuery:
    from seaway.cli.cluster import CliError
    from seaway.cli.groups import parse_datetime

    mode = params.get("mode") or "newest"
    if mode not in MODES:
        raise ConsoleError(f"mode must be one of {', '.join(MODES)}", 400)

    def integer(key: str) -> int | None:
        raw = (params.get(key) or "").strip()
        if not raw:
            return None
        try:
            return int(raw)
        except ValueError:
            raise ConsoleError(f"{key} must be an integer, not {raw!r}", 400) from None

    timestamp = None
    raw_time = (params.get("timestamp") or "").strip()
    if raw_time:
        try:
            timestamp = int(raw_time) if raw_time.isdigit() else parse_datetime(raw_time)
        except CliError as exc:
            raise ConsoleError(str(exc), 400) from None
    limit = integer("limit") or 100
    return BrowseQuery(topic, integer("partition"), mode, integer("offset"), timestamp,
                       max(1, min(limit, ceiling)), (params.get("filter") or "").strip())


async def _schema_lookup(ctx: Ctx) -> Any:
    """Writer schemas by id with their references resolved, asked with this user's credentials."""
    if not ctx.has_registry():
        return None
    return ctx.registry().writer_schema


_ROWS = "<!--seaway-console-rows-->"
_END = "<!--seaway-console-end-->"


@router.get("/topics/{topic}/messages")
async def messages(topic: str, ctx: CtxDep) -> Response:
    """The message browser: the page's head at once, then one chunk of rows per batch read."""
    params = dict(ctx.request.query_params)
    query = _query(topic, params, ctx.console.settings.messages_max_records)
    info = await ctx.kafka.topic(topic)
    if info is None:
        raise ConsoleError(f"topic {topic} does not exist", 404)
    plan = await plan_browse(ctx.kafka, query)  # a query that cannot be read is an error page, not half a page
    page = ctx.render("messages.html", topic=topic, info=info, query=query, params=params, modes=MODES,
                      ceiling=ctx.console.settings.messages_max_records, rows_marker=Markup(_ROWS),
                      end_marker=Markup(_END))
    html = bytes(page.body).decode()
    head, rest = html.split(_ROWS, 1)
    middle, tail = rest.split(_END, 1)
    templates = ctx.console.templates
    rows_template, end_template = templates.get_template("_message_rows.html"), templates.get_template(
        "_messages_end.html")
    decoder = FrameDecoder(await _schema_lookup(ctx))

    def render(rows: list[Record]) -> str:
        return rows_template.render(rows=rows)

    async def chunks() -> AsyncIterator[str]:
        yield head
        shown = 0
        error: str | None = None
        batches = read(ctx.kafka, decoder, plan, render)
        try:
            async for count, rows in batches:
                shown += count
                yield rows
        except ConsoleError as exc:
            error = exc.message
        finally:
            await batches.aclose()  # the browse's consumer is closed even when the page is left early
        if not shown:
            yield f'<tr><td colspan="6" class="muted">No record{" matches" if query.filter else ""}.</td></tr>'
        yield middle + end_template.render(count=shown, error=error) + tail

    response = StreamingResponse(chunks(), media_type="text/html; charset=utf-8")
    for key, value in page.headers.items():
        if key.lower() == "set-cookie":
            response.headers.append(key, value)
    return response
