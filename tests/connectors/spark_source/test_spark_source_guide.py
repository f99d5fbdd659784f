"""docs/spark-source.md's pipeline (topic -> Structured Streaming -> Parquet), run as the guide writes it.

The code block after ``<!-- pipeline-example -->`` is executed with its three constants and its topic
pointed at this test's broker, topic and folders, and its last line, ``query.awaitTermination()`` (a pipeline runs until
stopped), in the form a test can end: ``query.processAllAvailable(); query.stop()``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.connectors.spark_source.source_support import create_topic, produce, unique_topic
from tests.support.broker import BrokerProcess

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "spark-source.md"


def pipeline_code() -> str:
    block = re.search(r"<!-- pipeline-example -->\n```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block is not None, "the guide's pipeline example is gone"
    return block[1]


@pytest.mark.timeout(240)
def test_the_guides_pipeline_lands_the_topic(spark: Any, shared_broker: BrokerProcess, tmp_path: Path) -> None:
    topic = unique_topic("orders")
    create_topic(shared_broker.bootstrap, topic, 2)
    produce(shared_broker.bootstrap, ({"topic": topic, "key": b"%d" % i, "value": b'{"id": %d}' % i,
                                       "partition": i % 2} for i in range(500)))
    code = pipeline_code()
    for name, value in (("BOOTSTRAP", shared_broker.bootstrap), ("LAKE", str(tmp_path / "lake")),
                        ("CHECKPOINT", str(tmp_path / "checkpoint"))):
        code, count = re.subn(rf'^{name} = "[^"]*"', f'{name} = "{value}"', code, flags=re.M)
        assert count == 1, f"the guide's example no longer sets {name}"
    assert code.count('.option("subscribe", "orders")') == 1, "the guide's example no longer reads orders"
    code = code.replace('.option("subscribe", "orders")', f'.option("subscribe", "{topic}")')
    assert code.rstrip().endswith("query.awaitTermination()")
    code = code.rstrip().removesuffix("query.awaitTermination()") + "query.processAllAvailable()\nquery.stop()\n"
    exec(compile(code, str(GUIDE), "exec"), {})
    lake = spark.read.parquet(str(tmp_path / "lake"))
    assert lake.count() == 500
    assert sorted(int(r["key"]) for r in lake.select("key").collect()) == list(range(500))
    assert {r["day"] for r in lake.select("day").distinct().collect()} != {None}
