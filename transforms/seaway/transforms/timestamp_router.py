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
from seaway.transforms.fusion import FusionContext

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
            routed = self._route(record.topic, timestamp)
        except ValueError as e:
            raise DataError(str(e)) from None
        return record.new_record(topic=routed)

    def _route(self, topic: str, timestamp: int) -> str:
        """The routed topic; :class:`ValueError` for a timestamp out of the formatter's range."""
        formatted = self._format.format(timestamp)
        last = self._last
        if last is not None and last[0] == topic and last[1] == formatted:
            return last[2]
        routed = self._topic_format.replace("${topic}", topic).replace("${timestamp}", formatted)
        self._last = (topic, formatted, routed)
        return routed

    def fusion_sides(self) -> tuple[str, ...]:
        return ()  # reads the topic and the timestamp only

    def fuse(self, ctx: FusionContext) -> bool:
        """This SMT's step in a fused run (see :mod:`seaway.transforms.fusion`): ``apply`` as code."""
        if not ctx.has_timestamp():
            return False  # the stage raises its "Timestamp missing" error
        # the routed topic of the last (topic, timestamp bucket): JavaDateFormat reuses its text
        # within a bucket, so the route only changes with the bucket (a day for yyyyMMdd) or topic
        last = ctx.const([None, None, None])  # bucket, topic, routed topic
        bucket = ctx.let(f"ts // {ctx.const(self._format.resolution)}")
        routed = ctx.let(f"{last}[2] if {bucket} == {last}[0] and {ctx.topic} == {last}[1] else None")
        ctx.emit(f"if {routed} is None: {routed} = {last}[2] = {ctx.const(self._route)}({ctx.topic}, ts); "
                       f"{last}[0] = {bucket}; {last}[1] = {ctx.topic}")
        ctx.set_topic(routed)
        return True
