"""TimestampConverter between every type, TimestampRouter, and the SimpleDateFormat translation."""

from __future__ import annotations

import datetime
import itertools

import pytest
from seaway.connect.api import (
    ConfigError,
    ConnectRecord,
    DataError,
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Transformation,
)
from seaway.transforms import TimestampConverterKey, TimestampConverterValue, TimestampRouter
from seaway.transforms._datefmt import JavaDateFormat

from tests.transforms.transforms_helpers import configured, field_schema, kept, sink

UTC = datetime.UTC
# 2017-01-02 03:04:05.006 UTC
MILLIS = 1483326245006
TS = datetime.datetime(2017, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)
DATE = datetime.date(2017, 1, 2)
TIME = datetime.time(3, 4, 5, 6000)
FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSS"
STRING = "2017-01-02T03:04:05.006"

# every representation of the same instant: (target.type, schema, value)
REPRESENTATIONS = {
    "string": (Schema.STRING_SCHEMA, STRING),
    "unix": (Schema.INT64_SCHEMA, MILLIS),
    "Timestamp": (Timestamp.SCHEMA, TS),
}


def converter(target: str, cls: type[Transformation[ConnectRecord]] = TimestampConverterValue, /,
              **configs: str) -> Transformation[ConnectRecord]:
    return configured(cls, **{"target.type": target, "format": FORMAT, **configs})


@pytest.mark.parametrize(("source", "target"), list(itertools.product(REPRESENTATIONS, REPRESENTATIONS)))
def test_full_instant_between_types(source: str, target: str) -> None:
    schema, value = REPRESENTATIONS[source]
    expected_schema, expected = REPRESENTATIONS[target]
    with_schema = kept(converter(target).apply(sink(value, schema)))
    assert (with_schema.value_schema, with_schema.value) == (expected_schema, expected)
    schemaless = kept(converter(target).apply(sink(value)))
    assert (schemaless.value_schema, schemaless.value) == (None, expected)


@pytest.mark.parametrize(("source_schema", "value"), [(Schema.STRING_SCHEMA, STRING), (Schema.INT64_SCHEMA, MILLIS),
                                                      (Timestamp.SCHEMA, TS)])
def test_to_date_and_time(source_schema: Schema, value: object) -> None:
    out = kept(converter("Date").apply(sink(value, source_schema)))
    assert (out.value_schema, out.value) == (Date.SCHEMA, DATE)
    out = kept(converter("Time").apply(sink(value, source_schema)))
    assert (out.value_schema, out.value) == (Time.SCHEMA, TIME)


def test_from_date_and_time() -> None:
    midnight = datetime.datetime(2017, 1, 2, tzinfo=UTC)
    assert kept(converter("Timestamp").apply(sink(DATE, Date.SCHEMA))).value == midnight
    assert kept(converter("unix").apply(sink(DATE, Date.SCHEMA))).value == 1483315200000
    assert kept(converter("string").apply(sink(DATE, Date.SCHEMA))).value == "2017-01-02T00:00:00.000"
    assert kept(converter("unix").apply(sink(TIME, Time.SCHEMA))).value == 11045006
    assert kept(converter("string").apply(sink(TIME, Time.SCHEMA))).value == "1970-01-01T03:04:05.006"
    assert kept(converter("Date").apply(sink(DATE, Date.SCHEMA))).value == DATE
    assert kept(converter("Time").apply(sink(TIME, Time.SCHEMA))).value == TIME
    assert kept(converter("Date").apply(sink(TIME))).value == datetime.date(1970, 1, 1)  # schemaless time


@pytest.mark.parametrize(("precision", "unix"), [("seconds", 1483326245), ("milliseconds", MILLIS),
                                                 ("microseconds", MILLIS * 1000),
                                                 ("nanoseconds", MILLIS * 1_000_000)])
def test_unix_precision(precision: str, unix: int) -> None:
    t = converter("unix", **{"unix.precision": precision})
    expected = unix if precision != "seconds" else 1483326245
    assert kept(t.apply(sink(TS, Timestamp.SCHEMA))).value == expected
    back = kept(converter("Timestamp", **{"unix.precision": precision}).apply(sink(unix, Schema.INT64_SCHEMA))).value
    assert back == (TS if precision != "seconds" else TS.replace(microsecond=0))


def test_micro_and_nano_inputs_truncate_toward_zero() -> None:
    t = converter("unix", **{"unix.precision": "microseconds"})
    assert kept(converter("Timestamp", **{"unix.precision": "microseconds"}).apply(sink(-1500))).value == \
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
    assert kept(t.apply(sink(datetime.datetime(1970, 1, 1, tzinfo=UTC)))).value == 0


def test_field_with_schema_and_optional() -> None:
    schema = (SchemaBuilder.struct().name("r").field("ts", SchemaBuilder.int64().optional().build())
              .field("other", Schema.STRING_SCHEMA).build())
    t = converter("Timestamp", field="ts")
    out = kept(t.apply(sink(Struct(schema).put("ts", MILLIS).put("other", "o"), schema)))
    assert out.value_schema is not None and out.value_schema.name == "r"
    ts_schema = field_schema(out.value_schema, "ts")
    assert ts_schema.name == Timestamp.LOGICAL_NAME and ts_schema.optional
    assert out.value.get("ts") == TS and out.value.get("other") == "o"
    out = kept(t.apply(sink(Struct(schema).put("other", "o"), schema)))
    assert out.value.get("ts") is None
    assert kept(t.apply(sink(None, schema))).value is None
    optional_whole = kept(converter("unix").apply(sink(None, Timestamp.builder().optional().build())))
    assert (optional_whole.value_schema, optional_whole.value) == (Schema.OPTIONAL_INT64_SCHEMA, None)


