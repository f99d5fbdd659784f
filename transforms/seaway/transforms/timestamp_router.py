"""TimestampRouter: route to a topic named from the record's topic and timestamp.

``topic.format`` (default ``${topic}-${timestamp}``) has ``${topic}`` and ``${timestamp}``
replaced; ``timestamp.format`` (default ``yyyyMMdd``) is a Java SimpleDateFormat pattern,
rendered in UTC (see :mod:`seaway.transforms._datefmt` for the letters supported). A record
without a timestamp is an error, as in Kafka. The formatted timestamp is reused while records
stay within the pattern's finest unit (a day for ``yyyyMMdd``), so routing costs a few dict
and string operations per record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigError, ConfigType, DataError, Importance, Transformation
from seaway.connect.api.transforms import R
from seaway.transforms._datefmt import JavaDateFormat, PatternError

__all__ = ["TimestampRouter"]

TOPIC_FORMAT = "topic.format"
TIMESTAMP_FORMAT = "timestamp.format"

CONFIG_DEF = (
    ConfigDef()
    .define(TOPIC_FORMAT, ConfigType.STRING, "${topic}-${timestamp}", None, Importance.HIGH,
            "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders "
            "for the topic and timestamp, respectively.")
    .define(TIMESTAMP_FORMAT, ConfigType.STRING, "yyyyMMdd", None, Importance.HIGH,
            "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."))


class TimestampRouter(Transformation[R]):
    """Update the topic from the original topic and the record timestamp (Kafka's ``TimestampRouter``)."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._topic_format: str = values[TOPIC_FORMAT]
        try:
            self._format = JavaDateFormat(values[TIMESTAMP_FORMAT])
        except PatternError as e:
            raise ConfigError.invalid(TIMESTAMP_FORMAT, values[TIMESTAMP_FORMAT], str(e)) from None
        self._last: tuple[str, str, str] | None = None  # (topic, formatted timestamp, routed topic)

    def apply(self, record: R) -> R | None:
        timestamp = record.timestamp
        if timestamp is None:
            raise DataError(f"Timestamp missing on record: {record!r}")
        try:
            formatted = self._format.format(timestamp)
        except ValueError as e:
            raise DataError(str(e)) from None
        topic = record.topic
        last = self._last
        if last is not None and last[0] == topic and last[1] == formatted:
            routed = last[2]
        else:
            routed = self._topic_format.replace("${topic}", topic).replace("${timestamp}", formatted)
            self._last = (topic, formatted, routed)
        return record.new_record(topic=routed)
