"""WorkerSourceTask end to end: converters, SMT chain, offsets after acks, resume without duplicates."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

from tests.connect.runtime.rt_support import (
    MODULE,
    PLUGINS,
    BatchCounterTask,
    CounterTask,
    connect,
    reset_collectors,
    rt_broker,
)
from tests.support.optional import present

__all__ = ["connect", "rt_broker"]


@pytest.mark.timeout(60)
async def test_source_records_are_produced_and_offsets_committed(connect: EmbeddedConnect, topic_name: str) -> None:
    await connect.create_connector("counter", {"connector.class": f"{MODULE}:CounterConnector",
                                               "topic": topic_name, "count": "12"})
    await connect.wait_for_running("counter")
    messages = connect.consume(topic_name, 12)
    assert [m.value() for m in messages] == [f"v{n}".encode() for n in range(12)]
    assert await connect.herder.connector_active_topics("counter") == [topic_name]
    await connect.herder.stop_connector("counter")
    offsets = await connect.herder.connector_offsets("counter")
    assert offsets.offsets == [({"counter": topic_name}, {"n": 12})]
    stored = json.loads(Path(connect.config.get("offset.storage.file.filename")).read_text())
    assert stored["offsets"] == [[json.dumps(["counter", {"counter": topic_name}], separators=(",", ":")),
                                  '{"n":12}']]
    assert [v for v, md in CounterTask.committed] == [f"v{n}" for n in range(12)]
    assert all(md is not None and md.topic == topic_name for _, md in CounterTask.committed)


@pytest.mark.timeout(60)
async def test_smt_chain_predicates_and_converters_apply_before_produce(
        connect: EmbeddedConnect, topic_name: str) -> None:
    await connect.create_connector("chain", {
        "connector.class": f"{MODULE}:CounterConnector", "topic": topic_name, "count": "6",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
        "transforms": "hoist,insert,drop",
        "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        "transforms.hoist.field": "line",
        "transforms.insert.type": "InsertField$Value",
        "transforms.insert.static.field": "src", "transforms.insert.static.value": "counter",
        "transforms.drop.type": "Filter", "transforms.drop.predicate": "mod3",
        "predicates": "mod3", "predicates.mod3.type": "HasHeaderKey", "predicates.mod3.name": "mod3"})
    messages = connect.consume(topic_name, 4)
    assert [json.loads(present(m.value())) for m in messages] == \
        [{"line": f"v{n}", "src": "counter"} for n in (1, 2, 4, 5)]
    assert dict(messages[0].headers() or []) == {"n": b"1"}
    # filtered records still count for offsets, and commit_record gets None for them
    await connect.herder.stop_connector("chain")
    assert (await connect.herder.connector_offsets("chain")).offsets == [({"counter": topic_name}, {"n": 6})]
    assert {v: md is None for v, md in CounterTask.committed} == {f"v{n}": n % 3 == 0 for n in range(6)}


@pytest.mark.timeout(90)
async def test_restart_resumes_from_the_offsets_file_without_duplicates(
        rt_broker: EmbeddedBroker, tmp_path: Path, topic_name: str) -> None:
    reset_collectors()
    config = {"connector.class": f"{MODULE}:CounterConnector", "topic": topic_name, "count": "10"}
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path, plugins=PLUGINS) as first:
        await first.create_connector("resume", config)
        first.consume(topic_name, 10)
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path, plugins=PLUGINS) as second:
        await second.create_connector("resume", {**config, "count": "25"})
        messages = second.consume(topic_name, 25)
        assert [m.value() for m in messages] == [f"v{n}".encode() for n in range(25)]
        with pytest.raises(TimeoutError):
            second.consume(topic_name, 26, timeout=2)  # nothing was produced twice
        assert len(CounterTask.started) == 2


@pytest.mark.timeout(90)
async def test_offsets_are_committed_only_for_acknowledged_records(tmp_path: Path, topic_name: str) -> None:
    reset_collectors()
    CounterTask.limit = 5
    with EmbeddedBroker(tmp_path / "broker") as broker:
        connect = EmbeddedConnect(broker.bootstrap, tmp_path, plugins=PLUGINS, worker_props={
            "offset.flush.interval.ms": "200", "offset.flush.timeout.ms": "500"})
        async with connect:
            await connect.create_connector("acks", {"connector.class": f"{MODULE}:CounterConnector",
                                                    "topic": topic_name, "count": "20"})
            connect.consume(topic_name, 5)

            async def stored() -> object:
                return (await connect.herder.connector_offsets("acks")).offsets

            deadline = asyncio.get_running_loop().time() + 20
            while await stored() != [({"counter": topic_name}, {"n": 5})]:
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.1)
            broker.stop()                    # nothing is acknowledged from now on
            CounterTask.limit = 10           # ... while the task keeps producing
            await asyncio.sleep(1.5)         # several flush intervals
            assert await stored() == [({"counter": topic_name}, {"n": 5})]
            assert len(CounterTask.committed) == 5
        # the final commit on stop waited offset.flush.timeout.ms and still wrote nothing unacknowledged
        stored_file = json.loads(Path(connect.config.get("offset.storage.file.filename")).read_text())
        assert [json.loads(v) for _, v in stored_file["offsets"]] == [{"n": 5}]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("transforms", [{}, {
    "transforms": "route", "transforms.route.type": "RegexRouter",
    "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1-routed"}])
async def test_source_record_batches_produce_like_records_with_and_without_smts(
        connect: EmbeddedConnect, topic_name: str, transforms: dict[str, str]) -> None:
    """A SourceRecordBatch goes out from its value column (no SMTs) or as records (SMTs): same result."""
    await connect.create_connector("batches", {"connector.class": f"{MODULE}:BatchCounterConnector",
                                               "topic": topic_name, "count": "23", "batch": "5", **transforms})
    topic = topic_name + "-routed" if transforms else topic_name
    messages = connect.consume(topic, 23)
    assert [m.value() for m in messages] == [f"v{n}".encode() for n in range(23)]
    assert {m.timestamp()[1] for m in messages} == {1_700_000_000_000}
    assert all(m.key() is None and not m.headers() for m in messages)
    await connect.herder.stop_connector("batches")
    assert (await connect.herder.connector_offsets("batches")).offsets == [({"counter": topic_name}, {"n": 23})]
    # without SMTs no SourceRecord was built; with them every batch was iterated as records
    assert [b._records is not None for b in BatchCounterTask.emitted] == [bool(transforms)] * 5


@pytest.mark.timeout(60)
@pytest.mark.parametrize("connector", ["CounterConnector", "BatchCounterConnector"])
async def test_a_full_producer_queue_is_waited_out_without_dropping(
        connect: EmbeddedConnect, topic_name: str, connector: str) -> None:
    """Back-pressure: with room for 5 records in librdkafka's queue every record still goes out, in order."""
    await connect.create_connector("full", {"connector.class": f"{MODULE}:{connector}", "topic": topic_name,
                                            "count": "300", "batch": "50",
                                            "producer.override.queue.buffering.max.messages": "5"})
    messages = connect.consume(topic_name, 300)
    assert [m.value() for m in messages] == [f"v{n}".encode() for n in range(300)]
    await connect.herder.stop_connector("full")
    assert (await connect.herder.connector_offsets("full")).offsets == [({"counter": topic_name}, {"n": 300})]
