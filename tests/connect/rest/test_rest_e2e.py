"""The REST API over the real StandaloneHerder, a real broker and the FileStream connectors.

FileStreamSource -> topic -> FileStreamSink; every state change is made through the API and
observed in ``GET .../status`` and in the files.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.rest import create_app
from seaway.connect.runtime import offsets_admin
from seaway.connect.testing import EmbeddedConnect

from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def fast_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("rest-e2e"), {"group.initial.rebalance.delay.ms": "0"}) as b:
        yield b


@pytest.fixture
async def api(fast_broker: BrokerProcess, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with EmbeddedConnect(fast_broker.bootstrap, tmp_path / "worker",
                               worker_props={"offset.flush.interval.ms": "200"}) as connect:
        transport = httpx.ASGITransport(app=create_app(connect.herder))
        async with httpx.AsyncClient(transport=transport, base_url="http://worker") as client:
            yield client


def create_topic(bootstrap: str, topic: str) -> None:
    """Create ``topic`` up front, so these tests need not wait for a sink to find a late topic
    (tests/connect/test_sink_waits_for_topic.py covers that)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)


async def eventually(check: Any, what: str, timeout: float = 20) -> Any:
    """Poll the async ``check`` until it returns a truthy value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last: {last}")


async def states(api: httpx.AsyncClient, name: str) -> tuple[str, list[str]]:
    status = (await api.get(f"/connectors/{name}/status")).json()
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


async def wait_state(api: httpx.AsyncClient, name: str, connector: str, tasks: list[str]) -> None:
    async def check() -> bool:
        return await states(api, name) == (connector, tasks)
    await eventually(check, f"{name} {connector} {tasks}")


async def wait_lines(path: Path, expected: list[str]) -> None:
    async def check() -> bool:
        return path.exists() and path.read_text().splitlines() == expected
    try:
        await eventually(check, f"{len(expected)} lines in {path.name}")
    except AssertionError:
        raise AssertionError(f"{path.read_text().splitlines()[-5:] if path.exists() else None} != "
                             f"...{expected[-5:]}") from None


async def pipeline(api: httpx.AsyncClient, bootstrap: str, tmp_path: Path, topic: str, lines: list[str],
                   src: str = "src", snk: str = "snk") -> tuple[Path, Path]:
    """A source and a sink (names unique per test: the sink's group is connect-<name>) copying ``lines``."""
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"{line}\n" for line in lines))
    create_topic(bootstrap, topic)
    created = await api.post("/connectors", json={"name": src, "config": {
        "connector.class": "FileStreamSource", "file": str(source), "topic": topic}})
    assert (created.status_code, created.headers["location"]) == (201, f"/connectors/{src}"), created.text
    put = await api.put(f"/connectors/{snk}/config", json={"connector.class": "FileStreamSink", "file": str(sink),
                                                        "topics": topic})
    assert put.status_code == 201, put.text
    await wait_lines(sink, lines)
    return source, sink


async def test_state_transitions(api: httpx.AsyncClient, fast_broker: BrokerProcess, tmp_path: Path,
                                 topic_name: str) -> None:
    lines = [f"a{i}" for i in range(100)]
    source, sink = await pipeline(api, fast_broker.bootstrap, tmp_path, topic_name, lines)
    assert await states(api, "src") == ("RUNNING", ["RUNNING"])
    info = (await api.get("/connectors/src")).json()
    assert (info["type"], info["tasks"]) == ("source", [{"connector": "src", "task": 0}])
    assert (await api.get("/connectors?expand=status")).json()["snk"]["status"]["type"] == "sink"

    assert (await api.put("/connectors/src/pause")).status_code == 202
    await wait_state(api, "src", "PAUSED", ["PAUSED"])
    with source.open("a") as f:
        f.write("b0\nb1\n")
    await asyncio.sleep(1.0)
    assert sink.read_text().splitlines() == lines  # nothing moves while paused
    assert (await api.put("/connectors/src/resume")).status_code == 202
    await wait_state(api, "src", "RUNNING", ["RUNNING"])
    await wait_lines(sink, [*lines, "b0", "b1"])

    stop = await api.put("/connectors/src/stop")
    assert stop.status_code == 204
    await wait_state(api, "src", "STOPPED", [])
    assert (await api.get("/connectors/src/tasks")).json() == []
    assert (await api.put("/connectors/src/resume")).status_code == 202
    await wait_state(api, "src", "RUNNING", ["RUNNING"])

    restart = await api.post("/connectors/src/restart?includeTasks=true")
    assert restart.status_code == 202
    assert (restart.json()["connector"]["state"], [t["state"] for t in restart.json()["tasks"]]) == (
        "RESTARTING", ["RESTARTING"])
    await wait_state(api, "src", "RUNNING", ["RUNNING"])
    assert (await api.post("/connectors/src/restart")).status_code == 204
    assert (await api.post("/connectors/src/tasks/0/restart")).status_code == 204
    await wait_state(api, "src", "RUNNING", ["RUNNING"])
    with source.open("a") as f:
        f.write("c0\n")
    await wait_lines(sink, [*lines, "b0", "b1", "c0"])  # no line lost or repeated by the restarts
    assert (await api.get("/connectors/src/topics")).json() == {"src": {"topics": [topic_name]}}

    assert (await api.delete("/connectors/src")).status_code == 204
    assert (await api.get("/connectors")).json() == ["snk"]
    assert (await api.get("/connectors/src/status")).status_code == 404


