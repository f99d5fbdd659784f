"""The bucket: boto3 calls for the commit log (:class:`S3Store`) and streamed uploads (:class:`S3Upload`).

An S3 object becomes visible whole when its ``PutObject`` or ``CompleteMultipartUpload``
returns, and not before; that is what stands in for the Spark sink's temp file + rename. An
upload is held in memory one ``s3.part.size`` part at a time: a file smaller than a part goes
up with a single PUT when it is closed; a larger one starts a multipart upload at its first
full part, and one that fails is aborted, so no half object and no orphaned parts are left
(and :meth:`S3Store.discard_temp` aborts what a killed worker left on the next assignment).

Every object the sink writes carries the configured server-side encryption (``s3.ssea.name``,
``s3.sse.kms.key.id``) and canned ACL (``s3.acl.canned``). Nothing read back is trusted:
commit records are read only up to :data:`MAX_RECORD_BYTES`.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import boto3
from botocore.config import Config as BotoConfig
from botocore.exceptions import BotoCoreError, ClientError
from seaway.connect.api import ConnectError
from seaway.connectors.lake.naming import parse_data_file_name
from seaway.connectors.s3.config import S3SinkConfig

__all__ = ["MAX_RECORD_BYTES", "S3Store", "S3Upload", "make_client", "s3_error"]

log = logging.getLogger(__name__)
MAX_RECORD_BYTES = 16 * 1024 * 1024
#: user metadata of each data object: the Kafka offset after its file set (see offset_by_listing)
SET_NEXT_METADATA = "seaway-set-next-offset"


def make_client(config: S3SinkConfig) -> Any:
    """A boto3 S3 client: explicit keys if configured, else boto3's default credential chain."""
    session = boto3.session.Session(aws_access_key_id=config.access_key_id or None,
                                    aws_secret_access_key=config.secret_access_key or None,
                                    region_name=config.region)
    boto = BotoConfig(s3={"addressing_style": "path" if config.path_style else "auto"},
                      retries={"max_attempts": config.part_retries + 1, "mode": "standard"},
                      max_pool_connections=16)
    return session.client("s3", endpoint_url=config.store_url or None, config=boto)


def s3_error(action: str, error: Exception) -> ConnectError:
    """A botocore error as a :class:`ConnectError` that says what was being done."""
    if isinstance(error, ClientError):
        info = error.response.get("Error", {})
        return ConnectError(f"S3 {action} failed: {info.get('Code', '?')} {info.get('Message', '')}".rstrip())
    return ConnectError(f"S3 {action} failed: {error}")


def _not_found(error: ClientError) -> bool:
    code = str(error.response.get("Error", {}).get("Code", ""))
    return code in ("404", "NoSuchKey", "NotFound", "NoSuchUpload")


