"""Engines and connections: one SQLAlchemy engine per connector or task, secrets kept out of messages.

:func:`open_database` builds the engine from ``connection.url``/``user``/``password`` with the
session settings the dialect needs (time zone), and connects with ``connection.attempts`` tries
``connection.backoff.ms`` apart, as Confluent's ``CachedConnectionProvider``. Every error
message that leaves this module goes through :func:`safe_message`, which shows the URL with
its password hidden and replaces the password wherever a driver quoted it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import ConnectError, Password
from seaway.connectors.jdbc.dialect import Dialect, dialect_for
from seaway.connectors.jdbc.urls import describe, to_sqlalchemy_url
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool, PoolProxiedConnection

__all__ = ["Database", "open_database", "safe_message"]

log = logging.getLogger(__name__)


@dataclass
class Database:
    """An engine, its dialect, and how to describe it without secrets."""

    engine: Engine
    dialect: Dialect
    description: str
    secret: str | None

    def scrub(self, text: str) -> str:
        return safe_message(text, self.secret)

    def connect(self, attempts: int, backoff_ms: int,
                stopping: threading.Event | None = None) -> PoolProxiedConnection:
        """A driver connection (the data path uses driver cursors), after up to ``attempts`` tries.

        :class:`ConnectError`, free of the password, when none works.
        """
        last: Exception | None = None
        for attempt in range(1, attempts + 1):
            try:
                return self.engine.raw_connection()
            except SQLAlchemyError as e:
                last = e
                log.warning("Connecting to %s failed (attempt %d of %d): %s", self.description, attempt, attempts,
                            self.scrub(_first_line(e)))
                if attempt == attempts or (stopping or threading.Event()).wait(backoff_ms / 1000):
                    break
        raise ConnectError(f"Could not connect to {self.description} after {attempts} attempt(s): "
                           f"{self.scrub(_first_line(last)) if last else 'stopped'}") from None

    def dispose(self) -> None:
        self.engine.dispose()


def _first_line(error: BaseException) -> str:
    """A driver error without SQLAlchemy's trailing background link and parameter dump."""
    text = str(getattr(error, "orig", None) or error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def safe_message(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 3:
        return text.replace(secret, "[hidden]")
    return text


def open_database(url: str, user: str | None, password: Password | None, db_timezone: str, quote: bool = True,
                  *, pooled: bool = True) -> Database:
    """An engine for the config (nothing is connected yet); :class:`ConfigError` for a bad URL."""
    secret = password.value if password is not None else None
    sa_url = to_sqlalchemy_url(url, user, secret)
    secret = secret or sa_url.password
    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    backend = sa_url.get_backend_name()
    if backend == "sqlite":
        # a task's connection is made on its thread but closed by stop() from another one
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    if not pooled:
        kwargs = {"poolclass": NullPool, **({"connect_args": kwargs["connect_args"]} if "connect_args" in kwargs
                                            else {})}
    engine = create_engine(sa_url, **kwargs)
    dialect = dialect_for(engine, db_timezone, quote)
    on_connect: Callable[..., None] = lambda dbapi_connection, _record: dialect.on_connect(dbapi_connection)  # noqa: E731
    event.listen(engine, "connect", on_connect)
    return Database(engine, dialect, describe(sa_url), secret)
