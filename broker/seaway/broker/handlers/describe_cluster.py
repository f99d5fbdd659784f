"""DescribeCluster: the cluster id, the controller and the brokers, which are all this node.

Only the brokers endpoint type (1) is served, as on a Kafka broker listener: asking a
broker for controller endpoints is MISMATCHED_ENDPOINT_TYPE (v1), and v0 knows no other
type (UNSUPPORTED_ENDPOINT_TYPE). Asked-for authorized operations list the cluster
operations the caller may do: all of them without an authorizer, as Kafka answers.
"""

from __future__ import annotations

from seaway.broker.context import RequestContext, ResourceType
from seaway.broker.handlers.registry import handles
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.protocol.errors import MismatchedEndpointTypeError, UnsupportedEndpointTypeError
from seaway.protocol.messages.describe_cluster_request import DescribeClusterRequest
from seaway.protocol.messages.describe_cluster_response import DescribeClusterBroker, DescribeClusterResponse

__all__ = ["handle_describe_cluster"]

BROKERS_ENDPOINT = 1
OPERATIONS_OMITTED = -(2**31)


@handles(DescribeClusterRequest, DescribeClusterResponse)
async def handle_describe_cluster(ctx: RequestContext, request: DescribeClusterRequest) -> (
    DescribeClusterResponse
):
    broker = ctx.broker
    if request.endpoint_type != BROKERS_ENDPOINT:
        error = (UnsupportedEndpointTypeError if ctx.api_version < 1 else MismatchedEndpointTypeError)
        return DescribeClusterResponse(
            error_code=error.code,
            error_message=(
                f"This is a broker endpoint; endpoint type {request.endpoint_type} is not served here"
            ),
            endpoint_type=request.endpoint_type,
            cluster_id=broker.cluster_id,
        )
    ep = broker.endpoint_for(ctx.listener)
    return DescribeClusterResponse(
        error_code=0,
        error_message=None,
        endpoint_type=BROKERS_ENDPOINT,
        cluster_id=broker.cluster_id,
        controller_id=broker.node_id,
        brokers=[DescribeClusterBroker(broker_id=broker.node_id, host=ep.host, port=ep.port, rack=None)],
        cluster_authorized_operations=(
            ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME)
            if request.include_cluster_authorized_operations else OPERATIONS_OMITTED
        ),
    )
