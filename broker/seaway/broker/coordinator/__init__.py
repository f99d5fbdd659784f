"""Kafka's classic group coordinator: consumer groups and committed offsets on one node.

See README.md in this folder for the design; the modules are:

- :mod:`~seaway.broker.coordinator.group`: a group, its members and the state machine;
- :mod:`~seaway.broker.coordinator.coordinator`: JoinGroup/SyncGroup/Heartbeat/LeaveGroup
  and the timers;
- :mod:`~seaway.broker.coordinator.offsets`: OffsetCommit/OffsetFetch/OffsetDelete, expiry;
- :mod:`~seaway.broker.coordinator.admin`: ListGroups/DescribeGroups/DeleteGroups;
- :mod:`~seaway.broker.coordinator.offsets_topic`: the ``__consumer_offsets`` record formats;
- :mod:`~seaway.broker.coordinator.store`: reading and writing that topic.
"""

from __future__ import annotations

import dataclasses

from seaway.broker.context import BrokerContext
from seaway.broker.coordinator.coordinator import CoordinatorSettings, GroupCoordinator, JoinRequest
from seaway.broker.coordinator.group import GroupState, JoinResult, SyncResult
from seaway.protocol.errors import CoordinatorNotAvailableError

__all__ = [
    "CoordinatorSettings",
    "GroupCoordinator",
    "GroupState",
    "JoinRequest",
    "JoinResult",
    "SyncResult",
    "coordinator_of",
    "install",
]

def install(context: BrokerContext) -> GroupCoordinator:
    """Create the coordinator, set ``context.components.group_coordinator`` and start loading."""
    coordinator = GroupCoordinator(context, CoordinatorSettings.from_config(context.config))
    context.components = dataclasses.replace(context.components, group_coordinator=coordinator)
    coordinator.start()
    return coordinator


def coordinator_of(context: BrokerContext) -> GroupCoordinator:
    """The installed coordinator; COORDINATOR_NOT_AVAILABLE if the broker runs without one."""
    coordinator = context.components.group_coordinator
    if coordinator is None:
        raise CoordinatorNotAvailableError("this broker runs without a group coordinator")
    return coordinator
