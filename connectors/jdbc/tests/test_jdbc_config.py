"""Config parsing, URL translation, Confluent's offset format and class-name resolution (no servers needed)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.runtime.plugins import PluginKind, Plugins
from seaway.connectors.jdbc import JdbcSinkConnector, JdbcSourceConnector
from seaway.connectors.jdbc.columns import Column, Kind, effective_kind
from seaway.connectors.jdbc.config import parse_sink, parse_source
from seaway.connectors.jdbc.dialect import TableId
from seaway.connectors.jdbc.querier import _timestamp_fields, offset_instant, table_partitions
from seaway.connectors.jdbc.urls import describe, to_sqlalchemy_url


@pytest.mark.parametrize(("jdbc", "expected"), [
    ("jdbc:postgresql://db.example:5433/shop?user=u&password=p&sslmode=require",
     "postgresql+psycopg://u:***@db.example:5433/shop?sslmode=require"),
    ("jdbc:postgresql://h/shop?currentSchema=sales", "postgresql+psycopg://h/shop?options=-csearch_path%3Dsales"),
    ("jdbc:mysql://h:3306/shop", "mysql+pymysql://h:3306/shop?charset=utf8mb4"),
    ("jdbc:mariadb://h/shop?user=u", "mysql+pymysql://u@h/shop?charset=utf8mb4"),
    ("jdbc:sqlite:test.db", "sqlite:///test.db"),
    ("jdbc:sqlite:/var/data/x.db", "sqlite:////var/data/x.db"),
    ("jdbc:sqlite::memory:", "sqlite://"),
    ("postgresql://u:p@h/db", "postgresql+psycopg://u:***@h/db"),
    ("mariadb://h/db", "mysql+pymysql://h/db?charset=utf8mb4"),
])
def test_jdbc_urls_translate(jdbc: str, expected: str) -> None:
    assert describe(to_sqlalchemy_url(jdbc)) == expected


def test_credentials_override_the_url_and_stay_hidden() -> None:
    url = to_sqlalchemy_url("jdbc:postgresql://h/db?user=a&password=b", "alice", "s3cret!")
    assert (url.username, url.password) == ("alice", "s3cret!")
    assert "s3cret" not in describe(url)


def test_sqlite_opens_with_credentials_in_the_config(tmp_path: Path) -> None:
    """SQLite's JDBC driver ignores connection.user/password; SQLAlchemy refused the URL ("Invalid
    SQLite URL"), so a Confluent config carrying them failed its connector at start."""
    from sqlalchemy import create_engine, text

    url = to_sqlalchemy_url(f"jdbc:sqlite:{tmp_path}/x.db", "bob", "s3cret!")
    assert (url.username, url.password) == (None, None)
    engine = create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(text("select 1")).scalar() == 1
    engine.dispose()


@pytest.mark.parametrize("url", ["jdbc:nope://h/db?user=u&password=s3cret!", "jdbc:postgresql://h:x/db?password=s3cret!",
                                 "nope://h/db?Password=s3cret!&user=u"])
def test_a_password_in_the_url_query_stays_out_of_errors(url: str) -> None:
    with pytest.raises(ConfigError) as info:
        to_sqlalchemy_url(url)
    assert "connection.url" in str(info.value)
    assert "s3cret" not in str(info.value)
    assert "s3cret" not in describe(to_sqlalchemy_url("postgresql://h/db?password=s3cret!&sslmode=require"))


@pytest.mark.parametrize("bad", ["jdbc:oracle:thin:@h:1521:x", "jdbc:postgresql:h/db", "mssql://h/db", "nonsense"])
def test_unsupported_urls_name_the_key(bad: str) -> None:
    with pytest.raises(ConfigError) as raised:
        to_sqlalchemy_url(bad)
    assert raised.value.name == "connection.url"


def test_source_cross_checks_name_the_key(tmp_path: Path) -> None:
    base = {"connection.url": f"jdbc:sqlite:{tmp_path}/x.db", "topic.prefix": "p-"}
    assert parse_source({**base, "mode": "bulk"}).batch_max_rows == 100
    for props, key in [({"mode": "timestamp"}, "timestamp.column.name"),
                       ({}, "mode"),
                       ({"mode": "bulk", "query": "SELECT 1", "table.whitelist": "t"}, "query"),
                       ({"mode": "bulk", "table.exclude.list": "x"}, "table.exclude.list")]:
        with pytest.raises(ConfigError) as raised:
            parse_source({**base, **props})
        assert raised.value.name == key


