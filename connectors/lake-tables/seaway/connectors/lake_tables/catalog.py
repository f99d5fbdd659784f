"""``iceberg.catalog.*`` -> a pyiceberg catalog: SQL (SQLite, PostgreSQL), JDBC URIs, REST.

The properties are Apache Iceberg's (the Java sink passes them to ``CatalogUtil.buildIcebergCatalog``),
so an Iceberg user's lines carry over:

=========================================================  ===================================================
``iceberg.catalog.*``                                      catalog
=========================================================  ===================================================
``type=sql`` + ``uri=sqlite:////data/catalog.db``          pyiceberg's SQL catalog on SQLite (the embedded
                                                           default: no ``type`` and no ``uri`` with a
                                                           ``file://`` warehouse means
                                                           ``<warehouse>/iceberg_catalog.db``)
``type=sql`` + ``uri=postgresql+psycopg2://u:p@h:5432/db`` the SQL catalog on PostgreSQL (real deployments)
``type=jdbc`` (or ``catalog-impl=...jdbc.JdbcCatalog``) +  the same tables as Iceberg's ``JdbcCatalog``:
``uri=jdbc:postgresql://h:5432/db``, ``jdbc.user``,        the JDBC URI is translated to SQLAlchemy's
``jdbc.password`` (or ``uri=jdbc:sqlite:/path``)
``type=rest`` (or ``catalog-impl=...rest.RESTCatalog``) +  a REST catalog (``credential``, ``token``,
``uri=https://...``                                        ``warehouse``, ... as pyiceberg reads them)
=========================================================  ===================================================

``warehouse`` is where tables live: ``file:///...``, ``s3://bucket/...`` (FileIO settings ``s3.endpoint``,
``s3.access-key-id``, ``s3.secret-access-key``, ``s3.region``), ``hdfs://...`` (pyarrow's HadoopFileSystem:
libhdfs and a Hadoop CLASSPATH on the worker). Hive, Glue, Nessie and Hadoop (version-hint) catalogs are
refused with a 400 on ``iceberg.catalog.type``: pyiceberg has no Hadoop catalog, and the others are not
tested here.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

__all__ = ["CatalogConfigError", "catalog_errors", "catalog_properties", "load_catalog"]

_IMPLS = {
    "org.apache.iceberg.rest.RESTCatalog": "rest",
    "org.apache.iceberg.jdbc.JdbcCatalog": "jdbc",
    "org.apache.iceberg.hadoop.HadoopCatalog": "hadoop",
    "org.apache.iceberg.hive.HiveCatalog": "hive",
    "org.apache.iceberg.aws.glue.GlueCatalog": "glue",
    "org.apache.iceberg.nessie.NessieCatalog": "nessie",
}
_SUPPORTED = ("sql", "jdbc", "rest")


class CatalogConfigError(ValueError):
    """Catalog properties that make no catalog; ``key`` is the config key to blame."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key

_lock = threading.Lock()
_catalogs: dict[tuple[str, tuple[tuple[str, str], ...]], Catalog] = {}


def _kind(props: Mapping[str, str]) -> str:
    kind = props.get("type", "").strip().lower()
    if not kind and props.get("catalog-impl"):
        kind = _IMPLS.get(props["catalog-impl"].strip(), "?" + props["catalog-impl"].strip())
    if not kind:
        uri = props.get("uri", "")
        kind = "jdbc" if uri.startswith("jdbc:") else "rest" if uri.startswith(("http://", "https://")) else "sql"
    return kind


def _jdbc_to_sqlalchemy(uri: str, user: str | None, password: str | None) -> str:
    """``jdbc:postgresql://h:p/db?user=u`` -> ``postgresql+psycopg2://u:pw@h:p/db``; ``jdbc:sqlite:/x`` -> sqlite."""
    rest = uri[len("jdbc:"):]
    if rest.startswith("sqlite:"):
        path = rest[len("sqlite:"):]
        path = path[len("file:"):] if path.startswith("file:") else path
        return "sqlite:///" + path  # sqlite:////abs/path or sqlite:///relative/path
    if not rest.startswith(("postgresql://", "postgres://")):
        raise ValueError(f"{uri} is not a jdbc:postgresql:// or jdbc:sqlite: URI")
    parsed = urllib.parse.urlsplit(rest)
    query = dict(urllib.parse.parse_qsl(parsed.query))
    user = user or query.pop("user", None)
    password = password or query.pop("password", None)
    auth = ""
    if user:
        auth = urllib.parse.quote(user, safe="")
        if password:
            auth += ":" + urllib.parse.quote(password, safe="")
        auth += "@"
    tail = f"?{urllib.parse.urlencode(query)}" if query else ""
    return f"postgresql+psycopg2://{auth}{parsed.netloc.rsplit('@', 1)[-1]}{parsed.path}{tail}"


