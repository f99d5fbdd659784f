"""What CreateAcls, DescribeAcls and DeleteAcls share: wire values -> ACL types."""

from __future__ import annotations

import enum
from typing import Any, TypeVar

from seaway.broker.security.acl import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from seaway.protocol.errors import SecurityDisabledError

__all__ = ["binding_of", "filter_of", "no_authorizer", "wire_enum"]

E = TypeVar("E", bound=enum.IntEnum)


def wire_enum(cls: type[E], value: int) -> E:
    """``cls(value)``, or its UNKNOWN (0) member for a code this broker does not know."""
    try:
        return cls(value)
    except ValueError:
        return cls(0)


def binding_of(creation: Any, version: int) -> AclBinding:
    """A CreateAcls creation as a binding (v0 knows LITERAL patterns only)."""
    return AclBinding(
        wire_enum(ResourceType, creation.resource_type),
        creation.resource_name,
        wire_enum(PatternType, creation.resource_pattern_type) if version >= 1 else PatternType.LITERAL,
        creation.principal,
        creation.host,
        wire_enum(Operation, creation.operation),
        wire_enum(Permission, creation.permission_type),
    )


def filter_of(item: Any, version: int) -> AclFilter:
    """A DescribeAcls request or DeleteAcls filter as an AclFilter (v0: LITERAL patterns)."""
    return AclFilter(
        wire_enum(ResourceType, item.resource_type_filter),
        item.resource_name_filter,
        wire_enum(PatternType, item.pattern_type_filter) if version >= 1 else PatternType.LITERAL,
        item.principal_filter,
        item.host_filter,
        wire_enum(Operation, item.operation),
        wire_enum(Permission, item.permission_type),
    )


def no_authorizer() -> tuple[int, str]:
    """Kafka's answer to ACL requests on a broker without an authorizer."""
    return SecurityDisabledError.code, "No Authorizer is configured."