class S3Store:
    """The lake on a bucket: the :class:`~seaway.connectors.lake.store.LakeStore` of the S3 sink."""

    def __init__(self, client: Any, config: S3SinkConfig) -> None:
        self.client = client
        self.config = config
        self.bucket = config.bucket
        extra: dict[str, str] = {}
        if config.ssea:
            extra["ServerSideEncryption"] = config.ssea
            if config.sse_kms_key_id:
                extra["SSEKMSKeyId"] = config.sse_kms_key_id
        if config.acl_canned:
            extra["ACL"] = config.acl_canned
        self.object_args: Mapping[str, str] = extra

    def check_bucket(self) -> None:
        """Fail early and clearly when the bucket is not there (or not ours to write)."""
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as e:
            code = str(e.response.get("Error", {}).get("Code", ""))
            what = "does not exist" if code in ("404", "NoSuchBucket") else f"is not accessible ({code})"
            raise ConnectError(f"S3 bucket {self.bucket!r} (s3.bucket.name) {what}") from None
        except BotoCoreError as e:
            raise s3_error(f"HeadBucket of {self.bucket!r}", e) from None

    # -- LakeStore ---------------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=rel)
            return True
        except ClientError as e:
            if _not_found(e):
                return False
            raise s3_error(f"HeadObject {rel}", e) from None

    def delete(self, rel: str) -> bool:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=rel)
            return True
        except ClientError as e:
            raise s3_error(f"DeleteObject {rel}", e) from None

    def delete_many(self, rels: Sequence[str]) -> None:
        """``DeleteObjects``: up to 1,000 keys a request."""
        for i in range(0, len(rels), 1000):
            chunk = rels[i:i + 1000]
            try:
                response = self.client.delete_objects(Bucket=self.bucket, Delete={
                    "Objects": [{"Key": k} for k in chunk], "Quiet": True})
            except ClientError as e:
                raise s3_error(f"DeleteObjects ({len(chunk)} keys under {chunk[0]})", e) from None
            errors = response.get("Errors") or []
            if errors:
                first = errors[0]
                raise ConnectError(f"S3 DeleteObjects failed for {len(errors)} keys, e.g. {first.get('Key')}: "
                                   f"{first.get('Code')} {first.get('Message', '')}".rstrip())

    def rename(self, src: str, dst: str) -> bool:
        """A server-side copy and a delete (S3 has no rename; the commit log needs none on S3)."""
        try:
            self.client.copy_object(Bucket=self.bucket, Key=dst, CopySource={"Bucket": self.bucket, "Key": src},
                                    **self.object_args)
        except ClientError as e:
            if _not_found(e):
                return False
            raise s3_error(f"CopyObject {src} -> {dst}", e) from None
        return self.delete(src)

    def _keys(self, prefix: str, delimiter: str | None = None) -> Iterator[str]:
        args: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
        if delimiter:
            args["Delimiter"] = delimiter
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(**args):
                for item in page.get("Contents", ()):
                    yield str(item["Key"])
        except ClientError as e:
            raise s3_error(f"ListObjectsV2 {prefix}", e) from None

    def list_names(self, rel: str) -> list[str]:
        prefix = rel.rstrip("/") + "/"
        return [key[len(prefix):] for key in self._keys(prefix, "/")]

    def read_bytes(self, rel: str) -> bytes:
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=rel)
        except ClientError as e:
            raise s3_error(f"GetObject {rel}", e) from None
        body = response["Body"]
        try:
            data: bytes = body.read(MAX_RECORD_BYTES + 1)
        finally:
            body.close()
        if len(data) > MAX_RECORD_BYTES:
            raise ConnectError(f"s3://{self.bucket}/{rel} is larger than {MAX_RECORD_BYTES} bytes: "
                               "not a commit record")
        return data

    def write_atomic(self, rel: str, data: bytes) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=rel, Body=data, ContentType="application/json",
                                   **self.object_args)
        except (ClientError, BotoCoreError) as e:
            raise s3_error(f"PutObject {rel}", e) from None

    def discard_temp(self, topic: str, partition: int) -> None:
        """Abort multipart uploads of this Kafka partition that a killed writer left unfinished."""
        stem = f"{topic}+{partition}+"
        prefix = f"{self.config.topics_dir}/" if self.config.topics_dir else ""
        try:
            for page in self.client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket,
                                                                                    Prefix=prefix):
                for upload in page.get("Uploads", ()):
                    key = str(upload["Key"])
                    if key.rsplit("/", 1)[-1].startswith(stem):
                        log.info("Aborting the unfinished upload of s3://%s/%s", self.bucket, key)
                        self.client.abort_multipart_upload(Bucket=self.bucket, Key=key,
                                                           UploadId=upload["UploadId"])
        except ClientError as e:
            if not _not_found(e):
                raise s3_error(f"ListMultipartUploads {prefix}", e) from None

    def offset_by_listing(self, topic: str, partition: int) -> int | None:
        """The data object of this partition with the highest start offset tells where its set ended.

        Each object the sink writes carries its file set's next offset as user metadata. Objects
        without it (written by another tool) give no answer: the consumer group's offset applies.
        """
        best: tuple[int, str] | None = None
        prefix = "/".join(p for p in (self.config.topics_dir, topic) if p) + "/"
        for key in self._keys(prefix):
            parsed = parse_data_file_name(key.rsplit("/", 1)[-1])
            if parsed and parsed.topic == topic and parsed.partition == partition and \
                    (best is None or parsed.start > best[0]):
                best = (parsed.start, key)
        if best is None:
            return None
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=best[1])
        except ClientError as e:
            raise s3_error(f"HeadObject {best[1]}", e) from None
        value = str(head.get("Metadata", {}).get(SET_NEXT_METADATA, ""))
        return int(value) if value.isdigit() else None

    def upload(self, key: str, metadata: Mapping[str, str] | None = None) -> S3Upload:
        """A writable stream that becomes the object ``key`` on :meth:`S3Upload.commit`."""
        return S3Upload(self.client, self.bucket, key, self.config.part_size,
                        {**self.object_args, "Metadata": dict(metadata or {})})


class S3Upload(io.RawIOBase):
    """A write-only stream to one object: one PUT if it stays under a part, else a multipart upload.

    ``commit()`` makes the object visible; ``abort()`` (or any failure) leaves nothing behind.
    """

    def __init__(self, client: Any, bucket: str, key: str, part_size: int, args: Mapping[str, Any]) -> None:
        super().__init__()
        self.client, self.bucket, self.key, self.part_size = client, bucket, key, part_size
        self.args = dict(args)
        self._buffer = bytearray()
        self._position = 0
        self.upload_id: str | None = None
        self.parts: list[dict[str, Any]] = []

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        self._buffer += view
        self._position += len(view)
        while len(self._buffer) >= self.part_size:
            self._upload_part(self.part_size)
        return len(view)

    def _upload_part(self, size: int) -> None:
        try:
            if self.upload_id is None:
                self.upload_id = str(self.client.create_multipart_upload(Bucket=self.bucket, Key=self.key,
                                                                         **self.args)["UploadId"])
            number = len(self.parts) + 1
            body = bytes(self._buffer[:size])
            del self._buffer[:size]
            part = self.client.upload_part(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                           PartNumber=number, Body=body)
            self.parts.append({"PartNumber": number, "ETag": part["ETag"]})
        except (ClientError, BotoCoreError) as e:
            self.abort()
            raise s3_error(f"multipart upload of {self.key}", e) from None

    def commit(self) -> None:
        """Send what is buffered and make the object visible (all at once)."""
        try:
            if self.upload_id is None:
                self.client.put_object(Bucket=self.bucket, Key=self.key, Body=bytes(self._buffer), **self.args)
            else:
                if self._buffer:
                    self._upload_part(len(self._buffer))
                self.client.complete_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                                      MultipartUpload={"Parts": self.parts})
        except (ClientError, BotoCoreError) as e:
            self.abort()
            raise s3_error(f"upload of {self.key}", e) from None
        finally:
            self._buffer = bytearray()
        super().close()

    def abort(self) -> None:
        """Drop the upload: abort a started multipart upload so no parts are left (and billed)."""
        self._buffer = bytearray()
        upload_id, self.upload_id = self.upload_id, None
        if upload_id is not None:
            try:
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=upload_id)
            except (ClientError, BotoCoreError) as e:
                log.warning("Could not abort the multipart upload of %s (%s); the next assignment retries",
                            self.key, e)
        super().close()

    def close(self) -> None:
        """Closing without :meth:`commit` aborts: an object appears only when committed."""
        if not self.closed:
            self.abort()
