"""``seaway produce`` and ``seaway consume``: kafka-console-producer/-consumer with confluent-kafka.

produce reads stdin line by line (bytes, the line ending stripped), optionally splitting
each line into key and value at ``--key-separator``, adds the ``--header`` pairs to every
record, flushes at the end and reports records that were not delivered (exit status 1).

consume prints one line per record: ``[headers<sep>][key<sep>]value``, with headers as
``k:v,k:v`` (``NO_HEADERS`` when none) and ``null`` for a missing key or value, exactly
the layout of kafka-console-consumer with print.headers/print.key. Bytes are written as
they are, so what was produced comes back identical. It stops after ``--max-messages``
records or ``--timeout-ms`` without any record (kafka-console-consumer's option), and reports
the count on stderr. Timeouts are milliseconds: produce's ``--timeout-ms`` bounds a record's
delivery (``message.timeout.ms``) and the final flush; consume's is also how long it waits for
the cluster and the topic (30000 when not given). The seconds-valued ``--timeout`` of earlier
versions is refused with a hint.

Without ``--group`` the consumer assigns partitions itself (no group coordinator needed,
nothing committed); with ``--group`` and no ``--partition``/``--offset`` it subscribes and
commits as a member of that group.

Avro (see :mod:`seaway.cli.console_avro`): consume prints Confluent-framed Avro keys and values
as JSON, decoded through the schema registry (``--decode auto``, the default); produce
``--value-schema FILE`` / ``--key-schema FILE`` encodes each line (JSON) with that schema,
registered under ``<topic>-value`` / ``<topic>-key``.

A reader that goes away (``| head -1``) ends the command quietly (see :mod:`seaway.cli.main`).
"""

from __future__ import annotations

import argparse
import os
import select
import stat
import sys
import time
import uuid
from collections.abc import Sequence
from typing import IO, Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_STORED,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from seaway.cli.cluster import DEFAULT_TIMEOUT_MS, open_client
from seaway.cli.console_avro import FrameDecoder, JsonAvroEncoder, registry_url
from seaway.cli.topics import (
    CliError,
    add_connection_options,
    add_timeout_option,
    client_config,
    kafka_error_text,
    milliseconds,
    refuse_seconds_timeout,
    registry_props,
    shown,
)

__all__ = ["consume", "format_record", "main", "produce"]

_COMPRESSION = ("none", "gzip", "snappy", "lz4", "zstd")
_ACKS = {"0": "0", "1": "1", "all": "all", "-1": "all"}


def _error_text(err: KafkaError) -> str:
    return f"{err.name()}: {err.str()}"


# -- produce --------------------------------------------------------------------------------------


def _produce_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway produce", description="Produce stdin lines to a topic.")
    parser.add_argument("topic")
    parser.add_argument("--key-separator", metavar="SEP",
                        help="split each line into key and value at the first SEP")
    parser.add_argument("--header", action="append", default=[], metavar="KEY=VALUE",
                        help="a header added to every record (repeatable)")
    parser.add_argument("--partition", type=int, help="the partition to write to (default: the partitioner)")
    parser.add_argument("--acks", choices=sorted(_ACKS), default="all", help="default all")
    parser.add_argument("--compression", choices=_COMPRESSION, default="none")
    parser.add_argument("--value-schema", metavar="FILE",
                        help="an Avro schema (.avsc): each value is a JSON document encoded with it, in "
                        "Confluent's wire format, the schema registered as <topic>-value")
    parser.add_argument("--key-schema", metavar="FILE",
                        help="likewise for keys (<topic>-key); needs --key-separator")
    _add_registry_option(parser)
    add_connection_options(parser, timeout=False)
    add_timeout_option(parser, what="the cluster and for each record's delivery")
    return parser


def _add_registry_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema-registry-url", metavar="URL",
                        help="for Avro: default $SCHEMA_REGISTRY_URL, else http://localhost:8081 "
                        "(seaway up's registry)")


