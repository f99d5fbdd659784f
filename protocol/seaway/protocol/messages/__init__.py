"""Generated Kafka protocol messages, one module per message; see tools/gen_protocol.py.

``REQUESTS`` and ``RESPONSES`` map an API key to its message class.
"""

from __future__ import annotations

from typing import Any

from seaway.protocol.messages.produce_request import ProduceRequest
from seaway.protocol.messages.produce_response import ProduceResponse
from seaway.protocol.messages.fetch_request import FetchRequest
from seaway.protocol.messages.fetch_response import FetchResponse
from seaway.protocol.messages.list_offsets_request import ListOffsetsRequest
from seaway.protocol.messages.list_offsets_response import ListOffsetsResponse
from seaway.protocol.messages.metadata_request import MetadataRequest
from seaway.protocol.messages.metadata_response import MetadataResponse
from seaway.protocol.messages.offset_commit_request import OffsetCommitRequest
from seaway.protocol.messages.offset_commit_response import OffsetCommitResponse
from seaway.protocol.messages.offset_fetch_request import OffsetFetchRequest
from seaway.protocol.messages.offset_fetch_response import OffsetFetchResponse
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import FindCoordinatorResponse
from seaway.protocol.messages.join_group_request import JoinGroupRequest
from seaway.protocol.messages.join_group_response import JoinGroupResponse
from seaway.protocol.messages.heartbeat_request import HeartbeatRequest
from seaway.protocol.messages.heartbeat_response import HeartbeatResponse
from seaway.protocol.messages.leave_group_request import LeaveGroupRequest
from seaway.protocol.messages.leave_group_response import LeaveGroupResponse
from seaway.protocol.messages.sync_group_request import SyncGroupRequest
from seaway.protocol.messages.sync_group_response import SyncGroupResponse
from seaway.protocol.messages.describe_groups_request import DescribeGroupsRequest
from seaway.protocol.messages.describe_groups_response import DescribeGroupsResponse
from seaway.protocol.messages.list_groups_request import ListGroupsRequest
from seaway.protocol.messages.list_groups_response import ListGroupsResponse
from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse
from seaway.protocol.messages.api_versions_request import ApiVersionsRequest
from seaway.protocol.messages.api_versions_response import ApiVersionsResponse
from seaway.protocol.messages.create_topics_request import CreateTopicsRequest
from seaway.protocol.messages.create_topics_response import CreateTopicsResponse
from seaway.protocol.messages.delete_topics_request import DeleteTopicsRequest
from seaway.protocol.messages.delete_topics_response import DeleteTopicsResponse
from seaway.protocol.messages.delete_records_request import DeleteRecordsRequest
from seaway.protocol.messages.delete_records_response import DeleteRecordsResponse
from seaway.protocol.messages.init_producer_id_request import InitProducerIdRequest
from seaway.protocol.messages.init_producer_id_response import InitProducerIdResponse
from seaway.protocol.messages.add_partitions_to_txn_request import AddPartitionsToTxnRequest
from seaway.protocol.messages.add_partitions_to_txn_response import AddPartitionsToTxnResponse
from seaway.protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from seaway.protocol.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse
from seaway.protocol.messages.end_txn_request import EndTxnRequest
from seaway.protocol.messages.end_txn_response import EndTxnResponse
from seaway.protocol.messages.txn_offset_commit_request import TxnOffsetCommitRequest
from seaway.protocol.messages.txn_offset_commit_response import TxnOffsetCommitResponse
from seaway.protocol.messages.describe_acls_request import DescribeAclsRequest
from seaway.protocol.messages.describe_acls_response import DescribeAclsResponse
from seaway.protocol.messages.create_acls_request import CreateAclsRequest
from seaway.protocol.messages.create_acls_response import CreateAclsResponse
from seaway.protocol.messages.delete_acls_request import DeleteAclsRequest
from seaway.protocol.messages.delete_acls_response import DeleteAclsResponse
from seaway.protocol.messages.describe_configs_request import DescribeConfigsRequest
from seaway.protocol.messages.describe_configs_response import DescribeConfigsResponse
from seaway.protocol.messages.alter_configs_request import AlterConfigsRequest
from seaway.protocol.messages.alter_configs_response import AlterConfigsResponse
from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
from seaway.protocol.messages.create_partitions_request import CreatePartitionsRequest
from seaway.protocol.messages.create_partitions_response import CreatePartitionsResponse
from seaway.protocol.messages.delete_groups_request import DeleteGroupsRequest
from seaway.protocol.messages.delete_groups_response import DeleteGroupsResponse
from seaway.protocol.messages.incremental_alter_configs_request import IncrementalAlterConfigsRequest
from seaway.protocol.messages.incremental_alter_configs_response import IncrementalAlterConfigsResponse
from seaway.protocol.messages.offset_delete_request import OffsetDeleteRequest
from seaway.protocol.messages.offset_delete_response import OffsetDeleteResponse
from seaway.protocol.messages.describe_user_scram_credentials_request import DescribeUserScramCredentialsRequest
from seaway.protocol.messages.describe_user_scram_credentials_response import DescribeUserScramCredentialsResponse
from seaway.protocol.messages.alter_user_scram_credentials_request import AlterUserScramCredentialsRequest
from seaway.protocol.messages.alter_user_scram_credentials_response import AlterUserScramCredentialsResponse
from seaway.protocol.messages.describe_cluster_request import DescribeClusterRequest
from seaway.protocol.messages.describe_cluster_response import DescribeClusterResponse
from seaway.protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from seaway.protocol.messages.describe_transactions_response import DescribeTransactionsResponse
from seaway.protocol.messages.list_transactions_request import ListTransactionsRequest
from seaway.protocol.messages.list_transactions_response import ListTransactionsResponse
from seaway.protocol.messages.consumer_group_heartbeat_request import ConsumerGroupHeartbeatRequest
from seaway.protocol.messages.consumer_group_heartbeat_response import ConsumerGroupHeartbeatResponse
from seaway.protocol.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
from seaway.protocol.messages.consumer_group_describe_response import ConsumerGroupDescribeResponse
from seaway.protocol.messages.describe_topic_partitions_request import DescribeTopicPartitionsRequest
from seaway.protocol.messages.describe_topic_partitions_response import DescribeTopicPartitionsResponse

