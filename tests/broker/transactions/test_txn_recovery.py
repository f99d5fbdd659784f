"""Transactions across broker restarts: what ``__transaction_state`` and the logs bring back.

- an Ongoing transaction survives a kill: right after the restart its partition's last
  stable offset is exact (the producer state of its partitions is loaded at recovery),
  and once its timeout passes it is aborted;
- a transaction found in PrepareCommit / PrepareAbort (the coordinator died between its
  decision and its markers) is completed: markers written, CompleteCommit/CompleteAbort;
- an abort's ``.txnindex`` entry lost by such a crash is written again from the log;
- offsets committed in a transaction come back pending (open) or committed (ended);
- transactional ids idle past ``transactional.id.expiration.ms`` are removed, for good.

The Prepare* states are made by stopping the broker and appending the record Kafka's
coordinator writes before its markers (TransactionLogValue, Kafka's format) to the
``__transaction_state`` partition, through the log layer, as a crash right after that
append would leave it.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from seaway.broker.coordinator.offsets_topic import partition_for
from seaway.broker.coordinator.txn.log_format import TxnLogValue, encode_txn_key, encode_txn_value
from seaway.broker.coordinator.txn.state import TxnState
from seaway.broker.log.config import LogConfig
from seaway.broker.log.partition_log import PartitionLog
from seaway.protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from seaway.protocol.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse
from seaway.protocol.records import Record, build_batch

from tests.broker.admin.rawclient import call
from tests.broker.clients.test_confluent_clients import create_topic
from tests.broker.transactions.test_txn_protocol import (
    NONE,
    TRANSACTIONAL_ID_NOT_FOUND,
    UNSTABLE_OFFSET_COMMIT,
    _add,
    _batch,
    _end,
    _init,
    _offset_fetch,
    _produce,
    _txn_commit,
)
from tests.broker.transactions.txn_support import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    describe_transaction,
    list_offset,
    read_values,
    wait_until,
)
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(120)


def _ready(broker: BrokerProcess) -> None:
    """Wait until the transaction coordinator answers (it loads after the listeners start)."""
    wait_until(lambda: describe_transaction(broker.bootstrap, "probe").error_code == TRANSACTIONAL_ID_NOT_FOUND,
               20, "the transaction coordinator to load")


def _open_transaction(broker: BrokerProcess, topic: str, timeout_ms: int = 60000) -> tuple[str, int, int]:
    """An Ongoing transaction with two batches (4 records) in partition 0: (id, pid, epoch)."""
    txn_id = f"rec-{uuid.uuid4().hex[:8]}"
    init = _init(broker.bootstrap, txn_id, timeout_ms=timeout_ms)
    pid, epoch = init.producer_id, init.producer_epoch
    assert _add(broker.bootstrap, txn_id, pid, epoch, [(topic, 0)]) == {(topic, 0): NONE}
    assert _produce(broker.bootstrap, topic, _batch(pid, epoch, 0), txn_id).error_code == NONE
    assert _produce(broker.bootstrap, topic, _batch(pid, epoch, 2), txn_id).error_code == NONE
    return txn_id, pid, epoch


def _write_state(data_dir: Path, txn_id: str, value: TxnLogValue) -> None:
    """Append ``value`` for ``txn_id`` to its __transaction_state partition (broker stopped)."""
    directory = data_dir / f"__transaction_state-{partition_for(txn_id, 50)}"
    config = LogConfig.from_properties({"cleanup.policy": "compact"})
    plog = PartitionLog.open(directory, config, topic="__transaction_state", partition=partition_for(txn_id, 50))
    try:
        now = int(time.time() * 1000)
        plog.append(build_batch([Record(0, now, encode_txn_key(txn_id), encode_txn_value(value))]), now_ms=now)
    finally:
        plog.close()


def _plain(broker: BrokerProcess, topic: str, value: bytes) -> None:
    now = int(time.time() * 1000)
    assert _produce(broker.bootstrap, topic, build_batch([Record(0, now, None, value)]), None).error_code == NONE


def test_ongoing_transaction_after_kill_holds_the_lso_then_times_out(tmp_path: Path, topic_name: str) -> None:
    overrides = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}
    broker = BrokerProcess(tmp_path / "data", overrides).start()
    try:
        _ready(broker)
        create_topic(broker.bootstrap, topic_name, 1)
        _plain(broker, topic_name, b"before")
        txn_id, _, _ = _open_transaction(broker, topic_name, timeout_ms=4000)
        _plain(broker, topic_name, b"after")
        broker.kill()
        broker.start()
        # The first read_committed answers already know the transaction is open at offset 1.
        assert list_offset(broker.bootstrap, topic_name, 0, committed=True).offset == 1
        assert [v for _, _, v in read_values(broker.bootstrap, topic_name, 1, READ_COMMITTED)] == ["before"]
        assert describe_transaction(broker.bootstrap, txn_id).transaction_state == "Ongoing"
        wait_until(lambda: describe_transaction(broker.bootstrap, txn_id).transaction_state == "CompleteAbort", 15,
                   "the timed-out transaction to be aborted")
        assert [v for _, _, v in read_values(broker.bootstrap, topic_name, 1, READ_COMMITTED)] == [
            "before", "after"]
        assert len(read_values(broker.bootstrap, topic_name, 1, READ_UNCOMMITTED)) == 6
    finally:
        broker.stop()


@pytest.mark.parametrize("commit", [True, False])
def test_prepared_transaction_is_completed_at_start(tmp_path: Path, topic_name: str, commit: bool) -> None:
    broker = BrokerProcess(tmp_path / "data").start()
    try:
        _ready(broker)
        create_topic(broker.bootstrap, topic_name, 1)
        txn_id, pid, epoch = _open_transaction(broker, topic_name)
        started = describe_transaction(broker.bootstrap, txn_id).transaction_start_time_ms
        broker.kill()
        state = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        now = int(time.time() * 1000)
        _write_state(broker.data_dir, txn_id, TxnLogValue(pid, epoch, 60000, state, frozenset({(topic_name, 0)}),
                                                          now, started))
        broker.start()
        wait_until(lambda: describe_transaction(broker.bootstrap, txn_id).transaction_state
                   == ("CompleteCommit" if commit else "CompleteAbort"), 15, "the prepared end to complete")
        assert list_offset(broker.bootstrap, topic_name, 0, committed=True).offset == 5  # 4 records, 1 marker
        values = [v for _, _, v in read_values(broker.bootstrap, topic_name, 1, READ_COMMITTED)]
        assert values == (["v0", "v1", "v2", "v3"] if commit else [])
        assert _end(broker.bootstrap, txn_id, pid, epoch, commit=commit) == NONE  # the client's retried EndTxn
    finally:
        broker.stop()


def test_lost_abort_index_entry_is_rebuilt_from_the_log(tmp_path: Path, topic_name: str) -> None:
    """A crash after an abort marker's append but before its .txnindex entry and the
    CompleteAbort record: recovery re-runs the abort, and replaying the partition's producer
    state writes the missing entry, so read_committed still drops the aborted records."""
    broker = BrokerProcess(tmp_path / "data").start()
    try:
        _ready(broker)
        create_topic(broker.bootstrap, topic_name, 1)
        txn_id, pid, epoch = _open_transaction(broker, topic_name)
        started = describe_transaction(broker.bootstrap, txn_id).transaction_start_time_ms
        assert _end(broker.bootstrap, txn_id, pid, epoch, commit=False) == NONE
        _plain(broker, topic_name, b"after")
        broker.stop()
        partition_dir = broker.data_dir / f"{topic_name}-0"
        indexes = list(partition_dir.glob("*.txnindex"))
        assert len(indexes) == 1 and indexes[0].stat().st_size == 34  # Kafka's entry size
        indexes[0].unlink()
        for snapshot in partition_dir.glob("*.snapshot"):
            snapshot.unlink()
        _write_state(broker.data_dir, txn_id, TxnLogValue(pid, epoch, 60000, TxnState.PREPARE_ABORT,
                                                          frozenset({(topic_name, 0)}), int(time.time() * 1000),
                                                          started))
        broker.start()
        wait_until(lambda: describe_transaction(broker.bootstrap, txn_id).transaction_state == "CompleteAbort", 15,
                   "the abort to complete again")
        assert [v for _, _, v in read_values(broker.bootstrap, topic_name, 1, READ_COMMITTED)] == ["after"]
        assert [p.stat().st_size for p in partition_dir.glob("*.txnindex")] == [34]
    finally:
        broker.stop()


def test_transactional_offsets_survive_restarts(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data").start()
    bootstrap = ""
    try:
        _ready(broker)
        bootstrap = broker.bootstrap
        create_topic(bootstrap, topic_name, 1)
        group = f"g-{uuid.uuid4().hex[:8]}"
        done_id, open_id = f"done-{uuid.uuid4().hex[:6]}", f"open-{uuid.uuid4().hex[:6]}"
        for txn_id, offset in ((done_id, 4), (open_id, 8)):
            init = _init(bootstrap, txn_id)
            add: Any = AddOffsetsToTxnRequest(transactional_id=txn_id, producer_id=init.producer_id,
                                              producer_epoch=init.producer_epoch, group_id=group)
            assert call(bootstrap, add, AddOffsetsToTxnResponse, 3).error_code == NONE
            assert _txn_commit(bootstrap, txn_id, group, init.producer_id, init.producer_epoch, topic_name,
                               offset) == NONE
            if txn_id == done_id:
                assert _end(bootstrap, txn_id, init.producer_id, init.producer_epoch, commit=True) == NONE
            else:
                open_pid, open_epoch = init.producer_id, init.producer_epoch
        for restart in (broker.kill, broker.stop):
            restart()
            broker.start()
            _ready(broker)
            assert _offset_fetch(broker.bootstrap, group, topic_name, require_stable=False) == (NONE, 4)
            assert _offset_fetch(broker.bootstrap, group, topic_name, require_stable=True) == (
                UNSTABLE_OFFSET_COMMIT, -1)
        assert _end(broker.bootstrap, open_id, open_pid, open_epoch, commit=True) == NONE
        assert _offset_fetch(broker.bootstrap, group, topic_name, require_stable=True) == (NONE, 8)
        broker.kill()
        broker.start()
        _ready(broker)
        assert _offset_fetch(broker.bootstrap, group, topic_name, require_stable=True) == (NONE, 8)
    finally:
        broker.stop()


def test_idle_transactional_ids_expire(tmp_path: Path) -> None:
    overrides = {"transactional.id.expiration.ms": "500",
                 "transaction.remove.expired.transaction.cleanup.interval.ms": "100"}
    broker = BrokerProcess(tmp_path / "data", overrides).start()
    try:
        _ready(broker)
        txn_id = f"idle-{uuid.uuid4().hex[:8]}"
        assert _init(broker.bootstrap, txn_id).error_code == NONE
        assert describe_transaction(broker.bootstrap, txn_id).error_code == NONE
        wait_until(lambda: describe_transaction(broker.bootstrap, txn_id).error_code == TRANSACTIONAL_ID_NOT_FOUND,
                   10, "the idle transactional id to expire")
        broker.kill()
        broker.start()
        _ready(broker)
        assert describe_transaction(broker.bootstrap, txn_id).error_code == TRANSACTIONAL_ID_NOT_FOUND
        again = _init(broker.bootstrap, txn_id)
        assert (again.error_code, again.producer_epoch) == (NONE, 0), "a new id starts over"
    finally:
        broker.stop()
