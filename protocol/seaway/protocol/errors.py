"""Kafka's error codes, written once: an errno registry with a ``retriable`` flag each.

Every code is a subclass of :class:`KafkaProtocolError` (itself a ``SeawayError``), so code
raises ``UnknownTopicOrPartitionError("...")`` and the handler layer turns any raised
``KafkaProtocolError`` into its ``code`` in the response. ``error_for_code(3)`` finds a
class from a code read off the wire. Names, codes and retriable flags follow
``org.apache.kafka.common.protocol.Errors``; class names are the Kafka names in
CamelCase with an ``Error`` suffix (``INVALID_TOPIC_EXCEPTION`` keeps ``Exception``).
"""

from __future__ import annotations

from seaway.errors import SeawayError


class KafkaProtocolError(SeawayError):
    """An error that has a Kafka protocol error code."""

    code: int = -1
    name: str = "UNKNOWN_SERVER_ERROR"


class UnknownServerError(KafkaProtocolError):
    code = -1
    name = 'UNKNOWN_SERVER_ERROR'
    retriable = False

class OffsetOutOfRangeError(KafkaProtocolError):
    code = 1
    name = 'OFFSET_OUT_OF_RANGE'
    retriable = False

class CorruptMessageError(KafkaProtocolError):
    code = 2
    name = 'CORRUPT_MESSAGE'
    retriable = True

class UnknownTopicOrPartitionError(KafkaProtocolError):
    code = 3
    name = 'UNKNOWN_TOPIC_OR_PARTITION'
    retriable = True

class InvalidFetchSizeError(KafkaProtocolError):
    code = 4
    name = 'INVALID_FETCH_SIZE'
    retriable = False

class LeaderNotAvailableError(KafkaProtocolError):
    code = 5
    name = 'LEADER_NOT_AVAILABLE'
    retriable = True

class NotLeaderOrFollowerError(KafkaProtocolError):
    code = 6
    name = 'NOT_LEADER_OR_FOLLOWER'
    retriable = True

class RequestTimedOutError(KafkaProtocolError):
    code = 7
    name = 'REQUEST_TIMED_OUT'
    retriable = True

class BrokerNotAvailableError(KafkaProtocolError):
    code = 8
    name = 'BROKER_NOT_AVAILABLE'
    retriable = False

class ReplicaNotAvailableError(KafkaProtocolError):
    code = 9
    name = 'REPLICA_NOT_AVAILABLE'
    retriable = True

class MessageTooLargeError(KafkaProtocolError):
    code = 10
    name = 'MESSAGE_TOO_LARGE'
    retriable = False

class StaleControllerEpochError(KafkaProtocolError):
    code = 11
    name = 'STALE_CONTROLLER_EPOCH'
    retriable = False

class OffsetMetadataTooLargeError(KafkaProtocolError):
    code = 12
    name = 'OFFSET_METADATA_TOO_LARGE'
    retriable = False

class NetworkException(KafkaProtocolError):
    code = 13
    name = 'NETWORK_EXCEPTION'
    retriable = True

class CoordinatorLoadInProgressError(KafkaProtocolError):
    code = 14
    name = 'COORDINATOR_LOAD_IN_PROGRESS'
    retriable = True

class CoordinatorNotAvailableError(KafkaProtocolError):
    code = 15
    name = 'COORDINATOR_NOT_AVAILABLE'
    retriable = True

class NotCoordinatorError(KafkaProtocolError):
    code = 16
    name = 'NOT_COORDINATOR'
    retriable = True

class InvalidTopicException(KafkaProtocolError):
    code = 17
    name = 'INVALID_TOPIC_EXCEPTION'
    retriable = False

class RecordListTooLargeError(KafkaProtocolError):
    code = 18
    name = 'RECORD_LIST_TOO_LARGE'
    retriable = False

class NotEnoughReplicasError(KafkaProtocolError):
    code = 19
    name = 'NOT_ENOUGH_REPLICAS'
    retriable = True

class NotEnoughReplicasAfterAppendError(KafkaProtocolError):
    code = 20
    name = 'NOT_ENOUGH_REPLICAS_AFTER_APPEND'
    retriable = True

class InvalidRequiredAcksError(KafkaProtocolError):
    code = 21
    name = 'INVALID_REQUIRED_ACKS'
    retriable = False

class IllegalGenerationError(KafkaProtocolError):
    code = 22
    name = 'ILLEGAL_GENERATION'
    retriable = False

