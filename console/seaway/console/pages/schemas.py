"""Schemas: subjects, versions, a diff between two versions, compatibility levels, checks, registration, deletes.

All through the registry's REST API (Confluent's paths, docs/schema-registry.md). The list is
one ``GET /schemas?latestOnly=true`` (every subject's latest version in one answer) plus the
soft-deleted subjects. A subject's page shows its versions, the chosen version's schema
(pretty-printed), a line diff against another version, the subject's and the global
compatibility level (editable), a "check compatibility" box (``POST /compatibility/...``,
``verbose=true``: the registry's reasons are shown) before "register", and soft or hard
deletes of a version or the subject (a hard delete soft-deletes first, as the registry requires).
"""

from __future__ import annotations

import asyncio
import difflib
import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import Response
from seaway.console.errors import BackendError, ConsoleError
from seaway.console.web import Ctx, CtxDep, writable

__all__ = ["LEVELS", "router"]

router = APIRouter()

LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE")
_TYPES = ("AVRO", "JSON", "PROTOBUF")


def pretty(schema: str) -> str:
    """A JSON schema indented (Avro, JSON Schema); any other text (Protobuf) as it is."""
    try:
        return json.dumps(json.loads(schema), indent=2, ensure_ascii=False)
    except ValueError:
        return schema


def diff_lines(old: str, new: str) -> list[tuple[str, str]]:
    """A unified diff as (kind, line) pairs: kind is ``add``, ``del``, ``hunk`` or ``ctx``."""
    out: list[tuple[str, str]] = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        kind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else "ctx"
        out.append((kind, line))
    return out


@router.get("/schemas")
async def subjects(ctx: CtxDep, q: str = "") -> Response:
    api = ctx.registry()
    latest, everything, level = await asyncio.gather(api.latest_schemas(), api.subjects(deleted=True),
                                                     api.global_config())
    by_subject = {s["subject"]: s for s in latest}
    needle = q.strip().lower()
    rows = [{"subject": s, "version": by_subject.get(s, {}).get("version"), "id": by_subject.get(s, {}).get("id"),
             "type": by_subject.get(s, {}).get("schemaType", "AVRO"), "deleted": s not in by_subject}
            for s in everything if not needle or needle in s.lower()]
    return ctx.render("schemas.html", rows=rows, q=q, level=level, levels=LEVELS, types=_TYPES,
                      message=ctx.request.query_params.get("m"))


@router.get("/schemas/{subject}")
async def subject(subject: str, ctx: CtxDep, version: str = "", diff: str = "") -> Response:
    api = ctx.registry()
    versions, level, own_level = await asyncio.gather(api.versions(subject), api.global_config(),
                                                      api.subject_config(subject))
    if not versions:
        raise ConsoleError(f"subject {subject} has no versions", 404)
    live = await api.versions(subject, deleted=False) if versions else []
    chosen = int(version) if version.isdigit() and int(version) in versions else versions[-1]
    current = await api.version(subject, chosen)
    text = pretty(str(current["schema"]))
    compared: dict[str, Any] | None = None
    lines: list[tuple[str, str]] = []
    if diff.isdigit() and int(diff) in versions and int(diff) != chosen:
        other = await api.version(subject, int(diff))
        compared = other
        lines = diff_lines(pretty(str(other["schema"])), text)
    return ctx.render("schema.html", subject=subject, versions=versions, live=live, current=current, text=text,
                      compared=compared, diff=lines, level=level, own_level=own_level, levels=LEVELS, types=_TYPES,
                      check=None, message=ctx.request.query_params.get("m"), draft=None)


def _back(subject: str | None, message: str) -> str:
    where = "/schemas" if subject is None else f"/schemas/{quote(subject, safe='')}"
    return f"{where}?m={quote(message, safe='')}"


