"""``seaway storage format``: prepare a broker's directories, with its first SCRAM users (``kafka-storage.sh``).

A broker whose listeners only accept SASL/SCRAM has no user to log in with until one is made,
and making one (AlterUserScramCredentials, ``seaway users add``) needs a login. Kafka breaks
the circle at format time: ``kafka-storage.sh format --add-scram
'SCRAM-SHA-256=[name=admin,password=admin-secret]'`` writes credentials into the metadata log
before the broker first starts. This is that command, with Kafka's option names, argument
syntax (``name``, ``password`` or ``salt`` + ``saltedpassword``, ``iterations``, default 4096)
and messages::

    seaway storage format --config server.properties \\
        --add-scram 'SCRAM-SHA-256=[name=admin,password=admin-secret]'
    seaway broker --config server.properties

It writes the credentials into the ``__cluster_metadata`` log under ``metadata.log.dir`` (the
broker's security store, :mod:`seaway.broker.security.store`, through its own write path), then
``meta.properties`` (cluster id, node id, directory id) into every log dir, as the broker
itself does on its first start. A directory that already has ``meta.properties`` is formatted:
``format`` refuses it (a running or used broker's credentials are changed through the
protocol), unless ``--ignore-formatted``, which skips formatted directories as Kafka's does.
Unlike Kafka, ``--cluster-id`` may be left out (a new id is made): Seaway's broker needs no
format step at all without bootstrap credentials. ``seaway storage random-uuid`` prints an id.

The password is given on the command line, as with Kafka (it shows in the shell's history and
the process list while the command runs); ``salt`` + ``saltedpassword`` avoids that.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import secrets
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from seaway.broker.config import BrokerConfig
from seaway.broker.log.log_manager import META_PROPERTIES, kafka_uuid, parse_kafka_uuid
from seaway.broker.log.recovery import write_atomic
from seaway.broker.security.scram import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramMechanism,
    credential_from_salted_password,
    salted_password,
)
from seaway.broker.security.store import SecurityStore
from seaway.errors import SeawayError

__all__ = ["FormatError", "ScramArgument", "main", "parse_add_scram"]

DEFAULT_ITERATIONS = 4096
"""Kafka's ``ScramParser`` default (``kafka-configs.sh`` and ``seaway users add`` use 4096 and 8192)."""


class FormatError(SeawayError):
    """A bad argument or a directory that cannot be formatted; the message is Kafka's where Kafka has one."""


@dataclass(frozen=True)
class ScramArgument:
    """One ``--add-scram`` value, parsed (no key material derived yet)."""

    mechanism: str
    name: str
    iterations: int
    password: str | None
    salt: bytes | None
    salted_password: bytes | None