class InconsistentGroupProtocolError(KafkaProtocolError):
    code = 23
    name = 'INCONSISTENT_GROUP_PROTOCOL'
    retriable = False

class InvalidGroupIdError(KafkaProtocolError):
    code = 24
    name = 'INVALID_GROUP_ID'
    retriable = False

class UnknownMemberIdError(KafkaProtocolError):
    code = 25
    name = 'UNKNOWN_MEMBER_ID'
    retriable = False

class InvalidSessionTimeoutError(KafkaProtocolError):
    code = 26
    name = 'INVALID_SESSION_TIMEOUT'
    retriable = False

class RebalanceInProgressError(KafkaProtocolError):
    code = 27
    name = 'REBALANCE_IN_PROGRESS'
    retriable = False

class InvalidCommitOffsetSizeError(KafkaProtocolError):
    code = 28
    name = 'INVALID_COMMIT_OFFSET_SIZE'
    retriable = False

class TopicAuthorizationFailedError(KafkaProtocolError):
    code = 29
    name = 'TOPIC_AUTHORIZATION_FAILED'
    retriable = False

class GroupAuthorizationFailedError(KafkaProtocolError):
    code = 30
    name = 'GROUP_AUTHORIZATION_FAILED'
    retriable = False

class ClusterAuthorizationFailedError(KafkaProtocolError):
    code = 31
    name = 'CLUSTER_AUTHORIZATION_FAILED'
    retriable = False

class InvalidTimestampError(KafkaProtocolError):
    code = 32
    name = 'INVALID_TIMESTAMP'
    retriable = False

class UnsupportedSaslMechanismError(KafkaProtocolError):
    code = 33
    name = 'UNSUPPORTED_SASL_MECHANISM'
    retriable = False

class IllegalSaslStateError(KafkaProtocolError):
    code = 34
    name = 'ILLEGAL_SASL_STATE'
    retriable = False

class UnsupportedVersionError(KafkaProtocolError):
    code = 35
    name = 'UNSUPPORTED_VERSION'
    retriable = False

class TopicAlreadyExistsError(KafkaProtocolError):
    code = 36
    name = 'TOPIC_ALREADY_EXISTS'
    retriable = False

class InvalidPartitionsError(KafkaProtocolError):
    code = 37
    name = 'INVALID_PARTITIONS'
    retriable = False

class InvalidReplicationFactorError(KafkaProtocolError):
    code = 38
    name = 'INVALID_REPLICATION_FACTOR'
    retriable = False

class InvalidReplicaAssignmentError(KafkaProtocolError):
    code = 39
    name = 'INVALID_REPLICA_ASSIGNMENT'
    retriable = False

class InvalidConfigError(KafkaProtocolError):
    code = 40
    name = 'INVALID_CONFIG'
    retriable = False

class NotControllerError(KafkaProtocolError):
    code = 41
    name = 'NOT_CONTROLLER'
    retriable = True

class InvalidRequestError(KafkaProtocolError):
    code = 42
    name = 'INVALID_REQUEST'
    retriable = False

class UnsupportedForMessageFormatError(KafkaProtocolError):
    code = 43
    name = 'UNSUPPORTED_FOR_MESSAGE_FORMAT'
    retriable = False

class PolicyViolationError(KafkaProtocolError):
    code = 44
    name = 'POLICY_VIOLATION'
    retriable = False

class OutOfOrderSequenceNumberError(KafkaProtocolError):
    code = 45
    name = 'OUT_OF_ORDER_SEQUENCE_NUMBER'
    retriable = False

class DuplicateSequenceNumberError(KafkaProtocolError):
    code = 46
    name = 'DUPLICATE_SEQUENCE_NUMBER'
    retriable = False

class InvalidProducerEpochError(KafkaProtocolError):
    code = 47
    name = 'INVALID_PRODUCER_EPOCH'
    retriable = False

class InvalidTxnStateError(KafkaProtocolError):
    code = 48
    name = 'INVALID_TXN_STATE'
    retriable = False

class InvalidProducerIdMappingError(KafkaProtocolError):
    code = 49
    name = 'INVALID_PRODUCER_ID_MAPPING'
    retriable = False

class InvalidTransactionTimeoutError(KafkaProtocolError):
    code = 50
    name = 'INVALID_TRANSACTION_TIMEOUT'
    retriable = False

