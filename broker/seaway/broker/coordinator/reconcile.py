"""Reconciliation: one member's next step from its current assignment towards its target.

Kafka's ``CurrentAssignmentBuilder`` rules (KIP-848), as a pure function of the member,
the target and who holds which partition:

- a member **Stable** at an older epoch than the target starts a new step;
- a member with **unrevoked partitions** keeps its epoch until a heartbeat no longer
  lists any partition it must give up; then it moves on (epoch + 1, or the target);
- a member waiting on **unreleased partitions** (still held by another member) gets each
  of them once it is free;
- the step: keep what is in both current and target; partitions to give up go pending
  revocation (the epoch stays, so the member cannot commit for them at a new epoch);
  otherwise the member moves to the target epoch with every target partition that is
  free, Stable if none is missing, else Unreleased.

Revoke-before-assign is what makes a partition never owned twice: a partition is given
to its new owner only after its previous owner reported it gone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from seaway.broker.coordinator.consumer_group import EMPTY_ASSIGNMENT, MemberState
from seaway.broker.coordinator.consumer_records import Assignment, CurrentAssignment
from seaway.protocol.errors import FencedMemberEpochError

__all__ = ["next_assignment"]

IsFree = Callable[[tuple[uuid.UUID, int]], bool]


def next_assignment(member: CurrentAssignment, target_epoch: int, target: Assignment, is_free: IsFree,
                    owned: Assignment | None) -> CurrentAssignment:
    """The member's new current assignment (possibly ``member`` itself).

    ``owned`` is what the heartbeat reported (None: not reported, so the member may still
    hold anything it was told to revoke). ``is_free(tp)`` tells whether no member holds
    ``tp`` at the moment. Raises FENCED_MEMBER_EPOCH for a member in a state this
    version does not know, unless it reports that it holds nothing.
    """
    state = MemberState.of(member.state)
    if state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _step(member, member.member_epoch, target_epoch, target, is_free, owned)
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _still_owns(owned, member.pending_revocation):
            return member
        return _step(member, member.member_epoch + 1, target_epoch, target, is_free, owned)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _step(member, member.member_epoch, target_epoch, target, is_free, owned)
    if owned is None or owned:
        raise FencedMemberEpochError("The consumer group member is in an unknown state. "
                                     "The member must abandon all its partitions and rejoin.")
    return _step(member, target_epoch, target_epoch, target, is_free, owned)


def _still_owns(owned: Assignment | None, revoking: Assignment) -> bool:
    return owned is None or not owned.isdisjoint(revoking)


def _step(member: CurrentAssignment, epoch: int, target_epoch: int, target: Assignment, is_free: IsFree,
          owned: Assignment | None) -> CurrentAssignment:
    kept = member.assigned & target
    revoking = member.assigned - kept
    wanted = target - kept
    unreleased = frozenset(tp for tp in wanted if not is_free(tp))
    adding = wanted - unreleased
    previous = member.member_epoch
    if revoking and _still_owns(owned, revoking):
        return CurrentAssignment(epoch, previous, int(MemberState.UNREVOKED_PARTITIONS), kept, revoking)
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return CurrentAssignment(target_epoch, previous, int(state), kept | adding, EMPTY_ASSIGNMENT)