async def test_offsets_alter_source_and_reset_sink(api: httpx.AsyncClient, fast_broker: BrokerProcess,
                                                  tmp_path: Path, topic_name: str) -> None:
    lines = [f"line {i}" for i in range(10)]
    source, sink = await pipeline(api, fast_broker.bootstrap, tmp_path, topic_name, lines, "osrc", "osnk")
    running = await api.patch("/connectors/osrc/offsets", json={"offsets": [
        {"partition": {"filename": str(source)}, "offset": {"position": 0}}]})
    assert running.status_code == 400 and "STOPPED state" in running.json()["message"]

    assert (await api.put("/connectors/osrc/stop")).status_code == 204
    await wait_state(api, "osrc", "STOPPED", [])
    stored = (await api.get("/connectors/osrc/offsets")).json()
    assert stored == {"offsets": [{"partition": {"filename": str(source)},
                                   "offset": {"position": source.stat().st_size}}]}
    after_line_6 = len("".join(f"{line}\n" for line in lines[:7]))
    altered = await api.patch("/connectors/osrc/offsets", json={"offsets": [
        {"partition": {"filename": str(source)}, "offset": {"position": after_line_6}}]})
    assert altered.json() == {"message": "The offsets for this connector have been altered successfully"}
    bad = await api.patch("/connectors/osrc/offsets", json={"offsets": [
        {"partition": {"filename": str(source)}, "offset": {"position": -1}}]})
    assert bad.status_code == 400 and "non-negative" in bad.json()["message"]
    assert (await api.put("/connectors/osrc/resume")).status_code == 202
    await wait_lines(sink, [*lines, "line 7", "line 8", "line 9"])  # resumed from the given position

    total = len(lines) + 3
    assert (await api.put("/connectors/osnk/stop")).status_code == 204
    await wait_state(api, "osnk", "STOPPED", [])
    sink_offsets = (await api.get("/connectors/osnk/offsets")).json()
    assert sink_offsets == {"offsets": [{"partition": {"kafka_topic": topic_name, "kafka_partition": 0},
                                         "offset": {"kafka_offset": total}}]}
    reset = await api.delete("/connectors/osnk/offsets")
    assert reset.status_code == 200, reset.text
    assert reset.json()["message"].startswith("The ")
    assert (await api.get("/connectors/osnk/offsets")).json() == {"offsets": []}
    assert (await api.put("/connectors/osnk/resume")).status_code == 202
    first_pass = sink.read_text().splitlines()
    await wait_lines(sink, first_pass * 2)  # consumed again from the beginning