class ConcurrentTransactionsError(KafkaProtocolError):
    code = 51
    name = 'CONCURRENT_TRANSACTIONS'
    retriable = True

class TransactionCoordinatorFencedError(KafkaProtocolError):
    code = 52
    name = 'TRANSACTION_COORDINATOR_FENCED'
    retriable = False

class TransactionalIdAuthorizationFailedError(KafkaProtocolError):
    code = 53
    name = 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED'
    retriable = False

class SecurityDisabledError(KafkaProtocolError):
    code = 54
    name = 'SECURITY_DISABLED'
    retriable = False

class OperationNotAttemptedError(KafkaProtocolError):
    code = 55
    name = 'OPERATION_NOT_ATTEMPTED'
    retriable = False

class KafkaStorageError(KafkaProtocolError):
    code = 56
    name = 'KAFKA_STORAGE_ERROR'
    retriable = True

class LogDirNotFoundError(KafkaProtocolError):
    code = 57
    name = 'LOG_DIR_NOT_FOUND'
    retriable = False

class SaslAuthenticationFailedError(KafkaProtocolError):
    code = 58
    name = 'SASL_AUTHENTICATION_FAILED'
    retriable = False

class UnknownProducerIdError(KafkaProtocolError):
    code = 59
    name = 'UNKNOWN_PRODUCER_ID'
    retriable = False

class ReassignmentInProgressError(KafkaProtocolError):
    code = 60
    name = 'REASSIGNMENT_IN_PROGRESS'
    retriable = False

class DelegationTokenAuthDisabledError(KafkaProtocolError):
    code = 61
    name = 'DELEGATION_TOKEN_AUTH_DISABLED'
    retriable = False

class DelegationTokenNotFoundError(KafkaProtocolError):
    code = 62
    name = 'DELEGATION_TOKEN_NOT_FOUND'
    retriable = False

class DelegationTokenOwnerMismatchError(KafkaProtocolError):
    code = 63
    name = 'DELEGATION_TOKEN_OWNER_MISMATCH'
    retriable = False

class DelegationTokenRequestNotAllowedError(KafkaProtocolError):
    code = 64
    name = 'DELEGATION_TOKEN_REQUEST_NOT_ALLOWED'
    retriable = False

class DelegationTokenAuthorizationFailedError(KafkaProtocolError):
    code = 65
    name = 'DELEGATION_TOKEN_AUTHORIZATION_FAILED'
    retriable = False

class DelegationTokenExpiredError(KafkaProtocolError):
    code = 66
    name = 'DELEGATION_TOKEN_EXPIRED'
    retriable = False

class InvalidPrincipalTypeError(KafkaProtocolError):
    code = 67
    name = 'INVALID_PRINCIPAL_TYPE'
    retriable = False

class NonEmptyGroupError(KafkaProtocolError):
    code = 68
    name = 'NON_EMPTY_GROUP'
    retriable = False

class GroupIdNotFoundError(KafkaProtocolError):
    code = 69
    name = 'GROUP_ID_NOT_FOUND'
    retriable = False

class FetchSessionIdNotFoundError(KafkaProtocolError):
    code = 70
    name = 'FETCH_SESSION_ID_NOT_FOUND'
    retriable = True

class InvalidFetchSessionEpochError(KafkaProtocolError):
    code = 71
    name = 'INVALID_FETCH_SESSION_EPOCH'
    retriable = True

class ListenerNotFoundError(KafkaProtocolError):
    code = 72
    name = 'LISTENER_NOT_FOUND'
    retriable = True

class TopicDeletionDisabledError(KafkaProtocolError):
    code = 73
    name = 'TOPIC_DELETION_DISABLED'
    retriable = False

class FencedLeaderEpochError(KafkaProtocolError):
    code = 74
    name = 'FENCED_LEADER_EPOCH'
    retriable = True

class UnknownLeaderEpochError(KafkaProtocolError):
    code = 75
    name = 'UNKNOWN_LEADER_EPOCH'
    retriable = True

class UnsupportedCompressionTypeError(KafkaProtocolError):
    code = 76
    name = 'UNSUPPORTED_COMPRESSION_TYPE'
    retriable = False

class StaleBrokerEpochError(KafkaProtocolError):
    code = 77
    name = 'STALE_BROKER_EPOCH'
    retriable = False

class OffsetNotAvailableError(KafkaProtocolError):
    code = 78
    name = 'OFFSET_NOT_AVAILABLE'
    retriable = True

