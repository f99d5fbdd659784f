"""MirrorMaker 2's pure logic: record formats, replication policies, filters, offset translation, configs.

No broker here; the expected values of the offset-translation tests are those of Kafka's own
``OffsetSyncStoreTest`` (the 64-slot store must keep exactly the syncs Kafka's keeps).
"""

from __future__ import annotations

import random
import struct
from typing import Any

import pytest
from seaway.connect.api import ConfigError
from seaway.connectors.mirror import (
    Checkpoint,
    DefaultReplicationPolicy,
    Heartbeat,
    IdentityReplicationPolicy,
    MirrorCheckpointConnector,
    MirrorHeartbeatConnector,
    MirrorSourceConnector,
    OffsetSync,
)
from seaway.connectors.mirror.config import SOURCE_CONFIG_DEF, SourceConfig, decode_topic_partition
from seaway.connectors.mirror.filters import DefaultConfigPropertyFilter, DefaultGroupFilter, DefaultTopicFilter
from seaway.connectors.mirror.formats import FormatError
from seaway.connectors.mirror.maker_config import FlowPair, MirrorMakerConfig
from seaway.connectors.mirror.offset_sync_store import SYNCS_PER_PARTITION, OffsetSyncStore
from seaway.connectors.mirror.offset_sync_writer import OffsetSyncWriter, PartitionState
from seaway.connectors.mirror.source_connector import is_cycle, should_replicate_topic
from seaway.kafka_clients import STREAMING_CONSUMER

# -- formats: Kafka's Struct encoding, checked byte by byte ---------------------------------------


def test_offset_sync_bytes_are_kafkas() -> None:
    sync = OffsetSync("orders", 3, 100, 42)
    assert sync.record_key() == b"\x00\x06orders\x00\x00\x00\x03"
    assert sync.record_value() == struct.pack(">qq", 100, 42)
    assert OffsetSync.decode(sync.record_key(), sync.record_value()) == sync


def test_checkpoint_bytes_have_the_version_header() -> None:
    cp = Checkpoint("app", "A.orders", 3, 1000, 990, "m")
    assert cp.record_key() == b"\x00\x03app\x00\x08A.orders\x00\x00\x00\x03"
    assert cp.record_value() == b"\x00\x00" + struct.pack(">qq", 1000, 990) + b"\x00\x01m"
    assert Checkpoint.decode(cp.record_key(), cp.record_value()) == cp
    assert cp.connect_partition() == {"group": "app", "topic": "A.orders", "partition": 3}


def test_heartbeat_bytes() -> None:
    hb = Heartbeat("A", "B", 1_700_000_000_000)
    assert hb.record_key() == b"\x00\x01A\x00\x01B"
    assert hb.record_value() == b"\x00\x00" + struct.pack(">q", 1_700_000_000_000)
    assert Heartbeat.decode(hb.record_key(), hb.record_value()) == hb


@pytest.mark.parametrize(("key", "value"), [
    (None, b"\x00" * 16),                                 # no key
    (b"\x00", b"\x00" * 16),                              # truncated length
    (b"\x7f\xff" + b"x" * 10 + b"\x00\x00\x00\x01", b"\x00" * 16),  # length past the end
    (b"\xff\xff\x00\x00\x00\x01", b"\x00" * 16),          # negative length
    (b"\x00\x01\xff\x00\x00\x00\x01", b"\x00" * 16),      # not UTF-8
    (b"\x00\x01t\x00\x00\x00\x01", b"\x00" * 15),          # value one byte short
])
def test_malformed_offset_syncs_raise_format_error(key: bytes | None, value: bytes) -> None:
    with pytest.raises(FormatError):
        OffsetSync.decode(key, value)


