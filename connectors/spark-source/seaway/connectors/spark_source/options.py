"""The source's and the sink's options, with spark-sql-kafka's names, checked once into typed objects.

Spark hands a data source its options in a case-insensitive map (keys arrive lower-cased), so
every name here is matched case-insensitively and messages use the documented spelling.

Reading (``spark.read`` / ``spark.readStream``): exactly one of ``subscribe``,
``subscribePattern``, ``assign``; ``kafka.bootstrap.servers``; the offset options below; and
the typed-value options of :mod:`.values`. Writing: ``topic`` and ``kafka.*``. Any other
option is an :class:`~.errors.OptionError` naming it (a typo never silently does nothing).

``kafka.*`` settings go to librdkafka (confluent-kafka) with the prefix removed, Java's security
names checked and translated as for every Seaway client (:mod:`seaway.security.kafka_client`). The few that
Spark refuses are refused here with Spark's reasons; ``kafka.isolation.level`` defaults to
``read_committed`` (librdkafka's default; spark-sql-kafka's Java consumer defaults to
``read_uncommitted``, see docs/spark-source.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from seaway.connectors.spark_source.errors import OptionError
from seaway.security.kafka_client import ClientConfigError, librdkafka_config

__all__ = [
    "EARLIEST",
    "LATEST",
    "Assign",
    "GlobalTimestamp",
    "OffsetLimit",
    "PartitionOffsets",
    "PartitionTimestamps",
    "ReadOptions",
    "Subscribe",
    "SubscribePattern",
    "TopicPartition",
    "WriteOptions",
    "parse_read_options",
    "parse_write_options",
]

TopicPartition = tuple[str, int]

EARLIEST = -2
"""Kafka's (and Spark's JSON) code for the earliest offset."""
LATEST = -1
"""Kafka's (and Spark's JSON) code for the latest offset."""

_SOURCE_OPTIONS = [
    "assign", "subscribe", "subscribePattern", "startingOffsets", "endingOffsets", "startingTimestamp",
    "endingTimestamp", "startingOffsetsByTimestamp", "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy", "failOnDataLoss", "kafkaConsumer.pollTimeoutMs",
    "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "maxOffsetsPerTrigger", "minOffsetsPerTrigger",
    "maxTriggerDelay", "minPartitions", "maxRecordsPerPartition", "groupIdPrefix", "includeHeaders",
    # typed values (seaway's own)
    "valueFormat", "valueSchema", "valueSubject", "valueColumnPrefix", "schema.registry.url",
    "basic.auth.credentials.source", "basic.auth.user.info", "schema.registry.basic.auth.user.info",
]
_SINK_OPTIONS = ["topic"]
_REGISTRY_SSL_PREFIX = "schema.registry.ssl."
_CANONICAL = {name.lower(): name for name in _SOURCE_OPTIONS + _SINK_OPTIONS}
# Options Spark itself may add to the map it passes (a streaming write's checkpoint, load(path))
_SPARK_INTERNAL = {"checkpointlocation", "path", "paths", "__datasource_options"}

# Spark's own refusals (KafkaSourceProvider.validateGeneralOptions / kafkaParamsForProducer)
_REFUSED_CONSUMER = {
    "auto.offset.reset": "set the source option 'startingOffsets' to 'earliest' or 'latest' instead: the query "
                         "keeps its offsets itself (in Spark's checkpoint), never the consumer",
    "key.deserializer": "keys are read as bytes; use DataFrame operations to deserialize them",
    "value.deserializer": "values are read as bytes (or typed with the valueFormat option); use DataFrame "
                          "operations to deserialize them",
    "enable.auto.commit": "the source never commits offsets to Kafka (Spark's checkpoint holds them)",
    "interceptor.classes": "interceptors can modify records, so they are not safe for the source",
}
_REFUSED_PRODUCER = {
    "key.serializer": "keys are written as bytes (a string key as its UTF-8 bytes)",
    "value.serializer": "values are written as bytes (a string value as its UTF-8 bytes)",
}
VALUE_FORMATS = ("avro", "json", "string")
_TIME_UNITS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


@dataclass(frozen=True)
class Subscribe:
    """``subscribe``: a fixed list of topics (each must exist)."""

    topics: tuple[str, ...]


@dataclass(frozen=True)
class SubscribePattern:
    """``subscribePattern``: every non-internal topic the regex finds (``re.search``, as Spark's ``findFirstIn``)."""

    pattern: str


@dataclass(frozen=True)
class Assign:
    """``assign``: exactly these partitions (``{"topicA":[0,1],"topicB":[2,4]}``)."""

    partitions: tuple[TopicPartition, ...]


Strategy = Subscribe | SubscribePattern | Assign


@dataclass(frozen=True)
class PartitionOffsets:
    """``{"topic":{"0":23,"1":-2}}``: an offset per partition, -2 earliest, -1 latest."""

    offsets: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class PartitionTimestamps:
    """``*OffsetsByTimestamp``: a timestamp (ms) per partition."""

    timestamps: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class GlobalTimestamp:
    """``startingTimestamp`` / ``endingTimestamp``: one timestamp (ms) for every partition."""

    timestamp: int


OffsetLimit = int | PartitionOffsets | PartitionTimestamps | GlobalTimestamp
"""EARLIEST, LATEST, or one of the specific forms."""


@dataclass(frozen=True)
class ReadOptions:
    """Everything a read needs, picklable (it travels to Spark's Python workers)."""

    strategy: Strategy
    kafka: Mapping[str, str]
    """librdkafka settings from ``kafka.*`` (prefix removed), isolation level included."""
    starting: OffsetLimit
    ending: OffsetLimit
    no_match_latest: bool = False
    """``startingOffsetsByTimestampStrategy=latest``: no offset at or after the timestamp -> latest."""
    fail_on_data_loss: bool = True
    poll_timeout_ms: int = 120_000
    fetch_retries: int = 3
    fetch_retry_interval_ms: int = 1000
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60_000
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    group_id_prefix: str = "seaway-spark-source"
    include_headers: bool = False
    value: Mapping[str, str] = field(default_factory=dict)
    """The typed-value options (``valueFormat``... and the registry's), read by :mod:`.values`."""

    @property
    def read_committed(self) -> bool:
        return self.kafka.get("isolation.level", "read_committed") == "read_committed"


@dataclass(frozen=True)
class WriteOptions:
    """A write's topic (``topic`` option, else the ``topic`` column) and producer settings."""

    topic: str | None
    kafka: Mapping[str, str]


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items()}


