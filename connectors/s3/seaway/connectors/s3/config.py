"""The S3 sink's configuration, with the names and defaults of Confluent's S3 sink.

The partitioner and rotation keys come from :mod:`seaway.connectors.lake.config` with
Confluent's defaults (``flush.size`` required, ``timestamp.extractor=Wallclock``, empty
``timezone``/``locale``, which the time-based partitioners then require); this module adds
the S3 keys (``s3.bucket.name``, ``s3.region``, ``store.url``, ``s3.part.size``, ...) and
the format keys. Every rule that spans keys is checked by :func:`cross_check` with each error
on the key it concerns, so ``PUT .../config/validate`` and a 400 name the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seaway.connect.api import (
    NO_DEFAULT,
    CaseInsensitiveValidString,
    Config,
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    LambdaValidator,
    NonEmptyString,
    Password,
    Range,
    ValidString,
)
from seaway.connectors.lake.config import (
    ConfigRules,
    StorageConfig,
    define_storage_keys,
    storage_cross_check,
    storage_settings,
)

__all__ = [
    "AVRO_CODECS",
    "CANNED_ACLS",
    "CONFIG_DEF",
    "FORMATS",
    "PARQUET_CODECS",
    "RULES",
    "S3SinkConfig",
    "validate_config",
]

S3_BUCKET = "s3.bucket.name"
S3_REGION = "s3.region"
STORE_URL = "store.url"
TOPICS_DIR = "topics.dir"
LOGS_DIR = "logs.dir"
PART_SIZE = "s3.part.size"
FORMAT_CLASS = "format.class"
PARQUET_CODEC = "parquet.codec"
AVRO_CODEC = "avro.codec"
COMPRESSION_TYPE = "s3.compression.type"
COMPRESSION_LEVEL = "s3.compression.level"
JSON_DECIMAL_FORMAT = "json.decimal.format"
BEHAVIOR_ON_NULL_VALUES = "behavior.on.null.values"
ACCESS_KEY_ID = "aws.access.key.id"
SECRET_ACCESS_KEY = "aws.secret.access.key"
SSEA = "s3.ssea.name"
SSE_KMS_KEY_ID = "s3.sse.kms.key.id"
ACL_CANNED = "s3.acl.canned"
PATH_STYLE = "s3.path.style.access.enabled"
PART_RETRIES = "s3.part.retries"
ZERO_PAD_WIDTH = "filename.offset.zero.pad.width"

MIN_PART_SIZE = 5 * 1024 * 1024  # S3's smallest part (all but the last)
#: ``format.class``: Confluent's class names and short names -> the format.
FORMATS: dict[str, str] = {
    "io.confluent.connect.s3.format.parquet.ParquetFormat": "parquet",
    "io.confluent.connect.s3.format.avro.AvroFormat": "avro",
    "io.confluent.connect.s3.format.json.JsonFormat": "json",
    "ParquetFormat": "parquet", "AvroFormat": "avro", "JsonFormat": "json",
    "parquet": "parquet", "avro": "avro", "json": "json",
}
_UNSUPPORTED_FORMATS = {"io.confluent.connect.s3.format.bytearray.ByteArrayFormat", "ByteArrayFormat"}
#: ``parquet.codec`` -> (pyarrow's codec, Parquet's file-name extension as Confluent writes it).
PARQUET_CODECS: dict[str, tuple[str, str]] = {
    "none": ("none", ""), "snappy": ("snappy", ".snappy"), "gzip": ("gzip", ".gz"), "brotli": ("brotli", ".br"),
    "zstd": ("zstd", ".zstd"), "lz4_raw": ("lz4", ".lz4raw"),
}
_PARQUET_UNSUPPORTED = {"lzo": "pyarrow cannot write LZO", "lz4": "pyarrow writes LZ4 as lz4_raw, not Hadoop's "
                        "framed LZ4; use lz4_raw"}
#: ``avro.codec``: Confluent's list (fastavro writes each).
AVRO_CODECS = ("null", "deflate", "snappy", "bzip2")
CANNED_ACLS = ("private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read",
               "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write")
_REGION = re.compile(r"^[a-z]{2}(-[a-z0-9]+)+-\d+$")
_URL = re.compile(r"^https?://[^\s/]+(/\S*)?$")


def _check_region(name: str, value: Any) -> None:
    if not isinstance(value, str) or not _REGION.match(value.strip().lower()):
        raise ConfigError.invalid(name, value, "must be an AWS region such as us-west-2 or eu-central-1")


def _check_url(name: str, value: Any) -> None:
    if value and (not isinstance(value, str) or not _URL.match(value)):
        raise ConfigError.invalid(name, value, "must be an http:// or https:// URL of an S3-compatible endpoint")


def _check_format(name: str, value: Any) -> None:
    if value in _UNSUPPORTED_FORMATS:
        raise ConfigError.invalid(name, value, "ByteArrayFormat is not supported; use Parquet, Avro or JSON")
    if value not in FORMATS:
        raise ConfigError.invalid(name, value, "must be one of " + ", ".join(FORMATS))


def _check_parquet_codec(name: str, value: Any) -> None:
    if isinstance(value, str) and value.strip().lower() in _PARQUET_UNSUPPORTED:
        raise ConfigError.invalid(name, value, _PARQUET_UNSUPPORTED[value.strip().lower()])
    if not isinstance(value, str) or value.strip().lower() not in PARQUET_CODECS:
        raise ConfigError.invalid(name, value, "must be one of " + ", ".join(PARQUET_CODECS))


def _check_dir(name: str, value: Any) -> None:
    if not isinstance(value, str) or value.startswith("/") or value.endswith("/") or "//" in value:
        raise ConfigError.invalid(name, value, "must be a key prefix without a leading or trailing '/'")


def _check_acl(name: str, value: Any) -> None:
    if value is not None and value not in CANNED_ACLS:
        raise ConfigError.invalid(name, value, "must be one of " + ", ".join(CANNED_ACLS))


CONFIG_DEF = (
    ConfigDef()
    .define(S3_BUCKET, ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH, "The S3 bucket.")
    .define(S3_REGION, ConfigType.STRING, "us-west-2", LambdaValidator(_check_region, "an AWS region"),
            Importance.MEDIUM, "The AWS region of the bucket.")
    .define(STORE_URL, ConfigType.STRING, "", LambdaValidator(_check_url, "a URL"), Importance.HIGH,
            "Endpoint of an S3-compatible store (MinIO, Ceph, a test server); empty means AWS.")
    .define(TOPICS_DIR, ConfigType.STRING, "topics", LambdaValidator(_check_dir, "a key prefix"), Importance.HIGH,
            "Top-level key prefix of the data objects: <topics.dir>/<topic>/<partition folders>/<file>.")
    .define(LOGS_DIR, ConfigType.STRING, "logs", LambdaValidator(_check_dir, "a key prefix"), Importance.MEDIUM,
            "Key prefix of the commit log (as Confluent's HDFS sink's logs.dir): "
            "<logs.dir>/<topic>/<partition>/commit-<next offset>.json; recovery reads it on assignment.")
    .define(PART_SIZE, ConfigType.INT, 25 * 1024 * 1024, Range.between(MIN_PART_SIZE, 2**31 - 1), Importance.HIGH,
            "Part size of S3 multipart uploads: an object larger than this is uploaded in parts of this size "
            "(and held in memory one part at a time); a smaller one with a single PUT.")
    .define(FORMAT_CLASS, ConfigType.STRING, NO_DEFAULT, LambdaValidator(_check_format, "a format"), Importance.HIGH,
            "io.confluent.connect.s3.format.parquet.ParquetFormat, ...avro.AvroFormat or ...json.JsonFormat "
            "(or parquet, avro, json).")
    .define(PARQUET_CODEC, ConfigType.STRING, "snappy", LambdaValidator(_check_parquet_codec, "a codec"),
            Importance.LOW, "Parquet compression codec: " + ", ".join(PARQUET_CODECS) + ".")
    .define(AVRO_CODEC, ConfigType.STRING, "null", ValidString.in_(*AVRO_CODECS), Importance.LOW,
            "Avro container compression codec.")
    .define(COMPRESSION_TYPE, ConfigType.STRING, "none", ValidString.in_("none", "gzip"), Importance.LOW,
            "Compression of JSON files: none or gzip (adds .gz to the name).")
    .define(COMPRESSION_LEVEL, ConfigType.INT, -1, Range.between(-1, 9), Importance.LOW,
            "gzip level for s3.compression.type=gzip (-1: the default, 6).")
    .define(JSON_DECIMAL_FORMAT, ConfigType.STRING, "BASE64", CaseInsensitiveValidString.in_("BASE64", "NUMERIC"),
            Importance.LOW, "How JsonFormat writes Decimal values (as Kafka's JsonConverter decimal.format).")
    .define(BEHAVIOR_ON_NULL_VALUES, ConfigType.STRING, "fail", CaseInsensitiveValidString.in_("fail", "ignore",
                                                                                               "write"),
            Importance.LOW, "Records with a null value (tombstones): fail the task, or ignore (skip) them.")
    .define(ACCESS_KEY_ID, ConfigType.STRING, "", None, Importance.HIGH,
            "AWS access key id; empty: boto3's default credential chain (environment, shared files, "
            "instance/container roles). A config provider reference (${file:...}) works here.")
    .define(SECRET_ACCESS_KEY, ConfigType.PASSWORD, "", None, Importance.HIGH,
            "AWS secret access key (with aws.access.key.id).")
    .define(SSEA, ConfigType.STRING, "", ValidString.in_("", "AES256", "aws:kms", "aws:kms:dsse"), Importance.LOW,
            "Server-side encryption algorithm of every object written.")
    .define(SSE_KMS_KEY_ID, ConfigType.STRING, "", None, Importance.LOW,
            "KMS key for s3.ssea.name=aws:kms (empty: the bucket's default key).")
    .define(ACL_CANNED, ConfigType.STRING, None, LambdaValidator(_check_acl, "a canned ACL"), Importance.LOW,
            "Canned ACL of every object written: " + ", ".join(CANNED_ACLS) + ".")
    .define(PATH_STYLE, ConfigType.BOOLEAN, True, None, Importance.LOW,
            "Path-style addressing (http://host/bucket/key) instead of virtual-host style.")
    .define(PART_RETRIES, ConfigType.INT, 3, Range.at_least(0), Importance.MEDIUM,
            "Retries of a failed S3 request (botocore's standard retry mode, with its back-off).")
    .define(ZERO_PAD_WIDTH, ConfigType.INT, 10, Range.between(0, 20), Importance.LOW,
            "Width to zero-pad the start offset in object names to.")
)
define_storage_keys(CONFIG_DEF, flush_size=NO_DEFAULT, timestamp_extractor="Wallclock", timezone="", locale="",
                    flush_size_doc="Records per Kafka partition in one file set (one object per partition "
                    "folder); deterministic, so a replay writes the same keys.",
                    retry_backoff=False)  # boto3 retries each request (s3.part.retries); what outlasts that fails


@dataclass(frozen=True, slots=True)
class S3SinkConfig(StorageConfig):
    """The parsed, cross-checked config of an S3 sink task."""

    bucket: str
    region: str
    store_url: str
    topics_dir: str
    logs_dir: str
    part_size: int
    format: str
    parquet_codec: str
    parquet_extension: str
    avro_codec: str
    json_gzip: bool
    compression_level: int
    json_decimal_numeric: bool
    ignore_null_values: bool
    access_key_id: str
    secret_access_key: str
    ssea: str
    sse_kms_key_id: str
    acl_canned: str | None
    path_style: bool
    part_retries: int
    zero_pad_width: int

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> S3SinkConfig:
        """Parse and cross-check; :class:`ConfigError` names the first bad key."""
        p = RULES.parse(props)
        codec, extension = PARQUET_CODECS[p[PARQUET_CODEC].strip().lower()]
        secret = p[SECRET_ACCESS_KEY]
        return cls(
            **storage_settings(p),
            bucket=p[S3_BUCKET], region=p[S3_REGION].strip().lower(), store_url=p[STORE_URL],
            topics_dir=p[TOPICS_DIR], logs_dir=p[LOGS_DIR], part_size=p[PART_SIZE],
            format=FORMATS[p[FORMAT_CLASS]], parquet_codec=codec, parquet_extension=extension,
            avro_codec=p[AVRO_CODEC], json_gzip=p[COMPRESSION_TYPE] == "gzip",
            compression_level=p[COMPRESSION_LEVEL], json_decimal_numeric=p[JSON_DECIMAL_FORMAT].upper() == "NUMERIC",
            ignore_null_values=p[BEHAVIOR_ON_NULL_VALUES].lower() == "ignore",
            access_key_id=p[ACCESS_KEY_ID], secret_access_key=secret.value if isinstance(secret, Password) else "",
            ssea=p[SSEA], sse_kms_key_id=p[SSE_KMS_KEY_ID], acl_canned=p[ACL_CANNED], path_style=p[PATH_STYLE],
            part_retries=p[PART_RETRIES], zero_pad_width=p[ZERO_PAD_WIDTH],
        )

    @property
    def extension(self) -> str:
        """The object name's extension, as Confluent's formats name them."""
        if self.format == "parquet":
            return self.parquet_extension + ".parquet"
        if self.format == "avro":
            return ".avro"
        return ".json.gz" if self.json_gzip else ".json"


def cross_check(parsed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The shared storage rules plus the S3 sink's, as ``(key, message)`` pairs."""
    errors = storage_cross_check(parsed)
    secret = parsed.get(SECRET_ACCESS_KEY)
    has_secret = isinstance(secret, Password) and bool(secret.value)
    if bool(parsed.get(ACCESS_KEY_ID)) != has_secret:
        missing = SECRET_ACCESS_KEY if parsed.get(ACCESS_KEY_ID) else ACCESS_KEY_ID
        errors.append((missing, "aws.access.key.id and aws.secret.access.key go together (or leave both "
                                "empty for boto3's default credential chain)"))
    if parsed.get(SSE_KMS_KEY_ID) and parsed.get(SSEA) not in ("aws:kms", "aws:kms:dsse"):
        errors.append((SSE_KMS_KEY_ID, "s3.sse.kms.key.id needs s3.ssea.name=aws:kms"))
    if str(parsed.get(BEHAVIOR_ON_NULL_VALUES) or "").lower() == "write":
        errors.append((BEHAVIOR_ON_NULL_VALUES, "behavior.on.null.values=write needs store.kafka.keys, which this "
                                                "sink does not support; use fail or ignore"))
    if parsed.get(TOPICS_DIR) and parsed.get(TOPICS_DIR) == parsed.get(LOGS_DIR):
        errors.append((LOGS_DIR, "logs.dir must differ from topics.dir"))
    return errors


RULES = ConfigRules(CONFIG_DEF, lambda parsed, props: cross_check(parsed))


def validate_config(props: Mapping[str, str]) -> Config:
    """Per-key validation plus the cross-key rules, each error on the key it concerns."""
    return RULES.validate(props)
