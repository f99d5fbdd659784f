"""The example plugin's own test: its connector and SMT on a real broker and worker (seaway.connect.testing)."""

from pathlib import Path

import pytest
from acme_connectors import CounterSourceConnector, Shout
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect


@pytest.mark.timeout(120)
async def test_counter_source_counts_and_shouts(tmp_path: Path) -> None:
    with EmbeddedBroker(tmp_path / "broker") as broker:
        async with EmbeddedConnect(broker.bootstrap, tmp_path, plugins=[CounterSourceConnector, Shout]) as connect:
            await connect.create_connector("counter", {
                "connector.class": "CounterSource", "topic": "numbers", "count": "3",
                "transforms": "shout", "transforms.shout.type": "Shout"})
            await connect.wait_for_running("counter", tasks=1)
            values = connect.consume("numbers", 3)
            assert [m.value() for m in values] == [b"VALUE 0", b"VALUE 1", b"VALUE 2"]