def _name(key: str) -> str:
    return _CANONICAL.get(key, key)


def _kafka(options: Mapping[str, str], refused: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for key, value in options.items():
        if key.startswith("kafka."):
            setting = key[len("kafka."):]
            if setting in refused:
                raise OptionError(f"Kafka option '{setting}' is not supported: {refused[setting]}")
            out[setting] = value
    if not out.get("bootstrap.servers", "").strip():
        raise OptionError("Option 'kafka.bootstrap.servers' must be specified for configuring the Kafka clients")
    try:
        return {k: str(v) for k, v in librdkafka_config(out, "kafka.").items()}
    except ClientConfigError as e:
        raise OptionError(f"Option {e}") from None


def _check_known(options: Mapping[str, str], allowed: set[str], kind: str) -> None:
    for key in options:
        if key.startswith("kafka.") or key in _SPARK_INTERNAL or key in allowed:
            continue
        if kind == "source" and key.startswith(_REGISTRY_SSL_PREFIX):
            continue
        known = ", ".join(sorted(_CANONICAL[k] for k in allowed))
        raise OptionError(f"Option '{_name(key)}' is not supported by the seaway {kind} (supported: {known}, "
                          "kafka.*)")


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"Option '{_name(key)}' must be true or false, got '{raw}'")
    return value == "true"


