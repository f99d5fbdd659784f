"""IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT single configs, as Kafka does.

Operations apply to the topic's current override set. APPEND and SUBTRACT work on LIST
configs only (``cleanup.policy``, the throttled-replica lists), starting from the
config's current effective value; on any other type they are INVALID_CONFIG. DELETE of
a config the topic does not override is a no-op. The resulting set is validated whole
(INVALID_CONFIG naming the key) before it is stored; ``validate_only`` stops there.

Broker configs are static on this node: DELETE is a no-op (there is no dynamic value to
remove) and anything else is INVALID_REQUEST, saying so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from seaway.broker.context import BrokerContext, Operation, RequestContext
from seaway.broker.context import ResourceType as AclResource
from seaway.broker.handlers.configs_common import (
    ConfigOp,
    ResourceType,
    check_broker_resource,
    check_unique_keys,
    error_of,
    is_list_config,
    refuse_broker_change,
    store_topic_overrides,
    topic_overrides,
    unsupported_resource,
    validate_topic_overrides,
)
from seaway.broker.handlers.registry import handles
from seaway.broker.log.log_manager import validate_topic_name
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.configdef import convert_to_string
from seaway.protocol.errors import InvalidConfigError, InvalidRequestError, KafkaProtocolError
from seaway.protocol.messages.incremental_alter_configs_request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from seaway.protocol.messages.incremental_alter_configs_response import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsResponse,
)

__all__ = ["apply_ops", "handle_incremental_alter_configs"]


def _op(config: AlterableConfig) -> ConfigOp:
    try:
        return ConfigOp(config.config_operation)
    except ValueError:
        raise InvalidRequestError(
            f"Unknown config operation {config.config_operation} for config {config.name}"
        ) from None


def _list_items(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def apply_ops(broker: BrokerContext, overrides: dict[str, str], ops: list[AlterableConfig]) -> dict[str, str]:
    """The override set after ``ops``; ``overrides`` is not modified."""
    result = dict(overrides)
    current = validate_topic_overrides(broker, overrides)
    for config in ops:
        op = _op(config)
        key = config.name
        if op is ConfigOp.SET:
            if config.value is None:
                raise InvalidConfigError(f"Null value not supported for topic configs: {key}")
            result[key] = config.value
        elif op is ConfigOp.DELETE:
            result.pop(key, None)
        else:
            if not is_list_config(key):
                raise InvalidConfigError(
                    f"Config value {op.name.lower()} is not allowed for config key: {key} (not a list)"
                )
            items = _list_items(result[key] if key in result else convert_to_string(current.value_of(key)))
            given = _list_items(config.value)
            if op is ConfigOp.APPEND:
                items += [item for item in given if item not in items]
            else:
                items = [item for item in items if item not in given]
            result[key] = ",".join(items)
    return result


def _alter(broker: BrokerContext, resource: AlterConfigsResource, validate_only: bool) -> None:
    check_unique_keys(c.name for c in resource.configs)
    if resource.resource_type == ResourceType.TOPIC:
        validate_topic_name(resource.resource_name)
        overrides = topic_overrides(broker, resource.resource_name)
        updated = apply_ops(broker, overrides, resource.configs)
        if updated != overrides or validate_only:
            store_topic_overrides(broker, resource.resource_name, dict(updated), validate_only)
    elif resource.resource_type == ResourceType.BROKER:
        check_broker_resource(broker, resource.resource_name)
        for config in resource.configs:
            _op(config)
        refuse_broker_change(c.name for c in resource.configs if c.config_operation != ConfigOp.DELETE)
    else:
        raise unsupported_resource(resource.resource_type)


def _alter_all(
    broker: BrokerContext, request: IncrementalAlterConfigsRequest, may_alter: Callable[[int, str], None]
) -> IncrementalAlterConfigsResponse:
    responses: list[AlterConfigsResourceResponse] = []
    for resource in request.resources:
        code, message = 0, None
        try:
            may_alter(resource.resource_type, resource.resource_name)
            _alter(broker, resource, request.validate_only)
        except KafkaProtocolError as exc:
            code, message = error_of(exc)
        responses.append(AlterConfigsResourceResponse(error_code=code, error_message=message,
                                                      resource_type=resource.resource_type,
                                                      resource_name=resource.resource_name))
    return IncrementalAlterConfigsResponse(responses=responses)


@handles(IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse)
async def handle_incremental_alter_configs(ctx: RequestContext, request: IncrementalAlterConfigsRequest) -> (
    IncrementalAlterConfigsResponse
):
    # Storing overrides fsyncs the topic metadata: off the event loop.
    return await asyncio.to_thread(_alter_all, ctx.broker, request, _may_alter(ctx))


def _may_alter(ctx: RequestContext) -> Callable[[int, str], None]:
    """ACLs: ALTER_CONFIGS on the topic (TOPIC_AUTHORIZATION_FAILED) or the cluster (CLUSTER_...)."""
    def check(resource_type: int, name: str) -> None:
        if resource_type == ResourceType.TOPIC:
            ctx.require(Operation.ALTER_CONFIGS, AclResource.TOPIC, name)
        elif resource_type == ResourceType.BROKER:
            ctx.require(Operation.ALTER_CONFIGS, AclResource.CLUSTER, CLUSTER_NAME)
    return check