@router.post("/schemas/config")
async def set_global_level(ctx: CtxDep) -> Response:
    form = await writable(ctx)
    level = form.get("level")
    if level not in LEVELS:
        raise ConsoleError(f"unknown compatibility level {level!r}", 400)
    await ctx.registry().set_config(None, level)
    return ctx.redirect(_back(None, f"global compatibility set to {level}"))


@router.post("/schemas/{subject}/config")
async def set_level(subject: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    level = form.get("level")
    if level == "":
        await ctx.registry().delete_subject_config(subject)
        return ctx.redirect(_back(subject, "the subject follows the global level again"))
    if level not in LEVELS:
        raise ConsoleError(f"unknown compatibility level {level!r}", 400)
    await ctx.registry().set_config(subject, level)
    return ctx.redirect(_back(subject, f"compatibility set to {level}"))


@router.post("/schemas/{subject}/register")
async def register(subject: str, ctx: CtxDep) -> Response:
    """``check`` asks the registry whether the schema is compatible; ``register`` registers it."""
    form = await writable(ctx)
    api = ctx.registry()
    schema, schema_type = form.get("schema").strip(), form.get("type", "AVRO")
    if schema_type not in _TYPES:
        raise ConsoleError(f"unknown schema type {schema_type!r}", 400)
    if not schema:
        raise ConsoleError("the schema is empty", 400)
    if form.get("op") == "check":
        try:
            result = await api.check(subject, schema, schema_type)
            check = {"ok": bool(result.get("is_compatible")), "messages": result.get("messages") or []}
        except BackendError as exc:
            if exc.code != 40401:  # a new subject: anything is compatible with nothing
                check = {"ok": False, "messages": [exc.detail]}
            else:
                check = {"ok": True, "messages": ["the subject has no version yet"]}
        if form.get("new") == "true":
            return ctx.render("schema_new.html", subject=subject, check=check, draft=schema, type=schema_type,
                              types=_TYPES)
        return await _subject_with(ctx, subject, check=check, draft=schema)
    schema_id = await api.register(subject, schema, schema_type)
    return ctx.redirect(_back(subject, f"registered (schema id {schema_id})"))


async def _subject_with(ctx: Ctx, subject: str, **extra: Any) -> Response:
    api = ctx.registry()
    versions, level, own_level = await asyncio.gather(api.versions(subject), api.global_config(),
                                                      api.subject_config(subject))
    live = await api.versions(subject, deleted=False)
    current = await api.version(subject, versions[-1])
    return ctx.render("schema.html", subject=subject, versions=versions, live=live, current=current,
                      text=pretty(str(current["schema"])), compared=None, diff=[], level=level, own_level=own_level,
                      levels=LEVELS, types=_TYPES, message=None, **extra)


@router.get("/schemas-new")
async def new_subject(ctx: CtxDep, subject: str = "") -> Response:
    return ctx.render("schema_new.html", subject=subject, check=None, draft="", type="AVRO", types=_TYPES)


@router.post("/schemas/{subject}/delete")
async def delete(subject: str, ctx: CtxDep) -> Response:
    form = await writable(ctx)
    api = ctx.registry()
    permanent = form.get("permanent") == "true"
    version = form.get("version")
    if version.isdigit():
        if permanent:
            try:
                await api.delete_version(subject, int(version), permanent=False)
            except BackendError as exc:
                if exc.code not in (40406, 40407):  # already soft-deleted
                    raise
        await api.delete_version(subject, int(version), permanent)
        done = f"version {version} {'permanently ' if permanent else ''}deleted"
        return ctx.redirect(_back(subject, done))
    if form.get("confirm") != subject:
        raise ConsoleError(f"type the subject's name ({subject}) to confirm its deletion", 400)
    if permanent:
        try:
            await api.delete_subject(subject, permanent=False)
        except BackendError as exc:
            if exc.code != 40404:  # already soft-deleted
                raise
    await api.delete_subject(subject, permanent)
    return ctx.redirect(_back(None, f"subject {subject} {'permanently ' if permanent else ''}deleted"))
