"""``connection.url``: Confluent's JDBC URLs (and SQLAlchemy URLs) to a SQLAlchemy URL with our drivers.

Accepted forms, so that an existing connector config works after changing only addresses:

=====================================================  ==========================================
``jdbc:postgresql://host:5432/db?user=u&sslmode=...``  ``postgresql+psycopg://host:5432/db``
``jdbc:mysql://host:3306/db``, ``jdbc:mariadb://...``  ``mysql+pymysql://host:3306/db``
``jdbc:sqlite:test.db``, ``jdbc:sqlite:/abs/x.db``     ``sqlite:///test.db``, ``sqlite:////abs/x.db``
``jdbc:sqlite::memory:``                               ``sqlite://`` (one in-memory database)
``postgresql://...``, ``mysql://...``, ``sqlite:///``  the same, with our driver when none is named
=====================================================  ==========================================

``connection.user`` / ``connection.password`` override credentials in the URL. JDBC URL
parameters that have a driver equivalent are translated (``user``, ``password``, ``sslmode``,
``ssl=true``, ``connectTimeout``, ``ApplicationName``, ``currentSchema``); any other is dropped
with a warning naming it (JDBC driver options mean nothing to a Python driver). A URL we cannot
read, or a database other than the three supported, is a :class:`ConfigError` naming
``connection.url``. :func:`describe` renders a URL with its password hidden: the only form
that may reach a log line or an error message.

A relative SQLite path (``jdbc:sqlite:test.db``, Confluent's quickstart) is resolved against
the worker's working directory, as Java's SQLite driver does, and must name a file that exists
there (:func:`sqlite_path_problem`): SQLite creates a missing file on connect, so a path
meant for the user's shell would otherwise become a new, empty database wherever the worker
happens to run (``seaway up``'s folder), and the connector would run on it without a word.
An absolute path may name a file yet to be made (the sink's ``auto.create``).
"""

from __future__ import annotations

import logging
import os
import re
from urllib.parse import parse_qsl, urlsplit

from seaway.connect.api import ConfigError
from sqlalchemy import URL
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

__all__ = ["CONNECTION_URL", "describe", "sqlite_path_problem", "to_sqlalchemy_url"]

log = logging.getLogger(__name__)

CONNECTION_URL = "connection.url"

_DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg", "mysql": "mysql+pymysql",
            "mariadb": "mysql+pymysql", "sqlite": "sqlite"}
_SUPPORTED_BACKENDS = ("postgresql", "mysql", "mariadb", "sqlite")
_QUERY_SECRET = re.compile(r"([?&;](?:[^=&;]*password|pwd|passwd)=)[^&;]*", re.IGNORECASE)


def _invalid(url: str, why: str) -> ConfigError:
    return ConfigError(f"Invalid value {describe_raw(url)} for configuration {CONNECTION_URL}: {why}",
                       name=CONNECTION_URL)


def describe_raw(url: str) -> str:
    """A config's URL text for an error message: any password in it replaced by ``***``."""
    try:
        return describe(make_url(url[5:] if url.startswith("jdbc:") else url))
    except Exception:
        parts = urlsplit(url[5:] if url.startswith("jdbc:") else url)
        return f"{parts.scheme}://{parts.hostname or ''}{parts.path}" if parts.scheme else "<unparseable URL>"


def describe(url: URL) -> str:
    """The URL with the password hidden (for logs and messages): the user-info one and any query
    parameter naming one (``?password=...``, which a SQLAlchemy URL keeps as a plain parameter)."""
    return _QUERY_SECRET.sub(r"\1***", url.render_as_string(hide_password=True))


