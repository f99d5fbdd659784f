"""Idempotent producers: producer ids, per-partition producer state, produce-path checks.

See README.md in this folder. Modules:

- :mod:`~seaway.broker.producer.ids`: crash-safe producer id allocation (InitProducerId);
- :mod:`~seaway.broker.producer.state`: one partition's producers and Kafka's sequence rules;
- :mod:`~seaway.broker.producer.manager`: the produce appender, lazy loading, snapshots, expiry;
- :mod:`~seaway.broker.producer.fault`: test-only fault injection on the produce path.
"""

from __future__ import annotations

import dataclasses
import logging

from seaway.broker.context import BrokerContext
from seaway.broker.log.record_check import WALK_IS_NATIVE
from seaway.broker.producer.fault import DROP_PRODUCE_RESPONSE_KEY, ProduceFault, ProduceResponseDropped
from seaway.broker.producer.ids import PRODUCER_ID_FILE, ProducerIdAllocator
from seaway.broker.producer.manager import ProducerStateManager
from seaway.broker.producer.state import BatchMetadata, PartitionProducerState

__all__ = [
    "BatchMetadata",
    "PartitionProducerState",
    "ProduceFault",
    "ProduceResponseDropped",
    "ProducerIdAllocator",
    "ProducerStateManager",
    "install",
]

SNAPSHOT_INTERVAL_KEY = "log.flush.offset.checkpoint.interval.ms"
"""Kafka's interval for per-partition checkpoints; here also the producer snapshot interval."""


def install(context: BrokerContext) -> ProducerStateManager:
    """Set the id allocator, the producer state (the produce path's appender) and any test
    fault in ``context.components``, then start the state's snapshot thread."""
    manager = ProducerStateManager(
        context.logs,
        expiration_ms=context.config.producer_id_expiration_ms,
        snapshot_interval_ms=int(context.config.get(SNAPSHOT_INTERVAL_KEY)),
    )
    every = int(context.config.get(DROP_PRODUCE_RESPONSE_KEY))
    context.components = dataclasses.replace(
        context.components,
        producer_ids=ProducerIdAllocator(context.logs.log_dirs[0] / PRODUCER_ID_FILE),
        producer_state=manager,
        produce_fault=ProduceFault(every) if every else None,
    )
    if not WALK_IS_NATIVE:
        logging.getLogger("seaway.broker").warning(
            "the record checks run in Python (seaway.broker.log._record_walk was not compiled at install): "
            "produce throughput is much lower; reinstall with a C compiler, or run `python hatch_build.py`"
        )
    return manager.start()
