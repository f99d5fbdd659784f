"""Request handlers, one module per Kafka API (each declares its served versions).

Importing this package registers every handler in :data:`HANDLERS`.
"""

from __future__ import annotations

from seaway.broker.handlers import (  # noqa: F401  (imported to register)
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    produce,
    sync_group,
)
from seaway.broker.handlers.registry import HANDLERS, HandlerSpec, handles

__all__ = ["HANDLERS", "HandlerSpec", "handles"]