REQUESTS: dict[int, Any] = {0: ProduceRequest, 1: FetchRequest, 2: ListOffsetsRequest, 3: MetadataRequest, 8: OffsetCommitRequest, 9: OffsetFetchRequest, 10: FindCoordinatorRequest, 11: JoinGroupRequest, 12: HeartbeatRequest, 13: LeaveGroupRequest, 14: SyncGroupRequest, 15: DescribeGroupsRequest, 16: ListGroupsRequest, 17: SaslHandshakeRequest, 18: ApiVersionsRequest, 19: CreateTopicsRequest, 20: DeleteTopicsRequest, 21: DeleteRecordsRequest, 22: InitProducerIdRequest, 24: AddPartitionsToTxnRequest, 25: AddOffsetsToTxnRequest, 26: EndTxnRequest, 28: TxnOffsetCommitRequest, 29: DescribeAclsRequest, 30: CreateAclsRequest, 31: DeleteAclsRequest, 32: DescribeConfigsRequest, 33: AlterConfigsRequest, 36: SaslAuthenticateRequest, 37: CreatePartitionsRequest, 42: DeleteGroupsRequest, 44: IncrementalAlterConfigsRequest, 47: OffsetDeleteRequest, 50: DescribeUserScramCredentialsRequest, 51: AlterUserScramCredentialsRequest, 60: DescribeClusterRequest, 65: DescribeTransactionsRequest, 66: ListTransactionsRequest, 68: ConsumerGroupHeartbeatRequest, 69: ConsumerGroupDescribeRequest, 75: DescribeTopicPartitionsRequest}
RESPONSES: dict[int, Any] = {0: ProduceResponse, 1: FetchResponse, 2: ListOffsetsResponse, 3: MetadataResponse, 8: OffsetCommitResponse, 9: OffsetFetchResponse, 10: FindCoordinatorResponse, 11: JoinGroupResponse, 12: HeartbeatResponse, 13: LeaveGroupResponse, 14: SyncGroupResponse, 15: DescribeGroupsResponse, 16: ListGroupsResponse, 17: SaslHandshakeResponse, 18: ApiVersionsResponse, 19: CreateTopicsResponse, 20: DeleteTopicsResponse, 21: DeleteRecordsResponse, 22: InitProducerIdResponse, 24: AddPartitionsToTxnResponse, 25: AddOffsetsToTxnResponse, 26: EndTxnResponse, 28: TxnOffsetCommitResponse, 29: DescribeAclsResponse, 30: CreateAclsResponse, 31: DeleteAclsResponse, 32: DescribeConfigsResponse, 33: AlterConfigsResponse, 36: SaslAuthenticateResponse, 37: CreatePartitionsResponse, 42: DeleteGroupsResponse, 44: IncrementalAlterConfigsResponse, 47: OffsetDeleteResponse, 50: DescribeUserScramCredentialsResponse, 51: AlterUserScramCredentialsResponse, 60: DescribeClusterResponse, 65: DescribeTransactionsResponse, 66: ListTransactionsResponse, 68: ConsumerGroupHeartbeatResponse, 69: ConsumerGroupDescribeResponse, 75: DescribeTopicPartitionsResponse}
__all__ = ['AddOffsetsToTxnRequest', 'AddOffsetsToTxnResponse', 'AddPartitionsToTxnRequest', 'AddPartitionsToTxnResponse', 'AlterConfigsRequest', 'AlterConfigsResponse', 'AlterUserScramCredentialsRequest', 'AlterUserScramCredentialsResponse', 'ApiVersionsRequest', 'ApiVersionsResponse', 'ConsumerGroupDescribeRequest', 'ConsumerGroupDescribeResponse', 'ConsumerGroupHeartbeatRequest', 'ConsumerGroupHeartbeatResponse', 'CreateAclsRequest', 'CreateAclsResponse', 'CreatePartitionsRequest', 'CreatePartitionsResponse', 'CreateTopicsRequest', 'CreateTopicsResponse', 'DeleteAclsRequest', 'DeleteAclsResponse', 'DeleteGroupsRequest', 'DeleteGroupsResponse', 'DeleteRecordsRequest', 'DeleteRecordsResponse', 'DeleteTopicsRequest', 'DeleteTopicsResponse', 'DescribeAclsRequest', 'DescribeAclsResponse', 'DescribeClusterRequest', 'DescribeClusterResponse', 'DescribeConfigsRequest', 'DescribeConfigsResponse', 'DescribeGroupsRequest', 'DescribeGroupsResponse', 'DescribeTopicPartitionsRequest', 'DescribeTopicPartitionsResponse', 'DescribeTransactionsRequest', 'DescribeTransactionsResponse', 'DescribeUserScramCredentialsRequest', 'DescribeUserScramCredentialsResponse', 'EndTxnRequest', 'EndTxnResponse', 'FetchRequest', 'FetchResponse', 'FindCoordinatorRequest', 'FindCoordinatorResponse', 'HeartbeatRequest', 'HeartbeatResponse', 'IncrementalAlterConfigsRequest', 'IncrementalAlterConfigsResponse', 'InitProducerIdRequest', 'InitProducerIdResponse', 'JoinGroupRequest', 'JoinGroupResponse', 'LeaveGroupRequest', 'LeaveGroupResponse', 'ListGroupsRequest', 'ListGroupsResponse', 'ListOffsetsRequest', 'ListOffsetsResponse', 'ListTransactionsRequest', 'ListTransactionsResponse', 'MetadataRequest', 'MetadataResponse', 'OffsetCommitRequest', 'OffsetCommitResponse', 'OffsetDeleteRequest', 'OffsetDeleteResponse', 'OffsetFetchRequest', 'OffsetFetchResponse', 'ProduceRequest', 'ProduceResponse', 'SaslAuthenticateRequest', 'SaslAuthenticateResponse', 'SaslHandshakeRequest', 'SaslHandshakeResponse', 'SyncGroupRequest', 'SyncGroupResponse', 'TxnOffsetCommitRequest', 'TxnOffsetCommitResponse', 'REQUESTS', 'RESPONSES']
