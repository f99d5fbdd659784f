"""``--log-format json`` on every process, with Kafka Connect's connector context on each line.

The end-to-end checks run the real processes (a broker, a standalone Connect worker running a
FileStreamSource task) and parse every line they log; the rest pins the formatter's contract.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
import threading
import time
from pathlib import Path

import pytest
from seaway.log_setup import (
    ConnectorContextFilter,
    JsonFormatter,
    add_log_format_argument,
    configure_logging,
    connector_context,
    current_connector_context,
    set_connector_context,
)

from tests.cli.clirun import SEAWAY, seaway
from tests.support.broker import READY, BrokerProcess
from tests.support.ports import free_port
from tests.support.process import stop

KEYS = {"timestamp", "level", "logger", "thread", "message"}


def _json_lines(text: str, skip: tuple[str, ...] = ()) -> list[dict[str, object]]:
    entries = []
    for line in text.splitlines():
        if not line.strip() or line.startswith(skip):
            continue
        entry = json.loads(line)  # every logged line is one JSON object
        assert entry.keys() >= KEYS, line
        entries.append(entry)
    return entries


@pytest.mark.timeout(90)
def test_connect_worker_json_lines_carry_task_context(shared_broker: BrokerProcess, tmp_path: Path) -> None:
    port = free_port()
    worker = tmp_path / "worker.properties"
    worker.write_text(f"bootstrap.servers={shared_broker.bootstrap}\nlisteners=http://127.0.0.1:{port}\n"
                      f"offset.storage.file.filename={tmp_path / 'offsets'}\n"
                      "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                      "value.converter=org.apache.kafka.connect.storage.StringConverter\n")
    (tmp_path / "in.txt").write_text("a\nb\n")
    connector = tmp_path / "source.properties"
    connector.write_text(f"name=json-log-src\nconnector.class=FileStreamSource\ntasks.max=1\n"
                         f"file={tmp_path / 'in.txt'}\ntopic=json-log-{port}\n")
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([SEAWAY, "connect", "standalone", str(worker), str(connector), "--log-format", "json"],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while "Source task finished initialization" not in log_path.read_text():
                assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.2)
        finally:
            stop(proc, 20)
    entries = _json_lines(log_path.read_text())
    task_lines = [e for e in entries if e.get("connector.context") == "[json-log-src|task-0] "]
    assert task_lines, entries
    assert all(e["connector"] == "json-log-src" and e["task"] == "task-0" for e in task_lines)
    assert any("Source task finished initialization" in str(e["message"]) for e in task_lines)
    # the worker's own lines have no connector context
    assert any(e["logger"] == "seaway.connect.runtime.worker" and "connector.context" not in e for e in entries)


@pytest.mark.timeout(60)
def test_broker_logs_json_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``SEAWAY_LOG_FORMAT=json`` (what ``seaway up --log-format json`` hands its parts) without a flag."""
    monkeypatch.setenv("SEAWAY_LOG_FORMAT", "json")
    with BrokerProcess(tmp_path / "data") as broker:
        pass
    entries = _json_lines("".join(broker.output), skip=(READY,))
    assert len(entries) >= 2 and {e["level"] for e in entries} <= {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}


@pytest.mark.parametrize("command", [["broker"], ["registry"], ["connect", "standalone"], ["connect", "distributed"],
                                     ["mirror"], ["up"]])
@pytest.mark.timeout(60)
def test_every_process_takes_log_format(command: list[str]) -> None:
    done = seaway(*command, "--help")
    assert done.returncode == 0 and b"--log-format {text,json}" in done.stdout, done.stdout + done.stderr
    bad = seaway(*command, "--log-format", "xml")
    assert bad.returncode == 2 and b"invalid choice: 'xml'" in bad.stderr


def _logger(fmt: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ConnectorContextFilter())
    handler.setFormatter(fmt)
    logger = logging.getLogger(f"test.log_setup.{id(stream)}")
    logger.propagate = False
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)
    return logger, stream


def test_json_line_cannot_be_split_or_forged() -> None:
    logger, stream = _logger(JsonFormatter())
    logger.info('two\nlines {"level": "ERROR"} \x1b[31m')
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["message"] == 'two\nlines {"level": "ERROR"} \x1b[31m' and first["level"] == "INFO"
    assert second["level"] == "ERROR" and "ValueError: boom" in str(second["exception"])
    assert str(first["timestamp"]).endswith("Z")


def test_context_per_thread_and_restored() -> None:
    logger, stream = _logger(logging.Formatter("%(connector_context)s%(message)s"))
    seen: list[str] = []

    def task() -> None:
        set_connector_context("sink", "task-3")
        logger.info("in task")
        seen.append(current_connector_context())

    thread = threading.Thread(target=task)
    thread.start()
    thread.join()
    logger.info("outside")
    with connector_context("sink", "worker"):
        logger.info("connector")
        with connector_context("other", "task-0"):
            logger.info("nested")
        logger.info("back")
    logger.info("after")
    assert stream.getvalue().splitlines() == ["[sink|task-3] in task", "outside", "[sink|worker] connector",
                                              "[other|task-0] nested", "[sink|worker] back", "after"]
    assert seen == ["[sink|task-3] "] and current_connector_context() == ""


def test_configure_logging_validates_and_env_default(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="log format"):
        configure_logging("INFO", "xml")
    with pytest.raises(ValueError, match="log level"):
        configure_logging("LOUD", "json")
    import argparse

    monkeypatch.setenv("SEAWAY_LOG_FORMAT", "JSON")
    p = argparse.ArgumentParser()
    add_log_format_argument(p)
    assert p.parse_args([]).log_format == "json"
    monkeypatch.setenv("SEAWAY_LOG_FORMAT", "yaml")  # a bad environment value falls back, never stops a process
    p = argparse.ArgumentParser()
    add_log_format_argument(p)
    assert p.parse_args([]).log_format == "text"