class MemberIdRequiredError(KafkaProtocolError):
    code = 79
    name = 'MEMBER_ID_REQUIRED'
    retriable = False

class PreferredLeaderNotAvailableError(KafkaProtocolError):
    code = 80
    name = 'PREFERRED_LEADER_NOT_AVAILABLE'
    retriable = True

class GroupMaxSizeReachedError(KafkaProtocolError):
    code = 81
    name = 'GROUP_MAX_SIZE_REACHED'
    retriable = False

class FencedInstanceIdError(KafkaProtocolError):
    code = 82
    name = 'FENCED_INSTANCE_ID'
    retriable = False

class EligibleLeadersNotAvailableError(KafkaProtocolError):
    code = 83
    name = 'ELIGIBLE_LEADERS_NOT_AVAILABLE'
    retriable = True

class ElectionNotNeededError(KafkaProtocolError):
    code = 84
    name = 'ELECTION_NOT_NEEDED'
    retriable = True

class NoReassignmentInProgressError(KafkaProtocolError):
    code = 85
    name = 'NO_REASSIGNMENT_IN_PROGRESS'
    retriable = False

class GroupSubscribedToTopicError(KafkaProtocolError):
    code = 86
    name = 'GROUP_SUBSCRIBED_TO_TOPIC'
    retriable = False

class InvalidRecordError(KafkaProtocolError):
    code = 87
    name = 'INVALID_RECORD'
    retriable = False

class UnstableOffsetCommitError(KafkaProtocolError):
    code = 88
    name = 'UNSTABLE_OFFSET_COMMIT'
    retriable = True

class ThrottlingQuotaExceededError(KafkaProtocolError):
    code = 89
    name = 'THROTTLING_QUOTA_EXCEEDED'
    retriable = True

class ProducerFencedError(KafkaProtocolError):
    code = 90
    name = 'PRODUCER_FENCED'
    retriable = False

class ResourceNotFoundError(KafkaProtocolError):
    code = 91
    name = 'RESOURCE_NOT_FOUND'
    retriable = False

class DuplicateResourceError(KafkaProtocolError):
    code = 92
    name = 'DUPLICATE_RESOURCE'
    retriable = False

class UnacceptableCredentialError(KafkaProtocolError):
    code = 93
    name = 'UNACCEPTABLE_CREDENTIAL'
    retriable = False

class InconsistentVoterSetError(KafkaProtocolError):
    code = 94
    name = 'INCONSISTENT_VOTER_SET'
    retriable = False

class InvalidUpdateVersionError(KafkaProtocolError):
    code = 95
    name = 'INVALID_UPDATE_VERSION'
    retriable = False

class FeatureUpdateFailedError(KafkaProtocolError):
    code = 96
    name = 'FEATURE_UPDATE_FAILED'
    retriable = False

class PrincipalDeserializationFailureError(KafkaProtocolError):
    code = 97
    name = 'PRINCIPAL_DESERIALIZATION_FAILURE'
    retriable = False

class SnapshotNotFoundError(KafkaProtocolError):
    code = 98
    name = 'SNAPSHOT_NOT_FOUND'
    retriable = False

class PositionOutOfRangeError(KafkaProtocolError):
    code = 99
    name = 'POSITION_OUT_OF_RANGE'
    retriable = False

class UnknownTopicIdError(KafkaProtocolError):
    code = 100
    name = 'UNKNOWN_TOPIC_ID'
    retriable = True

class DuplicateBrokerRegistrationError(KafkaProtocolError):
    code = 101
    name = 'DUPLICATE_BROKER_REGISTRATION'
    retriable = False

class BrokerIdNotRegisteredError(KafkaProtocolError):
    code = 102
    name = 'BROKER_ID_NOT_REGISTERED'
    retriable = False

class InconsistentTopicIdError(KafkaProtocolError):
    code = 103
    name = 'INCONSISTENT_TOPIC_ID'
    retriable = True

class InconsistentClusterIdError(KafkaProtocolError):
    code = 104
    name = 'INCONSISTENT_CLUSTER_ID'
    retriable = False

class TransactionalIdNotFoundError(KafkaProtocolError):
    code = 105
    name = 'TRANSACTIONAL_ID_NOT_FOUND'
    retriable = False

class FetchSessionTopicIdError(KafkaProtocolError):
    code = 106
    name = 'FETCH_SESSION_TOPIC_ID_ERROR'
    retriable = True

