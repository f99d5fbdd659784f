"""``seaway groups`` end to end: the installed command against a real broker and real consumers.

What is checked is what a user sees: kafka-consumer-groups.sh's columns (plus STATUS), the lag
figures against what was produced and committed, reset-offsets refusing while the group is active
and moving the committed offsets once it is not (read back through the AdminClient, not through
the tool), delete, and errors as one line with a non-zero exit.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

from tests.cli.clirun import seaway
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(120)

OFFSETS_HEADER = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                  "CLIENT-ID", "STATUS"]


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _setup(bootstrap: str, topic: str, partitions: int, per_partition: int) -> AdminClient:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, f"v{i}".encode(), partition=p)
    assert producer.flush(30) == 0
    return admin


def _consumer(bootstrap: str, group: str, topic: str) -> Consumer:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": "groups-test",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    return consumer


def _consume(consumer: Consumer, n: int) -> None:
    got = 0
    deadline = time.monotonic() + 40
    while got < n and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got += 1
    assert got == n


def _wait_assigned(consumer: Consumer) -> None:
    deadline = time.monotonic() + 40
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.2)
    assert consumer.assignment()


def _committed(admin: AdminClient, group: str) -> dict[int, int]:
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    return {tp.partition: tp.offset for tp in result.topic_partitions}


def _table(stdout: bytes) -> list[list[str]]:
    """Kafka's tables: a blank line, the header, rows split on runs of blanks."""
    text = stdout.decode()
    assert text.startswith("\n"), text
    return [line.split() for line in text.strip("\n").splitlines()]


def _run(*args: str) -> tuple[int, bytes, str]:
    done = seaway("groups", *args, timeout=60)
    return done.returncode, done.stdout, done.stderr.decode()


@pytest.fixture
def topic() -> str:
    return _name("gt")


@pytest.fixture
def group() -> str:
    return _name("gg")


@pytest.fixture
def active(shared_broker: BrokerProcess, topic: str, group: str) -> Iterator[tuple[AdminClient, Consumer]]:
    """A 2-partition topic with 10 records each; a live consumer of both that committed 3 on each."""
    admin = _setup(shared_broker.bootstrap, topic, 2, 10)
    consumer = _consumer(shared_broker.bootstrap, group, topic)
    _consume(consumer, 6)
    consumer.commit(offsets=[TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 3)], asynchronous=False)
    try:
        yield admin, consumer
    finally:
        consumer.close()


