"""The seaway source's options and offset arithmetic, without Spark or a broker."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import IntegerType, LongType, MapType, StringType, StructField, StructType, TimestampType
from seaway.connectors.spark_source.avro import avro_to_spark, parse_avro
from seaway.connectors.spark_source.errors import OptionError
from seaway.connectors.spark_source.options import (
    EARLIEST,
    LATEST,
    Assign,
    GlobalTimestamp,
    PartitionOffsets,
    PartitionTimestamps,
    Subscribe,
    SubscribePattern,
    parse_read_options,
    parse_write_options,
)
from seaway.connectors.spark_source.ranges import OffsetRange, rate_limit, split_ranges
from seaway.connectors.spark_source.source import SeawayDataSource
from seaway.connectors.spark_source.values import declared_schema, split_ddl

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}


def read(streaming: bool | None = False, **options: str) -> Any:
    return parse(options, streaming)


def parse(options: dict[str, str], streaming: bool | None = False) -> Any:
    return parse_read_options(CaseInsensitiveDict({**BASE, **options}), streaming=streaming)


def test_spark_names_case_insensitive_and_defaults() -> None:
    opts = parse_read_options(CaseInsensitiveDict({"KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubscribePattern": "a.*",
                                                   "MINPARTITIONS": "4", "includeHeaders": "TRUE"}), streaming=False)
    assert opts.strategy == SubscribePattern("a.*")
    assert opts.kafka == {"bootstrap.servers": "h:1", "isolation.level": "read_committed"}
    assert (opts.starting, opts.ending, opts.min_partitions, opts.include_headers) == (EARLIEST, LATEST, 4, True)
    assert opts.fail_on_data_loss and opts.poll_timeout_ms == 120_000 and opts.read_committed
    assert read(streaming=True).starting == LATEST  # readStream starts at the latest offsets, as Spark
    assert parse({"kafka.isolation.level": "READ_UNCOMMITTED"}).read_committed is False


@pytest.mark.parametrize(("options", "message"), [
    ({"subscribePatern": "x"}, "Option 'subscribepatern' is not supported by the seaway source"),
    ({"valueformat": "xml"}, "Option 'valueFormat' must be avro, json or string, got 'xml'"),
    ({"assign": '{"t":[0]}'}, "Only one of the options 'subscribe', 'subscribePattern', 'assign'"),
    ({"subscribe": " , "}, "No topics to subscribe to"),
    ({"kafka.auto.offset.reset": "earliest"}, "Kafka option 'auto.offset.reset' is not supported"),
    ({"kafka.enable.auto.commit": "true"}, "Kafka option 'enable.auto.commit' is not supported"),
    ({"kafka.bootstrap.servers": " "}, "Option 'kafka.bootstrap.servers' must be specified"),
    ({"kafka.isolation.level": "dirty"}, "'kafka.isolation.level' must be read_committed or read_uncommitted"),
    ({"failOnDataLoss": "yes"}, "Option 'failOnDataLoss' must be true or false, got 'yes'"),
    ({"minPartitions": "0"}, "Option 'minPartitions' must be positive, got 0"),
    ({"maxOffsetsPerTrigger": "ten"}, "Option 'maxOffsetsPerTrigger' must be an integer, got 'ten'"),
    ({"maxOffsetsPerTrigger": "10", "minOffsetsPerTrigger": "20"}, "minOffsetsPerTrigger (20) is higher"),
    ({"maxTriggerDelay": "soon"}, "Option 'maxTriggerDelay' must be a duration"),
    ({"startingOffsets": "latest"}, "Option 'startingOffsets' can't be latest for batch queries"),
    ({"endingOffsets": "earliest"}, "Option 'endingOffsets' can't be earliest for batch queries"),
    ({"startingOffsets": '{"t":{"0":"x"}}'}, "Option 'startingOffsets': t-0 must be an integer"),
    ({"startingOffsets": "{bad"}, "Option 'startingOffsets' is not valid JSON"),
    ({"startingOffsets": '{"t":{"0":-3}}'}, "t-0 has offset -3"),
    ({"startingOffsets": '{"t":{"0":5}}', "endingOffsets": '{"t":{"0":4}}'}, "t-0 (5) is after 'endingOffsets' (4)"),
    ({"startingOffsets": '{"t":{"0":1}}', "endingOffsets": '{"t":{"1":4}}'}, "name different partitions: t-0, t-1"),
    ({"startingTimestamp": "noon"}, "Option 'startingTimestamp': expected a single long value"),
    ({"startingOffsetsByTimestampStrategy": "first"}, "must be error or latest, got 'first'"),
    ({"subscribePattern": "(", "subscribe": "", "x": ""}, "Option 'x' is not supported"),
])
def test_bad_read_options_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError) as raised:
        parse(options)
    assert message in str(raised.value)


def test_streaming_refuses_ending_options() -> None:
    with pytest.raises(OptionError, match="Option 'endingOffsets' is not valid in streaming queries"):
        read(streaming=True, endingOffsets="latest")
    # schema() does not know whether it is a read or a readStream: neither rule applies yet
    assert read(streaming=None, endingOffsets="latest", startingOffsets="latest").ending == LATEST


def test_offset_forms_and_precedence() -> None:
    assert read(startingOffsets='{"t":{"0":23,"1":-2}}').starting == PartitionOffsets({("t", 0): 23, ("t", 1): -2})
    by_ts = read(startingOffsetsByTimestamp='{"t":{"0":1000}}', startingOffsets="earliest")
    assert by_ts.starting == PartitionTimestamps({("t", 0): 1000})
    # Spark's precedence: the global timestamp wins over per-partition timestamps over offsets
    assert read(startingTimestamp="5", startingOffsetsByTimestamp='{"t":{"0":1}}').starting == GlobalTimestamp(5)
    assert read(endingTimestamp="9").ending == GlobalTimestamp(9)
    assert read(subscribe="a, b,a").strategy == Subscribe(("a", "b"))
    assert read(maxTriggerDelay="2m").max_trigger_delay_ms == 120_000


def read_without(key: str, **options: str) -> Any:
    return parse_read_options(CaseInsensitiveDict({k: v for k, v in {**BASE, **options}.items() if k != key}),
                              streaming=False)


def test_assign_form() -> None:
    assert read_without("subscribe", assign='{"a":[0,1],"b":[2]}').strategy == Assign((("a", 0), ("a", 1), ("b", 2)))
    with pytest.raises(OptionError, match="No topicpartitions to assign"):
        read_without("subscribe", assign="a:0")
    with pytest.raises(OptionError, match="topic 'a' must map to a list of partition numbers"):
        read_without("subscribe", assign='{"a":{"0":1}}')


def test_write_options() -> None:
    opts = parse_write_options(CaseInsensitiveDict({"kafka.bootstrap.servers": "h:1", "Topic": " out ",
                                                    "checkpointLocation": "/tmp/x", "kafka.linger.ms": "7"}))
    assert (opts.topic, opts.kafka) == ("out", {"bootstrap.servers": "h:1", "linger.ms": "7"})
    with pytest.raises(OptionError, match="Option 'subscribe' is not supported by the seaway sink"):
        parse_write_options(CaseInsensitiveDict({"kafka.bootstrap.servers": "h:1", "subscribe": "t"}))
    with pytest.raises(OptionError, match=r"Kafka option 'value\.serializer' is not supported"):
        parse_write_options(CaseInsensitiveDict({"kafka.bootstrap.servers": "h:1", "kafka.value.serializer": "x"}))


def ranges(*sizes: int) -> list[OffsetRange]:
    return [OffsetRange("t", p, 100, 100 + size) for p, size in enumerate(sizes)]


def test_split_ranges_follows_sparks_calculator() -> None:
    # enough partitions already: one task per non-empty range
    assert split_ranges(ranges(10, 0, 5), 2) == [OffsetRange("t", 0, 100, 110), OffsetRange("t", 2, 100, 105)]
    # one big partition, minPartitions 4: four nearly equal consecutive pieces
    assert [(r.start, r.end) for r in split_ranges(ranges(10), 4)] == [(100, 102), (102, 104), (104, 107),
                                                                         (107, 110)]
    # KafkaOffsetRangeCalculatorSuite: sizes 1 and 10000 with minPartitions 3: the small one stays whole
    pieces = split_ranges(ranges(1, 10000), 3)
    assert [(r.partition, r.size) for r in pieces] == [(0, 1), (1, 5000), (1, 5000)]
    # maxRecordsPerPartition cuts what is still longer
    assert [r.size for r in split_ranges(ranges(10), None, 4)] == [3, 3, 4]
    assert split_ranges(ranges(0, 0), 4) == []


def test_rate_limit_shares_by_waiting_size() -> None:
    start = {("t", 0): 0, ("t", 1): 0, ("t", 2): 50}
    latest = {("t", 0): 100, ("t", 1): 1, ("t", 2): 50}
    # 10 records: 100/101 of them for partition 0, the small partition is not starved (ceil below 1)
    assert rate_limit(10, start, latest) == {("t", 0): 9, ("t", 1): 1, ("t", 2): 50}
    assert rate_limit(1000, start, latest) == latest


def test_ddl_split_finds_top_level_names() -> None:
    assert split_ddl("id BIGINT, `a, b` STRUCT<x: INT, y: MAP<STRING, ARRAY<INT>>>, c DECIMAL(10, 2) COMMENT 'a,b'") \
        == [("id", "BIGINT"), ("a, b", "STRUCT<x: INT, y: MAP<STRING, ARRAY<INT>>>"),
            ("c", "DECIMAL(10, 2) COMMENT 'a,b'")]
    with pytest.raises(OptionError, match="'id' is not 'name TYPE'"):
        split_ddl("id, name STRING")


def test_json_columns_after_kafka_columns_and_clashes() -> None:
    ddl = declared_schema(read(valueFormat="json", valueSchema="id BIGINT, name STRING"))
    assert isinstance(ddl, str) and ddl.endswith(", `id` BIGINT, `name` STRING")
    assert ddl.startswith("`key` binary, `value` binary, `topic` string, `partition` int, `offset` bigint, "
                          "`timestamp` timestamp, `timestampType` int")
    with pytest.raises(OptionError, match=r"field 'timestamp' would be the column 'timestamp'.*valueColumnPrefix"):
        declared_schema(read(valueFormat="json", valueSchema="timestamp BIGINT"))
    prefixed = declared_schema(read(valueFormat="json", valueSchema="timestamp BIGINT", valueColumnPrefix="v_"))
    assert isinstance(prefixed, str) and prefixed.endswith(", `v_timestamp` BIGINT")
    with pytest.raises(OptionError, match="valueFormat=json needs the option 'valueSchema'"):
        declared_schema(read(valueFormat="json"))
    with pytest.raises(OptionError, match="Option 'valueSchema' needs the option 'valueFormat'"):
        declared_schema(read(valueSchema="a INT"))
    string = declared_schema(read(valueFormat="string", includeHeaders="true"))
    assert isinstance(string, StructType) and string.fieldNames()[-2:] == ["headers", "valueData"]


def test_avro_types_as_sparks_from_avro() -> None:
    schema = parse_avro(json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"]},
        {"name": "n", "type": ["int", "long"]},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "attrs", "type": {"type": "map", "values": "int"}},
        {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}},
    ]}), "test")
    dtype, nullable = avro_to_spark(schema, "")
    assert not nullable
    assert dtype == StructType([
        StructField("id", LongType(), False), StructField("name", StringType(), True),
        StructField("n", LongType(), False), StructField("at", TimestampType(), False),
        StructField("attrs", MapType(StringType(), IntegerType(), False), False),
        StructField("kind", StringType(), False)])
    with pytest.raises(OptionError, match="field 'u' is a union of \\['int', 'string'\\]"):
        avro_to_spark(parse_avro(json.dumps({"type": "record", "name": "R", "fields": [
            {"name": "u", "type": ["int", "string"]}]}), "test"), "")
    with pytest.raises(OptionError, match="Option 'valueSchema' is not a valid Avro schema"):
        parse_avro('{"type": "record"}', "Option 'valueSchema'")


def test_data_source_name_and_writer_modes() -> None:
    assert SeawayDataSource.name() == "seaway"
    source = SeawayDataSource(CaseInsensitiveDict({"kafka.bootstrap.servers": "h:1", "topic": "t"}))
    schema = StructType([StructField("value", StringType())])
    with pytest.raises(OptionError, match="Save mode Overwrite is not allowed"):
        source.writer(schema, True)
    with pytest.raises(OptionError, match="Required attribute 'value' not found"):
        source.writer(StructType([StructField("key", StringType())]), False)
    with pytest.raises(OptionError, match="key attribute type must be a string or binary, got int"):
        source.writer(StructType([StructField("key", IntegerType()), *schema.fields]), False)
    no_topic = SeawayDataSource(CaseInsensitiveDict({"kafka.bootstrap.servers": "h:1"}))
    with pytest.raises(OptionError, match="topic option required when no 'topic' attribute is present"):
        no_topic.writer(schema, False)


def test_java_security_names_become_librdkafkas(tmp_path: Any) -> None:
    jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
            'password="s3cret";')
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    opts = parse({"kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "SCRAM-SHA-512",
                   "kafka.sasl.jaas.config": jaas, "kafka.ssl.truststore.type": "PEM",
                   "kafka.ssl.truststore.location": str(ca), "kafka.ssl.endpoint.identification.algorithm": "",
                   "kafka.ssl.enabled.protocols": "TLSv1.2,TLSv1.3"})
    assert opts.kafka == {"bootstrap.servers": "127.0.0.1:9", "security.protocol": "SASL_SSL",
                          "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "s3cret",
                          "ssl.ca.location": str(ca), "ssl.endpoint.identification.algorithm": "none",
                          "isolation.level": "read_committed"}
    with pytest.raises(OptionError, match=r"login module com\.sun\.security\.auth\.module\.Krb5LoginModule is not "
                                          r"supported"):
        parse({"kafka.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"})
    jks = tmp_path / "keystore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 16)
    with pytest.raises(OptionError, match=r"keystore\.location=.* is a Java KeyStore \(JKS\) file, which Seaway cannot "
                                          r"read; convert it with `keytool -importkeystore"):
        parse({"kafka.ssl.keystore.location": str(jks), "kafka.ssl.keystore.type": "JKS"})
