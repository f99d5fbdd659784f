"""KIP-618's preflight checks of a source connector config (Kafka's ``DistributedHerder`` validation).

* ``exactly.once.support=required``: the worker must have ``exactly.once.source.support=enabled``
  and the connector must answer ``SUPPORTED`` from ``exactly_once_support(config)``; ``None``
  (the connector does not say) and ``UNSUPPORTED`` fail, each with Kafka's message.
* ``transaction.boundary=connector``: the connector must answer ``SUPPORTED`` from
  ``can_define_transaction_boundaries(config)``.

Errors land on the key's ConfigValue, so a create or update answers 400 naming the field and
``/connector-plugins/{type}/config/validate`` lists them. A connector method that raises is
reported the same way, never as a 500.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from seaway.connect.api import ConfigValue, ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector

__all__ = ["validate_exactly_once"]

log = logging.getLogger(__name__)

NOT_ENABLED = "This worker does not have exactly-once source support enabled."
NO_PREFLIGHT = ("The connector does not implement the API required for preflight validation of exactly-once source "
                "support. Please consult the documentation for the connector to determine whether it supports "
                "exactly-once semantics, and then consider reconfiguring the connector to use the value "
                "\"requested\" for this property (which will disable this preflight check and allow the connector to "
                "be created).")
UNSUPPORTED = "The connector does not support exactly-once semantics with the provided configuration."
NO_BOUNDARIES = ("The connector does not support connector-defined transaction boundaries with the given "
                 "configuration. Please reconfigure it to use a different transaction boundary definition.")
NULL_BOUNDARIES = ("This connector has returned a null value from its canDefineTransactionBoundaries method, which is "
                   "not permitted. The connector will be treated as if it cannot define its own transaction "
                   "boundaries, and cannot be configured with 'transaction.boundary' set to 'connector'.")


def _ask(question: Callable[[], Any], what: str) -> tuple[Any, str | None]:
    """The connector's answer, or an error message if it raised (Kafka's wording)."""
    try:
        return question(), None
    except Exception as e:
        log.error("Failed while validating connector support for %s", what, exc_info=e)
        message = str(e).strip()
        return None, ("An unexpected error occurred during validation"
                      + (f": {message}" if message else "; please see the worker logs for more details."))


def validate_exactly_once(connector: SourceConnector, config: Mapping[str, str], values: dict[str, ConfigValue],
                          enabled: bool) -> None:
    """Add KIP-618's errors to ``values`` (only to keys without errors of their own)."""
    support = values.get("exactly.once.support")
    if support is not None and not support.errors and str(support.value).lower() == "required":
        if not enabled:
            support.add_error_message(NOT_ENABLED)
        answer, error = _ask(lambda: connector.exactly_once_support(config), "exactly-once semantics")
        if error is not None:
            support.add_error_message(error)
        elif answer is None:
            support.add_error_message(NO_PREFLIGHT)
        elif answer is not ExactlyOnceSupport.SUPPORTED:
            support.add_error_message(UNSUPPORTED)
    boundary = values.get("transaction.boundary")
    if boundary is not None and not boundary.errors and str(boundary.value).lower() == "connector":
        answer, error = _ask(lambda: connector.can_define_transaction_boundaries(config),
                             "defining its own transaction boundaries")
        if error is not None:
            boundary.add_error_message(error)
        elif answer is None:
            boundary.add_error_message(NULL_BOUNDARIES)
        elif answer is not ConnectorTransactionBoundaries.SUPPORTED:
            boundary.add_error_message(NO_BOUNDARIES)