def test_describe_columns_and_lag(shared_broker: BrokerProcess, topic: str, group: str,
                                  active: tuple[AdminClient, Consumer]) -> None:
    admin, consumer = active
    assert _committed(admin, group) == {0: 3, 1: 3}
    rc, out, err = _run("describe", "--bootstrap-server", shared_broker.bootstrap, "--group", group)
    assert rc == 0, err
    table = _table(out)
    assert table[0] == OFFSETS_HEADER
    rows = {int(r[2]): r for r in table[1:]}
    assert sorted(rows) == [0, 1]
    member = consumer.memberid()
    for row in rows.values():
        assert row[0] == group and row[1] == topic
        assert row[3:6] == ["3", "10", "7"]
        assert row[6] == member and row[8] == "groups-test"
        assert row[9] == "OK"  # one observation shows no progress either way: Burrow's OK

    # --time-lag reads the record at each committed offset: written before this test described it
    started = time.time()
    rc, out, err = _run("describe", "--bootstrap-server", shared_broker.bootstrap, "--group", group, "--time-lag")
    assert rc == 0, err
    timed = _table(out)
    assert timed[0] == [*OFFSETS_HEADER, "TIME-LAG-MS"]
    for row in timed[1:]:
        assert 0 < int(row[10]) < (time.time() - started + 120) * 1000

    # kafka-consumer-groups.sh's spelling gives the same table
    rc, out2, _ = _run("--bootstrap-server", shared_broker.bootstrap, "--describe", "--group", group, "--offsets")
    assert rc == 0 and _table(out2) == table

    rc, out, _ = _run("describe", "--bootstrap-server", shared_broker.bootstrap, "--group", group, "--members")
    assert rc == 0
    members = _table(out)
    assert members[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    assert members[1][0] == group and members[1][1] == member and members[1][3:] == ["groups-test", "2"]

    rc, out, _ = _run("describe", "--bootstrap-server", shared_broker.bootstrap, "--group", group, "--state")
    assert rc == 0
    lines = out.decode().strip("\n").splitlines()
    assert lines[0].split() == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
    assert lines[1].split()[0] == group and lines[1].split()[-2:] == ["Stable", "1"]


def test_status_column_stalled_and_stopped(shared_broker: BrokerProcess, topic: str, group: str,
                                           active: tuple[AdminClient, Consumer]) -> None:
    """A live member that does not move its lagging offsets is STALLED over a window of observations;
    once the group is empty nothing will move them: STOPPED."""
    _, consumer = active
    rc, out, err = _run("describe", "--bootstrap-server", shared_broker.bootstrap, "--group", group,
                        "--lag-samples", "3", "--lag-interval-ms", "200")
    assert rc == 0, err
    rows = _table(out)[1:]
    assert [r[9] for r in rows] == ["STALLED", "STALLED"]  # both lag by 7 and do not move
    consumer.close()
    rc, out, err = _run("describe", "--bootstrap-server", shared_broker.bootstrap, "--group", group)
    assert rc == 0 and "has no active members" in err
    rows = _table(out)[1:]
    assert [(r[6], r[9]) for r in rows] == [("-", "STOPPED"), ("-", "STOPPED")]


def test_reset_offsets_refused_while_active_then_moves(shared_broker: BrokerProcess, topic: str, group: str,
                                                      active: tuple[AdminClient, Consumer]) -> None:
    admin, consumer = active
    bootstrap = shared_broker.bootstrap
    before = _committed(admin, group)
    rc, out, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", topic,
                        "--to-earliest", "--execute")
    assert rc == 1
    assert f"Assignments can only be reset if the group '{group}' is inactive, but the current state is Stable." in err
    assert _committed(admin, group) == before  # nothing moved

    consumer.close()
    # dry run (Kafka's default, with its warning): shows the plan, moves nothing
    rc, out, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", topic,
                        "--to-latest")
    assert rc == 0, err
    assert out.startswith(b"WARN: No action will be performed as the --execute option is missing.")
    plan = [line.split() for line in out.decode().split("\n\n", 1)[1].strip("\n").splitlines()]
    assert plan == [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], [group, topic, "0", "10"], [group, topic, "1", "10"]]
    assert _committed(admin, group) == before

    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", topic,
                      "--to-earliest", "--execute")
    assert rc == 0, err
    assert _committed(admin, group) == {0: 0, 1: 0}

    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", f"{topic}:1",
                      "--to-offset", "7", "--execute")
    assert rc == 0, err
    assert _committed(admin, group) == {0: 0, 1: 7}

    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--all-topics",
                      "--shift-by", "5", "--execute")
    assert rc == 0, err
    assert _committed(admin, group) == {0: 5, 1: 10}  # 7 + 5 is past the end: kept at 10, as Kafka does
    # ... with Kafka's warning (it was silent)
    assert err == (f"WARN New offset (12) is higher than latest offset for topic partition {topic}-1. "
                   "Value will be set to 10\n")
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", f"{topic}:0",
                      "--to-offset", "-4", "--dry-run")
    assert rc == 0 and err == (f"WARN New offset (-4) is lower than earliest offset for topic partition {topic}-0. "
                               "Value will be set to 0\n")

    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--all-topics",
                      "--to-datetime", "2000-01-01T00:00:00.000", "--execute")
    assert rc == 0, err
    assert _committed(admin, group) == {0: 0, 1: 0}  # every record is younger than 2000
    # a time after every record: Kafka's getLogTimestampOffsets says "is empty" for any partition without an
    # offset for the time (not only an empty one) and falls back to the log end; so does Seaway, word for word
    rc, out, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--all-topics",
                        "--to-datetime", "2999-01-01T00:00:00.000", "--execute")
    assert rc == 0, err
    for p in (0, 1):
        warn = f"\nWarn: Partition {p} from topic {topic} is empty. Falling back to latest known offset.\n"
        assert warn in out.decode()
    assert _committed(admin, group) == {0: 10, 1: 10}
    assert _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--all-topics",
                "--to-earliest", "--execute")[0] == 0

    rc, out, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--all-topics",
                        "--to-current", "--execute")
    assert rc == 0 and out.decode().split()[-4:] == [group, topic, "1", "0"], err
    assert _committed(admin, group) == {0: 0, 1: 0}

    rc, out, _ = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", topic,
                      "--to-latest", "--dry-run", "--export")
    assert rc == 0 and out.decode().split() == [f"{topic},0,10", f"{topic},1,10"]

    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", f"{topic}:9",
                      "--to-earliest", "--execute")
    assert rc == 1 and f'The partitions "{topic}-9" do not exist' in err