def _int(options: Mapping[str, str], key: str, *, positive: bool = False) -> int | None:
    raw = options.get(key)
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise OptionError(f"Option '{_name(key)}' must be an integer, got '{raw}'") from None
    if positive and value <= 0:
        raise OptionError(f"Option '{_name(key)}' must be positive, got {value}")
    return value


def _duration_ms(options: Mapping[str, str], key: str, default: int) -> int:
    """Spark's time strings (``Utils.timeStringAsMs``): ``15m``, ``30s``, ``500ms``; no unit = ms."""
    raw = options.get(key)
    if raw is None:
        return default
    m = re.fullmatch(r"\s*(\d+)\s*(us|ms|s|m|min|h|d)?\s*", raw.lower())
    if m is None:
        raise OptionError(f"Option '{_name(key)}' must be a duration such as 15m, 30s or 500ms, got '{raw}'")
    return int(int(m.group(1)) * _TIME_UNITS[m.group(2) or "ms"])


def _json_object(key: str, raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise OptionError(f"Option '{_name(key)}' is not valid JSON ({e}): {raw}") from None
    if not isinstance(value, dict):
        raise OptionError(f"Option '{_name(key)}' must be a JSON object such as {{\"topic\":{{\"0\":23}}}}, got {raw}")
    return value


def _partition_numbers(key: str, raw: str) -> dict[TopicPartition, int]:
    """``{"topicA":{"0":23,"1":-1}}`` (JsonUtils.partitionOffsets / partitionTimestamps)."""
    out: dict[TopicPartition, int] = {}
    for topic, partitions in _json_object(key, raw).items():
        if not isinstance(partitions, dict):
            raise OptionError(f"Option '{_name(key)}': topic '{topic}' must map partitions to numbers, e.g. "
                              f"{{\"{topic}\":{{\"0\":23}}}}, got {json.dumps(partitions)}")
        for partition, number in partitions.items():
            try:
                p = int(partition)
            except ValueError:
                raise OptionError(f"Option '{_name(key)}': '{partition}' of topic '{topic}' is not a partition "
                                  "number") from None
            if not isinstance(number, int) or isinstance(number, bool):
                raise OptionError(f"Option '{_name(key)}': {topic}-{p} must be an integer, got {json.dumps(number)}")
            out[(topic, p)] = number
    return out


def _offset_limit(options: Mapping[str, str], timestamp_key: str, by_timestamp_key: str, offsets_key: str,
                  default: int) -> OffsetLimit:
    """Spark's precedence (``getKafkaOffsetRangeLimit``): global timestamp, per-partition timestamps, offsets."""
    if timestamp_key in options:
        stamp = options[timestamp_key].strip()
        try:
            return GlobalTimestamp(int(stamp))
        except ValueError:
            raise OptionError(f"Option '{_name(timestamp_key)}': expected a single long value (ms since the "
                              f"epoch), got {stamp}") from None
    if by_timestamp_key in options:
        timestamps = _partition_numbers(by_timestamp_key, options[by_timestamp_key])
        for tp, ts in timestamps.items():
            if ts < 0:
                raise OptionError(f"Option '{_name(by_timestamp_key)}': {tp[0]}-{tp[1]} has a negative timestamp {ts}")
        return PartitionTimestamps(timestamps)
    raw = options.get(offsets_key)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word == "earliest":
        return EARLIEST
    if word == "latest":
        return LATEST
    offsets = _partition_numbers(offsets_key, raw)
    for tp, off in offsets.items():
        if off < EARLIEST:
            raise OptionError(f"Option '{_name(offsets_key)}': {tp[0]}-{tp[1]} has offset {off}; use an offset "
                              ">= 0, -2 for earliest or -1 for latest")
    return PartitionOffsets(offsets)


def _strategy(options: Mapping[str, str]) -> Strategy:
    given = [k for k in ("subscribe", "subscribepattern", "assign") if k in options]
    if len(given) != 1:
        what = "One" if not given else "Only one"
        raise OptionError(f"{what} of the options 'subscribe', 'subscribePattern', 'assign' must be specified for "
                          "the seaway source")
    key = given[0]
    raw = options[key]
    if key == "subscribe":
        topics = tuple(dict.fromkeys(t.strip() for t in raw.split(",") if t.strip()))
        if not topics:
            raise OptionError(f"No topics to subscribe to as specified value for option 'subscribe' is '{raw}'")
        return Subscribe(topics)
    if key == "subscribepattern":
        if not raw.strip():
            raise OptionError(f"Pattern to subscribe is empty as specified value for option 'subscribePattern' "
                              f"is '{raw}'")
        try:
            re.compile(raw.strip())
        except re.error as e:
            raise OptionError(f"Option 'subscribePattern' is not a valid regular expression ({e}): {raw}") from None
        return SubscribePattern(raw.strip())
    if not raw.strip().startswith("{"):
        raise OptionError(f"No topicpartitions to assign as specified value for option 'assign' is '{raw}'")
    partitions: list[TopicPartition] = []
    for topic, numbers in _json_object("assign", raw).items():
        if not isinstance(numbers, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
            raise OptionError(f"Option 'assign': topic '{topic}' must map to a list of partition numbers, e.g. "
                              f"{{\"{topic}\":[0,1]}}")
        partitions.extend((topic, n) for n in numbers)
    if not partitions:
        raise OptionError(f"No topicpartitions to assign as specified value for option 'assign' is '{raw}'")
    return Assign(tuple(dict.fromkeys(partitions)))


def _check_specific_pair(start: OffsetLimit, end: OffsetLimit, start_key: str, end_key: str) -> None:
    """Spark's ``checkOffsetLimitValidity``: the same partitions on both sides, start <= end."""
    pairs: list[tuple[Mapping[TopicPartition, int], Mapping[TopicPartition, int]]] = []
    if isinstance(start, PartitionOffsets) and isinstance(end, PartitionOffsets):
        pairs.append((start.offsets, end.offsets))
    elif isinstance(start, PartitionTimestamps) and isinstance(end, PartitionTimestamps):
        pairs.append((start.timestamps, end.timestamps))
    for s, e in pairs:
        if set(s) != set(e):
            raise OptionError(f"Options '{start_key}' and '{end_key}' name different partitions: "
                              f"{_tps(set(s) ^ set(e))} in only one of them")
        for tp, value in s.items():
            if value >= 0 and e[tp] >= 0 and value > e[tp]:
                raise OptionError(f"Option '{start_key}' for {tp[0]}-{tp[1]} ({value}) is after '{end_key}' "
                                  f"({e[tp]})")


def _tps(tps: set[TopicPartition]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(tps))


def parse_read_options(raw: Mapping[str, str], *, streaming: bool | None) -> ReadOptions:
    """Check a read's options into :class:`ReadOptions`; :class:`OptionError` naming the option.

    ``streaming``: True for ``readStream``, False for ``read``, None when not known yet (the
    rules of one kind only are then left for later).
    """
    options = _lower(raw)
    _check_known(options, set(_CANONICAL) - {"topic"}, "source")
    strategy = _strategy(options)
    kafka = _kafka(options, _REFUSED_CONSUMER)
    isolation = kafka.get("isolation.level", "read_committed").strip().lower()
    if isolation not in ("read_committed", "read_uncommitted"):
        raise OptionError(f"Option 'kafka.isolation.level' must be read_committed or read_uncommitted, got "
                          f"'{kafka['isolation.level']}'")
    kafka["isolation.level"] = isolation
    if streaming is True:
        for key in ("endingoffsets", "endingoffsetsbytimestamp", "endingtimestamp"):
            if key in options:
                raise OptionError(f"Option '{_name(key)}' is not valid in streaming queries")
    starting = _offset_limit(options, "startingtimestamp", "startingoffsetsbytimestamp", "startingoffsets",
                             LATEST if streaming else EARLIEST)
    ending = _offset_limit(options, "endingtimestamp", "endingoffsetsbytimestamp", "endingoffsets", LATEST)
    if streaming is False:
        if starting == LATEST or (isinstance(starting, PartitionOffsets) and LATEST in starting.offsets.values()):
            raise OptionError("Option 'startingOffsets' can't be latest for batch queries")
        if ending == EARLIEST or (isinstance(ending, PartitionOffsets) and EARLIEST in ending.offsets.values()):
            raise OptionError("Option 'endingOffsets' can't be earliest for batch queries")
        _check_specific_pair(starting, ending, "startingOffsets", "endingOffsets")
        _check_specific_pair(starting, ending, "startingOffsetsByTimestamp", "endingOffsetsByTimestamp")
    strategy_raw = options.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy_raw not in ("error", "latest"):
        raise OptionError(f"Option 'startingOffsetsByTimestampStrategy' must be error or latest, got "
                          f"'{options['startingoffsetsbytimestampstrategy']}'")
    max_per_trigger = _int(options, "maxoffsetspertrigger", positive=True)
    min_per_trigger = _int(options, "minoffsetspertrigger", positive=True)
    if max_per_trigger is not None and min_per_trigger is not None and min_per_trigger > max_per_trigger:
        raise OptionError(f"The value of minOffsetsPerTrigger ({min_per_trigger}) is higher than the "
                          f"maxOffsetsPerTrigger ({max_per_trigger})")
    poll_timeout = _int(options, "kafkaconsumer.polltimeoutms", positive=True)
    retries = _int(options, "fetchoffset.numretries", positive=True)
    interval = _int(options, "fetchoffset.retryintervalms")
    if interval is not None and interval < 0:
        raise OptionError(f"Option 'fetchOffset.retryIntervalMs' must be >= 0, got {interval}")
    fmt = options.get("valueformat")
    if fmt is not None and fmt.strip().lower() not in VALUE_FORMATS:
        raise OptionError(f"Option 'valueFormat' must be {', '.join(VALUE_FORMATS[:-1])} or {VALUE_FORMATS[-1]}, got "
                          f"'{fmt}'")
    value = {k: v for k, v in options.items()
             if k in ("valueformat", "valueschema", "valuesubject", "valuecolumnprefix")
             or k in ("schema.registry.url", "basic.auth.credentials.source", "basic.auth.user.info",
                      "schema.registry.basic.auth.user.info") or k.startswith(_REGISTRY_SSL_PREFIX)}
    return ReadOptions(
        strategy=strategy, kafka=kafka, starting=starting, ending=ending,
        no_match_latest=strategy_raw == "latest",
        fail_on_data_loss=_bool(options, "failondataloss", True),
        poll_timeout_ms=poll_timeout if poll_timeout is not None else 120_000,
        fetch_retries=retries if retries is not None else 3,
        fetch_retry_interval_ms=interval if interval is not None else 1000,
        max_offsets_per_trigger=max_per_trigger, min_offsets_per_trigger=min_per_trigger,
        max_trigger_delay_ms=_duration_ms(options, "maxtriggerdelay", 15 * 60_000),
        min_partitions=_int(options, "minpartitions", positive=True),
        max_records_per_partition=_int(options, "maxrecordsperpartition", positive=True),
        group_id_prefix=options.get("groupidprefix", "seaway-spark-source").strip() or "seaway-spark-source",
        include_headers=_bool(options, "includeheaders", False),
        value=value,
    )


def parse_write_options(raw: Mapping[str, str]) -> WriteOptions:
    """Check a write's options into :class:`WriteOptions`; :class:`OptionError` naming the option."""
    options = _lower(raw)
    _check_known(options, {"topic"}, "sink")
    topic = options.get("topic")
    if topic is not None and not topic.strip():
        raise OptionError("Option 'topic' is empty: name a topic, or leave it out and give a 'topic' column")
    return WriteOptions(topic.strip() if topic is not None else None, _kafka(options, _REFUSED_PRODUCER))