def _component(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals:
        raise FormatError(f"No equals sign found in SCRAM component: {text}")
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        value = value[1:-1]
    return key, value


def _b64(what: str, text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise FormatError(f"Failed to decode given {what}: {text}") from None


def parse_add_scram(argument: str) -> ScramArgument:
    """``MECHANISM=[name=...,password=...]`` (Kafka's ``ScramParser`` rules and messages)."""
    text = argument.strip()
    mechanism_name, equals, config = text.partition("=")
    if not equals:
        raise FormatError(f"Failed to find equals sign in SCRAM argument '{text}'")
    if ScramMechanism.from_name(mechanism_name) is None:
        raise FormatError(f"The add-scram mechanism {mechanism_name} is not supported.")
    if not config.startswith("["):
        raise FormatError("Expected configuration string to start with [")
    if not config.endswith("]"):
        raise FormatError("Expected configuration string to end with ]")
    components = dict(_component(part) for part in config[1:-1].split(","))
    name = components.pop("name", None)
    if name is None:
        raise FormatError("You must supply 'name' to add-scram")
    salt_text = components.pop("salt", None)
    salt = _b64("salt", salt_text) if salt_text is not None else None
    iterations_text = components.pop("iterations", None)
    try:
        iterations = int(iterations_text) if iterations_text is not None else DEFAULT_ITERATIONS
    except ValueError:
        raise FormatError(f"Failed to parse iterations count: {iterations_text}") from None
    password = components.pop("password", None)
    salted_text = components.pop("saltedpassword", None)
    salted: bytes | None = None
    if password is None:
        if salted_text is None:
            raise FormatError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise FormatError("You must supply 'salt' with 'saltedpassword' to add-scram")
        salted = _b64("saltedPassword", salted_text)
    if components:
        raise FormatError("Unknown SCRAM configurations: " + ", ".join(sorted(components)))
    if iterations < MIN_ITERATIONS:
        raise FormatError(f"The 'iterations' value must be >= {MIN_ITERATIONS} for add-scram using {mechanism_name}")
    if iterations > MAX_ITERATIONS:
        raise FormatError(f"The 'iterations' value must be <= {MAX_ITERATIONS} for add-scram using {mechanism_name}")
    return ScramArgument(mechanism_name, name, iterations, password, salt, salted)


def _is_formatted(directory: Path) -> bool:
    return (directory / META_PROPERTIES).exists()


def _cluster_id_of(directory: Path) -> str | None:
    for line in (directory / META_PROPERTIES).read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "cluster.id" and value.strip():
            return value.strip()
    return None


async def _write_credentials(directory: Path, scram: Sequence[ScramArgument]) -> None:
    upserts = []
    for item in scram:
        mechanism = ScramMechanism.from_name(item.mechanism)
        assert mechanism is not None  # parse_add_scram checked it
        salt = item.salt if item.salt is not None else secrets.token_bytes(32)
        salted = item.salted_password if item.salted_password is not None else salted_password(
            mechanism, item.password or "", salt, item.iterations)
        upserts.append((item.name, mechanism, credential_from_salted_password(mechanism, salt, salted,
                                                                              item.iterations)))
    store = SecurityStore(directory)
    await asyncio.to_thread(store.open)
    try:
        await store.alter_scram(upserts, [])
    finally:
        store.close()


def format_storage(config_path: Path | None, overrides: dict[str, str], scram: Sequence[ScramArgument],
                   cluster_id: str | None, ignore_formatted: bool) -> list[str]:
    """Format the broker's directories; the lines to print. :class:`FormatError` when it cannot."""
    config = BrokerConfig.load(config_path, overrides)
    if cluster_id is not None:
        try:
            if len(parse_kafka_uuid(cluster_id).bytes) != 16:
                raise ValueError
        except (ValueError, binascii.Error):
            raise FormatError(f"Cluster ID string {cluster_id} does not appear to be a valid UUID: a base64 "
                              "(URL-safe) encoding of 16 bytes; `seaway storage random-uuid` makes one") from None
    metadata_dir = config.metadata_log_dir
    directories = list(dict.fromkeys([*config.log_dirs, metadata_dir]))
    formatted = [d for d in directories if _is_formatted(d)]
    if formatted and not ignore_formatted:
        raise FormatError(f"Log directory {formatted[0]} is already formatted. Use --ignore-formatted to ignore "
                          "this directory and format the others.")
    to_format = [d for d in directories if d not in formatted]
    if not to_format:
        return ["All of the log directories are already formatted."]
    existing = {cid for cid in (_cluster_id_of(d) for d in formatted) if cid}
    if cluster_id is not None and existing - {cluster_id}:
        raise FormatError(f"Cluster ID {cluster_id} does not match the formatted directories' {sorted(existing)}")
    chosen = cluster_id or (existing.pop() if existing else kafka_uuid(uuid.uuid4()))
    lines = [f"Formatting {'metadata' if d == metadata_dir else 'data'} directory {d} with cluster.id {chosen}."
             for d in sorted(to_format, key=lambda d: d != metadata_dir)]
    if metadata_dir in to_format:
        metadata_dir.mkdir(parents=True, exist_ok=True)
        if scram:
            asyncio.run(_write_credentials(metadata_dir, scram))
            lines += [f"Added {item.mechanism} credential for user {item.name} (iterations {item.iterations})."
                      for item in scram]
    elif scram:
        raise FormatError(f"Metadata directory {metadata_dir} is already formatted, so --add-scram cannot add "
                          "credentials to it: add users through the running broker (`seaway users add`)")
    for directory in to_format:  # meta.properties last: a failure above leaves the directory unformatted
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(directory / META_PROPERTIES, (
            f"version=1\ncluster.id={chosen}\nnode.id={config.node_id}\n"
            f"directory.id={kafka_uuid(uuid.uuid4())}\n").encode())
    return lines


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seaway storage", description="Prepare a broker's storage directories "
                                "(Kafka's kafka-storage.sh): format them with the first SCRAM users.")
    commands = p.add_subparsers(dest="command", required=True)
    fmt = commands.add_parser("format", help="format the log dirs and metadata.log.dir of a broker config")
    fmt.add_argument("-c", "--config", type=Path, help="the broker's server.properties (its log.dirs, "
                     "metadata.log.dir, node.id)")
    fmt.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                     help="a broker config, as for `seaway broker` (repeatable)")
    fmt.add_argument("-t", "--cluster-id", help="the cluster id (default: a new one; `seaway storage random-uuid`)")
    fmt.add_argument("-S", "--add-scram", action="append", default=[], metavar="SCRAM",
                     help="a SCRAM credential to add, e.g. 'SCRAM-SHA-256=[name=alice,password=alice-secret]' "
                          "(also iterations=N, or salt=B64 with saltedpassword=B64); repeatable")
    fmt.add_argument("-g", "--ignore-formatted", action="store_true",
                     help="skip directories that are already formatted instead of failing")
    commands.add_parser("random-uuid", help="print a new cluster id")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "random-uuid":
        print(kafka_uuid(uuid.uuid4()))
        return 0
    overrides: dict[str, str] = {}
    for item in args.override:
        key, equals, value = item.partition("=")
        if not equals:
            print(f"seaway storage: --override needs KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        overrides[key.strip()] = value
    try:
        scram = [parse_add_scram(argument) for argument in args.add_scram]
        lines = format_storage(args.config, overrides, scram, args.cluster_id, args.ignore_formatted)
    except (SeawayError, OSError) as exc:
        print(f"seaway storage: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0
