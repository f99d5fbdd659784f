"""The broker's internal topics as client requests see them: what Kafka refuses, refused here.

The broker keeps its own state in two topics, as Kafka does: ``__consumer_offsets`` (the
group coordinator: committed offsets, group metadata, KIP-848 records) and
``__transaction_state`` (the transaction coordinator). Both are read back at every start
and believed, so a record a client managed to append there would be taken for the
broker's own (issue 27: a forged offset commit moved a group's committed offset, a forged
PrepareCommit made aborted records visible to read_committed consumers). The ACLs and SCRAM
credentials live in ``__cluster_metadata``, which is no topic at all (as in KRaft Kafka):
every client API answers UNKNOWN_TOPIC_OR_PARTITION for it, and neither CreateTopics nor
auto-creation can make one by that name.

Per client path, with Apache Kafka 4.x's answers (read from its ``ReplicaManager`` and
``ControllerApis``, and checked against Kafka's broker in ``tests/peer/``):

- Produce (plain, idempotent, transactional): INVALID_TOPIC_EXCEPTION, "Cannot append to
  internal topic ...", for every client. Kafka makes one exception, the client id
  ``__admin_client`` (``AdminUtils.ADMIN_CLIENT_ID``, a leftover of its ZooKeeper-era tools);
  Seaway does not (a deliberate deviation): a client id is whatever a client says, so that
  exception would hand the forgeries above back to anyone with WRITE on the topic (everyone,
  without an authorizer), and nothing but the broker itself ever needs to write there.
  Checked after the ACL and existence checks and, for a transactional batch, after KIP-890's
  verification, as in Kafka (a partition outside the transaction is INVALID_TXN_STATE there
  too);
- DeleteRecords: INVALID_TOPIC_EXCEPTION, "Cannot delete records of internal topic ...",
  for every client id;
- DeleteTopics: Kafka deletes them. Seaway refuses (INVALID_TOPIC_EXCEPTION), a deliberate
  deviation: its coordinators hold these logs open from start to stop and answer
  COORDINATOR_NOT_AVAILABLE until a restart once they are gone, and every committed offset
  and transaction state is lost with them;
- AlterConfigs / IncrementalAlterConfigs and CreatePartitions: allowed, as Kafka allows them
  (operators tune ``segment.bytes`` or ``min.compaction.lag.ms`` of ``__consumer_offsets``);
  the ACLs decide (ALTER_CONFIGS / ALTER on the topic).

AddPartitionsToTxn from clients (v0-v3) already refuses internal topics with
TOPIC_AUTHORIZATION_FAILED, as Kafka's ``KafkaApis`` does.
"""

from __future__ import annotations

from collections.abc import Callable

from seaway.broker.log import INTERNAL_TOPICS, PartitionLog
from seaway.protocol.errors import InvalidTopicException, KafkaProtocolError
from seaway.protocol.record_batch import BatchHeader, CorruptBatchError, parse_batch_header

__all__ = [
    "INTERNAL_TOPICS",
    "TxnVerification",
    "delete_records_refusal",
    "delete_topic_refusal",
    "produce_refusal",
]

TxnVerification = Callable[[PartitionLog, BatchHeader], None]
"""KIP-890's check of a transactional batch (``coordinator.txn.transactional_verification``)."""


def produce_refusal(topic: str, plog: PartitionLog, records: object,
                    verify: TxnVerification | None) -> KafkaProtocolError | None:
    """Why a produce to ``plog`` must not be appended, or None when it may be.

    ``verify`` is given for a request with a transactional id: its first batch is verified
    with the transaction coordinator first, and that error wins, as in Kafka.
    """
    if topic not in INTERNAL_TOPICS:
        return None
    if verify is not None and isinstance(records, (bytes, bytearray, memoryview)) and len(records):
        try:
            header = parse_batch_header(records)
        except CorruptBatchError:
            header = None
        if header is not None:
            try:
                verify(plog, header)
            except KafkaProtocolError as exc:
                return exc
    return InvalidTopicException(f"Cannot append to internal topic {topic}")


def delete_records_refusal(topic: str) -> KafkaProtocolError | None:
    """Kafka's ``ReplicaManager.deleteRecordsOnLocalLog``: never on an internal topic."""
    if topic in INTERNAL_TOPICS:
        return InvalidTopicException(f"Cannot delete records of internal topic {topic}")
    return None


def delete_topic_refusal(topic: str) -> KafkaProtocolError | None:
    """Seaway's refusal to delete an internal topic (Kafka deletes it; see the module docstring)."""
    if topic in INTERNAL_TOPICS:
        return InvalidTopicException(
            f"Cannot delete internal topic {topic}: the broker keeps its "
            f"{'group offsets' if topic == '__consumer_offsets' else 'transaction states'} there")
    return None
