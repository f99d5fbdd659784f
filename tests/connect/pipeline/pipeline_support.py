"""What the pipeline's differential tests share: generated task setups, chains and error reports.

A *setup spec* is plain data (converter classes and settings, SMT chain, tolerance); every run
of a strategy gets a fresh :class:`TaskSetup` built from it by the runtime's own code
(``ConnectorConfig.parse``, ``build_chain``, the converters' ``configure``), so the
strategies share no caches, counters or records, and the error reports of each run are its own.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from hypothesis import Phase
from hypothesis import strategies as st
from seaway.connect.api import CONVERTER_TYPE_CONFIG, Schema, SchemaBuilder, Struct
from seaway.connect.converters import (
    ByteArrayConverter,
    JsonConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.errors import ErrorReporter, ProcessingContext, RetryWithToleranceOperator
from seaway.connect.runtime.pipeline.chain import build_chain
from seaway.connect.runtime.plugins import Plugins
from seaway.connect.runtime.task_setup import TaskSetup

PLUGINS = Plugins()

PHASES = tuple(Phase) if os.environ.get("SEAWAY_DIFF_SHRINK") else (Phase.explicit, Phase.reuse, Phase.generate)
"""Hypothesis phases of the differential tests. Shrinking a failure reruns every strategy per step
and takes minutes (the test's timeout), so a CI failure prints the example as generated (at most
eight records); ``SEAWAY_DIFF_SHRINK=1`` shrinks it to a minimal one when debugging."""

REACHED: collections.Counter[str] = collections.Counter()
"""Strategy name -> batches it took (and did not decline), over a test's examples."""

# -- converters ----------------------------------------------------------------------------------------

CONVERTERS: dict[str, tuple[type[Any], dict[str, str]]] = {
    "string": (StringConverter, {}),
    "bytes": (ByteArrayConverter, {}),
    "json": (JsonConverter, {"schemas.enable": "true"}),
    "json-plain": (JsonConverter, {"schemas.enable": "false"}),
}
HEADER_CONVERTERS: dict[str, type[Any]] = {"simple": SimpleHeaderConverter, "bytes": ByteArrayConverter}

# -- SMT chains (Kafka's class names, configured as a connector config names them) ----------------------

SMTS: dict[str, dict[str, str]] = {
    "insert": {"type": "org.apache.kafka.connect.transforms.InsertField$Value", "static.field": "src",
               "static.value": "gen", "topic.field": "from_topic"},
    "replace": {"type": "org.apache.kafka.connect.transforms.ReplaceField$Value", "exclude": "flag",
                "renames": "name:label"},
    "mask": {"type": "org.apache.kafka.connect.transforms.MaskField$Value", "fields": "label,name"},
    "cast": {"type": "org.apache.kafka.connect.transforms.Cast$Value", "spec": "id:string"},
    "cast-int": {"type": "org.apache.kafka.connect.transforms.Cast$Value", "spec": "name:int32"},
    "route": {"type": "org.apache.kafka.connect.transforms.TimestampRouter",
              "topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyy"},
    "regex": {"type": "org.apache.kafka.connect.transforms.RegexRouter", "regex": "(.*)-b", "replacement": "$1-r"},
    "hoist": {"type": "org.apache.kafka.connect.transforms.HoistField$Value", "field": "wrapped"},
    "header": {"type": "org.apache.kafka.connect.transforms.InsertHeader", "header": "via", "value.literal": "smt"},
    "drop-headers": {"type": "org.apache.kafka.connect.transforms.DropHeaders", "headers": "h1"},
    "drop-tombstones": {"type": "org.apache.kafka.connect.transforms.Filter", "predicate": "tomb"},
    "drop-b": {"type": "org.apache.kafka.connect.transforms.Filter", "predicate": "topic-b"},
}
PREDICATES = {"tomb": {"type": "RecordIsTombstone"},
              "topic-b": {"type": "TopicNameMatches", "pattern": ".*-b"}}


def pretty_as_repr(self: Any, printer: Any, cycle: bool) -> None:
    """How Hypothesis prints a falsifying example: the plain ``repr``. Its own printer walks the
    fields of dataclasses recursively, into the Schemas and Structs in a poll, and takes minutes."""
    printer.text(repr(self))


