"""Config validation: Kafka-style names, errors attached to the key they concern."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.converters import JsonConverter
from seaway.connectors.spark_sink import SparkParquetSinkConnector, SparkSinkConfig, validate_config
from seaway.properties import load_properties

BASE = {"lake.path": "file:///tmp/lake", "topics": "t"}
README = Path(__file__).resolve().parents[3] / "connectors" / "spark-sink" / "README.md"


def errors(props: dict[str, str]) -> dict[str, list[str]]:
    return {v.name: v.errors for v in validate_config(props).config_values if v.errors}


def test_defaults() -> None:
    c = SparkSinkConfig.from_props(BASE)
    assert (c.lake_path, c.flush_size, c.partitioner, c.parquet_codec, c.schema_compatibility, c.spark_master,
            c.include_kafka_metadata, c.fault_exit_after_rename, c.parquet_writer, c.retry_backoff_ms) == \
        ("file:///tmp/lake", 10000, "default", "snappy", "NONE", "local[*]", False, False, "spark", 5000)


@pytest.mark.parametrize(("props", "field"), [
    ({}, "lake.path"),
    ({"lake.path": "relative/dir"}, "lake.path"),
    ({"flush.size": "0"}, "flush.size"),
    ({"parquet.codec": "lzma"}, "parquet.codec"),
    ({"partitioner.class": "nope"}, "partitioner.class"),
    ({"schema.compatibility": "SIDEWAYS"}, "schema.compatibility"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"timestamp.extractor": "Header"}, "timestamp.extractor"),
    ({"partitioner.class": "field"}, "partition.field.name"),
    ({"partitioner.class": "time", "partition.duration.ms": "1000"}, "path.format"),
    ({"partitioner.class": "time", "path.format": "'y'=YYYY"}, "partition.duration.ms"),
    ({"partitioner.class": "time", "path.format": "'y'=YYYY/'q'=Q", "partition.duration.ms": "1"}, "path.format"),
    ({"partitioner.class": "daily", "path.format": "'m'=MMM", "locale": "de_DE"}, "path.format"),
    ({"rotate.interval.ms": "0"}, "rotate.interval.ms"),
    ({"parquet.writer": "arrow"}, "parquet.writer"),
    ({"lake.path": "hdfs://nn:8020/lake", "parquet.writer": "pyarrow"}, "parquet.writer"),
    ({"retry.backoff.ms": "-1"}, "retry.backoff.ms"),
])
def test_bad_values_name_the_field(props: dict[str, str], field: str) -> None:
    merged = {**({} if "lake.path" in props or props == {} else BASE), **props}
    assert field in errors(merged), errors(merged)
    with pytest.raises(ConfigError) as info:
        SparkSinkConfig.from_props(merged)
    assert info.value.name == field


def test_connector_validate_and_aliases() -> None:
    result = SparkParquetSinkConnector().validate({**BASE, "parquet.codec": "brotli"})
    assert [v.name for v in result.config_values if v.errors] == ["parquet.codec"]
    c = SparkSinkConfig.from_props({**BASE, "partitioner.class":
                                    "io.confluent.connect.storage.partitioner.HourlyPartitioner"})
    assert (c.partitioner, c.path_format, c.partition_duration_ms) == \
        ("time", "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000)
    assert SparkSinkConfig.from_props({**BASE, "lake.path": "/data/lake/"}).lake_path == "file:///data/lake"


def test_spark_conf_passthrough() -> None:
    c = SparkSinkConfig.from_props({**BASE, "spark.master": "local[2]", "spark.conf.spark.sql.shuffle.partitions": "4",
                                    "spark.conf.sql.session.timeZone": "UTC", "parquet.codec": "ZSTD"})
    assert c.spark_master == "local[2]" and c.parquet_codec == "zstd"
    assert dict(c.spark_conf) == {"spark.sql.shuffle.partitions": "4", "spark.sql.session.timeZone": "UTC"}


@pytest.mark.parametrize(("path", "cause"), [
    ("file:///data/lake            # or hdfs://namenode:8020/lake", "no comments after a value"),
    ("hdfs://nn:8020/lake?x=1", "no query part"),
    ("s3a:///lake", "names its bucket"),
    ("file://host/lake", "names no host"),
    ("hdfs://nn:80x/lake", "not a number"),
    ("/data/../lake", "'..'"),
    ("file:lake", "must be absolute"),
])
def test_lake_path_is_validated(path: str, cause: str) -> None:
    """A value a .properties line's trailing comment made, or any other path Hadoop would misread, is refused."""
    found = errors({**BASE, "lake.path": path})
    assert list(found) == ["lake.path"] and cause in found["lake.path"][0], found
    with pytest.raises(ConfigError, match=re.escape(cause)):
        SparkSinkConfig.from_props({**BASE, "lake.path": path})


@pytest.mark.parametrize("path", ["file:///data/lake", "/data/my lake", "hdfs://nn:8020/lake", "hdfs:///lake",
                                  "s3a://bucket/lake", "file:/data/lake"])
def test_good_lake_paths(path: str) -> None:
    assert not errors({**BASE, "lake.path": path})


def test_the_readme_properties_example_is_what_it_says() -> None:
    """connectors/spark-sink/README.md's .properties, read as Java reads it, validates and means what it shows.

    Java's format has no comment after a value: ``lake.path=file:///data/lake   # or hdfs://...``
    is a folder named with the comment in it, and two other keys got 400s.
    """
    block = re.search(r"```properties\n(.*?)```", README.read_text(), re.S)
    assert block is not None, "the README's .properties example is gone"
    props = load_properties(block[1])
    assert not [k for k, v in props.items() if "#" in v], props
    assert not errors(props), errors(props)
    converter = {k.removeprefix("value.converter."): v for k, v in props.items() if k.startswith("value.converter.")}
    JsonConverter().configure(converter, False)  # schemas.enable parses as a boolean
    assert SparkSinkConfig.from_props(props).lake_path == "file:///data/lake"