def test_malformed_checkpoint_and_heartbeat_raise_format_error() -> None:
    with pytest.raises(FormatError):
        Checkpoint.decode(b"\x00\x01g\x00\x01t\x00\x00\x00\x00", b"\x00\x00" + b"\x00" * 17)  # metadata cut
    with pytest.raises(FormatError):
        Heartbeat.decode(b"\x00\x01A", b"\x00\x00" + b"\x00" * 8)  # target alias missing
    with pytest.raises(FormatError):
        OffsetSync("x" * 40_000, 0, 0, 0).record_key()  # Kafka's STRING holds at most 32767 bytes


# -- replication policies ----------------------------------------------------------------------------


def test_default_policy_names() -> None:
    policy = DefaultReplicationPolicy()
    assert policy.format_remote_topic("A", "orders") == "A.orders"
    assert policy.topic_source("B.A.orders") == "B"
    assert policy.upstream_topic("B.A.orders") == "A.orders"
    assert policy.original_topic("B.A.orders") == "orders"
    assert policy.topic_source("orders") is None and policy.upstream_topic("orders") is None
    assert policy.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"
    assert policy.checkpoints_topic("A") == "A.checkpoints.internal"
    assert policy.is_heartbeats_topic("B.A.heartbeats") and not policy.is_heartbeats_topic("A.orders")
    for internal in ("__consumer_offsets", ".hidden", "connect-offsets-internal", "mm2-offsets.A.internal"):
        assert policy.is_internal_topic(internal)


def test_custom_separator_and_internal_separator_flag() -> None:
    policy = DefaultReplicationPolicy()
    policy.configure({"replication.policy.separator": "__"})
    assert policy.format_remote_topic("A", "orders.eu") == "A__orders.eu"
    assert policy.topic_source("A__orders.eu") == "A" and policy.upstream_topic("A__orders.eu") == "orders.eu"
    assert policy.checkpoints_topic("A") == "A__checkpoints__internal"
    legacy = DefaultReplicationPolicy()
    legacy.configure({"replication.policy.separator": "__",
                      "replication.policy.internal.topic.separator.enabled": "false"})
    assert legacy.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"


def test_identity_policy_keeps_names_but_prefixes_heartbeats() -> None:
    policy = IdentityReplicationPolicy()
    policy.configure({"source.cluster.alias": "A"})
    assert policy.format_remote_topic("A", "orders") == "orders"
    assert policy.format_remote_topic("A", "heartbeats") == "A.heartbeats"
    assert policy.topic_source("orders") == "A" and policy.upstream_topic("orders") == "orders"
    assert policy.original_topic("orders") == "orders"


def test_cycles_are_never_mirrored_back() -> None:
    policy = DefaultReplicationPolicy()
    topics = DefaultTopicFilter()
    # on B, mirroring B -> A: B's own topic goes, the copy of A's topic does not (it came from A)
    assert should_replicate_topic("orders", topics, policy, "A", True)
    assert not should_replicate_topic("A.orders", topics, policy, "A", True)
    assert is_cycle(policy, "C.A.orders", "A")  # two hops back
    assert not should_replicate_topic("mm2-offset-syncs.A.internal", topics, policy, "A", True)
    assert should_replicate_topic("C.heartbeats", DefaultTopicFilter(), policy, "A", True)
    identity = IdentityReplicationPolicy()
    assert not is_cycle(identity, "orders", "A")  # Identity cannot tell (KIP-545: one-way flows only)


def test_filters_match_whole_names_and_excludes_win() -> None:
    topics = DefaultTopicFilter()
    topics.configure({"topics": "orders.*, payments", "topics.exclude": ".*-test"})
    assert topics.should_replicate_topic("orders-eu") and topics.should_replicate_topic("payments")
    assert not topics.should_replicate_topic("payments2") and not topics.should_replicate_topic("orders-test")
    empty = DefaultTopicFilter()
    empty.configure({"topics": ""})
    assert not empty.should_replicate_topic("orders")  # an empty list matches nothing
    groups = DefaultGroupFilter()
    assert groups.should_replicate_group("app") and not groups.should_replicate_group("connect-sink")
    assert not groups.should_replicate_group("console-consumer-123")
    props = DefaultConfigPropertyFilter()
    assert props.should_replicate_config_property("retention.ms")
    assert not props.should_replicate_config_property("min.insync.replicas")