def test_list_and_delete(shared_broker: BrokerProcess, topic: str, group: str) -> None:
    bootstrap = shared_broker.bootstrap
    admin = _setup(bootstrap, topic, 1, 3)
    consumer = _consumer(bootstrap, group, topic)
    _consume(consumer, 3)
    consumer.commit(asynchronous=False)
    _wait_assigned(consumer)

    rc, out, _ = _run("list", "--bootstrap-server", bootstrap)
    assert rc == 0 and group in out.decode().split()
    rc, out, _ = _run("--list", "--bootstrap-server", bootstrap, "--state", "stable")
    lines = [line.split() for line in out.decode().splitlines()]
    assert rc == 0 and lines[0] == ["GROUP", "STATE"] and [group, "Stable"] in lines

    rc, _, err = _run("delete", "--bootstrap-server", bootstrap, "--group", group)
    assert rc == 1 and f"* Group '{group}' could not be deleted due to: NON_EMPTY_GROUP" in err

    consumer.close()
    rc, out, _ = _run("list", "--bootstrap-server", bootstrap, "--state", "empty")
    assert rc == 0 and [group, "Empty"] in [line.split() for line in out.decode().splitlines()]
    rc, out, err = _run("delete", "--bootstrap-server", bootstrap, "--group", group)
    assert rc == 0, err
    assert out.decode() == f"Deletion of requested consumer groups ('{group}') was successful.\n"
    assert _committed(admin, group) == {}
    rc, out, err = _run("describe", "--bootstrap-server", bootstrap, "--group", group)
    assert rc == 1 and err.strip() == f"Error: Consumer group '{group}' does not exist." and out == b""


def test_usage_errors_are_one_line(shared_broker: BrokerProcess, group: str) -> None:
    bootstrap = shared_broker.bootstrap
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--to-earliest")
    assert rc == 1 and err.strip() == "Error: One of the reset scopes should be defined: --all-topics, --topic."
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--all-topics",
                      "--to-datetime", "yesterday")
    assert rc == 1 and err.startswith("Error: Error parsing timestamp") and len(err.strip().splitlines()) == 1
    rc, _, err = _run("describe", "--bootstrap-server", bootstrap)
    assert rc == 1 and "--all-groups, --group" in err
    rc, _, err = _run("--list", "--describe", "--bootstrap-server", bootstrap)  # was argparse's "invalid choice"
    assert (rc, err) == (1, "Error: Command must include exactly one action: --list, --describe, --delete, "
                            "--reset-offsets, --delete-offsets\n")
    rc, _, err = _run("list", "--bootstrap-server", bootstrap, "--state", "sleepy")
    assert rc == 1 and "Invalid state list 'sleepy'" in err
    rc, _, err = _run("list", "--bootstrap-server", "127.0.0.1:1", "--timeout", "1500")
    assert rc == 1 and err.startswith("Error: ") and len(err.strip().splitlines()) == 1


