"""Consumer error events of a sink task: which fail the task, which are ridden out (logged, rate-limited).

Consumer error events that librdkafka does not flag fatal (the subscribed topic does not exist
yet, a broker is unreachable, all brokers are down) are logged and ridden out, as Kafka
Connect's sink tasks wait in ``poll``: a sink created before its topic starts consuming when
the topic appears (librdkafka looks the missing topic up again within seconds). Fatal errors
(e.g. a fenced or invalid consumer) fail the task, and so do the errors Kafka's consumer
throws from ``poll`` that librdkafka only reports and retries (:data:`FAILS_TASK`): a
principal without READ on the topic or the group, or failed authentication, would otherwise
leave the task RUNNING and idle forever.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from seaway.connect.api import ConnectError
from seaway.connect.runtime.config_providers import REDACTOR

__all__ = ["CONSUMER_ERROR_LOG_INTERVAL_S", "FAILS_TASK", "check_consumer_error"]

log = logging.getLogger("seaway.connect.runtime.worker_sink_task")  # where these lines always appeared
log.addFilter(REDACTOR)

FAILS_TASK: dict[int, str] = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED: "the connector's consumer principal needs READ (and DESCRIBE) on the topic",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "the connector's consumer principal needs READ on its consumer group",
    KafkaError._AUTHENTICATION: "the broker refused the consumer's credentials",
}
"""Consumer errors that fail the task with this hint, as Kafka Connect's ``WorkerSinkTask`` fails on
``TopicAuthorizationException``, ``GroupAuthorizationException`` and ``AuthenticationException``."""
CONSUMER_ERROR_LOG_INTERVAL_S = 30.0
"""How often one kind of non-fatal consumer error is logged at WARNING (the rest go to DEBUG)."""

def check_consumer_error(msg: Any, task: object, last_logged: dict[int, float]) -> None:
    """A consumed error event: a fatal one, or one of :data:`FAILS_TASK`, fails the task; any
    other is logged and ridden out.

    librdkafka reports transient trouble (unknown topic, broker down, transport errors) as
    error events and keeps retrying by itself, so failing the task on them would kill a sink
    whose topic is merely not created yet. End-of-partition notices are skipped silently; the
    rest are logged at WARNING at most once per ``CONSUMER_ERROR_LOG_INTERVAL_S`` per error code
    (``last_logged``: the task's code -> when), since they repeat for as long as the condition lasts.
    """
    err = msg.error()
    code = err.code()
    if code == KafkaError._PARTITION_EOF:
        return
    if err.fatal():
        raise KafkaException(err)
    hint = FAILS_TASK.get(code)
    if hint is not None:
        topic = msg.topic()
        raise ConnectError(f"{task} Consumer error {err.name()}{f' on topic {topic}' if topic else ''}: "
                           f"{err.str()} ({hint})") from KafkaException(err)
    now = time.monotonic()
    if code not in last_logged or now - last_logged[code] >= CONSUMER_ERROR_LOG_INTERVAL_S:
        last_logged[code] = now
        topic = msg.topic()
        log.warning("%s Consumer error (not fatal, the consumer retries; waiting): %s: %s%s", task, err.name(),
                    err.str(), f" (topic {topic})" if topic else "")
    else:
        log.debug("%s Consumer error (not fatal): %s: %s", task, err.name(), err.str())
