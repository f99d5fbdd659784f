"""Every source strategy equals the reference path (the differential test of runtime/pipeline/source.py).

Hypothesis generates a task setup (key, value and header converters, an SMT chain that may be
fused, drop records, route, add headers or fail on some values, and ``errors.tolerance``), what
the task declared (``commit_record``, ``commit_records``) and one poll's result (a list of
SourceRecords with keys, nulls, headers, partitions and wrong-typed values; a
SourceRecordBatch; a BytesRecordBatch). Each strategy the plan holds, the general ``records``
strategy, and the plan itself each send it with a fresh setup (no shared caches or counters)
to a recording output; all must equal the reference: the same produce calls (topic, value,
key, partition, timestamp, headers), the same new topics, the same records skipped and
delivered, the same in-flight batch offsets, the same error reports and the same failure.

Coverage: every accepted send is counted per strategy name (``REACHED``); the test fails
unless every strategy was reached by at least :data:`MIN_REACHED` batches, so a generator
change that starves a strategy cannot pass unnoticed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seaway.connect.api import (
    BytesRecordBatch,
    Header,
    Schema,
    SourceRecord,
    SourceRecordBatch,
)
from seaway.connect.runtime.pipeline.source import Records, SourceOutput, SourcePlan, SourceStrategy
from seaway.connect.runtime.submitted import SubmittedBatch

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
STRATEGIES = ("bytes_passthrough", "value_columns", "plain_records", "records", "reference")
TS = 1_700_000_000_000
PARTITIONS = ({"file": "a"}, {"file": "b"})

# -- one poll's result, as plain data --------------------------------------------------------------------


@dataclass(frozen=True)
class RecordSpec:
    topic: str
    kafka_partition: int | None
    key: Any
    key_schema: Schema | None
    value: Any
    value_schema: Schema | None
    headers: tuple[tuple[str, Any], ...] | None
    timestamp: int | None
    source: int | None

    _repr_pretty_ = pretty_as_repr


def _values() -> st.SearchStrategy[tuple[Any, Schema | None]]:
    """A value and its schema: usually what one of the converters takes, sometimes not."""
    struct = st.builds(row, st.integers(-5, 10**12), names, amounts, st.one_of(st.none(), st.booleans())
                       ).map(lambda s: (s, ROW))
    return st.one_of(
        struct, struct,
        st.fixed_dictionaries({"id": st.integers(0, 99), "name": names}).map(lambda d: (d, None)),
        st.sampled_from(["line", "", "ünï", "42"]).map(lambda s: (s, Schema.OPTIONAL_STRING_SCHEMA)),
        st.sampled_from(["raw"]).map(lambda s: (s, None)),
        st.binary(max_size=6).map(lambda b: (b, Schema.OPTIONAL_BYTES_SCHEMA)),
        st.integers(-3, 3).map(lambda i: (i, Schema.INT64_SCHEMA)),
        st.just((None, Schema.OPTIONAL_STRING_SCHEMA)),  # a tombstone
        st.just(("not a number", Schema.INT64_SCHEMA)),  # no converter with schemas takes it
    )


def _keys() -> st.SearchStrategy[tuple[Any, Schema | None]]:
    return st.one_of(st.just((None, None)), st.just((None, None)),
                     st.sampled_from(["k1", "k2"]).map(lambda k: (k, Schema.OPTIONAL_STRING_SCHEMA)),
                     st.sampled_from([b"kb"]).map(lambda k: (k, Schema.OPTIONAL_BYTES_SCHEMA)),
                     st.just(("kx", None)))


HEADERS = st.one_of(st.none(), st.none(), st.just(()), st.just((("h1", "x"),)), st.just((("h1", "x"), ("h2", 5))))


@st.composite
def record_specs(draw: st.DrawFn) -> RecordSpec:
    value, value_schema = draw(_values())
    key, key_schema = draw(_keys())
    return RecordSpec(draw(st.sampled_from(["t-a", "t-b"])), draw(st.sampled_from([None, None, 0, 1])), key,
                      key_schema, value, value_schema, draw(HEADERS), draw(st.sampled_from([None, TS, TS + 1])),
                      draw(st.sampled_from([None, 0, 0, 1])))


@dataclass(frozen=True)
class PollSpec:
    kind: str  # list | batch | bytes
    records: tuple[RecordSpec, ...] = ()
    batch_values: tuple[Any, ...] = ()
    batch_schema: Schema | None = None
    partition: int | None = None
    timestamp: int | None = None
    bytes_rows: tuple[tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...] | None, int | None],
                      ...] = ()

    _repr_pretty_ = pretty_as_repr

    def make(self) -> Sequence[SourceRecord]:
        """Fresh objects for one run (a run may touch its records, e.g. create their empty Headers)."""
        if self.kind == "list":
            out = []
            for i, r in enumerate(self.records):
                headers = None if r.headers is None else [
                    Header(k, Schema.OPTIONAL_STRING_SCHEMA if isinstance(v, str) else Schema.INT32_SCHEMA, v)
                    for k, v in r.headers]
                out.append(SourceRecord(None if r.source is None else PARTITIONS[r.source], {"n": i + 1}, r.topic,
                                        r.kafka_partition, r.key_schema, r.key, r.value_schema, r.value, r.timestamp,
                                        headers))
            return out
        if self.kind == "batch":
            return SourceRecordBatch("t-a", list(self.batch_values), value_schema=self.batch_schema,
                                     source_partition=PARTITIONS[0], source_offsets=[{"n": i + 1} for i in
                                                                                     range(len(self.batch_values))],
                                     kafka_partition=self.partition, timestamp=self.timestamp)
        return BytesRecordBatch("t-b", self.partition or 0, [k for k, _, _, _ in self.bytes_rows],
                                [v for _, v, _, _ in self.bytes_rows],
                                [None if h is None else list(h) for _, _, h, _ in self.bytes_rows],
                                [t for _, _, _, t in self.bytes_rows], PARTITIONS[1],
                                [{"n": i + 1} for i in range(len(self.bytes_rows))])


def _batch_values() -> st.SearchStrategy[tuple[tuple[Any, ...], Schema | None]]:
    return st.one_of(
        st.lists(st.sampled_from(["a", "bb", "ünï", ""]), min_size=1, max_size=6).map(
            lambda v: (tuple(v), Schema.OPTIONAL_STRING_SCHEMA)),
        st.lists(st.builds(row, st.integers(0, 99), names, amounts, st.none()), min_size=1, max_size=6).map(
            lambda v: (tuple(v), ROW)),
        st.lists(st.one_of(st.binary(max_size=4), st.none()), min_size=1, max_size=6).map(
            lambda v: (tuple(v), Schema.OPTIONAL_BYTES_SCHEMA)),
        st.lists(st.sampled_from(["x", "7"]), min_size=1, max_size=4).map(lambda v: (tuple(v), Schema.INT64_SCHEMA)),
    )


@st.composite
def poll_specs(draw: st.DrawFn) -> PollSpec:
    kind = draw(st.sampled_from(["list", "list", "batch", "bytes"]))
    if kind == "list":
        return PollSpec("list", tuple(draw(st.lists(record_specs(), min_size=1, max_size=8))))
    if kind == "batch":
        values, schema = draw(_batch_values())
        return PollSpec("batch", batch_values=values, batch_schema=schema,
                        partition=draw(st.sampled_from([None, 0])), timestamp=draw(st.sampled_from([None, TS])))
    headers = st.one_of(st.none(), st.just(()), st.just((("h1", b"v"), ("h2", None))))
    row_keys, row_values = st.one_of(st.none(), st.binary(max_size=3)), st.one_of(st.none(), st.binary(max_size=5))
    rows = draw(st.lists(st.tuples(row_keys, row_values, headers, st.sampled_from([None, TS])), min_size=1,
                         max_size=6))
    return PollSpec("bytes", bytes_rows=tuple(rows), partition=draw(st.sampled_from([0, 1])))


# -- one run --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capabilities:
    commit_record: bool
    commit_records: bool

    _repr_pretty_ = pretty_as_repr


CAPABILITIES = st.sampled_from([Capabilities(False, False), Capabilities(True, False), Capabilities(True, True)])


class _Delivered:
    """A delivery report's message: where the record landed."""

    def __init__(self, offset: int) -> None:
        self._offset = offset

    def offset(self) -> int:
        return self._offset


