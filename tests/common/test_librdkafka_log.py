"""librdkafka's lines go through Python logging, repeats held back, never straight to stderr.

``seaway mirror`` (a Connect worker per flow, plus the mirror connectors' own clients) printed
librdkafka's raw lines (``%3|1796603874.935|FAIL|...``) past its log format: 1,500 in 15 s with a
cluster down. The worker's clients (``WorkerConfig.security_client_config``, ``translate``) and
the mirror connectors' (``SourceConfig.source_consumer``...) now carry ``seaway.librdkafka_log``'s
logger. Real clients against a closed port; ``capfd`` sees what librdkafka writes to fd 2.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from seaway.connect.runtime.config import StandaloneConfig
from seaway.connectors.mirror.config import SourceConfig
from seaway.librdkafka_log import RepeatFilter

from tests.support.ports import free_port

RAW_LINE = re.compile(r"(?m)^%\d\|\d+\.\d+\|")

pytestmark = pytest.mark.timeout(60)


def _librdkafka_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "seaway.librdkafka"]


def _poll(client: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        client.poll(0.1)


def test_a_workers_client_logs_through_python_logging(capfd: pytest.CaptureFixture[str],
                                                      caplog: pytest.LogCaptureFixture) -> None:
    dead = f"127.0.0.1:{free_port()}"
    config = StandaloneConfig({"bootstrap.servers": dead, "key.converter": "StringConverter",
                               "value.converter": "StringConverter", "offset.storage.file.filename": "x"})
    with caplog.at_level(logging.INFO, logger="seaway.librdkafka"):
        producer = Producer({**config.security_client_config(), "bootstrap.servers": dead,
                             "reconnect.backoff.ms": 10, "reconnect.backoff.max.ms": 10})
        try:
            _poll(producer, 3)
        finally:
            producer.close()
    err = capfd.readouterr().err
    assert not RAW_LINE.search(err), err[:500]
    refused = [r for r in _librdkafka_records(caplog) if "Connection refused" in r.getMessage()]
    assert refused and refused[0].levelname == "ERROR", [r.getMessage() for r in _librdkafka_records(caplog)]
    # ~100 reconnects a second for 3 s: the same line once, not a hundred times
    assert len(refused) <= 3, [r.getMessage() for r in refused]


def test_the_mirror_connectors_clients_log_through_python_logging(capfd: pytest.CaptureFixture[str],
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    dead = f"127.0.0.1:{free_port()}"
    config = SourceConfig({"name": "m", "source.cluster.alias": "A", "target.cluster.alias": "B",
                           "source.cluster.bootstrap.servers": dead, "target.cluster.bootstrap.servers": dead})
    with caplog.at_level(logging.INFO, logger="seaway.librdkafka"):
        consumer = Consumer({**config.source_consumer("replication-consumer"), "group.id": "g",
                             "reconnect.backoff.ms": 10, "reconnect.backoff.max.ms": 10})
        try:
            _poll(consumer, 2)
        finally:
            consumer.close()
    err = capfd.readouterr().err
    assert not RAW_LINE.search(err), err[:500]
    assert any("Connection refused" in r.getMessage() and "A->B|m|replication-consumer" in r.getMessage()
               for r in _librdkafka_records(caplog))


def test_repeat_filter_holds_back_equal_lines_and_counts_them() -> None:
    accept = RepeatFilter(window_s=0.3)

    def record(text: str) -> logging.LogRecord:
        return logging.LogRecord("seaway.librdkafka", logging.ERROR, __file__, 1, text, None, None)

    line = ("FAIL [rdkafka#producer-1] [thrd:b/bootstrap]: b: Connect to b failed: Connection refused "
            "(after {}ms in state CONNECT)")
    assert accept.filter(record(line.format(0)))
    assert not accept.filter(record(line.format(3)))  # the same event, another timing
    assert not accept.filter(record(line.format(1)))
    assert accept.filter(record(line.replace("producer-1", "producer-2").format(0)))  # another client
    time.sleep(0.35)
    again = record(line.format(2))
    assert accept.filter(again)
    assert again.getMessage().endswith("(2 similar lines held back)")
