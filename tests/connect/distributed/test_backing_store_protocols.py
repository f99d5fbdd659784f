"""Every backing store satisfies its Protocol, and the memory, file and Kafka stores behave alike through it.

Three layers: mypy checks the typed tuples below (a store missing a member, or with an
incompatible signature, fails ``mypy``); :func:`protocol_mismatches` compares each Protocol
member's signature with the implementation's at run time (and is shown to catch a missing
method and an incompatible one); and the same sequence of Protocol calls on the memory store
and on the Kafka store (a real broker) must be observed the same way.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.runtime.backing_stores import ConfigBackingStore, OffsetBackingStore, StatusBackingStore
from seaway.connect.runtime.distributed.kafka_log import ensure_topic
from seaway.connect.runtime.distributed.kafka_stores import (
    KafkaConfigBackingStore,
    KafkaOffsetBackingStore,
    KafkaStatusBackingStore,
)
from seaway.connect.runtime.herder import ConnectorState, ConnectorTaskId, State, TargetState, TaskState
from seaway.connect.runtime.offsets import (
    ConnectorOffsetBackingStore,
    FileOffsetBackingStore,
    MemoryOffsetBackingStore,
    encode_key,
)
from seaway.connect.runtime.stores import MemoryConfigBackingStore, MemoryStatusBackingStore

from tests.support.broker import BrokerProcess

# checked by mypy: each class's instances must be structurally compatible with the Protocol
CONFIG_STORES: tuple[type[ConfigBackingStore], ...] = (MemoryConfigBackingStore, KafkaConfigBackingStore)
STATUS_STORES: tuple[type[StatusBackingStore], ...] = (MemoryStatusBackingStore, KafkaStatusBackingStore)
OFFSET_STORES: tuple[type[OffsetBackingStore], ...] = (MemoryOffsetBackingStore, FileOffsetBackingStore,
                                                       KafkaOffsetBackingStore, ConnectorOffsetBackingStore)
IMPLEMENTATIONS = [(ConfigBackingStore, c) for c in CONFIG_STORES] + [
    (StatusBackingStore, c) for c in STATUS_STORES] + [(OffsetBackingStore, c) for c in OFFSET_STORES]


def protocol_members(protocol: type) -> list[str]:
    return sorted(name for name, value in vars(protocol).items()
                  if callable(value) and not name.startswith("_"))


def protocol_mismatches(protocol: type, implementation: type) -> list[str]:
    """What keeps ``implementation`` from standing in for ``protocol``: missing members, and
    parameters a Protocol caller passes (by position, name or default) that the member would not take."""
    problems = []
    for name in protocol_members(protocol):
        member = getattr(implementation, name, None)
        if not callable(member):
            problems.append(f"{name}: missing")
            continue
        wanted = list(inspect.signature(getattr(protocol, name)).parameters.values())[1:]
        offered = list(inspect.signature(member).parameters.values())[1:]
        for i, param in enumerate(wanted):
            if i >= len(offered) or offered[i].name != param.name or offered[i].kind is not param.kind:
                problems.append(f"{name}: parameter {i + 1} should be {param}")
            elif param.default is not inspect.Parameter.empty and offered[i].default is inspect.Parameter.empty:
                problems.append(f"{name}: {param.name} needs a default")
        problems += [f"{name}: extra parameter {p} has no default" for p in offered[len(wanted):]
                     if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return problems


@pytest.mark.parametrize(("protocol", "implementation"), IMPLEMENTATIONS,
                         ids=[f"{p.__name__}-{c.__name__}" for p, c in IMPLEMENTATIONS])
def test_each_store_has_every_member_of_its_protocol(protocol: type, implementation: type) -> None:
    assert protocol_members(protocol), protocol
    assert protocol_mismatches(protocol, implementation) == []


def test_the_signature_check_catches_a_missing_or_incompatible_member() -> None:
    def remove_tasks(self: Any, name: str, keep: int = 0) -> None: ...  # "name", not "connector"

    def put_connector_config(self: Any, name: str, config: Any, target: TargetState | None) -> None: ...

    no_contains = type("NoContains", (MemoryConfigBackingStore,), {"contains": None})
    renamed = type("Renamed", (MemoryStatusBackingStore,), {"remove_tasks": remove_tasks})
    no_default = type("NoDefault", (MemoryConfigBackingStore,), {"put_connector_config": put_connector_config})
    assert protocol_mismatches(ConfigBackingStore, no_contains) == ["contains: missing"]
    assert protocol_mismatches(StatusBackingStore, renamed) == ["remove_tasks: parameter 1 should be connector: 'str'"]
    assert protocol_mismatches(ConfigBackingStore, no_default) == ["put_connector_config: target needs a default"]
    assert not isinstance(object(), StatusBackingStore)  # runtime_checkable: the members, by name
    assert isinstance(MemoryStatusBackingStore(), StatusBackingStore)


# -- the same calls, observed alike --------------------------------------------------------------------
Settle = Callable[[], None]


def _topic(broker: BrokerProcess, prefix: str, partitions: int = 1) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    ensure_topic({"bootstrap.servers": broker.bootstrap}, name, partitions, 1, single_partition=partitions == 1)
    return name


@pytest.fixture(params=["memory", "kafka"])
def config_store(request: pytest.FixtureRequest, shared_broker: BrokerProcess) -> Iterator[ConfigBackingStore]:
    clients = {"bootstrap.servers": shared_broker.bootstrap}
    store: ConfigBackingStore = MemoryConfigBackingStore()
    if request.param == "kafka":
        store = KafkaConfigBackingStore(_topic(shared_broker, "cfg"), dict(clients), dict(clients))
    store.start()
    yield store
    store.stop()


@pytest.mark.timeout(60)
def test_config_stores_answer_alike(config_store: ConfigBackingStore) -> None:
    store = config_store
    store.put_connector_config("a", {"k": "1"})
    store.put_connector_config("b", {"k": "b"}, TargetState.STOPPED)
    store.put_task_configs("a", [{"t": "0"}, {"t": "1"}])
    snapshot = store.snapshot()
    assert store.contains("a") and not store.contains("c")
    assert snapshot.connectors() == ["a", "b"]
    assert (snapshot.target_state("a"), snapshot.target_state("b")) == (TargetState.STARTED, TargetState.STOPPED)
    assert snapshot.task_ids("a") == [ConnectorTaskId("a", 0), ConnectorTaskId("a", 1)]
    assert snapshot.task_configs("a") == [{"t": "0"}, {"t": "1"}]
    assert snapshot.applied_connector_config("a") == {"k": "1"}
    store.put_target_state("a", TargetState.PAUSED)
    store.put_connector_config("a", {"k": "2"})  # a new config keeps the target state
    store.put_task_configs("a", [])
    snapshot = store.snapshot()
    assert snapshot.connector_config("a") == {"k": "2"}
    assert snapshot.target_state("a") is TargetState.PAUSED
    assert snapshot.task_ids("a") == [] and snapshot.task_configs("a") == []
    store.remove_connector_config("a")
    snapshot = store.snapshot()
    assert not store.contains("a") and snapshot.connectors() == ["b"]
    assert snapshot.connector_config("a") is None and snapshot.target_state("a") is TargetState.STARTED


@pytest.fixture(params=["memory", "kafka"])
def status_store(request: pytest.FixtureRequest, shared_broker: BrokerProcess
                 ) -> Iterator[tuple[StatusBackingStore, Settle]]:
    if request.param == "memory":
        memory = MemoryStatusBackingStore()
        yield memory, lambda: None
        return
    clients = {"bootstrap.servers": shared_broker.bootstrap}
    kafka = KafkaStatusBackingStore(_topic(shared_broker, "st", 2), dict(clients), dict(clients))
    kafka.start()

    def settle() -> None:
        """Our own records read back (the cache applies them again, in order)."""
        kafka.log.flush()
        kafka.read_to_end()

    yield kafka, settle
    kafka.stop()


@pytest.mark.timeout(60)
def test_status_stores_answer_alike(status_store: tuple[StatusBackingStore, Settle]) -> None:
    store, settle = status_store
    store.put("c", ConnectorState(State.RUNNING, "w1", None, "1.0"))
    for task, state in enumerate((State.RUNNING, State.FAILED, State.RUNNING)):
        trace = "boom" if state is State.FAILED else None
        store.put_task(ConnectorTaskId("c", task), TaskState(task, state, "w1", trace))
    store.put_topic("c", 0, "t1")
    store.put_topic("c", 1, "t1")
    store.put_topic("c", 1, "t0")
    settle()
    assert store.get("c") == ConnectorState(State.RUNNING, "w1", None, "1.0")
    assert store.get_task(ConnectorTaskId("c", 1)) == TaskState(1, State.FAILED, "w1", "boom")
    assert [t.id for t in store.get_all("c")] == [0, 1, 2]
    assert store.connectors() == ["c"]
    assert store.topics("c") == ["t0", "t1"]
    store.remove_tasks("c", keep=1)
    store.put_task(ConnectorTaskId("c", 0), TaskState(0, State.DESTROYED, "w1"))
    store.reset_topics("c")
    settle()
    assert store.get_all("c") == [] and store.topics("c") == []
    store.remove("c")
    settle()
    assert store.get("c") is None and store.connectors() == []


@pytest.fixture(params=["memory", "file", "kafka", "connector"])
def offset_store(request: pytest.FixtureRequest, shared_broker: BrokerProcess, tmp_path: Path
                 ) -> Iterator[tuple[OffsetBackingStore, Callable[[], OffsetBackingStore]]]:
    """A started store, and how to open it again on the same data (after it stopped)."""
    clients = {"bootstrap.servers": shared_broker.bootstrap}
    topic = _topic(shared_broker, "off", 3)
    worker_store = MemoryOffsetBackingStore()
    factories: dict[str, Callable[[], OffsetBackingStore]] = {
        "memory": lambda: worker_store,
        "file": lambda: FileOffsetBackingStore(tmp_path / "offsets.json"),
        "kafka": lambda: KafkaOffsetBackingStore(topic, dict(clients), dict(clients)),
        "connector": lambda: ConnectorOffsetBackingStore(
            KafkaOffsetBackingStore(topic, dict(clients), dict(clients)), worker_store),
    }
    opened: list[OffsetBackingStore] = []

    def open_store() -> OffsetBackingStore:
        store = factories[str(request.param)]()
        if isinstance(store, ConnectorOffsetBackingStore):
            store.primary.start()  # the worker starts a connector's own store, not the wrapper
        store.start()
        opened.append(store)
        return store

    yield open_store(), open_store
    for store in opened:
        store.stop()
        if isinstance(store, ConnectorOffsetBackingStore):
            store.primary.stop()


@pytest.mark.timeout(60)
def test_offset_stores_answer_alike(offset_store: tuple[OffsetBackingStore, Callable[[], OffsetBackingStore]]
                                    ) -> None:
    store, reopen = offset_store
    one, two = encode_key("src", {"file": "a"}), encode_key("src", {"file": "b"})
    other = encode_key("other", {"file": "a"})
    store.set({one: b'{"position":1}', two: b'{"position":2}', other: b'{"position":9}'})
    store.set({two: None, one: b'{"position":3}'})
    assert store.get([one, two]) == {one: b'{"position":3}', two: None}
    assert store.connector_partitions("src") == [({"file": "a"}, {"position": 3})]
    store.stop()
    again = reopen()
    assert again.get([one, two, other]) == {one: b'{"position":3}', two: None, other: b'{"position":9}'}