# -- offset syncs: when one is written, how they are translated --------------------------------------


def test_partition_state_syncs_first_lag_gap_and_rewind() -> None:
    state = PartitionState(max_offset_lag=10)
    decisions = []
    for upstream, downstream in [(0, 0), (1, 1), (2, 2), (11, 11), (12, 12)]:
        decisions.append(state.update(upstream, downstream))
        if decisions[-1]:
            state.should_sync = False
    assert decisions == [True, False, False, True, False]  # first; 11: upstream gap (2 -> 11)
    state = PartitionState(max_offset_lag=10)
    syncs = []
    for offset in range(40):
        if state.update(offset, offset):
            syncs.append(offset)
            state.should_sync = False
    assert syncs == [0, 11, 22, 33]  # downstream - (last sync + 1) >= offset.lag.max
    assert state.update(40, 5)  # downstream went backwards


def _writer_state(writer: OffsetSyncWriter) -> tuple[Any, ...]:
    states = {tp: (s.previous_upstream, s.previous_downstream, s.last_sync_downstream)
              for tp, s in writer._states.items()}
    return states, {tp: list(q) for tp, q in writer._pending.items()}, dict(writer._delayed)


@pytest.mark.parametrize("lag", [0, 1, 3, 100])
def test_batch_offset_syncs_equal_record_by_record(lag: int) -> None:
    """record_batch computes the syncs of consecutive runs; it must decide exactly as record() per record."""
    rng = random.Random(lag)
    per_record = OffsetSyncWriter({"bootstrap.servers": "127.0.0.1:1"}, "syncs", lag)
    per_batch = OffsetSyncWriter({"bootstrap.servers": "127.0.0.1:1"}, "syncs", lag)
    up, down = 0, 0
    for _ in range(300):
        n = rng.choice([1, 2, 3, 7, 50, 400])
        if rng.random() < 0.2:  # a gap upstream before the batch (compaction, transaction markers)
            up += rng.randrange(1, 5)
        if rng.random() < 0.05:  # the remote partition went backwards (truncated, recreated)
            down = max(0, down - rng.randrange(1, 50))
        ups = list(range(up, up + n))
        downs = list(range(down, down + n))
        if rng.random() < 0.1 and n > 3:
            ups = ups[:n // 2] + [u + 3 for u in ups[n // 2:]]  # a gap inside the batch
        if rng.random() < 0.1 and n > 3:
            downs[n // 2] = -1  # a tolerated produce error
        for u, d in zip(ups, downs, strict=True):
            if d >= 0:
                per_record.record(("t", 0), u, d)
        per_batch.record_batch(("t", 0), ups, downs)
        assert _writer_state(per_batch) == _writer_state(per_record)
        if rng.random() < 0.1:
            per_record.promote_delayed()
            per_batch.promote_delayed()
        up, down = ups[-1] + 1, downs[-1] + 1 if downs[-1] >= 0 else down + n


def _store(must_read_to_end: bool, initial: list[tuple[int, int]], exact: int = 0) -> OffsetSyncStore:
    """A store fed by hand; ``exact`` 0 (Kafka's 64 slots alone) where Kafka's expected values are checked."""
    store = OffsetSyncStore(None, "mm2-offset-syncs.B.internal", exact)
    store.begin(must_read_to_end)
    for upstream, downstream in initial:
        store.add(OffsetSync("topic1", 2, upstream, downstream))
    store.read_to_end = True
    return store


def _translate(store: OffsetSyncStore, upstream: int) -> int | None:
    return store.translate_downstream("topic1", 2, upstream)


def _assert_sparse(store: OffsetSyncStore, sync_offset: int, previous: int) -> None:
    assert _translate(store, sync_offset - 1) == (previous if previous == -1 else previous + 1)
    assert _translate(store, sync_offset) == sync_offset
    assert _translate(store, sync_offset + 1) == sync_offset + 1
    assert _translate(store, sync_offset + 2) == sync_offset + 1


def _assert_invariants(store: OffsetSyncStore) -> None:
    syncs = store.syncs("topic1", 2)
    for j in range(SYNCS_PER_PARTITION):
        for i in range(j):
            up_i, up_j = syncs[i].upstream_offset, syncs[j].upstream_offset
            if up_i == up_j:
                continue
            assert up_i >= up_j + (1 << max(i - 2, 0)), f"invariant C({i},{j})"
            assert up_i <= up_j + (1 << j) - (1 << i), f"invariant B({i},{j})"


def test_offset_translation_as_kafka() -> None:
    store = _store(True, [])
    assert _translate(store, 0) is None  # no sync for the partition
    store.add(OffsetSync("topic1", 2, 100, 200))
    assert _translate(store, 150) == 201
    store.add(OffsetSync("topic1", 2, 150, 251))
    assert _translate(store, 150) == 251
    assert _translate(store, 5) == -1  # before any kept sync
    store.add(OffsetSync("topic1", 2, 200, 10))  # downstream reset
    assert _translate(store, 200) == 10
    store.add(OffsetSync("topic1", 2, 20, 20))  # upstream reset
    assert _translate(store, 20) == 20


def test_no_translation_before_the_initial_read_ends() -> None:
    store = OffsetSyncStore(None, "t", 0)
    store.begin(True)
    store.add(OffsetSync("topic1", 2, 100, 200))
    assert _translate(store, 100) is None
    store.read_to_end = True
    assert (_translate(store, 0), _translate(store, 100), _translate(store, 200)) == (-1, 200, 201)


def test_past_offset_translation_keeps_kafkas_syncs() -> None:
    store = _store(True, [(o, o) for o in range(0, 1001, 10)])
    _assert_sparse(store, 1000, -1)  # only the last sync of the initial read is usable
    for offset in range(1010, 10001, 10):
        store.add(OffsetSync("topic1", 2, offset, offset))
        _assert_invariants(store)
    _assert_sparse(store, 1000, -1)
    for sync, previous in [(4840, 1000), (6760, 4840), (8680, 6760), (9160, 8680), (9640, 9160), (9880, 9640),
                           (9940, 9880), (9970, 9940), (9990, 9970), (10000, 9990)]:
        _assert_sparse(store, sync, previous)
    store.add(OffsetSync("topic1", 2, 1500, 11000))  # upstream rewind clears the history
    assert (_translate(store, 1499), _translate(store, 1500), _translate(store, 2000)) == (-1, 11000, 11001)


def test_past_offset_translation_without_read_to_end() -> None:
    store = _store(False, [(o, o) for o in range(0, 1001, 10)])
    _assert_sparse(store, 480, 0)
    _assert_sparse(store, 720, 480)
    _assert_sparse(store, 1000, 990)
    for offset in range(1000, 10001, 10):
        store.add(OffsetSync("topic1", 2, offset, offset))
        _assert_invariants(store)
    for sync, previous in [(3840, 0), (7680, 3840), (8640, 7680), (9120, 8640), (9600, 9120), (9840, 9600),
                           (9900, 9840), (9960, 9900), (9990, 9960), (10000, 9990)]:
        _assert_sparse(store, sync, previous)


def test_exact_window_translates_old_offsets_within_offset_lag_max() -> None:
    """Seaway's addition: the latest syncs kept exactly, so a group halfway through a caught-up backlog
    rereads at most offset.lag.max records (Kafka's 64 slots alone: up to about half the distance)."""
    syncs = [(o, o + 7) for o in range(0, 10001, 51)]
    kafka, seaway = _store(False, syncs), _store(False, syncs, exact=1024)
    assert sorted({x.upstream_offset for x in kafka.syncs("topic1", 2)})[:3] == [0, 6528, 8160]
    assert _translate(kafka, 5000) == 0 + 7 + 1  # Kafka's slots: the sync at 0, 5000 records reread
    assert _translate(seaway, 5000) == 4998 + 7 + 1  # the sync just before: 2 reread
    for upstream in range(0, 10001, 13):
        translated = _translate(seaway, upstream)
        assert translated is not None and 0 <= upstream + 7 - translated + 1 <= 51
    small = _store(False, syncs, exact=16)  # past the window the 64 slots answer, as in Kafka
    assert _translate(small, 5000) == _translate(kafka, 5000)
    small.add(OffsetSync("topic1", 2, 50, 50))  # upstream rewind clears both
    assert (_translate(small, 49), _translate(small, 60)) == (-1, 51)


def test_randomly_spaced_syncs_keep_the_invariants_and_bound_expirations() -> None:
    rng = random.Random(0)
    for bits in (1, 4, 12, 30):
        store = _store(True, [(0, 0)])
        offset, last_count = 0, 1
        for _ in range(300):
            offset += rng.randrange(1 << bits)
            store.add(OffsetSync("topic1", 2, offset, offset))
            syncs = store.syncs("topic1", 2)
            assert syncs[0].upstream_offset == offset and syncs[-1].upstream_offset == 0  # invariants A and D
            count = 1 + sum(syncs[i - 1] is not syncs[i] for i in range(1, SYNCS_PER_PARTITION))
            assert last_count - count + 1 <= bits + 2  # Kafka's bound on syncs expired by one update
            last_count = count
        _assert_invariants(store)


# -- configs ----------------------------------------------------------------------------------------


def test_config_names_and_defaults_are_kafkas() -> None:
    config = SourceConfig({"source.cluster.alias": "A"})
    expected = {"target.cluster.alias": "target", "topics": [".*"],
                "topics.exclude": [r".*[\-\.]internal", r".*\.replica", "__.*"], "replication.factor": 2,
                "offset.lag.max": 100, "refresh.topics.interval.seconds": 600, "sync.topic.configs.enabled": True,
                "offset-syncs.topic.location": "source", "offset-syncs.topic.replication.factor": 3,
                "consumer.poll.timeout.ms": 1000, "heartbeats.replication.enabled": True}
    assert {k: config.get(k) for k in expected} == expected
    assert config.offset_syncs_topic() == "mm2-offset-syncs.target.internal"
    checkpoint = MirrorCheckpointConnector().config().parse({"source.cluster.alias": "A"})
    assert (checkpoint["groups.exclude"], checkpoint["emit.checkpoints.interval.seconds"],
            checkpoint["sync.group.offsets.enabled"], checkpoint["sync.group.offsets.interval.seconds"],
            checkpoint["checkpoints.topic.replication.factor"]) == (
        ["console-consumer-.*", "connect-.*", "__.*"], 60, False, 60, 3)
    heartbeat = MirrorHeartbeatConnector().config().parse({"source.cluster.alias": "A"})
    assert (heartbeat["emit.heartbeats.interval.seconds"], heartbeat["heartbeats.topic.replication.factor"]) == (1, 3)


def test_client_configs_take_kafkas_prefixes() -> None:
    config = SourceConfig({"name": "m", "source.cluster.alias": "A", "target.cluster.alias": "B",
                           "source.cluster.bootstrap.servers": "a:9092", "source.cluster.linger.ms": "9",
                           "target.cluster.bootstrap.servers": "b:9092", "consumer.fetch.min.bytes": "2",
                           "source.consumer.fetch.min.bytes": "3", "offset-syncs.topic.location": "target"})
    consumer = config.source_consumer("replication-consumer")
    assert consumer["bootstrap.servers"] == "a:9092" and "linger.ms" not in consumer  # only client keys pass
    assert consumer["fetch.min.bytes"] == "3" and consumer["enable.auto.commit"] == "false"
    assert consumer["auto.offset.reset"] == "earliest" and consumer["client.id"] == "A->B|m|replication-consumer"
    assert config.offset_syncs_producer()["bootstrap.servers"] == "b:9092"
    assert config.offset_syncs_topic() == "mm2-offset-syncs.A.internal"  # KIP-716: named after the other cluster


def test_consumers_do_not_pause_a_second_on_a_full_queue_unless_the_user_says_so() -> None:
    """librdkafka's fetch.queue.backoff.ms defaults to 1 s: a replication task behind its source
    would idle most of each second (bench/mirror.py, 1 KiB records: 80k -> 150k records/s)."""
    base = {"name": "m", "source.cluster.alias": "A", "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": "a:9092", "target.cluster.bootstrap.servers": "b:9092"}
    config = SourceConfig(base)
    for consumer in (config.source_consumer("replication-consumer"), config.target_consumer("checkpoints")):
        assert consumer["fetch.queue.backoff.ms"] == STREAMING_CONSUMER["fetch.queue.backoff.ms"] == "10"
    own = SourceConfig({**base, "source.consumer.fetch.queue.backoff.ms": "250"})
    assert own.source_consumer("replication-consumer")["fetch.queue.backoff.ms"] == "250"
    assert own.target_consumer("checkpoints")["fetch.queue.backoff.ms"] == "10"


def test_bad_configs_name_their_key() -> None:
    with pytest.raises(ConfigError, match=r"source.cluster.alias"):
        SourceConfig({})
    with pytest.raises(ConfigError, match=r"topics.exclude"):
        SourceConfig({"source.cluster.alias": "A", "topics.exclude": "a(b"})
    with pytest.raises(ConfigError, match=r"replication.policy.class"):
        SourceConfig({"source.cluster.alias": "A", "replication.policy.class": "evil.Module"})
    with pytest.raises(ConfigError, match=r"offset-syncs.topic.location"):
        SourceConfig({"source.cluster.alias": "A", "offset-syncs.topic.location": "middle"})
    assert SourceConfig({"source.cluster.alias": "A", "replication.policy.class":
                         "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"}).policy.format_remote_topic(
        "A", "t") == "t"
    with pytest.raises(ConfigError, match=r"task.assigned.partitions"):
        decode_topic_partition("no-number-x")


def test_validate_flags_converters_that_would_rewrite_the_bytes() -> None:
    props = {"source.cluster.alias": "A", "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    errors = {v.name: v.errors for v in MirrorSourceConnector().validate(props).config_values if v.errors}
    assert list(errors) == ["value.converter"]
    ok = {**props, "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    assert not [v for v in MirrorSourceConnector().validate(ok).config_values if v.errors]
    assert SOURCE_CONFIG_DEF.config_keys()["header.converter"].default.endswith("ByteArrayConverter")


def test_source_task_configs_round_robin() -> None:
    connector = MirrorSourceConnector()
    connector._config = SourceConfig({"source.cluster.alias": "A"})
    connector._known_source = [("t0", p) for p in range(8)] + [("t1", 0), ("t1", 1), ("t2", 0), ("t2", 1)]
    configs = connector.task_configs(3)
    assert [c["task.assigned.partitions"] for c in configs] == [
        "t0-0,t0-3,t0-6,t1-1", "t0-1,t0-4,t0-7,t2-0", "t0-2,t0-5,t1-0,t2-1"]
    assert [c["task.index"] for c in configs] == ["0", "1", "2"]
    assert len(connector.task_configs(100)) == 12


# -- dedicated mode: Kafka's connect-mirror-maker.properties ------------------------------------------

EXAMPLE = """\
clusters = A, B
A.bootstrap.servers = a1:9092, a2:9092
B.bootstrap.servers = b1:9092
A->B.enabled = true
A->B.topics = .*
B->A.enabled = true
B->A.topics = .*
replication.factor=1
checkpoints.topic.replication.factor=1
offset.storage.replication.factor=1
A.consumer.fetch.min.bytes = 7
"""


def _parse(text: str) -> dict[str, str]:
    from seaway.properties import load_properties

    return load_properties(text)


def test_maker_config_flows_workers_and_connectors() -> None:
    config = MirrorMakerConfig(_parse(EXAMPLE))
    assert config.cluster_pairs() == [FlowPair("A", "B"), FlowPair("B", "A")]
    worker = config.worker_config(FlowPair("A", "B"))
    assert (worker["bootstrap.servers"], worker["group.id"], worker["config.storage.topic"],
            worker["offset.storage.replication.factor"], worker["value.converter"]) == (
        "b1:9092", "A-mm2", "mm2-configs.A.internal", "1", "org.apache.kafka.connect.converters.ByteArrayConverter")
    source = config.connector_config(FlowPair("A", "B"), "MirrorSourceConnector")
    assert source["connector.class"] == "org.apache.kafka.connect.mirror.MirrorSourceConnector"
    assert (source["name"], source["source.cluster.alias"], source["target.cluster.alias"]) == (
        "MirrorSourceConnector", "A", "B")
    assert source["source.cluster.bootstrap.servers"] == "a1:9092, a2:9092"
    assert source["target.cluster.bootstrap.servers"] == "b1:9092"
    assert source["source.consumer.fetch.min.bytes"] == "7" and source["replication.factor"] == "1"
    assert source["enabled"] == "true" and source["topics"] == ".*"
    assert "offset.storage.replication.factor" not in source  # worker keys stay out of connector configs


def test_maker_config_heartbeat_only_flows_and_errors() -> None:
    config = MirrorMakerConfig(_parse("clusters = A, B\nA->B.enabled = true\n"))
    assert config.cluster_pairs() == [FlowPair("A", "B"), FlowPair("B", "A")]  # B->A for heartbeats
    assert config.connector_config(FlowPair("B", "A"), "MirrorSourceConnector")["enabled"] == "false"
    quiet = MirrorMakerConfig(_parse("clusters = A, B\nA->B.enabled = true\nemit.heartbeats.enabled = false\n"))
    assert quiet.cluster_pairs() == [FlowPair("A", "B")]
    with pytest.raises(ConfigError, match=r"clusters"):
        MirrorMakerConfig({})
    with pytest.raises(ConfigError, match=r"dedicated.mode.enable.internal.rest"):
        MirrorMakerConfig({"clusters": "A", "dedicated.mode.enable.internal.rest": "true"})


def test_seaway_mirror_refuses_bad_files_in_one_line(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from seaway.cli.mirror import main

    assert main([str(tmp_path / "missing.properties")]) == 1
    assert "missing.properties" in capsys.readouterr().err
    one = tmp_path / "one.properties"
    one.write_text("clusters = A\nA.bootstrap.servers = a:9092\n")
    assert main([str(one)]) == 1
    assert "No source->target replication flows." in capsys.readouterr().err
    two = tmp_path / "two.properties"
    two.write_text("clusters = A, B\nA->B.enabled = true\n")
    assert main([str(two), "--clusters", "C"]) == 1
    assert "--clusters C: not in clusters = A, B" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "expected"), [
    ({}, "UNSUPPORTED"),
    ({"consumer.isolation.level": "read_uncommitted"}, "UNSUPPORTED"),
    ({"consumer.isolation.level": "read_committed"}, "SUPPORTED"),
    ({"source.consumer.isolation.level": "READ_COMMITTED"}, "SUPPORTED"),
])
def test_exactly_once_support_follows_the_source_consumers_isolation_level(extra: dict[str, str],
                                                                         expected: str) -> None:
    """Kafka's MirrorSourceConnector: exactly-once only when the source is read with read_committed."""
    from seaway.connect.api import ExactlyOnceSupport
    from seaway.connectors.mirror.source_connector import MirrorSourceConnector

    props = {"name": "m", "source.cluster.alias": "A", "target.cluster.alias": "B",
             "source.cluster.bootstrap.servers": "a:9092", "target.cluster.bootstrap.servers": "b:9092", **extra}
    assert MirrorSourceConnector().exactly_once_support(props) == ExactlyOnceSupport[expected]
