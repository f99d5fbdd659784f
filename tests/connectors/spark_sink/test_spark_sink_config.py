"""Config validation: Kafka-style names, errors attached to the key they concern."""

from __future__ import annotations

import pytest
from seaway.connect.api import ConfigError
from seaway.connectors.spark_sink import SparkParquetSinkConnector, SparkSinkConfig, validate_config

BASE = {"lake.path": "file:///tmp/lake", "topics": "t"}


def errors(props: dict[str, str]) -> dict[str, list[str]]:
    return {v.name: v.errors for v in validate_config(props).config_values if v.errors}


def test_defaults() -> None:
    c = SparkSinkConfig.from_props(BASE)
    assert (c.lake_path, c.flush_size, c.partitioner, c.parquet_codec, c.schema_compatibility, c.spark_master,
            c.include_kafka_metadata, c.fault_exit_after_rename) == \
        ("file:///tmp/lake", 10000, "default", "snappy", "NONE", "local[*]", False, False)


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
