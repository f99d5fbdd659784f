"""Logging setup shared by every Seaway process: text or JSON lines, with Connect's connector context.

Every process (``seaway broker``, ``registry``, ``connect``, ``mirror``, ``up``) takes
``--log-format text|json``; its default comes from the ``SEAWAY_LOG_FORMAT`` environment variable
(so ``seaway up --log-format json`` reaches the processes it starts) and is ``text`` otherwise.

Kafka Connect puts the connector and task a line comes from in the ``connector.context`` MDC key,
rendered ``[my-sink|task-0] `` (``[my-sink|worker] `` for the connector itself), and its default
log4j pattern prints it before the message. Here the context lives in a :class:`contextvars.ContextVar`
set once where a task thread or connector call starts (:func:`connector_context`), so everything the
task calls inherits it, on its thread and through ``asyncio.to_thread``. Text lines carry it as Kafka
Connect's pattern does; JSON lines carry it as ``"connector.context"`` plus ``"connector"`` and
``"task"`` fields, so a log pipeline can filter by connector without parsing the message.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import datetime as _dt
import json
import logging
import os
from collections.abc import Iterator
from typing import Final, TextIO

__all__ = [
    "LOG_FORMATS",
    "LOG_FORMAT_ENV",
    "ConnectorContextFilter",
    "JsonFormatter",
    "add_log_format_argument",
    "configure_logging",
    "connector_context",
    "current_connector_context",
    "set_connector_context",
]

LOG_FORMAT_ENV: Final = "SEAWAY_LOG_FORMAT"
LOG_FORMATS: Final = ("text", "json")

TEXT_FORMAT: Final = "[%(asctime)s] %(levelname)s %(connector_context)s%(message)s (%(name)s)"
"""Kafka Connect's ``connect-log4j.properties`` pattern: ``[%d] %p %X{connector.context}%m (%c:%L)%n``."""

# (connector name, scope): scope is "task-N" for a task, "worker" for the connector itself
_CONTEXT: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("connector_context", default=None)


def set_connector_context(connector: str, scope: str) -> contextvars.Token[tuple[str, str] | None]:
    """Mark the current thread/task as working for ``connector`` (``scope``: "task-0", "worker")."""
    return _CONTEXT.set((connector, scope))


@contextlib.contextmanager
def connector_context(connector: str, scope: str) -> Iterator[None]:
    """Log lines inside the block carry ``[connector|scope] ``; the previous context is restored after."""
    token = _CONTEXT.set((connector, scope))
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def current_connector_context() -> str:
    """The ``connector.context`` string of the current context: ``"[name|task-0] "``, or ``""``."""
    ctx = _CONTEXT.get()
    return "" if ctx is None else f"[{ctx[0]}|{ctx[1]}] "


class ConnectorContextFilter(logging.Filter):
    """Adds ``connector_context`` (and ``connector``/``task``) to every record; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _CONTEXT.get()
        record.connector_context = "" if ctx is None else f"[{ctx[0]}|{ctx[1]}] "
        record.connector = None if ctx is None else ctx[0]
        record.task = None if ctx is None else ctx[1]
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: timestamp (ISO 8601, UTC, ms), level, logger, thread, message,
    the connector context when there is one, and the exception's trace when there is one.

    ``json.dumps`` escapes newlines and control characters, so a message (or a trace) can never
    break a line apart or forge another entry.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "timestamp": _dt.datetime.fromtimestamp(record.created, tz=_dt.UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "thread": record.threadName,
            "message": record.getMessage(),
        }
        context = getattr(record, "connector_context", None)
        if context is None:  # a handler without ConnectorContextFilter
            context = current_connector_context()
        if context:
            entry["connector.context"] = context
            ctx = _CONTEXT.get()
            connector = getattr(record, "connector", None) or (ctx[0] if ctx else None)
            task = getattr(record, "task", None) or (ctx[1] if ctx else None)
            entry["connector"] = connector
            entry["task"] = task
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def add_log_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--log-format text|json``, defaulting to ``$SEAWAY_LOG_FORMAT`` (else text)."""
    default = os.environ.get(LOG_FORMAT_ENV, "text").strip().lower() or "text"
    if default not in LOG_FORMATS:
        default = "text"  # a bad environment value must not stop a process; the flag still validates
    parser.add_argument("--log-format", choices=LOG_FORMATS, default=default,
                        help=f"log line format (default: ${LOG_FORMAT_ENV} or text)")


class _SeawayHandler(logging.StreamHandler[TextIO]):
    """The stderr handler :func:`configure_logging` installs: a second call replaces it (and only it)."""


def configure_logging(level: str, log_format: str = "text", *, text_format: str = TEXT_FORMAT) -> None:
    """Set up the root logger for a process: level, format, and the connector context filter.

    Like :func:`logging.basicConfig` it leaves a root logger that has someone else's handlers alone.

    Raises ValueError for an unknown format or level, so a typo fails at startup, not silently.
    """
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, got {log_format!r}")
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _SeawayHandler)]:
        root.removeHandler(old)
    if root.handlers:
        return  # as logging.basicConfig: a host (pytest, an embedding app) configured logging already
    handler = _SeawayHandler()
    handler.addFilter(ConnectorContextFilter())
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(text_format))
    root.addHandler(handler)
    root.setLevel(numeric)
