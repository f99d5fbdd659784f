"""Issue 27, item 3: JoinGroup while a classic group rebalances with no members and one pending.

The steps and Kafka's answers are in :mod:`tests.broker.groups.pending_member_steps`; the same
steps run against Apache Kafka in ``tests/peer/test_groups_pending_member_peer.py``.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.broker.groups.grouptest_client import FAST_GROUPS
from tests.broker.groups.pending_member_steps import EXPECTED, run_pending_member_steps
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(120)


async def test_a_new_member_of_a_rebalancing_group_with_no_members_gets_member_id_required(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data", FAST_GROUPS) as broker:
        answers = await run_pending_member_steps(broker.bootstrap, f"g-{uuid.uuid4().hex[:10]}")
    assert answers == EXPECTED
