"""The sink's configuration: Kafka-style names in a :class:`ConfigDef`, parsed once into :class:`SparkSinkConfig`.

The partitioner and rotation keys are the ones both lake sinks share, with Confluent's storage
sinks' names (``flush.size``, ``rotate.interval.ms``, ``partitioner.class``, ``path.format``,
``partition.duration.ms``, ``timestamp.extractor``, ``schema.compatibility``...), defined in
:mod:`seaway.connectors.lake.config`; this module adds the Spark sink's own (``lake.path``,
``spark.*``, ``parquet.codec``). Cross-key rules (e.g. the time-based partitioner needs
``path.format``) are checked by :func:`validate_config`, which attaches each error to the key it
names, so ``PUT .../config/validate`` and a 400 point at the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
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
    Range,
)
from seaway.connectors.lake.config import (
    PARTITIONERS,
    ConfigRules,
    StorageConfig,
    define_storage_keys,
    storage_cross_check,
    storage_settings,
)

__all__ = [
    "CODECS",
    "CONFIG_DEF",
    "FAULT_EXIT_AFTER_RENAME",
    "PARTITIONERS",
    "RULES",
    "WRITERS",
    "SparkSinkConfig",
    "lake_path_problem",
    "validate_config",
]

LAKE_PATH = "lake.path"
SPARK_MASTER = "spark.master"
SPARK_CONF_PREFIX = "spark.conf."
SPARK_SESSION_IDLE_TIMEOUT_MS = "spark.session.idle.timeout.ms"
PARQUET_CODEC = "parquet.codec"
PARQUET_WRITER = "parquet.writer"
#: Test-only: ``os._exit`` after a file is made visible and before its offsets are committed.
FAULT_EXIT_AFTER_RENAME = "seaway.test.fault.exit.after.rename"

#: ``parquet.codec`` value -> Spark's ``compression`` option.
CODECS: dict[str, str] = {"snappy": "snappy", "zstd": "zstd", "gzip": "gzip", "none": "none"}
#: ``parquet.writer``: spark (the default: a Spark job on any file system), pyarrow (a file:// lake
#: only), auto (pyarrow on a file:// lake, Spark elsewhere: the default before Spark wrote everywhere)
WRITERS = ("spark", "pyarrow", "auto")
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?P<rest>.*)$", re.DOTALL)
#: file systems whose URI names a bucket, container or account as its authority (s3a://bucket/lake)
_NEEDS_AUTHORITY = frozenset({"s3a", "s3", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "oss", "cosn", "obs"})
_EXAMPLES = "such as file:///data/lake, hdfs://namenode:8020/lake or s3a://bucket/lake"


def lake_path_problem(value: str) -> str | None:
    """Why ``value`` is not a usable ``lake.path`` (``None`` when it is).

    The mistakes it names are the ones a hand-written .properties file makes: Java's format has no
    comment after a value, so ``lake.path=file:///lake   # note`` means a folder named ``lake   # note``.
    """
    if "#" in value:
        return ("contains '#': a .properties file has no comments after a value (only lines that start "
                "with # or !), so the text after the path became part of it; put the comment on its own line")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "contains a control character"
    if "?" in value:
        return "contains '?': a Hadoop path has no query part"
    m = _SCHEME.match(value)
    if value.startswith("/"):
        scheme, authority, path = "file", "", value
    elif m is None:
        return f"must be an absolute path or a Hadoop FileSystem URI {_EXAMPLES}"
    else:
        scheme, rest = m["scheme"].lower(), m["rest"]
        authority, path = ("", rest) if not rest.startswith("//") else (rest[2:].partition("/")[0],
                                                                       "/" + rest[2:].partition("/")[2])
        if not path.startswith("/"):
            return f"the path after '{m['scheme']}:' must be absolute, {_EXAMPLES}"
    if scheme == "file" and authority not in ("", "localhost"):
        return f"a file: URI names no host ({authority!r}): file:///data/lake"
    if scheme in _NEEDS_AUTHORITY and not authority:
        return f"a {scheme}:// URI names its bucket: {scheme}://bucket/lake"
    port = authority.rpartition(":")[2] if ":" in authority else ""
    if port and not port.isdigit():
        return f"the port in {authority!r} is not a number"
    if any(part in (".", "..") for part in path.split("/")):
        return "must not contain '.' or '..' folders"
    return None


def _check_lake_path(name: str, value: Any) -> None:
    problem = lake_path_problem(value) if isinstance(value, str) else f"must be a string {_EXAMPLES}"
    if problem:
        raise ConfigError.invalid(name, value, problem)


def _is_file_lake(lake: str) -> bool:
    return lake.startswith("/") or lake.lower().startswith("file:")


def spark_cross_check(parsed: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The Spark sink's own rules across keys (the shared storage ones are checked too)."""
    errors = storage_cross_check(parsed)
    writer, lake = str(parsed.get(PARQUET_WRITER) or "").lower(), parsed.get(LAKE_PATH)
    if writer == "pyarrow" and isinstance(lake, str) and not _is_file_lake(lake):
        errors.append((PARQUET_WRITER, f"parquet.writer=pyarrow writes local files only, and lake.path {lake} is "
                                       "not a file:// lake; leave parquet.writer unset (Spark writes to any "
                                       "Hadoop file system)"))
    return errors