def _headers(items: Sequence[str]) -> list[tuple[str, str | bytes | None]]:
    headers: list[tuple[str, str | bytes | None]] = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--header expects KEY=VALUE, got {shown(item)}")
        headers.append((key, value.encode()))
    return headers


def produce(argv: Sequence[str], stdin: IO[bytes] | None = None) -> int:
    """Produce every line of ``stdin`` (default: the process's) to the topic; 0 when all delivered."""
    args = _produce_parser().parse_args(list(argv))
    headers = _headers(args.header)
    separator = args.key_separator.encode() if args.key_separator else None
    if args.key_schema and separator is None:
        raise CliError("--key-schema needs --key-separator (each line is KEY<sep>VALUE)")
    registry = registry_props(args)
    url = registry_url(args.schema_registry_url, registry)
    encoders: list[JsonAvroEncoder] = []
    try:
        key_avro = value_avro = None
        if args.key_schema:
            key_avro = JsonAvroEncoder(url, args.key_schema, is_key=True, registry=registry)
            encoders.append(key_avro)
            key_avro.schema_id(args.topic)
        if args.value_schema:
            value_avro = JsonAvroEncoder(url, args.value_schema, is_key=False, registry=registry)
            encoders.append(value_avro)
            value_avro.schema_id(args.topic)
        return _produce(args, headers, separator, key_avro, value_avro, stdin)
    finally:
        for encoder in encoders:
            encoder.close()


def _produce(args: argparse.Namespace, headers: list[tuple[str, str | bytes | None]], separator: bytes | None,
             key_avro: JsonAvroEncoder | None, value_avro: JsonAvroEncoder | None, stdin: IO[bytes] | None) -> int:
    producer, watch = open_client(Producer, client_config(args, **{
        "acks": _ACKS[args.acks],
        "compression.type": args.compression,
        "message.timeout.ms": args.timeout_ms,
    }), args.timeout_ms)
    failures: list[str] = []
    sent = 0
    delivered = 0

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        nonlocal delivered
        if err is None:
            delivered += 1
        else:
            failures.append(_error_text(err))

    extra: dict[str, Any] = {} if args.partition is None else {"partition": args.partition}
    source = stdin if stdin is not None else sys.stdin.buffer
    for number, raw in enumerate(source, 1):
        line = raw[:-1] if raw.endswith(b"\n") else raw
        line = line[:-1] if line.endswith(b"\r") else line
        key: bytes | None = None
        if separator is not None:
            key, sep, value = line.partition(separator)
            if not sep:
                failures.append(f"line {number} has no key separator {shown(args.key_separator)}")
                continue
            line = value
        try:
            if key_avro is not None and key is not None:
                key = key_avro.encode(key, args.topic)
            if value_avro is not None:
                line = value_avro.encode(line, args.topic)
        except ValueError as exc:
            failures.append(f"line {number}: {exc}")
            continue
        sent += 1
        while True:
            try:
                producer.produce(args.topic, line, key, headers=headers or None, on_delivery=on_delivery,
                                 **extra)
                break
            except BufferError:
                producer.poll(0.1)  # the local queue is full: let deliveries drain it
            except KafkaException as exc:  # refused before sending (no such partition...)
                failures.append(f"line {number}: {kafka_error_text(exc)}")
                break
        producer.poll(0)
        watch.check()
    undelivered = producer.flush(args.timeout_ms / 1000)
    watch.check()
    if undelivered:
        failures.append(f"{undelivered} record(s) still undelivered after {args.timeout_ms} ms")
    if failures:
        print(f"Error: {len(failures)} problem(s), {delivered} of {sent} record(s) delivered; "
              f"first: {failures[0]}", file=sys.stderr)
        return 1
    return 0


# -- consume --------------------------------------------------------------------------------------


