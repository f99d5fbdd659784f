"""The errors the ``seaway`` data source raises, each naming its cause.

::

    SeawayError
    └── SparkSourceError
        ├── OptionError     a bad, missing or unsupported option (names the option)
        ├── DataLossError   offsets Spark asked for are gone (retention, deleted topics)
        ├── ReadTimeout     no progress on a partition for kafkaConsumer.pollTimeoutMs
        └── ValueDecodeError  a value that does not decode as valueFormat says (names where)

Spark shows a Python exception raised in a data source as ``PythonException`` with this
message inside, so the messages say everything a user needs without the traceback.
"""

from __future__ import annotations

from seaway.errors import SeawayError

__all__ = ["DataLossError", "OptionError", "ReadTimeout", "SparkSourceError", "ValueDecodeError"]


class SparkSourceError(SeawayError):
    """Root of the data source's errors."""


class OptionError(SparkSourceError, ValueError):
    """An option the source cannot use: unknown, malformed, missing or contradicting another."""


class DataLossError(SparkSourceError):
    """Records the query should read are no longer in Kafka (``failOnDataLoss=true``)."""


class ReadTimeout(SparkSourceError, TimeoutError):
    """A partition made no progress within ``kafkaConsumer.pollTimeoutMs``."""

    retriable = True


class ValueDecodeError(SparkSourceError):
    """A record value that ``valueFormat`` cannot decode (the message names topic, partition, offset)."""
