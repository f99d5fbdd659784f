"""``seaway topics`` end to end against a real broker, through the installed command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.clirun import seaway
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)


def test_topics_lifecycle(shared_broker: BrokerProcess, topic_name: str) -> None:
    b = ["--bootstrap-server", shared_broker.bootstrap]
    created = seaway("topics", "create", topic_name, "--partitions", "2", "--config", "retention.ms=60000", *b)
    assert (created.returncode, created.stdout) == (0, f"Created topic {topic_name}.\n".encode())
    listed = seaway("topics", "list", *b)
    assert listed.returncode == 0 and topic_name in listed.stdout.decode().splitlines()

    described = seaway("topics", "describe", topic_name, *b).stdout.decode().splitlines()
    assert described[0].split("\t") == [f"Topic: {topic_name}", "PartitionCount: 2", "ReplicationFactor: 1",
                                        "Configs: retention.ms=60000"]
    assert described[2].split("\t")[1:] == [f"Topic: {topic_name}", "Partition: 1", "Leader: 1", "Replicas: 1",
                                            "Isr: 1"]

    altered = seaway("topics", "alter-config", topic_name, "--add-config", "cleanup.policy=[compact,delete]",
                     "--delete-config", "retention.ms", *b)
    assert altered.returncode == 0, altered.stderr
    info = json.loads(seaway("topics", "describe", topic_name, "--json", *b).stdout)
    assert info[0]["configs"] == {"cleanup.policy": "compact,delete"}
    assert [p["partition"] for p in info[0]["partitions"]] == [0, 1]

    deleted = seaway("topics", "delete", topic_name, *b)
    assert (deleted.returncode, deleted.stdout) == (0, f"Deleted topic {topic_name}.\n".encode())
    assert topic_name not in json.loads(seaway("topics", "list", "--json", *b).stdout)


def test_topics_errors_are_one_line(shared_broker: BrokerProcess, topic_name: str) -> None:
    b = ["--bootstrap-server", shared_broker.bootstrap]
    assert seaway("topics", "create", topic_name, *b).returncode == 0
    again = seaway("topics", "create", topic_name, *b)
    assert again.returncode == 1
    assert again.stderr.decode().strip().splitlines() == [
        f"Error: creating topic {topic_name}: TOPIC_ALREADY_EXISTS: Topic '{topic_name}' already exists."]
    assert seaway("topics", "create", topic_name, "--if-not-exists", *b).returncode == 0
    bad = seaway("topics", "create", topic_name + "-x", "--config", "retention.ms=never", *b)
    assert bad.returncode == 1 and "INVALID_CONFIG" in bad.stderr.decode() and "retention.ms" in bad.stderr.decode()
    missing = seaway("topics", "describe", topic_name + "-nope", *b)
    assert missing.returncode == 1 and len(missing.stderr.decode().strip().splitlines()) == 1
    gone = seaway("topics", "delete", topic_name + "-nope", *b)
    assert gone.returncode == 1 and "UNKNOWN_TOPIC_OR_PART" in gone.stderr.decode()
    assert seaway("topics", "delete", topic_name + "-nope", "--if-exists", *b).returncode == 0


def test_kafka_topics_sh_options_work(shared_broker: BrokerProcess, topic_name: str) -> None:
    """Commands copied from Kafka's docs (``--create --topic T``) were refused ("invalid choice")."""
    b = ["--bootstrap-server", shared_broker.bootstrap]
    created = seaway("topics", *b, "--create", "--topic", topic_name, "--partitions", "2", "--replication-factor",
                     "1", "--config", "retention.ms=60000")
    assert (created.returncode, created.stdout, created.stderr) == (0, f"Created topic {topic_name}.\n".encode(), b"")
    described = seaway("topics", *b, "--describe", f"--topic={topic_name}").stdout.decode().splitlines()
    assert described[0].split("\t")[:2] == [f"Topic: {topic_name}", "PartitionCount: 2"]
    assert topic_name in seaway("topics", "--list", *b).stdout.decode().splitlines()
    two = seaway("topics", *b, "--create", "--list")
    assert (two.returncode, two.stderr.decode()) == (1, "Error: Command must include exactly one action: --list, "
                                                        "--describe, --create, --alter or --delete\n")
    deleted = seaway("topics", *b, "--delete", "--topic", topic_name)
    assert (deleted.returncode, deleted.stdout) == (0, f"Deleted topic {topic_name}.\n".encode())


def test_subcommands_take_kafkas_topic_option(shared_broker: BrokerProcess, topic_name: str) -> None:
    """``seaway topics create --topic t`` (the subcommand and kafka-topics.sh's --topic) was refused
    ("unrecognized arguments: --topic")."""
    b = ["--bootstrap-server", shared_broker.bootstrap]
    created = seaway("topics", "create", "--topic", topic_name, "--partitions", "2", *b)
    assert (created.returncode, created.stdout, created.stderr) == (0, f"Created topic {topic_name}.\n".encode(), b"")
    described = seaway("topics", "describe", f"--topic={topic_name}", *b).stdout.decode().splitlines()
    assert described[0].split("\t")[:2] == [f"Topic: {topic_name}", "PartitionCount: 2"]
    altered = seaway("topics", "alter-config", "--topic", topic_name, "--add-config", "retention.ms=60000", *b)
    assert (altered.returncode, altered.stderr) == (0, b"")
    no_name = seaway("topics", "create", *b, "--topic")
    assert (no_name.returncode, no_name.stderr) == (1, b"Error: Option --topic requires an argument\n")
    deleted = seaway("topics", "delete", "--topic", topic_name, *b)
    assert (deleted.returncode, deleted.stdout) == (0, f"Deleted topic {topic_name}.\n".encode())


def test_command_config_and_unreachable_cluster(shared_broker: BrokerProcess, tmp_path: Path,
                                                topic_name: str) -> None:
    props = tmp_path / "client.properties"
    props.write_text("# a client config\nclient.id=seaway-cli-test\nsocket.timeout.ms = 10000\n")
    ok = seaway("topics", "create", topic_name, "--bootstrap-server", shared_broker.bootstrap,
                "--command-config", str(props))
    assert ok.returncode == 0, ok.stderr
    props.write_text("no.such.client.property=1\n")
    bad = seaway("topics", "list", "--bootstrap-server", shared_broker.bootstrap, "--command-config", str(props))
    assert bad.returncode == 1 and "no.such.client.property" in bad.stderr.decode()
    down = seaway("topics", "list", "--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "2000")
    assert down.returncode == 1
    lines = down.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: no answer from the cluster at 127.0.0.1:1 within 2000 ms")
    for command in ("create", "delete"):  # create was a TimeoutError traceback (librdkafka's own timeout races ours)
        down = seaway("topics", command, topic_name, "--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "1000")
        lines = down.stderr.decode().splitlines()
        assert down.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: no answer from the cluster")