CONFIG_DEF = ConfigDef().define(
    LAKE_PATH, ConfigType.STRING, NO_DEFAULT, LambdaValidator(_check_lake_path, "a URI"), Importance.HIGH,
    "Root of the lake: any Hadoop FileSystem URI Spark can write (file:///..., hdfs://namenode:8020/..., "
    "s3a://... with the Hadoop AWS jars). A bare absolute path means file://.")
define_storage_keys(CONFIG_DEF, flush_size=10000, timestamp_extractor="Record", timezone="UTC", locale="en")
(CONFIG_DEF
 .define(SPARK_MASTER, ConfigType.STRING, "local[*]", NonEmptyString(), Importance.MEDIUM,
         "Spark master for the worker's shared SparkSession (used only if no session is running yet).")
 .define(SPARK_SESSION_IDLE_TIMEOUT_MS, ConfigType.LONG, 60_000, Range.at_least(-1), Importance.LOW,
         "How long the worker's SparkSession (and its JVM, ~800 MB) stays up once no task of any Spark "
         "sink uses it, before it is stopped; the next task starts a new one. The value of the task "
         "that stops last applies. -1 keeps it until the worker exits.")
 .define(PARQUET_CODEC, ConfigType.STRING, "snappy", CaseInsensitiveValidString.in_(*CODECS),
         Importance.MEDIUM, "Parquet compression codec.")
 .define(PARQUET_WRITER, ConfigType.STRING, "spark", CaseInsensitiveValidString.in_(*WRITERS),
         Importance.LOW, "Who encodes the Parquet files: spark (a Spark job per write on the session's master, "
         "on any file system, so spark.sql.parquet.* settings, Spark's committers and its cluster apply), "
         "pyarrow (pyarrow writes each file into the temp folder of a file:// lake, in the worker: faster on one "
         "machine, file:// only) or auto (pyarrow on a file:// lake, Spark elsewhere). Commits go through "
         "Hadoop's FileSystem either way.")
 .define(FAULT_EXIT_AFTER_RENAME, ConfigType.BOOLEAN, False, None, Importance.LOW,
         "TEST ONLY: kill the worker process (os._exit) right after a file is made visible, before "
         "its offsets are committed, to prove recovery. Never set this in production."))


@dataclass(frozen=True, slots=True)
class SparkSinkConfig(StorageConfig):
    """The parsed, cross-checked config a task works from (the shared storage keys plus Spark's)."""

    lake_path: str
    spark_master: str
    spark_conf: Mapping[str, str]
    parquet_codec: str
    parquet_writer: str = "spark"
    fault_exit_after_rename: bool = False
    extra: Mapping[str, str] = field(default_factory=dict)
    spark_session_idle_timeout_ms: int = 60_000

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> SparkSinkConfig:
        """Parse and cross-check; :class:`ConfigError` names the first bad key."""
        p = RULES.parse(props)
        lake = p[LAKE_PATH]
        return cls(
            **storage_settings(p),
            lake_path=("file://" + lake if lake.startswith("/") else lake).rstrip("/"),
            spark_master=p[SPARK_MASTER], spark_conf=spark_conf(props),
            parquet_codec=CODECS[p[PARQUET_CODEC].lower()], parquet_writer=p[PARQUET_WRITER].lower(),
            fault_exit_after_rename=p[FAULT_EXIT_AFTER_RENAME],
            spark_session_idle_timeout_ms=p[SPARK_SESSION_IDLE_TIMEOUT_MS],
        )


def spark_conf(props: Mapping[str, str]) -> dict[str, str]:
    """``spark.conf.<name>`` passthrough: ``spark.conf.spark.sql.x`` and ``spark.conf.sql.x`` mean ``spark.sql.x``."""
    out: dict[str, str] = {}
    for key, value in props.items():
        if key.startswith(SPARK_CONF_PREFIX) and len(key) > len(SPARK_CONF_PREFIX):
            name = key[len(SPARK_CONF_PREFIX):]
            out[name if name.startswith("spark.") else "spark." + name] = str(value)
    return out


RULES = ConfigRules(CONFIG_DEF, lambda parsed, props: spark_cross_check(parsed))


def validate_config(props: Mapping[str, str]) -> Config:
    """Per-key validation plus the cross-key rules, each error on the key it concerns."""
    return RULES.validate(props)