def test_field_schemaless_and_key() -> None:
    t = converter("unix", TimestampConverterKey, field="ts")
    out = kept(t.apply(sink(key={"ts": TS, "x": 1})))
    assert out.key == {"ts": MILLIS, "x": 1}
    assert kept(t.apply(sink(key={"x": 1}))).key == {"x": 1, "ts": None}
    assert kept(t.apply(sink(key=None))).key is None


def test_conversion_errors() -> None:
    with pytest.raises(DataError, match=r"Could not parse timestamp: value \(nope\) does not match pattern"):
        converter("unix").apply(sink("nope"))
    with pytest.raises(DataError, match="TimestampConverter does not support float objects as timestamps"):
        converter("unix").apply(sink(1.5))
    with pytest.raises(Exception, match="does not correspond to a known timestamp type format"):
        converter("unix").apply(sink(1, Schema.INT32_SCHEMA))
    with pytest.raises(DataError, match="Expected Unix timestamp to be a Long"):
        converter("string").apply(sink("x", Schema.INT64_SCHEMA))


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match="requires format option") as e:
        configured(TimestampConverterValue, **{"target.type": "string"})
    assert e.value.name == "format"
    with pytest.raises(ConfigError, match="SimpleDateFormat-compatible pattern") as e:
        configured(TimestampConverterValue, **{"target.type": "string", "format": "yyyy-qq"})
    assert e.value.name == "format"
    with pytest.raises(ConfigError, match=r"target\.type") as e:
        configured(TimestampConverterValue, **{"target.type": "date"})
    assert e.value.name == "target.type"
    with pytest.raises(ConfigError, match=r"unix\.precision") as e:
        configured(TimestampConverterValue, **{"target.type": "unix", "unix.precision": "minutes"})
    assert e.value.name == "unix.precision"


# -- SimpleDateFormat ---------------------------------------------------------------------------
@pytest.mark.parametrize(("pattern", "text"), [
    ("yyyyMMdd", "20170102"), ("yyyy-MM-dd HH:mm:ss", "2017-01-02 03:04:05"), ("yy/M/d", "17/1/2"),
    ("EEE, d MMM yyyy HH:mm:ss Z", "Mon, 2 Jan 2017 03:04:05 +0000"), ("MMMM", "January"),
    ("hh:mm a", "03:04 AM"), ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2017-01-02T03:04:05.006Z"),
    ("D 'day' '''q''' ''", "2 day 'q' '"), ("k:K", "3:3"),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", "2017.01.02 AD at 03:04:05 UTC"),
])
def test_date_format(pattern: str, text: str) -> None:
    assert JavaDateFormat(pattern).format(MILLIS) == text


def test_date_parse() -> None:
    assert JavaDateFormat(FORMAT).parse(STRING) == MILLIS
    assert JavaDateFormat("yyyyMMddHHmmss").parse("20170102030405") == MILLIS - 6
    assert JavaDateFormat("yyyy-MM-dd HH:mm:ssXXX").parse("2017-01-02 05:04:05+02:00") == MILLIS - 6
    assert JavaDateFormat("dd MMM yyyy hh a").parse("02 jan 2017 03 PM trailing") == \
        1483326245006 - 6 - (4 * 60 + 5) * 1000 + 12 * 3_600_000
    with pytest.raises(ValueError, match="Unparseable"):
        JavaDateFormat("yyyy-MM-dd").parse("2017/01/02")
    with pytest.raises(ValueError):
        JavaDateFormat("yyyy-MM-dd").parse("2017-13-02")


# -- TimestampRouter ----------------------------------------------------------------------------
def test_timestamp_router_defaults() -> None:
    out = kept(configured(TimestampRouter).apply(sink({"a": 1}, topic="orders", timestamp=MILLIS)))
    assert out.topic == "orders-20170102" and out.value == {"a": 1} and out.kafka_partition == 0


def test_timestamp_router_custom_format_and_cache_boundaries() -> None:
    t = configured(TimestampRouter, **{"topic.format": "${timestamp}_${topic}_x", "timestamp.format": "yyyy-MM-dd-HH"})
    assert kept(t.apply(sink(topic="t", timestamp=MILLIS))).topic == "2017-01-02-03_t_x"
    assert kept(t.apply(sink(topic="t", timestamp=MILLIS + 1000))).topic == "2017-01-02-03_t_x"
    assert kept(t.apply(sink(topic="t", timestamp=MILLIS + 3_600_000))).topic == "2017-01-02-04_t_x"
    assert kept(t.apply(sink(topic="u", timestamp=MILLIS + 3_600_000))).topic == "2017-01-02-04_u_x"
    assert kept(t.apply(sink(topic="t", timestamp=-1))).topic == "1969-12-31-23_t_x"


def test_timestamp_router_errors() -> None:
    with pytest.raises(DataError, match="Timestamp missing on record"):
        configured(TimestampRouter).apply(sink(timestamp=None))
    with pytest.raises(ConfigError, match="Illegal pattern character 'q'") as e:
        configured(TimestampRouter, **{"timestamp.format": "yyyyqq"})
    assert e.value.name == "timestamp.format"
