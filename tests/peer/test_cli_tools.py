"""Kafka's command-line tools against Apache Kafka and Seaway: one script, output compared.

Each step runs one tool by its main class (what ``kafka-topics.sh`` & co. run), first
the whole script against Apache Kafka, then against Seaway, both at once in two threads.
A step passes against Kafka when its exit code and the text it expects match (so every
expectation is Kafka's real behaviour), and against Seaway when, in addition, Seaway's
output is the same as Kafka's after normalization: the broker's address and topic ids
replaced, runs of blanks collapsed (column widths follow the content), lines sorted
where the tool's order depends on timing, a topic's ``Configs:`` list sorted (Kafka's order
is a Java HashMap's), and the exception class of a failure (from stderr) appended; message
wordings are not compared.

Known mismatches are ``xfail(strict=True)`` on the Seaway side with their finding id
(docs/performance.md, "Conformance").
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.peer.apache_kafka import run_tool

pytestmark = [pytest.mark.peer, pytest.mark.timeout(240)]

TOPICS = "org.apache.kafka.tools.TopicCommand"
CONFIGS = "kafka.admin.ConfigCommand"
PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"

T = "peer-cli-topic"
G = "peer-cli-group"


@dataclass(frozen=True)
class Step:
    id: str
    tool: str
    args: str
    expect: str = ""
    rc: int = 0
    stdin: str | None = None
    sort: bool = False
    only: str | None = None
    """Keep only output lines containing this (the brokers are shared with other tests)."""
    drop: tuple[str, ...] = ()
    """Leave out output lines starting with these (what Seaway lacks by design, said where used)."""


LINES = "".join(f"k{i % 5}:v{i}\n" for i in range(40))

SCRIPT = [
    Step("topics-create", TOPICS, f"--create --topic {T} --partitions 3 --config retention.ms=86400000",
         f"Created topic {T}."),
    Step("topics-create-existing", TOPICS, f"--create --topic {T} --partitions 3", "already exists", rc=1),
    Step("topics-list", TOPICS, "--list --exclude-internal", T, only=T),
    Step("topics-describe", TOPICS, f"--describe --topic {T}", "PartitionCount: 3"),
    Step("topics-describe-unknown", TOPICS, f"--describe --topic {T}-nope", "does not exist", rc=1),
    Step("topics-alter-partitions", TOPICS, f"--alter --topic {T} --partitions 4"),
    Step("topics-alter-decrease", TOPICS, f"--alter --topic {T} --partitions 2", "would not be an increase", rc=1),
    Step("configs-add", CONFIGS, f"--alter --entity-type topics --entity-name {T} "
         "--add-config cleanup.policy=compact,min.cleanable.dirty.ratio=0.3",
         f"Completed updating config for topic {T}."),
    Step("configs-describe", CONFIGS, f"--describe --entity-type topics --entity-name {T}",
         "min.cleanable.dirty.ratio=0.3"),
    # every topic config with its synonyms; the brokers set some log.* keys statically (conftest's
    # STATIC_LOG_CONFIGS), so STATIC_BROKER_CONFIG synonyms and Kafka's dropped chains show too.
    # Seaway has no tiered storage: Kafka's two remote.log.* switches are not compared
    Step("configs-describe-all", CONFIGS, f"--describe --all --entity-type topics --entity-name {T}",
         "synonyms={STATIC_BROKER_CONFIG:log.segment.bytes=1073741824, DEFAULT_CONFIG:log.segment.bytes=1073741824}",
         only="synonyms=", drop=("remote.log.copy.disable=", "remote.log.delete.on.disable=")),
    Step("configs-delete", CONFIGS, f"--alter --entity-type topics --entity-name {T} "
         "--delete-config min.cleanable.dirty.ratio,cleanup.policy", "Completed updating config"),
    Step("configs-invalid-value", CONFIGS, f"--alter --entity-type topics --entity-name {T} "
         "--add-config retention.ms=soon", "InvalidConfigurationException", rc=1),
    Step("configs-describe-after", CONFIGS, f"--describe --entity-type topics --entity-name {T}", "retention.ms="),
    Step("configs-broker", CONFIGS, "--describe --entity-type brokers --entity-name 1",
         "Dynamic configs for broker 1 are:"),
    Step("configs-broker-default", CONFIGS, "--describe --entity-type brokers --entity-default",
         "Default configs for brokers in the cluster are:"),
    Step("console-producer", PRODUCER, f"--topic {T} --property parse.key=true --property key.separator=:",
         stdin=LINES),
    Step("console-consumer", CONSUMER, f"--topic {T} --from-beginning --max-messages 40 --group {G} "
         "--property print.key=true --property print.partition=true --timeout-ms 20000", "Partition:0 k4 v4",
         sort=True),
    Step("get-offsets", OFFSETS, f"--topic {T}", f"{T}:0:", sort=True),
    Step("groups-list", GROUPS, "--list", G, only=G),
    Step("groups-describe", GROUPS, f"--describe --group {G}", "LOG-END-OFFSET", sort=True),
    Step("groups-describe-state", GROUPS, f"--describe --group {G} --state", "Empty"),
    Step("groups-reset-dry-run", GROUPS, f"--reset-offsets --group {G} --topic {T}:0 --to-offset 5 --dry-run",
         "NEW-OFFSET"),
    Step("groups-reset-earliest", GROUPS, f"--reset-offsets --group {G} --topic {T} --to-earliest --execute",
         "NEW-OFFSET", sort=True),
    Step("delete-records", DELETE_RECORDS, "--offset-json-file {records_json}", "low_watermark: 2"),
    Step("get-offsets-earliest", OFFSETS, f"--topic {T} --time -2", f"{T}:0:2", sort=True),
    Step("groups-delete", GROUPS, f"--delete --group {G}", "was successful"),
    Step("groups-delete-unknown", GROUPS, f"--delete --group {G}-nope", "does not exist"),
    Step("topics-delete", TOPICS, f"--delete --topic {T}"),
]

KNOWN: dict[str, str] = {}
"""step id -> finding id in docs/performance.md ("Conformance"), where Seaway differs today."""

_ERROR = re.compile(r"(org\.apache\.kafka\.common\.errors\.\w+)")


def _normalize(step: Step, bootstrap: str, rc: int, stdout: str, stderr: str) -> tuple[int, str]:
    text = stdout.replace(bootstrap, "<broker>")
    text = re.sub(r"TopicId: \S+", "TopicId: <id>", text)
    # kafka-topics prints a topic's non-default configs in DescribeConfigs' order, which on Kafka is
    # a Java HashMap's iteration order (ConfigHelperUtils.createResponseConfig): compared as a set
    text = re.sub(r"(?<=Configs: )(\S+)", lambda m: ",".join(sorted(m.group(1).split(","))), text)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and (step.only is None or step.only in line)
             and not line.startswith(step.drop)]
    if step.sort:
        lines.sort()
    error = _ERROR.search(stderr)
    if error:
        lines.append(f"#error {error.group(1).rsplit('.', 1)[1]}")
    return rc, "\n".join(lines)


def _run_script(bootstrap: str, folder: Path) -> dict[str, tuple[int, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    records_json = folder / "delete-records.json"
    records_json.write_text(json.dumps({"version": 1, "partitions": [{"topic": T, "partition": 0, "offset": 2}]}))
    out = {}
    for step in SCRIPT:
        args = step.args.format(records_json=records_json).split()
        done = run_tool(step.tool, "--bootstrap-server", bootstrap, *args, stdin=step.stdin, timeout=60)
        out[step.id] = _normalize(step, bootstrap, done.returncode, done.stdout, done.stderr)
    return out


Outputs = dict[str, dict[str, tuple[int, str]]]


@pytest.fixture(scope="module")
def outputs(bootstraps: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    """``{broker: {step id: (exit code, normalized output)}}``; the two scripts run concurrently."""
    folder = tmp_path_factory.mktemp("cli")
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(_run_script, bootstrap, folder / name) for name, bootstrap in bootstraps.items()}
        return {name: future.result() for name, future in futures.items()}


CASES = [
    pytest.param(step, broker, id=f"{broker}-{step.id}",
                 marks=[pytest.mark.xfail(strict=True, reason=KNOWN[step.id])]
                 if broker == "seaway" and step.id in KNOWN else [])
    for step in SCRIPT for broker in ("kafka", "seaway")
]


@pytest.mark.parametrize(("step", "broker"), CASES)
def test_cli_step(outputs: Outputs, step: Step, broker: str) -> None:
    rc, text = outputs[broker][step.id]
    assert (rc, step.expect in text) == (step.rc, True), f"{broker} exit {rc}:\n{text}"
    if broker != "kafka":
        assert (rc, text) == outputs["kafka"][step.id]