def _translate_jdbc(url: str) -> URL:
    body = url[len("jdbc:"):]
    scheme, _, rest = body.partition(":")
    scheme = scheme.lower()
    if scheme == "sqlite":
        if rest in (":memory:", ""):
            return URL.create("sqlite")
        return URL.create("sqlite", database=rest)
    if scheme not in ("postgresql", "mysql", "mariadb"):
        raise _invalid(url, f"unsupported JDBC subprotocol '{scheme}' (supported: postgresql, mysql, "
                            "mariadb, sqlite)")
    parts = urlsplit(f"{scheme}:{rest}")
    if not rest.startswith("//"):
        raise _invalid(url, f"expected jdbc:{scheme}://host[:port]/database")
    try:
        port = parts.port
    except ValueError:
        raise _invalid(url, "the port is not a number") from None
    # Connector/J accepts ';'-separated properties after the path too; treat them like '&'
    query_text = parts.query.replace(";", "&")
    path = parts.path.lstrip("/")
    if ";" in path:
        path, _, extra = path.partition(";")
        query_text = "&".join(p for p in (query_text, extra.replace(";", "&")) if p)
    params = dict(parse_qsl(query_text, keep_blank_values=True))
    user = params.pop("user", None) or parts.username
    password = params.pop("password", None) or parts.password
    query: dict[str, str] = {}
    if scheme == "postgresql":
        for key, value in params.items():
            if key == "sslmode":
                query["sslmode"] = value
            elif key == "ssl" and value.lower() == "true":
                query.setdefault("sslmode", "require")
            elif key == "connectTimeout":
                query["connect_timeout"] = value
            elif key == "ApplicationName":
                query["application_name"] = value
            elif key == "currentSchema":
                query["options"] = f"-csearch_path={value}"
            else:
                log.warning("connection.url: JDBC parameter %r has no psycopg equivalent and is ignored", key)
    else:
        query["charset"] = "utf8mb4"
        for key, value in params.items():
            if key == "connectTimeout":
                query["connect_timeout"] = str(max(1, int(value) // 1000)) if value.isdigit() else value
            else:
                log.warning("connection.url: JDBC parameter %r has no PyMySQL equivalent and is ignored", key)
    return URL.create(_DRIVERS[scheme], username=user, password=password, host=parts.hostname,
                      port=port, database=path or None, query=query)


def to_sqlalchemy_url(connection_url: str, user: str | None = None, password: str | None = None) -> URL:
    """The SQLAlchemy URL for a ``connection.url`` (JDBC or SQLAlchemy form) and optional credentials."""
    text = connection_url.strip()
    if not text:
        raise ConfigError(f"Missing required configuration \"{CONNECTION_URL}\" which has no default value.",
                          name=CONNECTION_URL)
    if text.lower().startswith("jdbc:"):
        url = _translate_jdbc(text)
    else:
        try:
            url = make_url(text)
        except ArgumentError:
            raise _invalid(text, "not a JDBC URL (jdbc:postgresql://, jdbc:mysql://, jdbc:mariadb://, "
                                 "jdbc:sqlite:) nor a SQLAlchemy URL") from None
        backend = url.get_backend_name()
        if backend not in _SUPPORTED_BACKENDS:
            raise _invalid(text, f"unsupported database '{backend}' (supported: PostgreSQL, MySQL/MariaDB, SQLite)")
        if "+" not in url.drivername:
            url = url.set(drivername=_DRIVERS[backend])
        if backend == "mariadb":  # SQLAlchemy's mariadb dialect name: the same server, our driver
            url = url.set(drivername="mysql+pymysql")
        if url.get_backend_name() == "mysql" and "charset" not in url.query:
            url = url.update_query_dict({"charset": "utf8mb4"})
    if url.get_backend_name() == "sqlite":
        # SQLite has no accounts: its JDBC driver ignores user and password, so configs that carry
        # them (Confluent's examples do) must still open the file; SQLAlchemy refuses such a URL.
        return url.set(username=None, password=None)
    if user:
        url = url.set(username=user)
    if password:
        url = url.set(password=password)
    return url


def sqlite_path_problem(connection_url: str) -> str | None:
    """Why a relative SQLite path may not be used (it names no file in the worker's directory), else None.

    URLs that are not SQLite, in-memory databases, ``file:`` URIs (they carry their own
    ``mode=``) and absolute paths pass; so does a URL the ``connection.url`` validator already
    refuses (its own message says why).
    """
    try:
        url = to_sqlalchemy_url(connection_url)
    except ConfigError:
        return None
    database = url.database
    if (url.get_backend_name() != "sqlite" or not database or database == ":memory:"
            or database.startswith("file:") or os.path.isabs(database)):
        return None
    resolved = os.path.abspath(database)
    if os.path.exists(resolved):
        return None
    return (f"Invalid value {describe_raw(connection_url)} for configuration {CONNECTION_URL}: the SQLite path "
            f"{database!r} is relative, so it is resolved against the worker's working directory "
            f"({os.getcwd()}), and {resolved} does not exist. The connector does not create a database file at a "
            "relative path (it would land wherever the worker runs, e.g. the folder `seaway up` was started in, "
            "not where you are): give the file's absolute path, e.g. "
            f"jdbc:sqlite:/path/to/{os.path.basename(database)} (the sink creates a missing file there).")
