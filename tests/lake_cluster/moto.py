"""moto's S3 server on loopback, stopped by PID: the object store the Spark sink writes through ``s3a://``.

Not an in-process mock: hadoop-aws in the sink's Spark JVM (and boto3 in a test) talk HTTP to a
separate ``python -m moto.server`` process, as they would to AWS or MinIO, so multipart uploads,
copies (s3a's rename), listings and deletes go over the wire. State is in memory; each test uses
its own bucket. (connectors/s3's tests start theirs through ``s3_support.MotoServer``; this one
is a daemon like HDFS and Spark's, so ``python -m tests.lake_cluster s3 start DIR`` runs one by hand.)
"""

from __future__ import annotations

import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from tests.lake_cluster.daemon import Daemon, wait_until
from tests.support.ports import free_port

__all__ = ["KEYS", "REGION", "MotoS3"]

REGION = "us-west-2"
#: moto accepts any credentials
KEYS = {"access": "seaway-test", "secret": "seaway-test-secret"}


class MotoS3:
    """``python -m moto.server`` in ``folder`` (its PID and log there); ``endpoint`` once started."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self.daemon = Daemon(self.folder, "moto", "moto.server")
        port_file = self.folder / "moto.port"
        self.port = int(port_file.read_text()) if port_file.is_file() else 0
        self._client: Any = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> MotoS3:
        self.port = free_port()
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "moto.port").write_text(str(self.port))
        self.daemon.start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                          {"MOTO_PORT": str(self.port)})
        try:
            wait_until(self._answers, timeout, "moto's S3 server did not start", lambda: self.daemon.pid() is not None,
                       self.daemon.log)
        except BaseException:
            self.stop()
            raise
        return self

    def _answers(self) -> bool:
        urllib.request.urlopen(self.endpoint + "/moto-api/data.json", timeout=2).close()
        return True

    def stop(self) -> None:
        self.daemon.stop(10)

    def __enter__(self) -> MotoS3:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def client(self) -> Any:
        """A boto3 client for this server (one per server: creating one costs ~0.3 s of CPU)."""
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.session.Session(
                aws_access_key_id=KEYS["access"], aws_secret_access_key=KEYS["secret"], region_name=REGION,
            ).client("s3", endpoint_url=self.endpoint, config=Config(s3={"addressing_style": "path"}))
        return self._client

    def new_bucket(self) -> str:
        name = f"lake-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION})
        return name

    def s3a_conf(self) -> dict[str, str]:
        """Hadoop's s3a client settings for this server (``spark.hadoop.<key>``): path style, plain HTTP."""
        return {"fs.s3a.endpoint": self.endpoint, "fs.s3a.endpoint.region": REGION,
                "fs.s3a.path.style.access": "true", "fs.s3a.connection.ssl.enabled": "false",
                "fs.s3a.access.key": KEYS["access"], "fs.s3a.secret.key": KEYS["secret"]}
