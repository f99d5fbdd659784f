"""Request handlers, one module per Kafka API (each declares its served versions).

Importing this package registers every handler in :data:`HANDLERS`.
"""

from __future__ import annotations

from seaway.broker.handlers import (  # noqa: F401  (imported to register)
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_configs,
    alter_user_scram_credentials,
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_groups,
    delete_records,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_topic_partitions,
    describe_transactions,
    describe_user_scram_credentials,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    sync_group,
    txn_offset_commit,
)
from seaway.broker.handlers.registry import HANDLERS, HandlerSpec, handles

__all__ = ["HANDLERS", "HandlerSpec", "handles"]
