"""ACL vocabulary, byte for byte Kafka's: resource types, operations, pattern and permission types.

The enum values are Kafka's wire codes (``org.apache.kafka.common.acl.AclOperation``,
``...resource.ResourceType``, ``...resource.PatternType``, ``...acl.AclPermissionType``),
so requests and responses carry them unchanged. An :class:`AclBinding` is one ACL as
CreateAcls sends it; an :class:`AclFilter` is what DescribeAcls and DeleteAcls send, with
Kafka's ``AclBindingFilter.matches`` semantics (ANY matches everything, MATCH matches the
literal, wildcard and prefixed patterns that would apply to a resource name).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

__all__ = [
    "CLUSTER_NAME",
    "SUPPORTED_OPERATIONS",
    "WILDCARD",
    "AclBinding",
    "AclFilter",
    "Operation",
    "PatternType",
    "Permission",
    "ResourceType",
    "operations_bitfield",
]

WILDCARD = "*"
CLUSTER_NAME = "kafka-cluster"
"""The one CLUSTER resource's name, as in Kafka."""


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class Operation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Permission(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_O = Operation
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[Operation, ...]] = {
    # Kafka's AclEntry.supportedOperations, per resource type.
    ResourceType.TOPIC: (_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER, _O.DESCRIBE_CONFIGS,
                         _O.ALTER_CONFIGS),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.CLUSTER: (_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS,
                           _O.IDEMPOTENT_WRITE, _O.ALTER, _O.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE, _O.TWO_PHASE_COMMIT),
    ResourceType.DELEGATION_TOKEN: (_O.DESCRIBE,),
    ResourceType.USER: (_O.CREATE_TOKENS, _O.DESCRIBE_TOKENS),
}


def operations_bitfield(operations: list[Operation] | tuple[Operation, ...]) -> int:
    """Kafka's ``Utils.to32BitField``: bit ``code`` set for each operation."""
    bits = 0
    for op in operations:
        bits |= 1 << int(op)
    return bits


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: who (principal, host) may or may not (permission) do what (operation) to which
    resources (type, name, pattern type). Hashable: the store keeps a set of them."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission

    def key(self) -> bytes:
        """The binding as the security log's record key: canonical JSON, so the same ACL
        written twice is one key and compaction keeps one copy."""
        return json.dumps(
            {
                "type": "acl",
                "resource_type": int(self.resource_type),
                "resource_name": self.resource_name,
                "pattern_type": int(self.pattern_type),
                "principal": self.principal,
                "host": self.host,
                "operation": int(self.operation),
                "permission": int(self.permission),
            },
            sort_keys=True,
            separators=(",", ":"),
        ).encode()

    @classmethod
    def from_key(cls, data: dict[str, object]) -> AclBinding:
        """The inverse of :meth:`key` (``data`` is the decoded JSON); raises ValueError."""
        try:
            return cls(
                ResourceType(int(data["resource_type"])),  # type: ignore[call-overload]
                str(data["resource_name"]),
                PatternType(int(data["pattern_type"])),  # type: ignore[call-overload]
                str(data["principal"]),
                str(data["host"]),
                Operation(int(data["operation"])),  # type: ignore[call-overload]
                Permission(int(data["permission"])),  # type: ignore[call-overload]
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not an ACL record: {exc}") from None

    def validation_error(self) -> str | None:
        """Why CreateAcls must refuse this binding (Kafka's messages), or None."""
        if self.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
            return "Invalid resourceType " + self.resource_type.name
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            return "Invalid patternType " + self.pattern_type.name
        if self.operation in (Operation.UNKNOWN, Operation.ANY):
            return "Invalid operation " + self.operation.name
        if self.permission not in (Permission.ALLOW, Permission.DENY):
            return "Invalid permissionType " + self.permission.name
        if not self.resource_name:
            return "Resource name should not be empty"
        if self.resource_type is ResourceType.CLUSTER and self.resource_name != CLUSTER_NAME:
            return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        if self.resource_type is ResourceType.DELEGATION_TOKEN:
            return "Delegation tokens are not supported by this broker"
        if ":" not in self.principal:
            return (f"Could not parse principal from `{self.principal}` (no colon is present separating the "
                    "principal type from the principal name)")
        return None


@dataclass(frozen=True, slots=True)
class AclFilter:
    """A DescribeAcls / DeleteAcls filter: None (or ANY) fields match everything."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: Operation
    permission: Permission

    def invalid(self) -> str | None:
        """Why the filter is not valid (UNKNOWN values), or None."""
        for field, value in (("resourceType", self.resource_type), ("patternType", self.pattern_type),
                             ("operation", self.operation), ("permissionType", self.permission)):
            if value == 0:
                return f"Filter contains UNKNOWN elements ({field})"
        return None

    def matches(self, acl: AclBinding) -> bool:
        """Kafka's ``AclBindingFilter.matches`` (resource part per ``ResourcePatternFilter``)."""
        if self.resource_type is not ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        if not self._pattern_matches(acl):
            return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation is not Operation.ANY and self.operation != acl.operation:
            return False
        return self.permission is Permission.ANY or self.permission == acl.permission

    def _pattern_matches(self, acl: AclBinding) -> bool:
        pattern = self.pattern_type
        name = self.resource_name
        if pattern is PatternType.ANY:
            return name is None or name == acl.resource_name
        if pattern is PatternType.MATCH:
            if name is None:
                return True
            if acl.pattern_type is PatternType.LITERAL:
                return acl.resource_name in (name, WILDCARD)
            return name.startswith(acl.resource_name)
        if pattern != acl.pattern_type:
            return False
        return name is None or name == acl.resource_name
