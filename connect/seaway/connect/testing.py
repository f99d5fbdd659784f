"""A test harness for connector authors: your connector, a real broker and a worker, in one pytest test.

:class:`EmbeddedBroker` starts ``python -m seaway.broker`` on a free loopback port with a
temporary data directory; :class:`EmbeddedConnect` runs a :class:`StandaloneHerder` (the
same runtime as ``seaway connect standalone``) against it, with helpers to produce, consume
and wait for statuses. Connector classes need no entry point: pass them in ``plugins=[...]``
and name them by class name, alias or ``module:Class`` in ``connector.class`` (a worker imports
nothing a config names unless it is an installed plugin or listed in ``plugin.allowlist``,
which ``worker_props`` may set).

Install it with ``pip install 'seaway[testing]'`` (pytest, pytest-asyncio, pytest-timeout).

Example (``pytest`` with ``pytest-asyncio`` in auto mode)::

    import pytest
    from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

    @pytest.mark.timeout(60)
    async def test_counter_source(tmp_path):
        with EmbeddedBroker(tmp_path / "broker") as broker:
            async with EmbeddedConnect(broker.bootstrap, tmp_path, plugins=[CounterConnector]) as connect:
                await connect.create_connector("counter", {
                    "connector.class": "CounterConnector", "topic": "numbers", "count": "3"})
                await connect.wait_for_running("counter", tasks=1)
                values = connect.consume("numbers", 3)
                assert [m.value() for m in values] == [b"0", b"1", b"2"]

Worker properties default to StringConverter keys and values, a 1 s offset flush interval and
an offsets file in ``data_dir``; override any of them with ``worker_props``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from confluent_kafka import Consumer, Message, Producer
from seaway.connect.runtime.config import StandaloneConfig
from seaway.connect.runtime.herder import ConnectorStateInfo, State, TargetState
from seaway.connect.runtime.plugins import PluginKind, Plugins
from seaway.connect.runtime.standalone import StandaloneHerder

__all__ = ["EmbeddedBroker", "EmbeddedConnect", "consume_records", "produce_records"]

_READY = "seaway broker ready on "


class EmbeddedBroker:
    """A broker subprocess on ``127.0.0.1:<free port>``; ``bootstrap`` is set once started."""

    def __init__(self, data_dir: str | os.PathLike[str] | None = None, overrides: dict[str, str] | None = None,
                 startup_timeout: float = 30.0) -> None:
        self._tmp = None if data_dir is not None else tempfile.TemporaryDirectory(prefix="seaway-broker-")
        self.data_dir = Path(data_dir) if data_dir is not None else Path(self._tmp.name)  # type: ignore[union-attr]
        self.overrides = {"group.initial.rebalance.delay.ms": "0", **(overrides or {})}
        self.startup_timeout = startup_timeout
        self.bootstrap = ""
        self.output: list[str] = []
        self._proc: subprocess.Popen[str] | None = None
        self._pump: threading.Thread | None = None

    def start(self) -> EmbeddedBroker:
        args = [sys.executable, "-m", "seaway.broker", "--override", f"log.dirs={self.data_dir}",
                "--override", "listeners=PLAINTEXT://127.0.0.1:0"]
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONSAFEPATH": "1"})
        ready = threading.Event()
        proc = self._proc

        def pump() -> None:
            assert proc.stdout is not None
            with proc.stdout:
                for line in proc.stdout:
                    self.output.append(line)
                    if line.startswith(_READY) and not ready.is_set():
                        self.bootstrap = line[len(_READY):].strip().split(",")[0]
                        ready.set()
            ready.set()

        self._pump = threading.Thread(target=pump, name="embedded-broker-output", daemon=True)
        self._pump.start()
        if not ready.wait(self.startup_timeout) or not self.bootstrap:
            self.stop()
            raise RuntimeError("broker did not start:\n" + "".join(self.output[-40:]))
        return self

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._pump is not None:
            self._pump.join(5)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class EmbeddedConnect:
    """A standalone worker (herder + worker, no REST) for tests; use as ``async with``."""

    def __init__(self, bootstrap: str, data_dir: str | os.PathLike[str], *,
                 worker_props: dict[str, str] | None = None, plugins: Iterable[type] = (),
                 discover: bool = True) -> None:
        self.bootstrap = bootstrap
        self.data_dir = Path(data_dir)
        self.registry = Plugins(discover=discover)
        for cls in plugins:
            for kind in PluginKind:
                if issubclass(cls, kind.base):
                    self.registry.register(kind, cls)
        props = {"bootstrap.servers": bootstrap,
                 "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                 "value.converter": "org.apache.kafka.connect.storage.StringConverter",
                 "offset.storage.file.filename": str(self.data_dir / "connect.offsets"),
                 "offset.flush.interval.ms": "1000",
                 "listeners": "http://127.0.0.1:8083"}
        props.update(worker_props or {})
        self.config = StandaloneConfig(props, self.registry)
        self.herder = StandaloneHerder(self.config, plugins=self.registry)

    async def __aenter__(self) -> EmbeddedConnect:
        await self.herder.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.herder.stop()

    # -- connectors -----------------------------------------------------------------------------
    async def create_connector(self, name: str, config: dict[str, str],
                               initial_state: TargetState | None = None) -> None:
        await self.herder.put_connector_config(name, {"name": name, **config}, allow_replace=False,
                                               initial_state=initial_state)

    async def wait_for_status(self, name: str, state: State, *, tasks: int | None = None,
                              task_state: State | None = None, timeout: float = 30.0) -> ConnectorStateInfo:
        """Wait until the connector is in ``state`` and (optionally) has ``tasks`` tasks all in ``task_state``."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = await self.herder.connector_status(name)
            except Exception as e:
                last = e
            else:
                wanted_tasks = task_state or state
                if (last.connector.state is state and (tasks is None or len(last.tasks) == tasks)
                        and all(t.state is wanted_tasks for t in last.tasks)):
                    return last  # type: ignore[no-any-return]
            await asyncio.sleep(0.05)
        raise TimeoutError(f"connector {name} did not reach {state}: last status {last}")

    async def wait_for_running(self, name: str, *, tasks: int | None = 1, timeout: float = 30.0) -> ConnectorStateInfo:
        return await self.wait_for_status(name, State.RUNNING, tasks=tasks, timeout=timeout)

    # -- data -----------------------------------------------------------------------------------
    def produce(self, topic: str, values: Iterable[bytes | str | None], *, key: bytes | str | None = None,
                headers: list[tuple[str, str | bytes | None]] | None = None) -> None:
        produce_records(self.bootstrap, topic, values, key=key, headers=headers)

    def consume(self, topic: str, count: int, *, timeout: float = 30.0) -> list[Message]:
        return consume_records(self.bootstrap, topic, count, timeout=timeout)


def produce_records(bootstrap: str, topic: str, values: Iterable[bytes | str | None], *,
                    key: bytes | str | None = None,
                    headers: list[tuple[str, str | bytes | None]] | None = None) -> None:
    """Produce ``values`` to ``topic`` and wait for every acknowledgement."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value=value, key=key, headers=headers)
    if producer.flush(30):
        raise TimeoutError(f"could not produce to {topic}")


def consume_records(bootstrap: str, topic: str, count: int, *, timeout: float = 30.0) -> list[Message]:
    """Read ``count`` records of ``topic`` from the beginning (fresh group), or TimeoutError after ``timeout``."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"harness-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    out: list[Message] = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < count and time.monotonic() < deadline:
            out.extend(msg for msg in consumer.consume(count - len(out), 0.5) if msg.error() is None)
    finally:
        consumer.close()
    if len(out) < count:
        raise TimeoutError(f"only {len(out)} of {count} records arrived on {topic}")
    return out
