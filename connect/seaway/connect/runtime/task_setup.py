"""What a worker builds for every task before its thread starts: converters, SMTs, error handling.

Kept apart from the task loops so the source and sink workers share the wiring, and the
worker (which knows configs and plugins) stays the only place that instantiates plugins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seaway.connect.api import Converter, HeaderConverter
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.errors import RetryWithToleranceOperator
from seaway.connect.runtime.pipeline.chain import TransformationChain

__all__ = ["TaskSetup"]


@dataclass(slots=True)
class TaskSetup:
    """Per-task plugin instances and settings (all owned by the task thread once started)."""

    task_config: dict[str, str]
    connector_config: ConnectorConfig
    key_converter: Converter
    value_converter: Converter
    header_converter: HeaderConverter
    chain: TransformationChain[Any]
    operator: RetryWithToleranceOperator
    offset_flush_interval_ms: int
    offset_flush_timeout_ms: int
    topic_tracking: bool

    def close(self) -> None:
        """Close the plugin instances; errors are the caller's to log."""
        self.chain.close()
        self.operator.close()
        for converter in (self.key_converter, self.value_converter, self.header_converter):
            converter.close()
