"""Attach the optional broker components (coordinators, producer state) to a context.

Each layer's ``install`` sets its typed field of ``BrokerContext.components``
(:class:`~seaway.broker.context.Components`), so handlers find it without the context
importing every layer. The server closes ``components.closeables()`` on shutdown, in the
order installed here.
"""

from __future__ import annotations

from seaway.broker import coordinator, producer
from seaway.broker.context import BrokerContext
from seaway.broker.coordinator import txn
from seaway.broker.log import cleaner
from seaway.broker.log.log_manager import LOG_START_CHECKPOINT_INTERVAL_KEY

__all__ = ["install"]


def install(context: BrokerContext) -> None:
    """Install every component the broker runs with. Layers add themselves here."""
    context.logs.start_checkpoints(int(context.config.get(LOG_START_CHECKPOINT_INTERVAL_KEY)))
    coordinator.install(context)
    producer.install(context)
    cleaner.install(context)
    txn.install(context)  # after the three above: it wires itself to each
    return