@dataclass(frozen=True)
class SetupSpec:
    """Plain data for one task's setup; :func:`make_setup` builds it afresh each time."""

    key: str
    value: str
    header: str
    chain: tuple[str, ...]
    tolerate: bool
    sink: bool

    _repr_pretty_ = pretty_as_repr

    def props(self) -> dict[str, str]:
        props = {"name": "diff", "connector.class": "FileStreamSink" if self.sink else "FileStreamSource",
                 "errors.tolerance": "all" if self.tolerate else "none"}
        if self.sink:
            props["topics"] = "t-a,t-b"
        if self.chain:
            aliases = [f"s{i}" for i in range(len(self.chain))]
            props["transforms"] = ",".join(aliases)
            used = set()
            for alias, smt in zip(aliases, self.chain, strict=True):
                for key, value in SMTS[smt].items():
                    props[f"transforms.{alias}.{key}"] = value
                    if key == "predicate":
                        used.add(value)
            if used:
                props["predicates"] = ",".join(sorted(used))
                for name in used:
                    for key, value in PREDICATES[name].items():
                        props[f"predicates.{name}.{key}"] = value
        return props


def setup_specs(sink: bool) -> st.SearchStrategy[SetupSpec]:
    """Converters, chains (none half the time: the columnar strategies need none) and tolerance."""
    chains = st.one_of(st.just(()), st.lists(st.sampled_from(sorted(SMTS)), min_size=1, max_size=4).map(tuple))
    return st.builds(SetupSpec, key=st.sampled_from(["string", "bytes", "json-plain"]),
                     value=st.sampled_from(sorted(CONVERTERS)), header=st.sampled_from(sorted(HEADER_CONVERTERS)),
                     chain=chains, tolerate=st.booleans(), sink=st.just(sink))


class RecordingReporter(ErrorReporter):
    """An error reporter that keeps what it was told (the log and DLQ reporters' interface)."""

    def __init__(self) -> None:
        self.reports: list[ProcessingContext] = []

    def report(self, context: ProcessingContext) -> Future[None] | None:
        self.reports.append(context)
        return None


def make_setup(spec: SetupSpec) -> tuple[TaskSetup, RecordingReporter]:
    """A fresh task setup for ``spec``, as the worker builds one (its error reports recorded)."""
    config = ConnectorConfig.parse(PLUGINS, spec.props())
    reporter = RecordingReporter()
    operator = RetryWithToleranceOperator(0, 60000, spec.tolerate, [reporter])
    key_cls, key_props = CONVERTERS[spec.key]
    value_cls, value_props = CONVERTERS[spec.value]
    key = key_cls()
    key.configure({**key_props, CONVERTER_TYPE_CONFIG: "key"}, True)
    value = value_cls()
    value.configure({**value_props, CONVERTER_TYPE_CONFIG: "value"}, False)
    header = HEADER_CONVERTERS[spec.header]()
    header.configure({CONVERTER_TYPE_CONFIG: "header"})
    setup = TaskSetup({}, config, key, value, header, build_chain(config, PLUGINS), operator, 60000, 5000, False)
    return setup, reporter


def report_form(context: ProcessingContext, position: Callable[[Any], Any]) -> tuple[Any, ...]:
    """An error report as comparable data: stage, class, error, and which input it was about."""
    consumed = context.consumed
    raw = None if consumed is None else (consumed.topic, consumed.partition, consumed.offset, consumed.key,
                                         consumed.value, consumed.headers, consumed.timestamp,
                                         consumed.timestamp_type)
    return (context.stage, context.executing_class, type(context.error).__name__, str(context.error), raw,
            None if context.source_record is None else position(context.source_record))


def outcome_of(run: Callable[[], Any]) -> tuple[Any, str | None]:
    """(what ``run`` returned, or None; the exception it raised as ``Type: message``, or None)."""
    try:
        return run(), None
    except Exception as e:  # the comparison is of the failure itself
        return None, f"{type(e).__name__}: {e}"


# -- values ---------------------------------------------------------------------------------------------

ROW = (SchemaBuilder.struct().name("Row")
       .field("id", Schema.INT64_SCHEMA)
       .field("name", Schema.OPTIONAL_STRING_SCHEMA)
       .field("amount", Schema.OPTIONAL_FLOAT64_SCHEMA)
       .field("flag", SchemaBuilder.boolean().optional().default_value(True).build())
       .build())


def row(i: int, name: str | None, amount: float | None, flag: bool | None) -> Struct:
    return Struct(ROW).put("id", i).put("name", name).put("amount", amount).put("flag", flag)


names = st.one_of(st.none(), st.sampled_from(["ann", "bo", "42", "", "ünï"]))
amounts = st.one_of(st.none(), st.sampled_from([0.0, 1.5, -2.25, 1e20]))