def _consume_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway consume",
                                     description="Print a topic's records, one per line.")
    parser.add_argument("topic")
    parser.add_argument("--from-beginning", action="store_true", help="start at the earliest offset")
    parser.add_argument("--partition", type=int, help="read only this partition")
    parser.add_argument("--offset", help="start offset: a number, earliest or latest (all chosen partitions)")
    parser.add_argument("--group", help="consumer group (default: none, partitions assigned directly)")
    parser.add_argument("--max-messages", type=int, help="exit after this many records")
    parser.add_argument("--timeout-ms", type=milliseconds, metavar="MS",
                        help="exit after this long without a record; also how long to wait for the cluster and "
                        f"the topic (default: no limit on silence, {DEFAULT_TIMEOUT_MS} for the cluster)")
    parser.add_argument("--print-key", action="store_true")
    parser.add_argument("--print-headers", action="store_true")
    parser.add_argument("--key-separator", default="\t", metavar="SEP", help="between fields (default tab)")
    parser.add_argument("--decode", choices=("auto", "avro", "none"), default="auto",
                        help="auto (default): print Confluent-framed Avro keys and values as JSON, decoded "
                        "through the schema registry, anything else as it is; avro: every key and value must "
                        "decode; none: bytes as they are")
    _add_registry_option(parser)
    add_connection_options(parser, timeout=False)
    refuse_seconds_timeout(parser)
    return parser


def _as_bytes(value: str | bytes | None) -> bytes:
    if value is None:
        return b"null"
    return value.encode() if isinstance(value, str) else value


def format_record(msg: Message, print_key: bool, print_headers: bool, separator: bytes,
                  decoder: FrameDecoder | None = None) -> bytes:
    """kafka-console-consumer's line for one record, without the newline (Avro as JSON with ``decoder``)."""
    fields: list[bytes] = []
    if print_headers:
        headers = msg.headers() or []
        pairs = list(headers.items()) if isinstance(headers, dict) else headers
        rendered = b",".join(k.encode() + b":" + _as_bytes(v) for k, v in pairs)
        fields.append(rendered if pairs else b"NO_HEADERS")
    if print_key:
        key = msg.key()
        if decoder is not None:
            key = decoder.decode(key, "key", msg)
        fields.append(b"null" if key is None else key)
    value = msg.value()
    if decoder is not None:
        value = decoder.decode(value, "value", msg)
    fields.append(b"null" if value is None else value)
    return separator.join(fields)


def _cluster_wait_ms(args: argparse.Namespace) -> int:
    """How long consume waits for the cluster and its topic: ``--timeout-ms``, else the default."""
    return int(args.timeout_ms) if args.timeout_ms is not None else DEFAULT_TIMEOUT_MS


def _start_offset(args: argparse.Namespace) -> int:
    if args.offset is None:
        if args.group:
            # The group's committed offset; auto.offset.reset (set by --from-beginning) when none.
            return OFFSET_STORED
        return OFFSET_BEGINNING if args.from_beginning else OFFSET_END
    if args.offset in ("earliest", "latest"):
        return OFFSET_BEGINNING if args.offset == "earliest" else OFFSET_END
    try:
        offset = int(args.offset)
    except ValueError:
        raise CliError(f"--offset must be a number, earliest or latest, not {shown(args.offset)}") from None
    if offset < 0:
        raise CliError("--offset must not be negative")
    return offset


