"""A real S3 HTTP API on loopback for the S3 sink's tests: moto's server as a subprocess.

Not botocore's Stubber and not moto's in-process mock: the sink's boto3 client talks HTTP to a
separate process, as it would to AWS or MinIO, so multipart uploads, SSE headers, ACLs and
listing go over the wire. The server keeps its state in memory; each test uses its own bucket.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from typing import Any

import boto3
from botocore.config import Config

from tests.support.ports import free_port as _free_port
from tests.support.process import stop

__all__ = ["KEYS", "REGION", "MotoServer", "keys", "read"]

REGION = "us-west-2"
#: moto accepts any credentials; the tests pass these explicitly (or through a config provider)
KEYS = {"aws.access.key.id": "seaway-test", "aws.secret.access.key": "seaway-test-secret"}



class MotoServer:
    """``python -m moto.server`` on a free loopback port; ``endpoint`` once started."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.endpoint = ""
        self.env = dict(env or {})
        self._client: Any = None

    def start(self, timeout: float = 60.0) -> MotoServer:
        for _ in range(5):  # the port may be taken between choosing and binding it
            port = _free_port()
            self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         env={**os.environ, "MOTO_PORT": str(port), **self.env})
            self.endpoint = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(self.endpoint + "/moto-api/data.json", timeout=2).close()
                    return self
                time.sleep(0.1)
            self.stop()
        raise RuntimeError("moto server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop(self.proc, 10)

    def __enter__(self) -> MotoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def client(self) -> Any:
        """One boto3 client per server (creating one loads botocore's models: ~0.3 s of CPU)."""
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def _new_client(self) -> Any:
        return boto3.session.Session(aws_access_key_id=KEYS["aws.access.key.id"],
                                     aws_secret_access_key=KEYS["aws.secret.access.key"],
                                     region_name=REGION).client(
            "s3", endpoint_url=self.endpoint, config=Config(s3={"addressing_style": "path"}))

    def new_bucket(self) -> str:
        name = f"b-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION})
        return name

    def props(self, bucket: str, **extra: str) -> dict[str, str]:
        """Connector properties pointing at this server and ``bucket``."""
        return {"s3.bucket.name": bucket, "s3.region": REGION, "store.url": self.endpoint, **KEYS, **extra}


def keys(client: Any, bucket: str, prefix: str = "") -> list[str]:
    out: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out += [str(o["Key"]) for o in page.get("Contents", ())]
    return out


def read(client: Any, bucket: str, key: str) -> bytes:
    body = client.get_object(Bucket=bucket, Key=key)["Body"]
    try:
        return bytes(body.read())
    finally:
        body.close()