def test_sink_cross_checks_name_the_key(tmp_path: Path) -> None:
    base = {"connection.url": f"jdbc:sqlite:{tmp_path}/x.db"}
    assert parse_sink(base).insert_mode == "insert"
    for props, key in [({"delete.enabled": "true", "pk.mode": "record_value"}, "delete.enabled"),
                       ({"insert.mode": "update"}, "pk.mode")]:
        with pytest.raises(ConfigError) as raised:
            parse_sink({**base, **props})
        assert raised.value.name == key


@pytest.mark.parametrize("url", ["jdbc:sqlite:test.db", "sqlite:///test.db", "jdbc:sqlite:sub/test.db"])
def test_a_relative_sqlite_path_must_name_a_file_in_the_workers_directory(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite creates a missing file on connect: a relative path meant for the user's shell became an
    empty database in the worker's folder (``seaway up``'s), and the connector ran on it silently."""
    monkeypatch.chdir(tmp_path)
    expected = tmp_path / url.rpartition(":")[2].removeprefix("///")
    for parse, extra in ((parse_sink, {}), (parse_source, {"mode": "bulk", "topic.prefix": "p-"})):
        with pytest.raises(ConfigError) as raised:
            parse({"connection.url": url, **extra})
        assert raised.value.name == "connection.url"
        assert f"{expected} does not exist" in str(raised.value)
        assert str(tmp_path) in str(raised.value)  # the worker's directory, where it looked
    assert list(tmp_path.iterdir()) == []  # nothing created
    expected.parent.mkdir(exist_ok=True)
    expected.touch()
    assert parse_sink({"connection.url": url}).url == url  # an existing file: resolved there, as documented
    for fine in ("jdbc:sqlite::memory:", f"jdbc:sqlite:{tmp_path}/new.db", "sqlite://"):
        assert parse_sink({"connection.url": fine}).url == fine  # memory, or absolute (the sink may create it)


def test_offsets_are_confluents() -> None:
    """Confluent keeps java.sql.Timestamp as getTime() millis plus getNanos() (nanos of the second)."""
    instant = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.UTC)
    fields = _timestamp_fields(instant)
    assert fields == {"timestamp": 1714979289123, "timestamp_nanos": 123456000}
    assert offset_instant(fields) == instant
    assert offset_instant({"timestamp": 1714979289123}) == instant.replace(microsecond=123000)
    assert offset_instant({"timestamp": -1}) == datetime.datetime(1969, 12, 31, 23, 59, 59, 999000,
                                                                  tzinfo=datetime.UTC)
    assert table_partitions(TableId(None, "public", "accounts")) == [
        {"protocol": "1", "table": "public.accounts"}, {"table": "accounts"}]


@pytest.mark.parametrize(("mapping", "precision", "scale", "kind"), [
    ("none", 9, 0, Kind.DECIMAL), ("precision_only", 9, 0, Kind.INT32), ("precision_only", 2, 0, Kind.INT8),
    ("precision_only", 18, 0, Kind.INT64), ("precision_only", 19, 0, Kind.DECIMAL),
    ("precision_only", 9, 2, Kind.DECIMAL), ("best_fit", 9, 2, Kind.FLOAT64), ("best_fit", 4, 0, Kind.INT16),
    ("best_fit", 30, 2, Kind.DECIMAL), ("best_fit_eager_double", 30, 2, Kind.FLOAT64),
])
def test_numeric_mapping(mapping: str, precision: int, scale: int, kind: Kind) -> None:
    assert effective_kind(Column("n", Kind.NUMERIC, True, precision, scale), mapping) is kind


@pytest.mark.parametrize(("name", "cls"), [
    ("io.confluent.connect.jdbc.JdbcSourceConnector", JdbcSourceConnector),
    ("io.confluent.connect.jdbc.JdbcSinkConnector", JdbcSinkConnector),
    ("JdbcSourceConnector", JdbcSourceConnector), ("JdbcSink", JdbcSinkConnector),
])
def test_confluent_class_names_resolve(name: str, cls: type) -> None:
    assert Plugins().find(PluginKind.CONNECTOR, name) is cls