async def test_sink_offsets_are_not_reported_altered_while_the_group_still_has_a_member(
        api: httpx.AsyncClient, fast_broker: BrokerProcess, tmp_path: Path, topic_name: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A member still in the sink's group (a task that has not finished leaving, a zombie) makes the
    broker refuse the admin commit per partition; that refusal must reach the caller, not a 200."""
    monkeypatch.setattr(offsets_admin, "DRAIN_WAIT_S", 1.0)
    lines = [f"line {i}" for i in range(5)]
    await pipeline(api, fast_broker.bootstrap, tmp_path, topic_name, lines, "zsrc", "zsnk")
    assert (await api.put("/connectors/zsnk/stop")).status_code == 204
    await wait_state(api, "zsnk", "STOPPED", [])
    zombie = Consumer({"bootstrap.servers": fast_broker.bootstrap, "group.id": "connect-zsnk",
                       "enable.auto.commit": False})
    zombie.subscribe([topic_name])
    try:
        deadline = time.monotonic() + 20
        while not zombie.assignment() and time.monotonic() < deadline:
            await asyncio.to_thread(zombie.poll, 0.2)
        assert zombie.assignment(), "the stand-in zombie never joined the group"
        patch = {"offsets": [{"partition": {"kafka_topic": topic_name, "kafka_partition": 0},
                              "offset": {"kafka_offset": 1}}]}
        refused = await api.patch("/connectors/zsnk/offsets", json=patch)
        assert refused.status_code == 500, refused.text
        assert "haven't stopped completely yet" in refused.json()["message"]
        reset = await api.delete("/connectors/zsnk/offsets")
        assert reset.status_code == 500 and "zombie sink tasks" in reset.json()["message"], reset.text
        unchanged = (await api.get("/connectors/zsnk/offsets")).json()
        assert unchanged["offsets"][0]["offset"] == {"kafka_offset": len(lines)}
    finally:
        await asyncio.to_thread(zombie.close)
    altered = await api.patch("/connectors/zsnk/offsets", json=patch)  # the group has emptied
    assert altered.status_code == 200, altered.text
    assert (await api.get("/connectors/zsnk/offsets")).json()["offsets"][0]["offset"] == {"kafka_offset": 1}


async def test_sink_offsets_kafka_refuses_to_parse_are_a_400(api: httpx.AsyncClient, fast_broker: BrokerProcess,
                                                             tmp_path: Path, topic_name: str) -> None:
    """Offsets Kafka's parseInt/parseLong refuse (floats, past the Java type) and partitions that do
    not exist are the request's fault: they answered 500 ("int too big to convert", the admin
    client's UNKNOWN_TOPIC_OR_PART)."""
    create_topic(fast_broker.bootstrap, topic_name)
    created = await api.post("/connectors", json={"name": "bsnk", "initial_state": "STOPPED", "config": {
        "connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"), "topics": topic_name}})
    assert created.status_code == 201, created.text
    await wait_state(api, "bsnk", "STOPPED", [])

    def patch(topic: Any, partition: Any, offset: Any) -> dict[str, Any]:
        return {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": partition},
                             "offset": {"kafka_offset": offset}}]}

    for partition, offset, what in [(0, 1e30, "offset"), (0, 5.0, "offset"), (0, 2**63, "offset"),
                                    (0, "1_000", "offset"), (2**31, 1, "partition"),
                                    (99999999999999999999, 1, "partition")]:
        answer = await api.patch("/connectors/bsnk/offsets", json=patch(topic_name, partition, offset))
        assert answer.status_code == 400, (partition, offset, answer.text)
        assert answer.json()["message"].startswith(f"Failed to parse the following Kafka {what} value"), answer.text
    for topic, partition in [(f"nope-{topic_name}", 0), (topic_name, 7)]:
        answer = await api.patch("/connectors/bsnk/offsets", json=patch(topic, partition, 1))
        assert answer.status_code == 400, answer.text
        assert f"topic partition {topic}-{partition} does not exist" in answer.json()["message"]
    fine = await api.patch("/connectors/bsnk/offsets", json=patch(topic_name, "0", "+0"))  # Java parses these
    assert fine.status_code == 200, fine.text


async def test_plugins_validation_and_invalid_configs(api: httpx.AsyncClient) -> None:
    plugins = (await api.get("/connector-plugins")).json()
    classes = {p["class"]: p for p in plugins}
    file_source = [c for c in classes if c.endswith("FileStreamSourceConnector")]
    assert file_source == ["org.apache.kafka.connect.file.FileStreamSourceConnector"]  # Kafka's name, as Kafka's
    assert classes[file_source[0]]["type"] == "source"
    kafka_named = (await api.get("/connector-plugins/org.apache.kafka.connect.file.FileStreamSourceConnector/config"))
    assert kafka_named.status_code == 200, kafka_named.text
    assert [p["type"] for p in plugins] == sorted((p["type"] for p in plugins), key=["sink", "source"].index)
    keys = [k["name"] for k in (await api.get("/connector-plugins/FileStreamSource/config")).json()]
    assert keys[:3] == ["file", "topic", "batch.size"] and "connector.class" in keys

    result = await api.put("/connector-plugins/FileStreamSource/config/validate",
                           json={"connector.class": "FileStreamSource", "name": "v", "batch.size": "lots"})
    assert result.status_code == 200
    errors = {c["value"]["name"]: c["value"]["errors"] for c in result.json()["configs"] if c["value"]["errors"]}
    assert set(errors) == {"topic", "batch.size"} and result.json()["error_count"] == 2
    mismatch = await api.put("/connector-plugins/FileStreamSink/config/validate",
                             json={"connector.class": "FileStreamSource"})
    assert mismatch.status_code == 400

    invalid = await api.post("/connectors", json={"name": "bad", "config": {
        "connector.class": "FileStreamSource", "batch.size": "lots"}})
    assert invalid.status_code == 400
    message = invalid.json()["message"]
    assert message.startswith("Connector configuration is invalid and contains the following 2 error(s):\n")
    assert "topic" in message and "batch.size" in message
    unknown = await api.post("/connectors", json={"name": "bad", "config": {"connector.class": "NoSuchThing"}})
    assert unknown.status_code == 400 and "NoSuchThing" in unknown.json()["message"]
    assert (await api.get("/connectors")).json() == []
    nameless = await api.post("/connectors", json={"config": {"connector.class": "FileStreamSink", "topics": "t"}})
    assert nameless.status_code == 400, nameless.text
    malformed = await api.put("/connectors/x/config", content=b"{not json",
                              headers={"content-type": "application/json"})
    assert malformed.status_code == 400 and malformed.json()["error_code"] == 400
