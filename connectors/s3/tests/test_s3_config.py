"""Config: Confluent's names and defaults, every bad value a 400 naming its key, the class aliases."""

from __future__ import annotations

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.runtime.plugins import PluginKind, Plugins
from seaway.connectors.s3 import S3SinkConfig, S3SinkConnector, make_client, validate_config

BASE = {"s3.bucket.name": "b", "flush.size": "100", "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "topics": "t"}


def errors(props: dict[str, str]) -> dict[str, list[str]]:
    return {v.name: v.errors for v in validate_config(props).config_values if v.errors}


def test_confluent_defaults() -> None:
    c = S3SinkConfig.from_props(BASE)
    assert (c.region, c.store_url, c.topics_dir, c.part_size, c.format, c.partitioner, c.timestamp_extractor,
            c.schema_compatibility, c.ignore_null_values, c.path_style, c.part_retries, c.zero_pad_width,
            c.ssea, c.acl_canned, c.avro_codec, c.parquet_codec, c.extension) == \
        ("us-west-2", "", "topics", 26_214_400, "json", "default", "wallclock", "NONE", False, True, 3, 10,
         "", None, "null", "snappy", ".json")


@pytest.mark.parametrize(("props", "field"), [
    ({"s3.bucket.name": None}, "s3.bucket.name"),
    ({"flush.size": None}, "flush.size"),
    ({"format.class": None}, "format.class"),
    ({"format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"}, "format.class"),
    ({"format.class": "csv"}, "format.class"),
    ({"s3.region": "Mars"}, "s3.region"),
    ({"store.url": "ftp://x"}, "store.url"),
    ({"s3.part.size": str(5 * 1024 * 1024 - 1)}, "s3.part.size"),
    ({"parquet.codec": "lzo"}, "parquet.codec"),
    ({"parquet.codec": "lz4"}, "parquet.codec"),
    ({"avro.codec": "xz"}, "avro.codec"),
    ({"s3.compression.type": "zstd"}, "s3.compression.type"),
    ({"s3.ssea.name": "DES"}, "s3.ssea.name"),
    ({"s3.sse.kms.key.id": "k"}, "s3.sse.kms.key.id"),
    ({"s3.acl.canned": "everyone"}, "s3.acl.canned"),
    ({"behavior.on.null.values": "drop"}, "behavior.on.null.values"),
    ({"behavior.on.null.values": "write"}, "behavior.on.null.values"),
    ({"aws.access.key.id": "AKIA"}, "aws.secret.access.key"),
    ({"aws.secret.access.key": "s"}, "aws.access.key.id"),
    ({"topics.dir": "/abs"}, "topics.dir"),
    ({"logs.dir": "topics"}, "logs.dir"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner"}, "partition.field.name"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en"},
     "timezone"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.DailyPartitioner", "timezone": "UTC"},
     "locale"),
    ({"partitioner.class": "time", "timezone": "UTC", "locale": "en", "partition.duration.ms": "1000"},
     "path.format"),
    ({"rotate.schedule.interval.ms": "60000"}, "timezone"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"timestamp.extractor": "Header"}, "timestamp.extractor"),
])
def test_bad_values_name_the_field(props: dict[str, str | None], field: str) -> None:
    merged = {k: v for k, v in {**BASE, **props}.items() if v is not None}
    assert field in errors(merged), errors(merged)
    with pytest.raises(ConfigError) as info:
        S3SinkConfig.from_props(merged)
    assert info.value.name == field


def test_aliases_and_extensions() -> None:
    c = S3SinkConfig.from_props({**BASE, "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
                                 "parquet.codec": "zstd", "partitioner.class":
                                 "io.confluent.connect.storage.partitioner.HourlyPartitioner",
                                 "timezone": "Europe/Oslo", "locale": "en"})
    assert (c.format, c.extension, c.partitioner, c.path_format, c.partition_duration_ms) == \
        ("parquet", ".zstd.parquet", "time", "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000)
    assert S3SinkConfig.from_props({**BASE, "format.class": "AvroFormat"}).extension == ".avro"
    assert S3SinkConfig.from_props({**BASE, "s3.compression.type": "gzip"}).extension == ".json.gz"
    assert S3SinkConfig.from_props({**BASE, "format.class": "parquet", "parquet.codec": "none"}).extension == \
        ".parquet"


def test_confluent_class_name_resolves_to_the_installed_plugin() -> None:
    plugins = Plugins()
    for name in ("io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector", "S3Sink"):
        assert plugins.find(PluginKind.CONNECTOR, name) is S3SinkConnector
    result = S3SinkConnector().validate({**BASE, "s3.part.size": "1"})
    assert [v.name for v in result.config_values if v.errors] == ["s3.part.size"]


def test_credentials_explicit_or_default_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = make_client(S3SinkConfig.from_props({**BASE, "aws.access.key.id": "AKIAEXAMPLE",
                                                    "aws.secret.access.key": "secret-from-config"}))
    creds = explicit._request_signer._credentials
    assert (creds.access_key, creds.secret_key) == ("AKIAEXAMPLE", "secret-from-config")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFROMENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    chained = make_client(S3SinkConfig.from_props(BASE))._request_signer._credentials
    assert (chained.access_key, chained.method) == ("AKIAFROMENV", "env")