def run(spec: SetupSpec, capabilities: Capabilities, poll: PollSpec,
        pick: Callable[[SourcePlan], SourceStrategy] | None) -> dict[str, Any]:
    """Send ``poll`` with a fresh setup through ``pick(plan)`` (``None``: the plan itself)."""
    setup, reporter = make_setup(spec)
    plan = SourcePlan(setup, commit_record=capabilities.commit_record, commit_records=capabilities.commit_records)
    records = poll.make()
    produced: list[tuple[Any, ...]] = []
    callbacks: list[Callable[[Any, Any], None]] = []
    new_topics: list[str] = []
    batches: list[SubmittedBatch] = []
    failures: list[SubmittedBatch] = []
    delivered: list[int] = []
    skipped: list[int] = []
    committed_batches: list[list[int]] = []
    positions: dict[int, int] = {}

    def position(record: Any) -> int:
        if not positions:
            positions.update((id(r), i) for i, r in enumerate(records))
        return positions[id(record)]

    def produce(topic: str, value: Any, key: Any, partition: int, on_delivery: Callable[[Any, Any], None],
                _callback: Any, timestamp: int, headers: Any) -> None:
        produced.append((topic, value, key, partition, timestamp, headers))
        callbacks.append(on_delivery)

    def open_batch() -> SubmittedBatch:
        batch = SubmittedBatch(failures)
        batches.append(batch)
        return batch

    def record_callback(batch: SubmittedBatch, record: SourceRecord) -> Callable[[Any, Any], None]:
        def on_delivery(err: Any, msg: Any) -> None:
            batch.ack(err, msg)
            delivered.append(position(record))
        return on_delivery

    def commit_records(batch: BytesRecordBatch, offsets: list[int]) -> None:
        committed_batches.append(offsets)
        delivered.extend(range(len(batch)))

    topics: set[str] = set()

    def new_topic(topic: str) -> None:  # as the task's: tracked once, then known
        new_topics.append(topic)
        topics.add(topic)

    out = SourceOutput(produce, lambda args: True, topics, new_topic, open_batch, record_callback,
                       lambda record: skipped.append(position(record)),
                       commit_records if capabilities.commit_records else None)
    name = "plan"

    def send() -> None:
        nonlocal name
        if pick is None:
            name = plan.send(records, out).name
            return
        strategy = pick(plan)
        name = strategy.name
        if not strategy.send(records, out):
            name = "declined"
            plan.records.send(records, out)

    _, failure = outcome_of(send)
    if failure is None:
        for offset, callback in enumerate(callbacks):
            callback(None, _Delivered(offset))  # every record acknowledged, in produce order
    setup.close()
    return {
        "name": name,
        "produced": produced,
        "new_topics": new_topics,
        "skipped": skipped,
        "delivered": sorted(delivered),
        "commit_records": [len(offsets) for offsets in committed_batches],
        "batches": [(b.offsets, b.sealed, b.pending if b.sealed else None) for b in batches],
        "reports": [report_form(c, position) for c in reporter.reports],
        "counts": (setup.operator.total_failures, setup.operator.total_skipped),
        "failure": failure,
    }


