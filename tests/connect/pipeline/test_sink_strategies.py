"""Every sink strategy equals the reference path (the differential test of runtime/pipeline/sink.py).

Hypothesis generates a task setup (key, value and header converters, an SMT chain that may be
fused, drop records, route, add headers or fail on some values, and ``errors.tolerance``) and
one poll's consumed messages: real ``confluent_kafka.Message`` objects over two topics and two
partitions, with null, text, binary and JSON keys, JSON values with and without the schema
envelope, text, bytes that are not UTF-8, tombstones, headers and the three timestamp types.
Polls are either mixed (anything per message) or uniform (one kind of value, no headers:
what the columnar strategies take). The plan's first strategy, the general ``records``
strategy, and the plan itself each convert the poll with a fresh setup; all must equal the
reference: the same records (topic, partition, offset, key and value with their schemas,
timestamp and its type, headers), the same last offsets per partition, the same error
reports, the same error counts and the same failure.

Coverage: every accepted poll is counted per strategy name (``REACHED``); the test fails unless
every strategy was reached by at least :data:`MIN_REACHED` polls.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seaway.connect.api import CONVERTER_TYPE_CONFIG, SinkRecord
from seaway.connect.converters import JsonConverter
from seaway.connect.runtime.pipeline.sink import SinkOutput, SinkPlan, SinkStrategy

from tests.connect.pipeline.pipeline_support import (
    PHASES,
    REACHED,
    ROW,
    SetupSpec,
    amounts,
    make_setup,
    names,
    outcome_of,
    pretty_as_repr,
    report_form,
    row,
    setup_specs,
)

EXAMPLES = int(os.environ.get("SEAWAY_DIFF_EXAMPLES", "400"))
MIN_REACHED = 5
STRATEGIES = ("raw_values", "value_columns", "records", "reference")
TS = 1_700_000_000_000
TOPIC_PARTITIONS = (("t-a", 0), ("t-a", 1), ("t-b", 0))

_ENVELOPE = JsonConverter()
_ENVELOPE.configure({"schemas.enable": "true", CONVERTER_TYPE_CONFIG: "value"}, False)


def _struct_value(i: int, name: str | None, amount: float | None) -> bytes:
    """A Row as JsonConverter (schemas.enable=true) writes it: schema envelope and payload."""
    data = _ENVELOPE.from_connect_data("t-a", ROW, row(i, name, amount, None))
    assert data is not None
    return data


STRUCTS = st.builds(_struct_value, st.integers(-5, 10**12), names, amounts)
TEXTS = st.sampled_from([b"line", b"", "\u00fcn\u00ef".encode(), b"42", b'"quoted"'])
RAW = st.sampled_from([b"\xff\xfe", b"\x00\x01", b"{not json"])
PLAIN_JSON = st.fixed_dictionaries({"id": st.integers(0, 99), "name": names}).map(
    lambda d: json.dumps(d).encode())
VALUES = st.one_of(STRUCTS, STRUCTS, TEXTS, RAW, PLAIN_JSON, st.none(),
                   st.just(b'{"schema": {"type": "int64"}, "payload": "x"}'))  # no converter takes it
UNIFORM = {"struct": STRUCTS, "text": TEXTS, "raw": st.one_of(RAW, TEXTS)}
KEYS = st.one_of(st.none(), st.none(), st.sampled_from([b"k1", b'"k2"', b"7", b"\xff", b"{bad"]))
HEADERS = st.one_of(st.none(), st.none(), st.just((("h1", b"x"),)), st.just((("h1", b"5"), ("h2", None))))


@dataclass(frozen=True)
class MessageSpec:
    where: int  # index into TOPIC_PARTITIONS
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] | None
    ts_type: int  # 0 none, 1 create time, 2 log append time

    _repr_pretty_ = pretty_as_repr


@dataclass(frozen=True)
class PollSpec:
    kind: str  # mixed | struct | text | raw
    messages: tuple[MessageSpec, ...]

    _repr_pretty_ = pretty_as_repr

    def make(self) -> list[Any]:
        """Fresh ``confluent_kafka.Message`` objects, offsets increasing per partition."""
        next_offset = dict.fromkeys(range(len(TOPIC_PARTITIONS)), 100)
        out = []
        for m in self.messages:
            topic, partition = TOPIC_PARTITIONS[m.where]
            offset = next_offset[m.where]
            next_offset[m.where] = offset + 1
            out.append(Message(topic=topic, partition=partition, offset=offset, key=m.key, value=m.value,
                               headers=None if m.headers is None else list(m.headers),
                               timestamp=(m.ts_type, TS + offset if m.ts_type else -1)))
        return out


@st.composite
def poll_specs(draw: st.DrawFn) -> PollSpec:
    kind = draw(st.sampled_from(["mixed", "mixed", "struct", "text", "raw"]))
    values = VALUES if kind == "mixed" else UNIFORM[kind]
    headers = HEADERS if kind == "mixed" else st.none()
    messages = draw(st.lists(st.builds(MessageSpec, st.integers(0, len(TOPIC_PARTITIONS) - 1), KEYS, values,
                                       headers, st.sampled_from([0, 1, 1, 2])), min_size=1, max_size=8))
    return PollSpec(kind, tuple(messages))


VALUE_CONVERTER_FOR = {"struct": "json", "text": "string", "raw": "bytes"}


@st.composite
def cases(draw: st.DrawFn) -> tuple[SetupSpec, PollSpec]:
    """A poll, then a setup: a uniform poll is given, half the time, no SMTs and the value converter
    its columnar strategy takes (drawn uniformly those would come together in ~1 example of 16)."""
    poll = draw(poll_specs())
    spec = draw(setup_specs(sink=True))
    if poll.kind != "mixed" and draw(st.booleans()):
        spec = dataclasses.replace(spec, chain=(), value=VALUE_CONVERTER_FOR[poll.kind])
    return spec, poll


def record_form(record: SinkRecord) -> tuple[Any, ...]:
    """A SinkRecord as comparable data (Structs, Schemas and Headers compare by value)."""
    return (record.topic, record.kafka_partition, record.kafka_offset, record.key_schema, record.key,
            record.value_schema, record.value, record.timestamp, record.timestamp_type,
            None if not record.headers_if_any else [(h.key, h.schema, h.value) for h in record.headers])


def run(spec: SetupSpec, poll: PollSpec, pick: Callable[[SinkPlan], SinkStrategy] | None) -> dict[str, Any]:
    """Convert ``poll`` with a fresh setup through ``pick(plan)`` (``None``: the plan itself)."""
    setup, reporter = make_setup(spec)
    plan = SinkPlan(setup)
    messages = poll.make()
    offsets: dict[tuple[str, int], int] = {}
    errors: list[Any] = []
    out = SinkOutput(offsets, set(TOPIC_PARTITIONS), errors.append)
    positions = {(m.topic(), m.partition(), m.offset()): i for i, m in enumerate(messages)}
    name = "plan"

    def convert() -> list[tuple[Any, ...]]:
        nonlocal name
        if pick is None:
            return [record_form(r) for r in plan.convert(messages, out)]
        strategy = pick(plan)
        name = strategy.name
        records = strategy.convert(messages, out)
        if records is None:
            name = "declined"
            assert not offsets and not reporter.reports, "a strategy declined after recording"
            records = plan.records.convert(messages, out)
        return [record_form(r) for r in records]

    records, failure = outcome_of(convert)
    setup.close()
    return {
        "name": name,
        "records": records,
        "offsets": offsets,
        "errors": errors,
        "reports": [report_form(c, lambda record: record) for c in reporter.reports],
        "positions": [positions[(c.consumed.topic, c.consumed.partition, c.consumed.offset)]
                      for c in reporter.reports if c.consumed is not None],
        "counts": (setup.operator.total_failures, setup.operator.total_skipped),
        "failure": failure,
    }


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """What must equal the reference: all but the strategy's name, and the offsets only when the poll
    converted (a failure fails the task before ``put``: the poll's offsets are never read)."""
    return {k: v for k, v in result.items() if k != "name" and not (k == "offsets" and result["failure"])}


def check(spec: SetupSpec, poll: PollSpec) -> None:
    reference = run(spec, poll, lambda p: p.reference)
    expected = comparable(reference)
    for label, picker in (("first", lambda p: p.first), ("records", lambda p: p.records), ("plan", None)):
        result = run(spec, poll, picker)
        if result["name"] != "declined" and label != "plan":
            REACHED[result["name"]] += 1
        assert comparable(result) == expected, (label, result["name"])
    REACHED["reference"] += 1


@given(cases())
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def _every_strategy_equals_the_reference(case: tuple[SetupSpec, PollSpec]) -> None:
    check(*case)


def test_every_sink_strategy_equals_the_reference() -> None:
    REACHED.clear()
    _every_strategy_equals_the_reference()
    missing = {name: REACHED[name] for name in STRATEGIES if REACHED[name] < MIN_REACHED}
    assert not missing, f"strategies reached too rarely: {missing} (all: {dict(REACHED)})"
