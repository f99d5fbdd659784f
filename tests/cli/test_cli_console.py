"""``seaway produce`` and ``seaway consume`` end to end: lines in, the same bytes out."""

from __future__ import annotations

import subprocess

import pytest

from tests.cli.clirun import SEAWAY, seaway
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)

LINES = [b"k1:hello world", b"k2:caf\xc3\xa9 \xff\xfe not utf-8", b"k3:", b":empty key", b"k5:a:b:c"]


def _create(broker: BrokerProcess, topic: str, partitions: int = 1) -> None:
    made = seaway("topics", "create", topic, "--partitions", str(partitions), "--bootstrap-server", broker.bootstrap)
    assert made.returncode == 0, made.stderr


def test_produce_then_consume_identical(shared_broker: BrokerProcess, topic_name: str) -> None:
    b = ["--bootstrap-server", shared_broker.bootstrap]
    _create(shared_broker, topic_name)
    produced = seaway("produce", topic_name, "--key-separator", ":", "--header", "app=seaway",
                      "--header", "eq=a=b", "--compression", "gzip", *b, stdin=b"\n".join(LINES) + b"\n")
    assert produced.returncode == 0, produced.stderr
    consumed = seaway("consume", topic_name, "--from-beginning", "--print-key", "--print-headers",
                      "--max-messages", str(len(LINES)), *b)
    assert consumed.returncode == 0, consumed.stderr
    expected = [b"app:seaway,eq:a=b\t" + key + b"\t" + value for key, _, value in (x.partition(b":") for x in LINES)]
    assert consumed.stdout.split(b"\n") == [*expected, b""]
    assert consumed.stderr.decode().strip().endswith(f"Processed a total of {len(LINES)} messages")
    # the silence counts from the assignment: a loaded machine may take a second or more to fetch
    plain = seaway("consume", topic_name, "--from-beginning", "--timeout-ms", "5000", *b)
    assert plain.stdout == b"".join(line.partition(b":")[2] + b"\n" for line in LINES)


def test_partition_offset_and_crlf(shared_broker: BrokerProcess, topic_name: str) -> None:
    b = ["--bootstrap-server", shared_broker.bootstrap]
    _create(shared_broker, topic_name, partitions=2)
    assert seaway("produce", topic_name, "--partition", "1", "--acks", "1", *b,
                  stdin=b"zero\r\none\r\ntwo\r\nthree").returncode == 0
    consumed = seaway("consume", topic_name, "--partition", "1", "--offset", "2", "--timeout-ms", "5000",
                      "--print-key", *b)
    assert consumed.stdout == b"null\ttwo\nnull\tthree\n"
    empty = seaway("consume", topic_name, "--partition", "0", "--from-beginning", "--timeout-ms", "1000", *b)
    assert (empty.returncode, empty.stdout) == (0, b"")


def test_produce_reports_failures(shared_broker: BrokerProcess, topic_name: str) -> None:
    b = ["--bootstrap-server", shared_broker.bootstrap]
    _create(shared_broker, topic_name)
    partial = seaway("produce", topic_name, "--key-separator", "=", *b, stdin=b"a=1\nno separator\nc=3\n")
    assert partial.returncode == 1
    assert "line 2 has no key separator" in partial.stderr.decode()
    assert "2 of 2 record(s) delivered" in partial.stderr.decode()
    wrong = seaway("produce", topic_name, "--partition", "9", "--timeout-ms", "5000", *b, stdin=b"x\n")
    assert wrong.returncode == 1 and "0 of 1 record(s) delivered" in wrong.stderr.decode()
    missing = seaway("consume", topic_name + "-nope", "--timeout-ms", "1000", *b)
    assert missing.returncode == 1 and missing.stderr.decode().splitlines()[-1].startswith("Error: topic ")


def test_group_consumer_resumes_where_it_left_off(shared_broker: BrokerProcess, topic_name: str) -> None:
    b = ["--bootstrap-server", shared_broker.bootstrap]
    _create(shared_broker, topic_name)
    assert seaway("produce", topic_name, *b, stdin=b"a\nb\n").returncode == 0
    group = ["--group", topic_name + "-g", "--from-beginning", "--timeout-ms", "20000"]
    first = seaway("consume", topic_name, *group, "--max-messages", "2", *b)
    assert (first.returncode, first.stdout) == (0, b"a\nb\n"), first.stderr
    assert seaway("produce", topic_name, *b, stdin=b"c\n").returncode == 0
    second = seaway("consume", topic_name, *group, "--max-messages", "1", *b)
    assert (second.returncode, second.stdout) == (0, b"c\n"), second.stderr


def test_consume_into_head_exits_once_head_has_its_line(shared_broker: BrokerProcess, topic_name: str) -> None:
    """``seaway consume T | head -1`` ends once head exits, quietly, even when the topic is quiet.

    Its few records fit in the pipe's buffer, so no write ever fails: the command used to wait
    for more records forever after head had gone."""
    b = ["--bootstrap-server", shared_broker.bootstrap]
    _create(shared_broker, topic_name)
    assert seaway("produce", topic_name, *b, stdin=b"one\ntwo\nthree\n").returncode == 0
    # it used to wait forever: the timeout is the proof, not a measure of speed
    piped = subprocess.run(f"{SEAWAY} consume {topic_name} --from-beginning --bootstrap-server "
                           f"{shared_broker.bootstrap} | head -1", shell=True, capture_output=True, timeout=45)
    assert piped.stdout == b"one\n"
    assert b"Traceback" not in piped.stderr and b"BrokenPipe" not in piped.stderr, piped.stderr


def test_consume_waits_for_a_topic_that_appears(shared_broker: BrokerProcess, topic_name: str) -> None:
    """Run right after a connector is created, consume finds the topic once it exists."""
    b = ["--bootstrap-server", shared_broker.bootstrap]
    consumer = subprocess.Popen([SEAWAY, "consume", topic_name, "--from-beginning", "--max-messages", "1", *b],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    try:
        # the topic is created only once the command says it waits for it (a fixed sleep lost
        # that race to a slow start on a loaded machine); unbuffered, readline reads no further
        assert consumer.stderr is not None
        noted: list[bytes] = []
        while not noted or b"Waiting up to" not in noted[-1]:
            line = consumer.stderr.readline()
            assert line, b"".join(noted)
            noted.append(line)
        assert seaway("produce", topic_name, *b, stdin=b"late\n").returncode == 0
        out, rest = consumer.communicate(timeout=30)
        err = b"".join(noted) + rest
    finally:
        if consumer.poll() is None:
            consumer.kill()
            consumer.wait()
    assert (consumer.returncode, out) == (0, b"late\n"), err
    assert f"Waiting up to 30s for topic {topic_name} to exist" in err.decode()
