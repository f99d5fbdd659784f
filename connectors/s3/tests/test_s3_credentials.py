"""Credentials reach S3: from a worker config provider (``${file:...}``) or from boto3's default chain.

A second moto server runs with IAM authentication on (``INITIAL_NO_AUTH_ACTION_COUNT``): after the
three unauthenticated calls that create a user, its access key and its policy, every request must
be signed with that key, and a wrong secret is refused (SignatureDoesNotMatch).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import s3_lake
from botocore.config import Config
from botocore.exceptions import ClientError
from s3_support import REGION, MotoServer
from seaway.connect.runtime.herder import State
from seaway.connect.testing import EmbeddedConnect

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess

POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}


@pytest.fixture(scope="module")
def secured() -> Iterator[tuple[MotoServer, dict[str, str]]]:
    with MotoServer({"INITIAL_NO_AUTH_ACTION_COUNT": "3"}) as server:
        iam = boto3.session.Session(aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap",
                                    region_name="us-east-1").client("iam", endpoint_url=server.endpoint)
        iam.create_user(UserName="sink")
        key = iam.create_access_key(UserName="sink")["AccessKey"]
        iam.put_user_policy(UserName="sink", PolicyName="s3", PolicyDocument=json.dumps(POLICY))
        yield server, {"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}


def client(server: MotoServer, key_id: str, secret: str) -> Any:
    return boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret, region_name=REGION).client(
        "s3", endpoint_url=server.endpoint, config=Config(s3={"addressing_style": "path"}))


def sink(server: MotoServer, bucket: str, topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "S3SinkConnector", "topics": topic, "s3.bucket.name": bucket, "s3.region": REGION,
            "store.url": server.endpoint, "format.class": "json", "flush.size": "50",
            "include.kafka.metadata": "true", **extra}


@pytest.mark.timeout(120)
async def test_keys_from_a_config_provider_and_from_the_default_chain(
        secured: tuple[MotoServer, dict[str, str]], broker: BrokerProcess, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    server, key = secured
    good = client(server, key["id"], key["secret"])
    good.create_bucket(Bucket="secured", CreateBucketConfiguration={"LocationConstraint": REGION})
    with pytest.raises(ClientError, match="SignatureDoesNotMatch"):
        client(server, key["id"], "wrong").put_object(Bucket="secured", Key="x", Body=b"")
    secrets = tmp_path / "aws.properties"
    secrets.write_text(f"id={key['id']}\nsecret={key['secret']}\n")
    topic = "creds"
    lake_check.create_topic(broker.bootstrap, topic, 1)
    lake_check.produce_json(broker.bootstrap, topic, 0, 100, 1)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["id"])  # what boto3's default chain finds first
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["secret"])
    worker = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "config.providers": "file", "config.providers.file.class": "FileConfigProvider"}
    async with EmbeddedConnect(broker.bootstrap, tmp_path / "connect", worker_props=worker) as connect:
        await connect.create_connector("from-provider", sink(server, "secured", topic, **{
            "topics.dir": "provider", "logs.dir": "provider-logs",
            "aws.access.key.id": f"${{file:{secrets}:id}}", "aws.secret.access.key": f"${{file:{secrets}:secret}}"}))
        await connect.create_connector("default-chain", sink(server, "secured", topic, **{
            "topics.dir": "chain", "logs.dir": "chain-logs"}))
        await connect.create_connector("wrong-secret", sink(server, "secured", topic, **{
            "topics.dir": "wrong", "logs.dir": "wrong-logs",
            "aws.access.key.id": key["id"], "aws.secret.access.key": "not-the-secret"}))
        for logs in ("provider-logs", "chain-logs"):
            await asyncio.to_thread(s3_lake.wait_landed, good, "secured", topic, {0: 100}, 60, logs)
        status = await connect.wait_for_status("wrong-secret", State.RUNNING, tasks=1, task_state=State.FAILED)
        assert "secured" in (status.tasks[0].trace or "") and "not accessible" in (status.tasks[0].trace or "")
    for prefix in ("provider", "chain"):
        assert len(s3_lake.bucket_rows(good, "secured", f"{prefix}/{topic}/")) == 100
    assert s3_lake.keys(good, "secured", "wrong/") == []
