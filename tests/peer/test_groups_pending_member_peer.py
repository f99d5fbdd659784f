"""Issue 27, item 3, side by side: JoinGroup into a classic group rebalancing with no members
and one pending member.

The steps (:mod:`tests.broker.groups.pending_member_steps`) against the package's Apache Kafka
and Seaway brokers: the same answer from both at every step, MEMBER_ID_REQUIRED for the new
member among them (Seaway answered INCONSISTENT_GROUP_PROTOCOL).
"""

from __future__ import annotations

import pytest

from tests.broker.groups.pending_member_steps import EXPECTED, run_pending_member_steps

pytestmark = [pytest.mark.peer, pytest.mark.timeout(180)]


@pytest.mark.parametrize("kind", ["kafka", "seaway"])
async def test_a_new_member_of_a_rebalancing_group_with_no_members_gets_member_id_required(
        kind: str, bootstraps: dict[str, str], unique: str) -> None:
    assert await run_pending_member_steps(bootstraps[kind], unique) == EXPECTED
