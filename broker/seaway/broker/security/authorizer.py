"""Kafka's ``StandardAuthorizer`` decisions over the broker's ACLs.

``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer`` (or the
older ``kafka.security.authorizer.AclAuthorizer``, the same rules) turns it on. A decision
for (principal, client host, operation, resource type, resource name):

1. a principal listed in ``super.users`` (``User:admin;User:ops``) is allowed everything;
2. the ACLs that apply to the resource are the LITERAL ones with its exact name, the LITERAL
   ones named ``*`` and the PREFIXED ones whose name starts the resource's name;
3. of those, an ACL matches when its principal is the caller's or ``User:*``, its host is
   the client's address or ``*``, and its operation is the one asked for or ALL; an ALLOW
   for READ, WRITE, DELETE or ALTER also matches DESCRIBE, and an ALLOW for ALTER_CONFIGS
   matches DESCRIBE_CONFIGS (never the other way round, and DENY ACLs imply nothing);
4. any matching DENY denies; else any matching ALLOW allows; else, when no ACL applies to the
   resource at all, ``allow.everyone.if.no.acl.found`` decides (default false); else denied.

Hot path: Produce and Fetch ask once per topic per request, so decisions are cached by
(principal, host, operation, resource); any ACL change replaces the index and empties the
cache. The index is rebuilt whole and swapped in one assignment, so handlers running on
worker threads always read a consistent snapshot.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from seaway.broker.security.acl import (
    SUPPORTED_OPERATIONS,
    WILDCARD,
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    operations_bitfield,
)
from seaway.broker.security.principal import KafkaPrincipal

__all__ = ["StandardAuthorizer"]

log = logging.getLogger("kafka.authorizer.logger")

_WILDCARD_PRINCIPAL = "User:*"
_IMPLIES_DESCRIBE = frozenset({Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE,
                               Operation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS})
_CACHE_MAX = 65536


@dataclass
class _TypeIndex:
    """The ACLs of one resource type, by pattern."""

    literal: dict[str, list[AclBinding]] = field(default_factory=dict)
    prefixed: dict[str, list[AclBinding]] = field(default_factory=dict)
    prefix_lengths: list[int] = field(default_factory=list)

    def applying_to(self, name: str) -> list[AclBinding]:
        found: list[AclBinding] = []
        exact = self.literal.get(name)
        if exact:
            found.extend(exact)
        if name != WILDCARD:
            wild = self.literal.get(WILDCARD)
            if wild:
                found.extend(wild)
        for length in self.prefix_lengths:
            if length > len(name):
                break
            acls = self.prefixed.get(name[:length])
            if acls:
                found.extend(acls)
        return found


def _matches(acl: AclBinding, principal: str, host: str, operation: Operation) -> bool:
    if acl.principal != principal and acl.principal != _WILDCARD_PRINCIPAL:
        return False
    if acl.host != WILDCARD and acl.host != host:
        return False
    if acl.operation is Operation.ALL or acl.operation == operation:
        return True
    if acl.permission is Permission.ALLOW:
        if operation is Operation.DESCRIBE:
            return acl.operation in _IMPLIES_DESCRIBE
        if operation is Operation.DESCRIBE_CONFIGS:
            return acl.operation in _IMPLIES_DESCRIBE_CONFIGS
    return False


class StandardAuthorizer:
    """ACL decisions (see the module docstring); ACLs are handed in by the security store."""

    def __init__(self, super_users: Iterable[str] = (), allow_everyone_if_no_acl_found: bool = False) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_everyone_if_no_acl_found
        self._acls: frozenset[AclBinding] = frozenset()
        self._index: dict[ResourceType, _TypeIndex] = {}
        self._cache: dict[tuple[str, str, Operation, ResourceType, str], bool] = {}

    # -- ACL set -------------------------------------------------------------------------

    def set_acls(self, acls: Iterable[AclBinding]) -> None:
        """Replace every ACL (the store calls this after each change it made durable)."""
        frozen = frozenset(acls)
        index: dict[ResourceType, _TypeIndex] = {}
        for acl in frozen:
            entry = index.setdefault(acl.resource_type, _TypeIndex())
            target = entry.literal if acl.pattern_type is PatternType.LITERAL else entry.prefixed
            target.setdefault(acl.resource_name, []).append(acl)
        for entry in index.values():
            entry.prefix_lengths = sorted({len(name) for name in entry.prefixed})
        self._acls, self._index, self._cache = frozen, index, {}

    def acls(self, acl_filter: AclFilter | None = None) -> list[AclBinding]:
        acls = self._acls
        return sorted((a for a in acls if acl_filter is None or acl_filter.matches(a)), key=_sort_key)

    # -- decisions -----------------------------------------------------------------------

    def authorize(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: Operation,
        resource_type: ResourceType,
        name: str,
        audit: bool = True,
    ) -> bool:
        """May ``principal`` from ``host`` do ``operation`` on the resource? ``audit=False`` for
        questions that grant nothing (authorized operations), whose denials Kafka logs at trace."""
        who = str(principal)
        if who in self.super_users:
            return True
        key = (who, host, operation, resource_type, name)
        cache = self._cache
        decision = cache.get(key)
        if decision is None:
            decision = self._decide(who, host, operation, resource_type, name)
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            cache[key] = decision
            if not decision and audit:
                log.info("Principal = %s is Denied operation = %s from host = %s on resource = %s:LITERAL:%s",
                         who, operation.name, host, resource_type.name, name)
        return decision

    def _decide(self, who: str, host: str, operation: Operation, resource_type: ResourceType, name: str) -> bool:
        entry = self._index.get(resource_type)
        applying = entry.applying_to(name) if entry is not None else []
        if not applying:
            return self.allow_if_no_acl
        allowed = False
        for acl in applying:
            if _matches(acl, who, host, operation):
                if acl.permission is Permission.DENY:
                    return False
                allowed = True
        return allowed

    def authorize_by_resource_type(
        self, principal: KafkaPrincipal, host: str, operation: Operation, resource_type: ResourceType
    ) -> bool:
        """Kafka's ``Authorizer.authorizeByResourceType``: may the caller do ``operation`` on at
        least one resource of the type (an ALLOW not dominated by a DENY)? Used by InitProducerId
        (IDEMPOTENT_WRITE on the cluster, or WRITE on any topic)."""
        if self.authorize(principal, host, operation, resource_type, "hardcode", audit=False):
            return True
        who = str(principal)
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allow: list[AclBinding] = []
        for acl in self._acls:
            if acl.resource_type != resource_type or acl.host not in (host, WILDCARD):
                continue
            if acl.principal not in (who, _WILDCARD_PRINCIPAL):
                continue
            if acl.operation not in (operation, Operation.ALL):
                continue
            if acl.permission is Permission.DENY:
                if acl.pattern_type is PatternType.LITERAL:
                    if acl.resource_name == WILDCARD:
                        return False
                    deny_literal.add(acl.resource_name)
                else:
                    deny_prefixed.add(acl.resource_name)
            elif acl.permission is Permission.ALLOW:
                if acl.pattern_type is PatternType.LITERAL and acl.resource_name == WILDCARD:
                    return True
                allow.append(acl)
        for acl in allow:
            if acl.pattern_type is PatternType.LITERAL and acl.resource_name in deny_literal:
                continue
            name = acl.resource_name
            if any(name[:i] in deny_prefixed for i in range(1, len(name) + 1)):
                continue
            return True
        return False

    def authorized_operations(self, principal: KafkaPrincipal, host: str, resource_type: ResourceType,
                              name: str) -> int:
        """The bit field of the resource type's operations the caller may do (Kafka's AuthHelper)."""
        allowed = [op for op in SUPPORTED_OPERATIONS[resource_type]
                   if self.authorize(principal, host, op, resource_type, name, audit=False)]
        return operations_bitfield(allowed)


def _sort_key(acl: AclBinding) -> tuple[int, str, int, str, str, int, int]:
    return (int(acl.resource_type), acl.resource_name, int(acl.pattern_type), acl.principal, acl.host,
            int(acl.operation), int(acl.permission))
