"""Two Iceberg sink tasks on two distributed workers (``seaway connect distributed`` processes) commit to one
table through one committer; rebalances mid-stream (a third worker joins, then one of the first two is
SIGKILLed) change nothing: the table equals the topic by (partition, offset) and every snapshot holds the
offsets of exactly the rows it adds. No conflict is lost and no row doubled.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from lake_tables_support import (
    assert_rows_equal_topic,
    assert_snapshots_hold_their_offsets,
    iceberg_rows,
    wait_for,
    wait_iceberg_offsets,
)

from tests.connect.distributed.dist_support import WorkerProcess, start_all, wait_settled, worker_properties
from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess
from tests.support.ports import free_port

RECORDS = int(os.environ.get("SEAWAY_LAKE_TABLES_DISTRIBUTED_RECORDS", "200000"))
PARTITIONS = 6
TOPIC = "orders"
JSON = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true"}


TASKS = 2


def task_workers(worker: WorkerProcess) -> list[str]:
    """The worker id of each of the connector's ``TASKS`` tasks, once all are RUNNING (else empty).

    A task's status appears when its worker writes it: counting them matters, since for a moment
    the status can list task 0 running while task 1 has no status yet (seen once in CI).
    """
    answer = worker.get("/connectors/ice/status")
    if answer.status_code != 200:
        return []
    tasks: list[dict[str, Any]] = answer.json()["tasks"]
    running = len(tasks) == TASKS and all(t["state"] == "RUNNING" for t in tasks)
    return [t["worker_id"] for t in tasks] if running else []


@pytest.mark.timeout(420)
def test_two_workers_one_table_rebalances_change_nothing(broker: BrokerProcess, tmp_path: Path) -> None:
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/wh"}
    lake_check.create_topic(broker.bootstrap, TOPIC, PARTITIONS)
    first = RECORDS // 2
    lake_check.produce_json(broker.bootstrap, TOPIC, 0, first, PARTITIONS)
    produced = [first]
    flowing = threading.Event()
    flowing.set()

    def produce() -> None:
        while flowing.is_set() and produced[0] < RECORDS:
            count = min(5000, RECORDS - produced[0])
            lake_check.produce_json(broker.bootstrap, TOPIC, produced[0], count, PARTITIONS)
            produced[0] += count
            time.sleep(0.5)

    def worker(n: int) -> WorkerProcess:
        return WorkerProcess(tmp_path / f"worker-{n}",
                             worker_properties(broker.bootstrap, free_port(), "lake-tables", extra=JSON))

    workers = [worker(0), worker(1)]
    producer = threading.Thread(target=produce, daemon=True)
    try:
        start_all(workers)
        leader = wait_settled(workers)
        answer = leader.request("PUT", "/connectors/ice/config", json={
            "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "tasks.max": str(TASKS),
            "topics": TOPIC, "iceberg.tables": "shop.orders", "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.commit.interval-ms": "1000", "iceberg.control.commit.timeout-ms": "1000",
            "flush.size": "10000", "include.kafka.metadata": "true",
            **{f"iceberg.catalog.{k}": v for k, v in catalog.items()}})
        assert answer.status_code == 201, answer.text
        placed = wait_for(lambda: task_workers(leader), 60, "both tasks running")
        assert len(set(placed)) == 2, f"both tasks on one worker: {placed}"  # two workers share the table
        producer.start()
        wait_for(lambda: any(": commit " in line for w in workers for line in w.output), 60, "a first commit")

        workers.append(worker(2))  # a third worker joins: the tasks are rebalanced
        workers[2].start()
        time.sleep(3)
        workers[0].kill()  # SIGKILL: its task moves, its partitions resume from the table
        survivors = workers[1:]
        wait_for(lambda: task_workers(survivors[0]) and workers[0].worker_id not in task_workers(survivors[0]),
                 60, "the tasks off the killed worker")
    finally:
        if producer.ident is not None:  # started: a failure before then leaves nothing to join
            producer.join(120)
        flowing.clear()
    try:
        assert produced[0] == RECORDS
        ends = lake_check.end_offsets(broker.bootstrap, TOPIC, PARTITIONS)
        assert sum(ends.values()) == RECORDS
        table = wait_iceberg_offsets(catalog, "shop.orders", "ice", ends, TOPIC, 180)
    except AssertionError:
        for w in workers:
            print("".join(w.output[-80:]))
        raise
    finally:
        for w in workers:
            w.stop()
    assert assert_rows_equal_topic(iceberg_rows(table), broker.bootstrap, TOPIC, PARTITIONS) == RECORDS
    snapshots = assert_snapshots_hold_their_offsets(table, "ice", TOPIC)
    print(f"{RECORDS} records, {snapshots} snapshots, tasks first on {sorted(set(placed))}")
    assert snapshots >= 3
