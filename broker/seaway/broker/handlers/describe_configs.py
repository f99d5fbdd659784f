"""DescribeConfigs: a topic's or this broker's configs, with where each value came from.

TOPIC resources list every topic config (or the requested keys), each with its source:
TOPIC_CONFIG for the topic's overrides, STATIC_BROKER_CONFIG when the broker property it
inherits from was set, DEFAULT_CONFIG otherwise; ``include_synonyms`` adds the chain of
candidates strongest first, exactly what ``kafka-configs.sh --describe --all`` prints.
BROKER resources (this node's id) list the broker's properties; the cluster-default
broker resource (empty name) has no dynamic defaults here and is empty. From v3 each
entry carries its type, and its documentation when asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

from seaway.broker.context import BrokerContext, Operation, RequestContext
from seaway.broker.context import ResourceType as AclResource
from seaway.broker.handlers.configs_common import (
    ResourceType,
    broker_config_entries,
    check_broker_resource,
    error_of,
    topic_config_entries,
    topic_overrides,
    unsupported_resource,
)
from seaway.broker.handlers.registry import handles
from seaway.broker.log.config import ConfigEntry
from seaway.broker.log.log_manager import validate_topic_name
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.messages.describe_configs_request import DescribeConfigsRequest, DescribeConfigsResource
from seaway.protocol.messages.describe_configs_response import (
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)

__all__ = ["handle_describe_configs"]


def _entries(broker: BrokerContext, resource: DescribeConfigsResource) -> list[ConfigEntry]:
    kind = resource.resource_type
    if kind == ResourceType.TOPIC:
        validate_topic_name(resource.resource_name)
        return topic_config_entries(broker, topic_overrides(broker, resource.resource_name))
    if kind == ResourceType.BROKER:
        return broker_config_entries(broker, check_broker_resource(broker, resource.resource_name))
    raise unsupported_resource(kind)


def _render(entry: ConfigEntry, synonyms: bool, documentation: bool) -> DescribeConfigsResourceResult:
    hidden = entry.is_sensitive
    return DescribeConfigsResourceResult(
        name=entry.name,
        value=None if hidden else entry.value,
        read_only=entry.read_only,
        config_source=int(entry.source),
        is_sensitive=entry.is_sensitive,
        synonyms=[
            DescribeConfigsSynonym(name=name, value=None if hidden else value, source=int(source))
            for name, value, source in entry.synonyms
        ] if synonyms else [],
        config_type=entry.type.wire_code,
        documentation=entry.doc if documentation else None,
    )


def _select(entries: list[ConfigEntry], keys: Sequence[str] | None) -> list[ConfigEntry]:
    if keys is None or not keys:
        return entries
    wanted = set(keys)
    return [e for e in entries if e.name in wanted]


@handles(DescribeConfigsRequest, DescribeConfigsResponse)
async def handle_describe_configs(ctx: RequestContext, request: DescribeConfigsRequest) -> (
    DescribeConfigsResponse
):
    results: list[DescribeConfigsResult] = []
    documentation = request.include_documentation and ctx.api_version >= 3
    for resource in request.resources:
        try:
            if resource.resource_type == ResourceType.TOPIC:  # ACLs: DESCRIBE_CONFIGS on the topic / cluster
                ctx.require(Operation.DESCRIBE_CONFIGS, AclResource.TOPIC, resource.resource_name)
            elif resource.resource_type == ResourceType.BROKER:
                ctx.require(Operation.DESCRIBE_CONFIGS, AclResource.CLUSTER, CLUSTER_NAME)
            entries = _select(_entries(ctx.broker, resource), resource.configuration_keys)
        except KafkaProtocolError as exc:
            code, message = error_of(exc)
            results.append(DescribeConfigsResult(error_code=code, error_message=message,
                                                 resource_type=resource.resource_type,
                                                 resource_name=resource.resource_name, configs=[]))
            continue
        results.append(
            DescribeConfigsResult(
                error_code=0,
                error_message=None,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
                configs=[_render(e, request.include_synonyms, documentation) for e in entries],
            )
        )
    return DescribeConfigsResponse(results=results)
