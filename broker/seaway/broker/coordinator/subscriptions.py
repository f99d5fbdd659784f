"""What a consumer group subscribes to: topic names, RE2 regexes, and the topics they resolve to.

KIP-848 moves regex subscriptions to the server: a member sends ``SubscribedTopicRegex``
and the coordinator resolves it against the topics that exist. Kafka uses RE2J; here it
is Google's RE2 (``google-re2``), the same syntax and the same guarantee: matching is
linear in the topic name, so a hostile pattern cannot stall the broker (Python's ``re``
backtracks exponentially on ``(a+)+b``). A pattern must match the whole topic name, as
Java's ``Matcher.matches``; internal topics (``__consumer_offsets``,
``__transaction_state``) never match. Invalid patterns, and patterns RE2 rejects
(backreferences, lookaround), are INVALID_REGULAR_EXPRESSION naming the pattern, as
Kafka's ``throwIfRegularExpressionIsInvalid``; a pattern longer than 4096 characters is
INVALID_REQUEST.

A regex is resolved when the set of topic names changes, with the permissions of the
member whose heartbeat saw the change (topics it may not DESCRIBE are left out), as
Kafka resolves with the context of the member that triggered the refresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import re2
from seaway.broker.coordinator.consumer_records import TopicInfo
from seaway.protocol.errors import InvalidRegularExpressionError, InvalidRequestError

if TYPE_CHECKING:
    from seaway.broker.log.log_manager import TopicMetadata

__all__ = ["MAX_REGEX_LENGTH", "RegexResolver", "compile_regex", "subscription_metadata"]

MAX_REGEX_LENGTH = 4096
"""Longest pattern accepted: RE2's memory is bounded too (``max_mem`` below)."""

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.max_mem = 8 << 20


def compile_regex(pattern: str) -> Any:
    """A compiled RE2 pattern; INVALID_REGULAR_EXPRESSION if RE2 cannot compile it."""
    if len(pattern) > MAX_REGEX_LENGTH:
        raise InvalidRequestError(f"SubscribedTopicRegex is longer than {MAX_REGEX_LENGTH} characters.")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise InvalidRegularExpressionError(f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: "
                                            f"{detail}.") from None


class RegexResolver:
    """Resolved regexes per group and pattern, recomputed only when the topic names change."""

    def __init__(self) -> None:
        self._cache: dict[str, dict[str, tuple[frozenset[str], frozenset[str]]]] = {}
        self._compiled: dict[str, Any] = {}

    def compiled(self, pattern: str) -> Any:
        compiled = self._compiled.get(pattern)
        if compiled is None:
            compiled = compile_regex(pattern)
            if len(self._compiled) >= 10_000:
                self._compiled.clear()
            self._compiled[pattern] = compiled
        return compiled

    def resolve(self, group_id: str, pattern: str, topics: Mapping[str, TopicMetadata],
                may_describe: Callable[[str], bool]) -> frozenset[str]:
        """The non-internal topics ``pattern`` fully matches that ``may_describe`` allows."""
        group = self._cache.setdefault(group_id, {})
        cached = group.get(pattern)
        if cached is not None and topics.keys() == cached[0]:
            return cached[1]
        compiled = self.compiled(pattern)
        matches = frozenset(name for name, meta in topics.items()
                            if not meta.is_internal and compiled.fullmatch(name) is not None and may_describe(name))
        group[pattern] = (frozenset(topics), matches)
        return matches

    def matches(self, pattern: str, name: str) -> bool:
        return self.compiled(pattern).fullmatch(name) is not None

    def forget(self, group_id: str, keep: Iterable[str] = ()) -> None:
        """Drop the group's cached patterns except ``keep`` (those still subscribed)."""
        group = self._cache.get(group_id)
        if group is None:
            return
        wanted = set(keep)
        for pattern in [p for p in group if p not in wanted]:
            del group[pattern]
        if not group:
            del self._cache[group_id]


def subscription_metadata(names: Iterable[str], topics: Mapping[str, TopicMetadata]) -> tuple[TopicInfo, ...]:
    """The existing topics among ``names``, sorted by name: what the group's epoch depends on."""
    out = []
    for name in sorted(set(names)):
        meta = topics.get(name)
        if meta is not None:
            out.append(TopicInfo(meta.topic_id, name, meta.num_partitions))
    return tuple(out)
