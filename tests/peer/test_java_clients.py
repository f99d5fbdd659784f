"""Kafka's own Java clients (producer, consumer groups, admin) against Apache Kafka and Seaway.

``java/PeerClients.java`` is compiled with javac against Kafka's jars at test time and
run once per mode and broker; it prints one ``STEP <name> OK <detail>`` or ``STEP <name>
FAIL <exception>: <message>`` line per check. Every check has Kafka's answer written
down here (``EXPECTED``), asserted against Apache Kafka (so the expectation is Kafka's
behaviour, not a guess) and against Seaway. Failures compare the exception class only:
the clients raise the class from the broker's error code, while the message text is the
broker's own (differences in wording are listed in docs/performance.md ("Conformance")).

Known mismatches are ``xfail(strict=True)`` on the Seaway side with their finding id, so
the test flips to a failure (XPASS) the day Seaway is fixed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from tests.peer.apache_kafka import JVM_TOOL_OPTS, _tool_log4j
from tests.peer.jars import classpath

pytestmark = [pytest.mark.peer, pytest.mark.timeout(240)]

SOURCE = Path(__file__).resolve().parent / "java" / "PeerClients.java"

GROUP = {
    "first-member-gets-all": "OK a=6",
    "second-member-rebalances": "OK a=3 b=3 union=6",
    "all-records-consumed": "OK distinct=600",
    "leaving-member-rebalances": "OK a=6",
    "committed-offsets": "OK sum=600",
    "group-empty-after-close": "OK state=Empty members=0",
}

MODES: dict[str, tuple[str, ...]] = {
    "producer": ("producer",),
    "group-range": ("group", "range"),
    "group-cooperative-sticky": ("group", "cooperative-sticky"),
    "group-consumer-protocol": ("group", "consumer"),
    "admin": ("admin",),
}

EXPECTED: dict[str, dict[str, str]] = {
    "producer": {
        "idempotent-send": "OK acked=3000 partitions=3 contiguous=true",
        "idempotent-read-back": "OK records=3000 distinct=3000 ordered-per-key=true",
    },
    "group-range": GROUP,
    "group-cooperative-sticky": GROUP,
    "group-consumer-protocol": GROUP,
    "admin": {
        "describe-cluster": "OK nodes=1 controller-known=true cluster-id-set=true",
        "create-topic-validate-only": "OK listed=false",
        "create-topic": "OK partitions=2 rf=1",
        "create-topic-again": "FAIL TopicExistsException",
        "create-topic-bad-config": "FAIL InvalidConfigurationException",
        "list-topics": "OK listed=true",
        "describe-topic": "OK partitions=2 leaders=[1, 1] internal=false",
        "describe-unknown-topic": "FAIL UnknownTopicOrPartitionException",
        "create-partitions": "OK partitions=4",
        "create-partitions-decrease": "FAIL InvalidPartitionsException",
        "describe-topic-config": "OK retention.ms=123456789/DYNAMIC_TOPIC_CONFIG cleanup.policy=delete/DEFAULT_CONFIG",
        "incremental-alter-config":
            "OK retention.ms=604800000/DEFAULT_CONFIG cleanup.policy=compact,delete/DYNAMIC_TOPIC_CONFIG",
        "incremental-alter-config-invalid": "FAIL InvalidConfigurationException",
        "describe-broker-config": "OK log.retention.hours=168/DEFAULT_CONFIG num.partitions-known=true",
        "list-offsets": "OK earliest=0 latest=109",
        # 7 records with timestamps base+0,10,20,90,30,90,40: the first of the two maxima,
        # the first record at or after base+25, none after base+91
        "list-offsets-max-timestamp": "OK offset=3",
        "list-offsets-for-timestamp": "OK at-base+25=3 after-last=-1",
        "delete-records": "OK low-watermark=10 earliest=10 latest=109",
        "delete-records-beyond-end": "FAIL OffsetOutOfRangeException",
        "alter-group-offsets": "OK ok",
        "list-groups": "OK listed type=Classic protocol= state=Empty",
        "describe-group": "OK state=Empty members=0 simple=true",
        "list-group-offsets": "OK {%(topic)s-0=42:meta, %(topic)s-1=7:}",
        "delete-group-offsets": "OK remaining=[%(topic)s-1]",
        "delete-group": "OK listed-after=false",
        "delete-unknown-group": "FAIL GroupIdNotFoundException",
        "delete-topic": "OK listed-after=false",
    },
}

KNOWN: dict[tuple[str, str], str] = {}
"""(mode, step) -> finding id in docs/performance.md ("Conformance"), where Seaway differs today."""

CASES = [
    pytest.param(mode, step, broker, id=f"{broker}-{mode}-{step}",
                 marks=[pytest.mark.xfail(strict=True, reason=KNOWN[mode, step])]
                 if broker == "seaway" and (mode, step) in KNOWN else [])
    for mode, steps in EXPECTED.items() for step in steps for broker in ("kafka", "seaway")
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("peer-clients")
    done = subprocess.run(["javac", "-d", str(out), "-cp", classpath(), str(SOURCE)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


Run = Callable[[str, str], tuple[str, dict[str, str]]]


@pytest.fixture(scope="module")
def run_mode(compiled: Path, bootstraps: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``run_mode(broker, mode) -> (admin topic, {step: line})``, each pair run once per module."""
    prefix = tmp_path_factory.mktemp("prefix").name.replace("_", "-")

    @cache
    def run(broker: str, mode: str) -> tuple[str, dict[str, str]]:
        args = ["java", *JVM_TOOL_OPTS, _tool_log4j(), "-cp", f"{compiled}:{classpath()}", "PeerClients",
                MODES[mode][0], bootstraps[broker], f"{prefix}-{mode}", *MODES[mode][1:]]
        done = subprocess.run(args, capture_output=True, text=True, timeout=200, check=False)
        steps = {}
        for line in done.stdout.splitlines():
            if line.startswith("STEP "):
                _, name, rest = line.split(" ", 2)
                steps[name] = rest
        return f"{prefix}-{mode}-admin", steps | {"__stderr__": done.stderr[-3000:]}

    return run


def _comparable(line: str) -> str:
    """An OK line as is; a FAIL line as ``FAIL <exception class>`` (messages are each broker's own)."""
    return line.split(":", 1)[0] if line.startswith("FAIL ") else line


@pytest.mark.parametrize(("mode", "step", "broker"), CASES)
def test_java_client_step(run_mode: Run, mode: str, step: str, broker: str) -> None:
    topic, steps = run_mode(broker, mode)
    assert step in steps, f"{step} did not run (an earlier step failed); stderr:\n{steps['__stderr__']}"
    expected = EXPECTED[mode][step] % {"topic": topic} if "%(" in EXPECTED[mode][step] else EXPECTED[mode][step]
    assert _comparable(steps[step]) == expected, f"{broker}: {steps[step]}"
