"""The bucket side against a real S3 HTTP API (moto's server): uploads, multipart, SSE, ACL, recovery."""

from __future__ import annotations

import json
import os

import pytest
from botocore.exceptions import ClientError
from s3_support import MotoServer, keys, read
from seaway.connect.api import ConnectError
from seaway.connectors.lake import CommitEntry, CommitLog, FileMove
from seaway.connectors.s3 import S3SinkConfig, S3Store, make_client

MIB = 1024 * 1024


def store(s3: MotoServer, bucket: str, **extra: str) -> S3Store:
    config = S3SinkConfig.from_props(s3.props(bucket, **{"format.class": "json", "flush.size": "10",
                                                         "s3.part.size": str(5 * MIB), **extra}))
    return S3Store(make_client(config), config)


def test_small_object_is_one_put_large_one_multipart(s3: MotoServer, bucket: str) -> None:
    st = store(s3, bucket)
    small = st.upload("k/small")
    small.write(b"x" * 1000)
    small.commit()
    assert small.upload_id is None and small.parts == []
    data = os.urandom(12 * MIB + 123)
    big = st.upload("k/big", {"seaway-set-next-offset": "7"})
    for i in range(0, len(data), 1 << 20):  # written in pieces, as a format writer does
        big.write(data[i:i + (1 << 20)])
    assert len(big.parts) == 2  # two full 5 MiB parts went up while writing; the rest at commit
    big.commit()
    client = s3.client()
    head = client.head_object(Bucket=bucket, Key="k/big")
    assert head["ETag"].strip('"').endswith("-3") and head["ContentLength"] == len(data)
    assert head["Metadata"] == {"seaway-set-next-offset": "7"}
    assert read(client, bucket, "k/big") == data
    assert "-" not in client.head_object(Bucket=bucket, Key="k/small")["ETag"]


def test_failed_multipart_upload_is_aborted_and_leaves_nothing(s3: MotoServer, bucket: str) -> None:
    st = store(s3, bucket)
    upload = st.upload("k/never")
    upload.write(os.urandom(6 * MIB))
    assert upload.upload_id is not None
    assert s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads")
    upload.abort()
    assert not s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads")
    assert keys(s3.client(), bucket) == []
    closed = st.upload("k/closed")  # closed without commit: same as abort
    closed.write(b"partial")
    closed.close()
    assert keys(s3.client(), bucket) == []


def test_encryption_and_canned_acl_on_every_object(s3: MotoServer, bucket: str) -> None:
    st = store(s3, bucket, **{"s3.ssea.name": "AES256", "s3.acl.canned": "public-read"})
    up = st.upload("k/enc")
    up.write(b"{}")
    up.commit()
    st.write_atomic("logs/x.json", b"{}")
    client = s3.client()
    for key in ("k/enc", "logs/x.json"):
        assert client.head_object(Bucket=bucket, Key=key)["ServerSideEncryption"] == "AES256"
        grants = client.get_object_acl(Bucket=bucket, Key=key)["Grants"]
        assert any(g["Grantee"].get("URI", "").endswith("/AllUsers") and g["Permission"] == "READ" for g in grants)


def test_missing_bucket_is_a_clear_error(s3: MotoServer) -> None:
    with pytest.raises(ConnectError, match="does not exist"):
        store(s3, "no-such-bucket-here").check_bucket()


def test_commit_record_reads_are_bounded(s3: MotoServer, bucket: str) -> None:
    st = store(s3, bucket)
    s3.client().put_object(Bucket=bucket, Key="logs/t/0/pending-00000000000000000005.json", Body=b"x" * (17 * MIB))
    with pytest.raises(ConnectError, match="not a commit record"):
        CommitLog(st, "t", 0, "logs").recover()


def _pending(st: S3Store, next_offset: int, files: list[str]) -> CommitEntry:
    entry = CommitEntry("t", 0, 0, next_offset, tuple(FileMove(k, k, 0, next_offset - 1, 1) for k in files))
    CommitLog(st, "t", 0, "logs").begin(entry)
    return entry


def test_recovery_adopts_a_set_whose_objects_all_landed(s3: MotoServer, bucket: str) -> None:
    st = store(s3, bucket)
    files = ["topics/t/a=1/t+0+0000000000.json", "topics/t/a=2/t+0+0000000003.json"]
    _pending(st, 6, files)
    for k in files:  # both uploads completed, then the worker died before the commit record
        s3.client().put_object(Bucket=bucket, Key=k, Body=b"{}\n")
    assert CommitLog(st, "t", 0, "logs").recover() == 6
    assert json.loads(read(s3.client(), bucket, "logs/t/0/commit-00000000000000000006.json"))["next"] == 6
    assert not [k for k in keys(s3.client(), bucket, "logs/") if "pending" in k]


def test_recovery_rolls_back_a_half_landed_set_and_aborts_its_upload(s3: MotoServer, bucket: str) -> None:
    st = store(s3, bucket)
    files = ["topics/t/a=1/t+0+0000000000.json", "topics/t/a=2/t+0+0000000003.json"]
    _pending(st, 6, files)
    client = s3.client()
    client.put_object(Bucket=bucket, Key=files[0], Body=b"{}\n")
    unfinished = st.upload(files[1])
    unfinished.write(os.urandom(6 * MIB))  # a multipart upload in flight when the worker was killed
    other = st.upload("topics/t/a=2/t+1+0000000003.json")  # another partition's: not ours to abort
    other.write(os.urandom(6 * MIB))
    assert CommitLog(st, "t", 0, "logs").recover() is None
    assert keys(client, bucket, "topics/") == []  # the landed object of the unfinished set is gone
    uploads = client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert [u["Key"] for u in uploads] == ["topics/t/a=2/t+1+0000000003.json"]
    other.abort()


def test_recovery_by_listing_when_the_log_is_gone(s3: MotoServer, bucket: str) -> None:
    st = store(s3, bucket)
    client = s3.client()
    for start, next_offset in ((0, 5), (5, 9)):
        up = st.upload(f"topics/t/partition=0/t+0+{start:010d}.json", {"seaway-set-next-offset": str(next_offset)})
        up.write(b"{}\n")
        up.commit()
    client.put_object(Bucket=bucket, Key="topics/t/partition=1/t+1+0000000100.json", Body=b"{}\n")
    assert CommitLog(st, "t", 0, "logs").recover() == 9  # from the highest object's metadata
    assert CommitLog(st, "t", 1, "logs").recover() is None  # not ours: the consumer group decides
    with pytest.raises(ClientError):
        client.head_object(Bucket=bucket, Key="logs/t/1/commit-00000000000000000101.json")