class IneligibleReplicaError(KafkaProtocolError):
    code = 107
    name = 'INELIGIBLE_REPLICA'
    retriable = False

class NewLeaderElectedError(KafkaProtocolError):
    code = 108
    name = 'NEW_LEADER_ELECTED'
    retriable = False

class OffsetMovedToTieredStorageError(KafkaProtocolError):
    code = 109
    name = 'OFFSET_MOVED_TO_TIERED_STORAGE'
    retriable = False

class FencedMemberEpochError(KafkaProtocolError):
    code = 110
    name = 'FENCED_MEMBER_EPOCH'
    retriable = False

class UnreleasedInstanceIdError(KafkaProtocolError):
    code = 111
    name = 'UNRELEASED_INSTANCE_ID'
    retriable = False

class UnsupportedAssignorError(KafkaProtocolError):
    code = 112
    name = 'UNSUPPORTED_ASSIGNOR'
    retriable = False

class StaleMemberEpochError(KafkaProtocolError):
    code = 113
    name = 'STALE_MEMBER_EPOCH'
    retriable = False

class MismatchedEndpointTypeError(KafkaProtocolError):
    code = 114
    name = 'MISMATCHED_ENDPOINT_TYPE'
    retriable = False

class UnsupportedEndpointTypeError(KafkaProtocolError):
    code = 115
    name = 'UNSUPPORTED_ENDPOINT_TYPE'
    retriable = False

class UnknownControllerIdError(KafkaProtocolError):
    code = 116
    name = 'UNKNOWN_CONTROLLER_ID'
    retriable = False

class UnknownSubscriptionIdError(KafkaProtocolError):
    code = 117
    name = 'UNKNOWN_SUBSCRIPTION_ID'
    retriable = False

class TelemetryTooLargeError(KafkaProtocolError):
    code = 118
    name = 'TELEMETRY_TOO_LARGE'
    retriable = False

class InvalidRegistrationError(KafkaProtocolError):
    code = 119
    name = 'INVALID_REGISTRATION'
    retriable = False

class TransactionAbortableError(KafkaProtocolError):
    code = 120
    name = 'TRANSACTION_ABORTABLE'
    retriable = False

class InvalidRecordStateError(KafkaProtocolError):
    code = 121
    name = 'INVALID_RECORD_STATE'
    retriable = False

class ShareSessionNotFoundError(KafkaProtocolError):
    code = 122
    name = 'SHARE_SESSION_NOT_FOUND'
    retriable = True

class InvalidShareSessionEpochError(KafkaProtocolError):
    code = 123
    name = 'INVALID_SHARE_SESSION_EPOCH'
    retriable = True

class FencedStateEpochError(KafkaProtocolError):
    code = 124
    name = 'FENCED_STATE_EPOCH'
    retriable = False

class InvalidVoterKeyError(KafkaProtocolError):
    code = 125
    name = 'INVALID_VOTER_KEY'
    retriable = False

class DuplicateVoterError(KafkaProtocolError):
    code = 126
    name = 'DUPLICATE_VOTER'
    retriable = False

class VoterNotFoundError(KafkaProtocolError):
    code = 127
    name = 'VOTER_NOT_FOUND'
    retriable = False

class InvalidRegularExpressionError(KafkaProtocolError):
    code = 128
    name = 'INVALID_REGULAR_EXPRESSION'
    retriable = False


ERRORS_BY_CODE: dict[int, type[KafkaProtocolError]] = {
    cls.code: cls for cls in KafkaProtocolError.__subclasses__()
}


def error_for_code(code: int) -> type[KafkaProtocolError]:
    """The exception class for a wire error code (UNKNOWN_SERVER_ERROR when unknown)."""
    return ERRORS_BY_CODE.get(code, UnknownServerError)


