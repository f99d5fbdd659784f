"""Through a real worker and a real broker into a real S3 API: every record once, in each format."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
import s3_lake
from s3_support import MotoServer
from seaway.connect.testing import EmbeddedConnect

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess

#: records per run: the issue asks 1,000,000; the suite lands 150,000 in each of the three formats
#: (bench/s3_sink.py lands the full 1,000,000); SEAWAY_S3_E2E_RECORDS=1000000 runs the full size here
E2E_RECORDS = int(os.environ.get("SEAWAY_S3_E2E_RECORDS", "150000"))
WORKER = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
          "value.converter.schemas.enable": "true"}
FORMATS = {"parquet": "io.confluent.connect.s3.format.parquet.ParquetFormat",
           "avro": "io.confluent.connect.s3.format.avro.AvroFormat",
           "json": "io.confluent.connect.s3.format.json.JsonFormat"}


@pytest.mark.timeout(120 + E2E_RECORDS // 500)
async def test_topic_lands_exactly_in_each_format(s3: MotoServer, bucket: str, broker: BrokerProcess,
                                                  tmp_path: Path) -> None:
    topic, partitions = "events", 6
    lake_check.create_topic(broker.bootstrap, topic, partitions)
    lake_check.produce_json(broker.bootstrap, topic, 0, E2E_RECORDS, partitions)
    ends = lake_check.end_offsets(broker.bootstrap, topic, partitions)
    started = time.monotonic()
    async with EmbeddedConnect(broker.bootstrap, tmp_path, worker_props=WORKER) as connect:
        for name, fmt in FORMATS.items():
            await connect.create_connector(name, {
                "connector.class": "io.confluent.connect.s3.S3SinkConnector", "tasks.max": "2", "topics": topic,
                **s3.props(bucket), "topics.dir": name, "logs.dir": f"{name}-logs", "format.class": fmt,
                "flush.size": "5000", "rotate.schedule.interval.ms": "5000", "timezone": "UTC",
                "include.kafka.metadata": "true", "avro.codec": "snappy"})
        for name in FORMATS:
            await connect.wait_for_running(name, tasks=2)
        client = s3.client()
        for name in FORMATS:
            await asyncio.to_thread(s3_lake.wait_landed, client, bucket, topic, ends, 60 + E2E_RECORDS / 1000,
                                    f"{name}-logs")
    elapsed = time.monotonic() - started
    print(f"landed {E2E_RECORDS} records 3 times in {elapsed:.1f} s")
    expected = lake_check.topic_records(broker.bootstrap, topic, partitions)
    for name in FORMATS:
        landed = s3_lake.bucket_rows(client, bucket, f"{name}/{topic}/")
        assert s3_lake.assert_bucket_equals_topic(landed, expected) == E2E_RECORDS, name
        assert not client.list_multipart_uploads(Bucket=bucket).get("Uploads")