def _assign(consumer: Consumer, args: argparse.Namespace) -> None:
    """Assign the topic's partitions, waiting for the topic to exist (``--timeout-ms``, else 30000 ms).

    A connector creates its topic with its first record, moments after it was created: a user
    who runs ``seaway consume`` right after ``seaway connectors create`` should see the records,
    not an error, as kafka-console-consumer waits for its topic.
    """
    start = _start_offset(args)
    patience = _cluster_wait_ms(args) / 1000
    deadline = time.monotonic() + patience
    noted = False
    while True:
        try:
            metadata = consumer.list_topics(args.topic, timeout=patience)
        except KafkaException as exc:
            raise CliError(f"fetching metadata of {args.topic}: {kafka_error_text(exc)}") from None
        topic = metadata.topics.get(args.topic)
        missing = topic is None or (topic.error is not None and topic.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART)
        if not missing or time.monotonic() >= deadline:
            break
        if not noted:
            noted = True
            print(f"Waiting up to {patience:g}s for topic {args.topic} to exist", file=sys.stderr, flush=True)
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
    if topic is None or topic.error is not None:
        reason = _error_text(topic.error) if topic is not None and topic.error is not None else "not found"
        raise CliError(f"topic {args.topic}: {reason}")
    partitions = sorted(topic.partitions)
    if args.partition is not None:
        if args.partition not in topic.partitions:
            raise CliError(f"topic {args.topic} has no partition {args.partition} (it has {len(partitions)})")
        partitions = [args.partition]
    consumer.assign([TopicPartition(args.topic, p, start) for p in partitions])


def _reader_gone(out: IO[bytes]) -> bool:
    """Whether ``out`` is a pipe whose reader has exited (``| head -1`` got its line).

    A write would say so, but once a quiet topic's records are all written no write comes, and
    the command would wait for records forever after its reader left. Linux flags the write end
    of such a pipe with POLLERR; this checks it without blocking, once per poll of the consumer.
    """
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # POLLERR and POLLHUP are reported whatever the mask
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except OSError:
        return False


def _write(out: IO[bytes], lines: list[bytes]) -> None:
    if lines:
        out.write(b"\n".join(lines) + b"\n")
        out.flush()


def consume(argv: Sequence[str], stdout: IO[bytes] | None = None) -> int:
    """Print records until --max-messages or --timeout-ms of silence (or Ctrl-C)."""
    args = _consume_parser().parse_args(list(argv))
    out = stdout if stdout is not None else sys.stdout.buffer
    separator = args.key_separator.encode()
    registry = registry_props(args)
    consumer, watch = open_client(Consumer, client_config(args, **{
        "group.id": args.group or f"seaway-console-consumer-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": bool(args.group),
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
    }), _cluster_wait_ms(args))
    count = 0
    try:
        decoder = FrameDecoder(registry_url(args.schema_registry_url, registry), args.decode, registry=registry)
    except BaseException:
        consumer.close()
        raise
    try:
        if args.group and args.partition is None and args.offset is None:
            consumer.subscribe([args.topic])
        else:
            _assign(consumer, args)
        last = time.monotonic()
        silence = args.timeout_ms / 1000.0 if args.timeout_ms is not None else None
        while args.max_messages is None or count < args.max_messages:
            if _reader_gone(out):
                raise BrokenPipeError
            wanted = 500 if args.max_messages is None else min(500, args.max_messages - count)
            wait = 1.0 if silence is None else max(0.0, min(1.0, last + silence - time.monotonic()))
            messages = consumer.consume(wanted, wait)
            watch.check()
            lines: list[bytes] = []
            for msg in messages:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    _write(out, lines)
                    raise CliError(f"consuming {args.topic}: {_error_text(err)}")
                try:
                    lines.append(format_record(msg, args.print_key, args.print_headers, separator, decoder))
                except CliError:
                    _write(out, lines)
                    raise
            _write(out, lines)
            count += len(lines)
            if lines:
                last = time.monotonic()
            elif silence is not None and time.monotonic() - last >= silence:
                break
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, and keep Python from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        decoder.close()
        consumer.close()
    print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0


def main(argv: Sequence[str]) -> int:
    """``argv[0]`` is ``produce`` or ``consume`` (see :mod:`seaway.cli.main`)."""
    if not argv or argv[0] not in ("produce", "consume"):
        print("usage: seaway produce|consume TOPIC [options]", file=sys.stderr)
        return 2
    try:
        return produce(argv[1:]) if argv[0] == "produce" else consume(argv[1:])
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except (KafkaException, ValueError) as exc:
        print(f"Error: {kafka_error_text(exc)}", file=sys.stderr)
        return 1