def catalog_properties(props: Mapping[str, str]) -> dict[str, str]:
    """pyiceberg's properties for ``iceberg.catalog.*`` (without the prefix); ``ValueError`` names the problem."""
    kind = _kind(props)
    if kind not in _SUPPORTED:
        raise CatalogConfigError("iceberg.catalog.type",
                                 f"catalog type {kind.lstrip('?')!r} is not supported: use sql (SQLite, PostgreSQL), "
                                 "jdbc (its PostgreSQL or SQLite URI) or rest"
                         + ("; pyiceberg has no Hadoop (version-hint) catalog: keep the warehouse on hdfs:// "
                            "or file:// with a sql catalog" if kind == "hadoop" else ""))
    out = {k: v for k, v in props.items() if k not in ("type", "catalog-impl", "jdbc.user", "jdbc.password",
                                                       "io-impl")}
    if kind == "rest":
        if not props.get("uri"):
            raise CatalogConfigError("iceberg.catalog.uri", "a rest catalog needs iceberg.catalog.uri")
        out["type"] = "rest"
        return out
    warehouse = props.get("warehouse", "")
    uri = props.get("uri", "")
    if kind == "jdbc" or uri.startswith("jdbc:"):
        try:
            uri = _jdbc_to_sqlalchemy(uri, props.get("jdbc.user"), props.get("jdbc.password"))
        except ValueError as e:
            raise CatalogConfigError("iceberg.catalog.uri", str(e)) from None
    if not uri:
        if not warehouse.startswith("file:/"):
            raise CatalogConfigError("iceberg.catalog.uri",
                                     "iceberg.catalog.uri is needed (e.g. postgresql+psycopg2://user:password@host/db) "
                             "unless the warehouse is a file:// folder, where the catalog defaults to SQLite in "
                             "<warehouse>/iceberg_catalog.db")
        uri = "sqlite:///" + urllib.parse.urlsplit(warehouse).path.rstrip("/") + "/iceberg_catalog.db"
    if not warehouse:
        raise CatalogConfigError("iceberg.catalog.warehouse", "iceberg.catalog.warehouse is needed: where the tables "
                                                              "live (file:///..., s3://bucket/...)")
    out.update(type="sql", uri=uri, warehouse=warehouse)
    return out


def catalog_errors(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(key, message)`` for catalog properties that cannot make a catalog (config validation)."""
    try:
        catalog_properties(props)
    except CatalogConfigError as e:
        return [(e.key, f"Invalid Iceberg catalog: {e}")]
    return []


def load_catalog(name: str, props: Mapping[str, str]) -> Catalog:
    """The process's catalog for these properties (one per distinct set: connections are pooled)."""
    from pyiceberg.catalog import load_catalog as pyiceberg_load

    resolved = catalog_properties(props)
    key = (name, tuple(sorted(resolved.items())))
    with _lock:
        catalog = _catalogs.get(key)
        if catalog is None:
            if resolved.get("uri", "").startswith("sqlite:///"):
                # pyiceberg creates its tables on first use; the folder of the database file must exist
                import os

                folder = os.path.dirname(resolved["uri"][len("sqlite:///"):])
                if folder:
                    os.makedirs(folder, exist_ok=True)
            catalog = _catalogs[key] = _create(pyiceberg_load, name, resolved)
        return catalog


def _create(load: Any, name: str, props: dict[str, str]) -> Catalog:
    """pyiceberg's SQL catalog creates its tables when missing, checking first: two processes starting
    together both try, and one fails with "already exists"; a second try finds them."""
    for attempt in range(3):
        try:
            return cast("Catalog", load(name, **props))
        except Exception as e:
            if attempt == 2 or "already exists" not in str(e).lower():
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")
