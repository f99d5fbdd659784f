"""Statuses carry the running plugin's version and task configs carry ``task.class``, as Kafka 4.x's.

Findings P-R1 and P-R2 (docs/performance.md, "Conformance"): Kafka 4.1+ puts the connector's and
each task's plugin ``version`` in every ConnectorStateInfo (status, ``expand=status``, restart
plans) and Kafka's ``Worker.connectorTaskConfigs`` adds ``task.class`` (and a sink's
``topics``) to every task config. A standalone worker on a real broker; the connector and
task below report different versions so each is seen to come from its own instance.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import pytest
from seaway.connect.api import Task
from seaway.connect.runtime.herder import State
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

from tests.connect.runtime.rt_support import CollectingSinkConnector, CollectingSinkTask, CounterConnector, CounterTask
from tests.connect.runtime.rt_support import rt_broker as rt_broker

pytestmark = pytest.mark.timeout(60)


class VersionedTask(CounterTask):
    def version(self) -> str:
        return "3.1-task"


class VersionedConnector(CounterConnector):
    def version(self) -> str:
        return "3.1"

    def task_class(self) -> type[Task]:
        return VersionedTask


class TopicsSinkConnector(CollectingSinkConnector):
    """Task configs without ``topics``: the worker adds the connector's, as Kafka's does."""

    def start(self, props: Mapping[str, str]) -> None:
        self.props = {k: v for k, v in props.items() if k != "topics"}


@pytest.fixture
async def connect(rt_broker: EmbeddedBroker, tmp_path: Path) -> AsyncIterator[EmbeddedConnect]:
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path,
                               plugins=[VersionedConnector, TopicsSinkConnector]) as harness:
        yield harness


async def test_statuses_carry_the_connector_and_task_versions(connect: EmbeddedConnect, topic_name: str) -> None:
    herder = connect.herder
    await connect.create_connector("v", {"connector.class": f"{__name__}:VersionedConnector", "topic": topic_name})
    running = await connect.wait_for_running("v")
    assert (running.connector.version, [t.version for t in running.tasks]) == ("3.1", ["3.1-task"])
    body = running.to_json()
    assert body["connector"]["version"] == "3.1" and body["tasks"][0]["version"] == "3.1-task"
    assert (await herder.task_status("v", 0)).to_json()["version"] == "3.1-task"

    planned = await herder.restart_connector("v", include_tasks=True)
    assert planned is not None and planned.connector.state is State.RESTARTING
    assert (planned.connector.version, [t.version for t in planned.tasks]) == ("3.1", ["3.1-task"])
    await connect.wait_for_running("v")

    await herder.pause_connector("v")
    paused = await connect.wait_for_status("v", State.PAUSED, tasks=1)
    assert (paused.connector.version, [t.version for t in paused.tasks]) == ("3.1", ["3.1-task"])
    await herder.stop_connector("v")
    stopped = await connect.wait_for_status("v", State.STOPPED, tasks=0)
    assert stopped.connector.version == "3.1"


async def test_task_configs_carry_task_class_and_a_sinks_topics(connect: EmbeddedConnect, topic_name: str) -> None:
    herder = connect.herder
    await connect.create_connector("v", {"connector.class": f"{__name__}:VersionedConnector", "topic": topic_name})
    await connect.create_connector("s", {"connector.class": f"{__name__}:TopicsSinkConnector", "topics": topic_name,
                                         "tasks.max": "2"})
    await connect.create_connector("f", {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                                         "topic": topic_name, "file": str(connect.data_dir / "in.txt")})
    await connect.wait_for_running("v")
    await connect.wait_for_running("s", tasks=2)
    await connect.wait_for_running("f")
    [source] = await herder.task_configs("v")
    assert source.config["task.class"] == f"{__name__}.VersionedTask"  # a Seaway plugin: its Python path
    sinks = await herder.task_configs("s")
    assert [(t.config["task.class"], t.config["topics"]) for t in sinks] == [
        (f"{CollectingSinkTask.__module__}.CollectingSinkTask", topic_name)] * 2
    [file_task] = await herder.task_configs("f")
    # Seaway's FileStream is Kafka's connector: Kafka's task class name
    assert file_task.config["task.class"] == "org.apache.kafka.connect.file.FileStreamSourceTask"
