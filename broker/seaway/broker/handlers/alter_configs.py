"""AlterConfigs (the legacy, non-incremental API): replace a resource's whole config set.

For a topic the request's configs become its complete override set: anything not named
returns to the broker default, as in Kafka. The set is validated before anything changes
(INVALID_CONFIG naming the key) and ``validate_only`` stops there. Broker configs are
static here, so a BROKER resource may only be "altered" with an empty set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from seaway.broker.context import BrokerContext, Operation, RequestContext
from seaway.broker.context import ResourceType as AclResource
from seaway.broker.handlers.configs_common import (
    ResourceType,
    check_broker_resource,
    check_unique_keys,
    error_of,
    refuse_broker_change,
    store_topic_overrides,
    topic_overrides,
    unsupported_resource,
)
from seaway.broker.handlers.registry import handles
from seaway.broker.log.log_manager import validate_topic_name
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.alter_configs_request import AlterConfigsRequest, AlterConfigsResource
from seaway.protocol.messages.alter_configs_response import AlterConfigsResourceResponse, AlterConfigsResponse

__all__ = ["handle_alter_configs"]


def _alter(broker: BrokerContext, resource: AlterConfigsResource, validate_only: bool) -> None:
    check_unique_keys(c.name for c in resource.configs)
    if resource.resource_type == ResourceType.TOPIC:
        validate_topic_name(resource.resource_name)
        topic_overrides(broker, resource.resource_name)  # UNKNOWN_TOPIC_OR_PARTITION first
        overrides = {c.name: c.value for c in resource.configs}
        store_topic_overrides(broker, resource.resource_name, overrides, validate_only)
    elif resource.resource_type == ResourceType.BROKER:
        check_broker_resource(broker, resource.resource_name)
        refuse_broker_change(c.name for c in resource.configs)
    else:
        raise unsupported_resource(resource.resource_type)


def _alter_all(
    broker: BrokerContext, request: AlterConfigsRequest, may_alter: Callable[[int, str], None]
) -> AlterConfigsResponse:
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
    return AlterConfigsResponse(responses=responses)


@handles(AlterConfigsRequest, AlterConfigsResponse)
async def handle_alter_configs(ctx: RequestContext, request: AlterConfigsRequest) -> AlterConfigsResponse:
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