__all__ = [
    "ERRORS_BY_CODE",
    "BrokerIdNotRegisteredError",
    "BrokerNotAvailableError",
    "ClusterAuthorizationFailedError",
    "ConcurrentTransactionsError",
    "CoordinatorLoadInProgressError",
    "CoordinatorNotAvailableError",
    "CorruptMessageError",
    "DelegationTokenAuthDisabledError",
    "DelegationTokenAuthorizationFailedError",
    "DelegationTokenExpiredError",
    "DelegationTokenNotFoundError",
    "DelegationTokenOwnerMismatchError",
    "DelegationTokenRequestNotAllowedError",
    "DuplicateBrokerRegistrationError",
    "DuplicateResourceError",
    "DuplicateSequenceNumberError",
    "DuplicateVoterError",
    "ElectionNotNeededError",
    "EligibleLeadersNotAvailableError",
    "FeatureUpdateFailedError",
    "FencedInstanceIdError",
    "FencedLeaderEpochError",
    "FencedMemberEpochError",
    "FencedStateEpochError",
    "FetchSessionIdNotFoundError",
    "FetchSessionTopicIdError",
    "GroupAuthorizationFailedError",
    "GroupIdNotFoundError",
    "GroupMaxSizeReachedError",
    "GroupSubscribedToTopicError",
    "IllegalGenerationError",
    "IllegalSaslStateError",
    "InconsistentClusterIdError",
    "InconsistentGroupProtocolError",
    "InconsistentTopicIdError",
    "InconsistentVoterSetError",
    "IneligibleReplicaError",
    "InvalidCommitOffsetSizeError",
    "InvalidConfigError",
    "InvalidFetchSessionEpochError",
    "InvalidFetchSizeError",
    "InvalidGroupIdError",
    "InvalidPartitionsError",
    "InvalidPrincipalTypeError",
    "InvalidProducerEpochError",
    "InvalidProducerIdMappingError",
    "InvalidRecordError",
    "InvalidRecordStateError",
    "InvalidRegistrationError",
    "InvalidRegularExpressionError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidRequestError",
    "InvalidRequiredAcksError",
    "InvalidSessionTimeoutError",
    "InvalidShareSessionEpochError",
    "InvalidTimestampError",
    "InvalidTopicException",
    "InvalidTransactionTimeoutError",
    "InvalidTxnStateError",
    "InvalidUpdateVersionError",
    "InvalidVoterKeyError",
    "KafkaProtocolError",
    "KafkaStorageError",
    "LeaderNotAvailableError",
    "ListenerNotFoundError",
    "LogDirNotFoundError",
    "MemberIdRequiredError",
    "MessageTooLargeError",
    "MismatchedEndpointTypeError",
    "NetworkException",
    "NewLeaderElectedError",
    "NoReassignmentInProgressError",
    "NonEmptyGroupError",
    "NotControllerError",
    "NotCoordinatorError",
    "NotEnoughReplicasAfterAppendError",
    "NotEnoughReplicasError",
    "NotLeaderOrFollowerError",
    "OffsetMetadataTooLargeError",
    "OffsetMovedToTieredStorageError",
    "OffsetNotAvailableError",
    "OffsetOutOfRangeError",
    "OperationNotAttemptedError",
    "OutOfOrderSequenceNumberError",
    "PolicyViolationError",
    "PositionOutOfRangeError",
    "PreferredLeaderNotAvailableError",
    "PrincipalDeserializationFailureError",
    "ProducerFencedError",
    "ReassignmentInProgressError",
    "RebalanceInProgressError",
    "RecordListTooLargeError",
    "ReplicaNotAvailableError",
    "RequestTimedOutError",
    "ResourceNotFoundError",
    "SaslAuthenticationFailedError",
    "SecurityDisabledError",
    "ShareSessionNotFoundError",
    "SnapshotNotFoundError",
    "StaleBrokerEpochError",
    "StaleControllerEpochError",
    "StaleMemberEpochError",
    "TelemetryTooLargeError",
    "ThrottlingQuotaExceededError",
    "TopicAlreadyExistsError",
    "TopicAuthorizationFailedError",
    "TopicDeletionDisabledError",
    "TransactionAbortableError",
    "TransactionCoordinatorFencedError",
    "TransactionalIdAuthorizationFailedError",
    "TransactionalIdNotFoundError",
    "UnacceptableCredentialError",
    "UnknownControllerIdError",
    "UnknownLeaderEpochError",
    "UnknownMemberIdError",
    "UnknownProducerIdError",
    "UnknownServerError",
    "UnknownSubscriptionIdError",
    "UnknownTopicIdError",
    "UnknownTopicOrPartitionError",
    "UnreleasedInstanceIdError",
    "UnstableOffsetCommitError",
    "UnsupportedAssignorError",
    "UnsupportedCompressionTypeError",
    "UnsupportedEndpointTypeError",
    "UnsupportedForMessageFormatError",
    "UnsupportedSaslMechanismError",
    "UnsupportedVersionError",
    "VoterNotFoundError",
    "error_for_code",
]
