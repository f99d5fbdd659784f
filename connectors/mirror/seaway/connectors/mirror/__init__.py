"""Kafka's MirrorMaker 2 for Seaway: mirror topics, consumer group offsets and heartbeats between clusters.

The three connectors run on any Seaway Connect worker bound to the *target* cluster (and in
``seaway mirror``'s dedicated mode); Kafka's class names resolve to them:

* :class:`MirrorSourceConnector` (``org.apache.kafka.connect.mirror.MirrorSourceConnector``):
  topics, their partitions and configs, records with keys, headers and timestamps;
* :class:`MirrorCheckpointConnector`: consumer group offsets translated into checkpoints
  (and, with ``sync.group.offsets.enabled``, committed on the target);
* :class:`MirrorHeartbeatConnector`: the ``heartbeats`` topic.

Beside them, the client API (Kafka's ``RemoteClusterUtils``): :func:`translate_offsets`,
:func:`replication_hops`, :func:`upstream_clusters`, :func:`heartbeat_topics`,
:func:`checkpoint_topics`. Delivery is at-least-once. See docs/mirror.md.
"""

from seaway.connectors.mirror._version import VERSION as __version__
from seaway.connectors.mirror.checkpoint_connector import MirrorCheckpointConnector
from seaway.connectors.mirror.checkpoint_task import MirrorCheckpointTask
from seaway.connectors.mirror.client import (
    MirrorClient,
    checkpoint_topics,
    heartbeat_topics,
    replication_hops,
    to_topic_partitions,
    translate_offsets,
    upstream_clusters,
)
from seaway.connectors.mirror.formats import Checkpoint, Heartbeat, OffsetSync
from seaway.connectors.mirror.heartbeat import MirrorHeartbeatConnector, MirrorHeartbeatTask
from seaway.connectors.mirror.policy import DefaultReplicationPolicy, IdentityReplicationPolicy, ReplicationPolicy
from seaway.connectors.mirror.source_connector import MirrorSourceConnector
from seaway.connectors.mirror.source_task import MirrorSourceTask

__all__ = [
    "Checkpoint",
    "DefaultReplicationPolicy",
    "Heartbeat",
    "IdentityReplicationPolicy",
    "MirrorCheckpointConnector",
    "MirrorCheckpointTask",
    "MirrorClient",
    "MirrorHeartbeatConnector",
    "MirrorHeartbeatTask",
    "MirrorSourceConnector",
    "MirrorSourceTask",
    "OffsetSync",
    "ReplicationPolicy",
    "__version__",
    "checkpoint_topics",
    "heartbeat_topics",
    "replication_hops",
    "to_topic_partitions",
    "translate_offsets",
    "upstream_clusters",
]
