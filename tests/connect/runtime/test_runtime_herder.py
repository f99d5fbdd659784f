"""StandaloneHerder: validation, state transitions, restarts, deletion and offsets of a STOPPED connector."""

from __future__ import annotations

import pytest
from seaway.connect.runtime.herder import (
    AlreadyExistsError,
    BadRequestError,
    ConnectorOffsets,
    ConnectorType,
    NotFoundError,
    State,
    TargetState,
)
from seaway.connect.testing import EmbeddedConnect

from tests.connect.runtime.rt_support import MODULE, CounterTask, connect, rt_broker

__all__ = ["connect", "rt_broker"]

COUNTER = f"{MODULE}:CounterConnector"


@pytest.mark.timeout(30)
async def test_invalid_configs_are_rejected_naming_each_field(connect: EmbeddedConnect) -> None:
    with pytest.raises(BadRequestError) as err:
        await connect.herder.put_connector_config("bad", {"connector.class": COUNTER, "tasks.max": "0",
                                                          "transforms": "x"}, allow_replace=False)
    message = str(err.value)
    assert message.startswith("Connector configuration is invalid and contains the following 3 error(s):")
    assert "tasks.max: Invalid value 0" in message
    assert "topic: Missing required configuration" in message
    assert "transforms.x.type: Missing required configuration" in message
    with pytest.raises(BadRequestError, match="contains no connector type"):
        await connect.herder.put_connector_config("bad", {"topic": "t"}, allow_replace=False)
    infos = await connect.herder.validate_connector_config(
        {"name": "v", "connector.class": f"{MODULE}:CollectingSinkConnector", "topics": "a", "topics.regex": "b.*"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos.configs if c["value"] and c["value"]["errors"]}
    assert errors["topics"] == ["topics and topics.regex are mutually exclusive options, but both are set."]
    assert infos.error_count == 2
    assert await connect.herder.connectors() == []


@pytest.mark.timeout(60)
async def test_pause_resume_stop_restart_delete(connect: EmbeddedConnect, topic_name: str) -> None:
    herder = connect.herder
    created = await herder.put_connector_config("c", {"connector.class": COUNTER, "topic": topic_name},
                                                allow_replace=False)
    assert created.created and created.info.type is ConnectorType.SOURCE
    assert [t.task for t in created.info.tasks] == [0]
    with pytest.raises(AlreadyExistsError, match="Connector c already exists"):
        await herder.put_connector_config("c", {"connector.class": COUNTER, "topic": topic_name}, allow_replace=False)
    status = await connect.wait_for_running("c")
    assert status.connector.worker_id == herder.worker_id
    await herder.pause_connector("c")
    await connect.wait_for_status("c", State.PAUSED, tasks=1)
    await herder.resume_connector("c")
    await connect.wait_for_running("c")
    await herder.stop_connector("c")
    stopped = await connect.wait_for_status("c", State.STOPPED, tasks=0)
    assert stopped.tasks == [] and await herder.task_configs("c") == []
    await herder.resume_connector("c")
    await connect.wait_for_running("c")
    planned = await herder.restart_connector("c", include_tasks=True)
    assert planned is not None
    assert planned.connector.state is State.RESTARTING and [t.state for t in planned.tasks] == [State.RESTARTING]
    await connect.wait_for_running("c")
    assert await herder.restart_connector("c") is None
    await herder.restart_task("c", 0)
    await connect.wait_for_running("c")
    with pytest.raises(NotFoundError, match="Unknown task: c-5"):
        await herder.restart_task("c", 5)
    updated = await herder.patch_connector_config("c", {"count": "3"})
    assert updated.config["count"] == "3"
    await connect.wait_for_running("c")
    await herder.delete_connector("c")
    assert await herder.connectors() == []
    with pytest.raises(NotFoundError, match="No status found for connector c"):
        await herder.connector_status("c")
    with pytest.raises(NotFoundError, match="Unknown connector c"):
        await herder.pause_connector("c")


@pytest.mark.timeout(60)
async def test_initial_state_and_failures(connect: EmbeddedConnect, topic_name: str) -> None:
    herder = connect.herder
    await herder.put_connector_config("paused", {"connector.class": COUNTER, "topic": topic_name},
                                      allow_replace=False, initial_state=TargetState.PAUSED)
    await connect.wait_for_status("paused", State.PAUSED, tasks=0)
    await herder.put_connector_config("stopped", {"connector.class": COUNTER, "topic": topic_name},
                                      allow_replace=False, initial_state=TargetState.STOPPED)
    await connect.wait_for_status("stopped", State.STOPPED, tasks=0)
    await herder.put_connector_config("broken", {"connector.class": f"{MODULE}:FailingStartConnector",
                                                 "topic": topic_name}, allow_replace=False)
    failed = await connect.wait_for_status("broken", State.FAILED, tasks=0)
    assert "RuntimeError: cannot start with secret" in (failed.connector.trace or "")
    planned = await herder.restart_connector("broken", only_failed=True)
    assert planned is not None and planned.connector.state is State.RESTARTING
    await connect.wait_for_status("broken", State.FAILED, tasks=0)


@pytest.mark.timeout(60)
async def test_offsets_alter_on_a_stopped_source_connector_resumes_from_there(
        connect: EmbeddedConnect, topic_name: str) -> None:
    herder = connect.herder
    await connect.create_connector("src", {"connector.class": COUNTER, "topic": topic_name, "count": "4"})
    connect.consume(topic_name, 4)
    partition = {"counter": topic_name}
    with pytest.raises(BadRequestError, match="must be in the STOPPED state"):
        await herder.alter_connector_offsets("src", ConnectorOffsets([(partition, {"n": 10})]))
    await herder.stop_connector("src")
    await connect.wait_for_status("src", State.STOPPED, tasks=0)
    assert (await herder.connector_offsets("src")).offsets == [(partition, {"n": 4})]
    with pytest.raises(BadRequestError, match="Partitions / offsets need to be provided"):
        await herder.alter_connector_offsets("src", ConnectorOffsets([]))
    message = await herder.alter_connector_offsets("src", ConnectorOffsets([(partition, {"n": 10})]))
    assert message.startswith("The Connect framework-managed offsets for this connector have been altered")
    await herder.patch_connector_config("src", {"count": "12"})
    await herder.resume_connector("src")
    messages = connect.consume(topic_name, 6)
    assert [m.value() for m in messages] == [b"v0", b"v1", b"v2", b"v3", b"v10", b"v11"]
    await herder.stop_connector("src")
    assert "reset successfully" in await herder.reset_connector_offsets("src")
    assert (await herder.connector_offsets("src")).offsets == []
    assert CounterTask.started