def _strategy_pickers(plan: SourcePlan, batch_type: type) -> dict[str, Callable[[SourcePlan], SourceStrategy]]:
    """Every strategy ``plan`` may use for a batch of ``batch_type``, by name, plus the general records path."""
    pickers: dict[str, Callable[[SourcePlan], SourceStrategy]] = {}
    if batch_type in plan.by_type:
        pickers[plan.by_type[batch_type].name] = lambda p: p.by_type[batch_type]
    pickers[plan.records.name] = lambda p: p.records
    pickers["records"] = lambda p: p.records if p.records.name == "records" else Records(
        p.records.setup, p.records.commit_record, p.reference)
    return pickers


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """What must equal the reference: all but the strategy's name and how deliveries were told (with
    ``commit_records`` a bytes batch is told once per batch, the record paths per record: ``delivered``
    compares which records were told)."""
    return {k: v for k, v in result.items() if k not in ("name", "commit_records")}


def check(spec: SetupSpec, capabilities: Capabilities, poll: PollSpec) -> None:
    setup, _ = make_setup(spec)
    probe = SourcePlan(setup, commit_record=capabilities.commit_record, commit_records=capabilities.commit_records)
    setup.close()
    reference = run(spec, capabilities, poll, lambda p: p.reference)
    expected = comparable(reference)
    batch_type = type(poll.make())
    for label, picker in [*_strategy_pickers(probe, batch_type).items(), ("plan", None)]:
        result = run(spec, capabilities, poll, picker)
        if result["name"] != "declined" and label != "plan":
            REACHED[result["name"]] += 1
        assert comparable(result) == expected, (label, result["name"])
    REACHED["reference"] += 1


BYTES_SETUP = SetupSpec("bytes", "bytes", "bytes", (), False, False)
"""The setup ``bytes_passthrough`` needs (ByteArrayConverter everywhere, no SMTs): drawn uniformly it
would come once in ~200 examples, so byte batches are given it (either tolerance) half the time."""


@st.composite
def cases(draw: st.DrawFn) -> tuple[SetupSpec, Capabilities, PollSpec]:
    """A poll, then a setup and capabilities, biased toward what lets the poll's columnar strategy run."""
    poll = draw(poll_specs())
    spec = draw(setup_specs(sink=False))
    if poll.kind == "bytes" and draw(st.booleans()):
        spec = dataclasses.replace(BYTES_SETUP, tolerate=spec.tolerate)
    elif poll.kind == "batch" and draw(st.booleans()):
        spec = dataclasses.replace(spec, chain=())
    return spec, draw(CAPABILITIES), poll


@given(cases())
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def _every_strategy_equals_the_reference(case: tuple[SetupSpec, Capabilities, PollSpec]) -> None:
    check(*case)


def test_every_source_strategy_equals_the_reference() -> None:
    REACHED.clear()
    _every_strategy_equals_the_reference()
    missing = {name: REACHED[name] for name in STRATEGIES if REACHED[name] < MIN_REACHED}
    assert not missing, f"strategies reached too rarely: {missing} (all: {dict(REACHED)})"