def test_reset_offsets_from_file(shared_broker: BrokerProcess, topic: str, group: str, tmp_path: Path,
                                 active: tuple[AdminClient, Consumer]) -> None:
    """kafka-consumer-groups.sh's --from-file: the CSV --export prints (topic,partition,offset for one group,
    group,topic,partition,offset otherwise), offsets kept within the log; refused while the group is active."""
    admin, consumer = active
    bootstrap = shared_broker.bootstrap
    plan = tmp_path / "plan.csv"
    plan.write_text(f"{topic},0,4\n{topic},1,99\n\n")
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--from-file", str(plan),
                      "--execute")
    assert rc == 1 and "is inactive, but the current state is Stable" in err
    assert _committed(admin, group) == {0: 3, 1: 3}
    consumer.close()

    rc, out, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--from-file", str(plan),
                        "--dry-run")
    assert rc == 0, err
    assert _table(out)[1:] == [[group, topic, "0", "4"], [group, topic, "1", "10"]]  # 99 is past the end: 10
    assert _committed(admin, group) == {0: 3, 1: 3}
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--from-file", str(plan),
                      "--execute")
    assert rc == 0, err
    assert _committed(admin, group) == {0: 4, 1: 10}

    # what --export wrote reads back; the multi-group format names the group on each line
    rc, out, _ = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", topic,
                      "--to-earliest", "--dry-run", "--export")
    plan.write_bytes(out)
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--from-file", str(plan),
                      "--execute")
    assert rc == 0, err
    assert _committed(admin, group) == {0: 0, 1: 0}
    plan.write_text(f"{group},{topic},1,6\nother-{group},{topic},0,2\n")
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--group", f"x-{group}",
                      "--from-file", str(plan), "--execute")
    assert rc == 1 and f"No reset plan for group x-{group} found" in err
    assert _committed(admin, group) == {0: 0, 1: 6}

    plan.write_text(f"{topic},0\n")
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--from-file", str(plan),
                      "--execute")
    assert rc == 1 and "expected group,topic,partition,offset" in err
    plan.write_bytes(b"\xff\xfe,0,1\n")  # the codec's message alone did not say which file
    rc, _, err = _run("reset-offsets", "--bootstrap-server", bootstrap, "--group", group, "--from-file", str(plan))
    assert (rc, err) == (1, f"Error: --from-file {plan}: not UTF-8 text (byte 0)\n")


def test_delete_offsets(shared_broker: BrokerProcess, topic: str, group: str,
                        active: tuple[AdminClient, Consumer]) -> None:
    """--delete-offsets: refused for a topic the active group subscribes to (GROUP_SUBSCRIBED_TO_TOPIC),
    done once it is not, for some partitions or the whole topic; an unknown topic is a partition error."""
    admin, consumer = active
    bootstrap = shared_broker.bootstrap
    rc, out, err = _run("delete-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", topic)
    assert rc == 1 and "Encounter some partition level error" in err, err
    rows = _table(out)
    assert rows[0] == ["TOPIC", "PARTITION", "STATUS"]
    assert [r[:3] for r in rows[1:]] == [[topic, "0", "Error:"], [topic, "1", "Error:"]]
    assert "GROUP_SUBSCRIBED_TO_TOPIC: The consumer group is actively subscribed to the topic." in out.decode()
    assert _committed(admin, group) == {0: 3, 1: 3}

    consumer.close()
    rc, out, err = _run("--delete-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", f"{topic}:1")
    assert rc == 0, err
    assert out.decode().startswith(f"Request succeed for deleting offsets with topic {topic}:1 group {group}\n")
    assert _table(out.decode().split("\n", 1)[1].encode())[1:] == [[topic, "1", "Successful"]]
    assert _committed(admin, group) == {0: 3}

    missing = _name("nope")
    rc, out, err = _run("delete-offsets", "--bootstrap-server", bootstrap, "--group", group, "--topic", topic,
                        "--topic", missing)
    assert rc == 1 and "Encounter some partition level error" in err
    rows = _table(out)[1:]  # Kafka's order: topic + partition as a string
    assert rows[:2] == [[topic, "0", "Successful"], [topic, "1", "Successful"]]
    assert rows[2][:3] == [missing, "Not", "Provided"] and "UNKNOWN_TOPIC_OR_PARTITION:" in rows[2]
    assert _committed(admin, group) == {}
