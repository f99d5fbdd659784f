"""``seaway topics``: create, list, describe, delete and alter-config topics, like kafka-topics.sh.

Only confluent-kafka's AdminClient is used, so the command works against any Kafka
cluster, not just Seaway's broker. Output is meant for people (kafka-topics.sh's layout);
``--json`` prints one JSON document for scripts. Every failure is one line on stderr
(``Error: ...`` with Kafka's error name) and a non-zero exit status.

The connection options (``--bootstrap-server``, ``--command-config``, ``--timeout-ms``) are
shared with ``seaway produce``, ``seaway consume`` and ``seaway users`` through
:func:`add_connection_options` and :func:`client_config`. Every timeout of every command is in
milliseconds, Kafka's unit; the seconds-valued ``--timeout`` of earlier versions is refused with
a hint (:func:`add_timeout_option`), never read as milliseconds. Clients are opened through
:func:`seaway.cli.cluster.open_client`, which stops at an authentication or TLS failure with the
broker's answer. ``--command-config`` is a client
``.properties`` file, as Kafka's tools take it: security settings in Java's names
(``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``, ``ssl.truststore.location``...)
or librdkafka's, checked and translated by :mod:`seaway.security.kafka_client` (an unsupported
one is refused, naming it). Its schema registry client settings (``schema.registry.*``,
``basic.auth.*``) are kept apart for the Avro options of produce and consume
(:func:`registry_props`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException

# confluent-kafka re-exports these without __all__; mypy's strict mode cannot tell.
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)
from seaway.cli.cluster import DEFAULT_TIMEOUT_MS, CliError, open_client
from seaway.properties import PropertiesError, load_properties

__all__ = [
    "CliError",
    "add_connection_options",
    "add_timeout_option",
    "client_config",
    "kafka_error_text",
    "main",
    "milliseconds",
    "parse_properties",
    "refuse_seconds_timeout",
    "registry_props",
    "shown",
    "split_config_list",
]

DEFAULT_BOOTSTRAP = "localhost:9092"


def shown(value: object) -> str:
    """``value`` quoted for an error message: as JSON (``"a=b"``, ``{"k": 1}``), never a Python repr."""
    return json.dumps(value, ensure_ascii=False, default=str)


def parse_properties(text: str) -> dict[str, str]:
    """A ``.properties`` text read exactly as Java reads it (:mod:`seaway.properties`).

    CliError where Java would refuse it (a malformed ``\\uXXXX``).
    """
    try:
        return load_properties(text)
    except PropertiesError as exc:
        raise CliError(str(exc)) from None


def milliseconds(text: str) -> int:
    """argparse type of a ``--timeout-ms``: a whole number of milliseconds above 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole milliseconds, got {shown(text)}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0 milliseconds, got {value}")
    return value


class _SecondsRefused(argparse.Action):
    """The seconds-valued ``--timeout`` of earlier versions: refused, naming its replacement.

    Kept as an option of its own so that argparse never takes ``--timeout 30`` for an
    abbreviation of ``--timeout-ms`` (30 ms).
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        shown_value = values if isinstance(values, str) else "N"
        try:
            hint = f"--timeout-ms {round(float(shown_value) * 1000)}"
        except ValueError:
            hint = "--timeout-ms MS"
        parser.error(f"--timeout (seconds) is gone: timeouts are in milliseconds, as in Kafka's tools; "
                     f"for --timeout {shown_value} write {hint}")


def refuse_seconds_timeout(parser: argparse.ArgumentParser) -> None:
    """The old ``--timeout SECONDS``, refused with a hint (see :class:`_SecondsRefused`)."""
    parser.add_argument("--timeout", action=_SecondsRefused, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_timeout_option(parser: argparse.ArgumentParser, suppress: bool = False, what: str = "the cluster") -> None:
    """``--timeout-ms MS`` (default 30000), and the old ``--timeout`` refused with a hint."""
    parser.add_argument("--timeout-ms", type=milliseconds, metavar="MS",
                        default=argparse.SUPPRESS if suppress else DEFAULT_TIMEOUT_MS,
                        help=f"how long to wait for {what}, in milliseconds (default {DEFAULT_TIMEOUT_MS})")
    refuse_seconds_timeout(parser)


def add_connection_options(parser: argparse.ArgumentParser, suppress: bool = False, timeout: bool = True) -> None:
    """The options every command shares; ``suppress`` for sub-parsers (no defaults of their own);
    ``timeout=False`` for a command that defines its own ``--timeout-ms`` (consume)."""
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument("--bootstrap-server", default=argparse.SUPPRESS if suppress else DEFAULT_BOOTSTRAP,
                        metavar="HOST:PORT", help=f"brokers to connect to (default {DEFAULT_BOOTSTRAP})")
    parser.add_argument("--command-config", default=default, metavar="FILE",
                        help="client .properties file (security settings and other client configs)")
    if timeout:
        add_timeout_option(parser, suppress)


_REGISTRY_PREFIXES = ("schema.registry.", "basic.auth.", "bearer.auth.")


def _command_config(args: argparse.Namespace) -> dict[str, str]:
    if not getattr(args, "command_config", None):
        return {}
    try:
        # values trimmed as Kafka's ConfigDef trims every client setting it parses
        file_config = parse_properties(Path(args.command_config).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CliError(f"cannot read --command-config {args.command_config}: {exc.strerror}") from None
    except CliError as exc:
        raise CliError(f"{args.command_config}: {exc}") from None
    return {key: value.strip() for key, value in file_config.items()}


def registry_props(args: argparse.Namespace) -> dict[str, str]:
    """The schema registry client settings of ``--command-config`` (Confluent's names)."""
    return {k: v for k, v in _command_config(args).items() if k.startswith(_REGISTRY_PREFIXES)}


def client_config(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """The confluent-kafka config: ``--command-config`` file (security settings translated to
    librdkafka's names), then bootstrap, then ``extra``."""
    from seaway.security.kafka_client import ClientConfigError, librdkafka_config

    props = {k: v for k, v in _command_config(args).items() if not k.startswith(_REGISTRY_PREFIXES)}
    try:
        config: dict[str, Any] = librdkafka_config(props)
    except ClientConfigError as exc:
        raise CliError(f"{args.command_config}: {exc}") from None
    config["bootstrap.servers"] = args.bootstrap_server
    config.update(extra)
    return config


def split_config_list(text: str) -> list[str]:
    """``a=1,b=[x,y]`` -> ``["a=1", "b=x,y"]``: kafka-configs.sh's brackets keep list values whole."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        elif ch == "," and not depth:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise CliError(f"expected key=value, got {shown(item)}")
    return key.strip(), value.strip()


def kafka_error_text(exc: BaseException) -> str:
    """'NAME: message' for a KafkaException, else the exception's text."""
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    if isinstance(err, KafkaError):
        return f"{err.name()}: {err.str()}"
    return str(exc)


def _wait(future: Any, what: str, timeout: float) -> Any:
    try:
        return future.result(timeout=timeout)
    except KafkaException as exc:
        raise CliError(f"{what}: {kafka_error_text(exc)}") from None
    except TimeoutError:
        raise CliError(f"{what}: no answer from the cluster within {round(timeout * 1000)} ms") from None


# -- subcommands ---------------------------------------------------------------------------------


def _create(admin: AdminClient, args: argparse.Namespace) -> Any:
    configs = dict(_key_value(item) for item in args.config or [])
    topic = NewTopic(args.name, num_partitions=args.partitions, replication_factor=args.replication_factor,
                     config=configs)
    seconds = args.timeout_ms / 1000
    future = admin.create_topics([topic], operation_timeout=seconds, request_timeout=seconds,
                                 validate_only=args.validate_only)[args.name]
    try:
        future.result(timeout=seconds)
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        exists = isinstance(err, KafkaError) and err.code() == KafkaError.TOPIC_ALREADY_EXISTS
        if args.if_not_exists and exists:
            return {"topic": args.name, "created": False} if args.json else None
        raise CliError(f"creating topic {args.name}: {kafka_error_text(exc)}") from None
    except TimeoutError:
        raise CliError(f"creating topic {args.name}: no answer from the cluster within {args.timeout_ms} ms") from None
    if args.json:
        return {"topic": args.name, "created": not args.validate_only, "validate_only": args.validate_only}
    verb = "Validated creation of" if args.validate_only else "Created"
    print(f"{verb} topic {args.name}.")
    return None


def _metadata(admin: AdminClient, timeout: float) -> Any:
    try:
        return admin.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise CliError(f"listing topics: {kafka_error_text(exc)}") from None


def _list(admin: AdminClient, args: argparse.Namespace) -> Any:
    names = sorted(_metadata(admin, args.timeout_ms / 1000).topics)
    if args.exclude_internal:
        names = [n for n in names if not n.startswith("__")]
    if args.json:
        return names
    for name in names:
        print(name)
    return None


def _overrides(admin: AdminClient, names: Sequence[str], timeout: float) -> dict[str, dict[str, str]]:
    """Each topic's explicitly set configs (source TOPIC_CONFIG), as kafka-topics.sh shows them."""
    resources = [ConfigResource(ConfigResource.Type.TOPIC, name) for name in names]
    if not resources:
        return {}
    result: dict[str, dict[str, str]] = {}
    for resource, future in admin.describe_configs(resources, request_timeout=timeout).items():
        entries = _wait(future, f"describing configs of {resource.name}", timeout)
        result[resource.name] = {
            key: ("" if entry.value is None else entry.value)
            for key, entry in sorted(entries.items())
            if entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
        }
    return result


def _describe(admin: AdminClient, args: argparse.Namespace) -> Any:
    topics = _metadata(admin, args.timeout_ms / 1000).topics
    names = list(args.names) or sorted(topics)
    missing = [n for n in names if n not in topics or topics[n].error is not None]
    if missing:
        raise CliError(f"topic(s) not found: {', '.join(missing)}")
    overrides = _overrides(admin, names, args.timeout_ms / 1000)
    described = []
    for name in names:
        partitions = [
            {"partition": p.id, "leader": p.leader, "replicas": list(p.replicas), "isr": list(p.isrs)}
            for p in sorted(topics[name].partitions.values(), key=lambda p: p.id)
        ]
        factor = len(partitions[0]["replicas"]) if partitions else 0
        described.append({"topic": name, "partition_count": len(partitions), "replication_factor": factor,
                          "configs": overrides.get(name, {}), "partitions": partitions})
    if args.json:
        return described
    for topic in described:
        configs = ",".join(f"{k}={v}" for k, v in topic["configs"].items())
        print(f"Topic: {topic['topic']}\tPartitionCount: {topic['partition_count']}\t"
              f"ReplicationFactor: {topic['replication_factor']}\tConfigs: {configs}")
        for p in topic["partitions"]:
            print(f"\tTopic: {topic['topic']}\tPartition: {p['partition']}\tLeader: {p['leader']}\t"
                  f"Replicas: {','.join(map(str, p['replicas']))}\tIsr: {','.join(map(str, p['isr']))}")
    return None


def _delete(admin: AdminClient, args: argparse.Namespace) -> Any:
    deleted, failures = [], []
    seconds = args.timeout_ms / 1000
    futures = admin.delete_topics(list(args.names), operation_timeout=seconds, request_timeout=seconds)
    for name, future in futures.items():
        try:
            future.result(timeout=seconds)
            deleted.append(name)
        except KafkaException as exc:
            err = exc.args[0] if exc.args else None
            missing = isinstance(err, KafkaError) and err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
            if args.if_exists and missing:
                continue
            failures.append(f"deleting topic {name}: {kafka_error_text(exc)}")
        except TimeoutError:
            failures.append(f"deleting topic {name}: no answer from the cluster within {args.timeout_ms} ms")
    if not args.json:
        for name in deleted:
            print(f"Deleted topic {name}.")
    if failures:
        raise CliError("; ".join(failures))
    return {"deleted": deleted} if args.json else None


def _alter_config(admin: AdminClient, args: argparse.Namespace) -> Any:
    ops: list[ConfigEntry] = []
    for text in args.add_config or []:
        for item in split_config_list(text):
            key, value = _key_value(item)
            ops.append(ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET))
    ops.extend(ConfigEntry(key, None, incremental_operation=AlterConfigOpType.DELETE)
               for text in args.delete_config or [] for key in split_config_list(text))
    if not ops:
        raise CliError("nothing to change: give --add-config and/or --delete-config")
    resource = ConfigResource(ConfigResource.Type.TOPIC, args.name, incremental_configs=ops)
    future = admin.incremental_alter_configs([resource], request_timeout=args.timeout_ms / 1000)[resource]
    _wait(future, f"altering configs of topic {args.name}", args.timeout_ms / 1000)
    if args.json:
        return {"topic": args.name, "set": [e.name for e in ops if e.value is not None],
                "deleted": [e.name for e in ops if e.value is None]}
    print(f"Completed updating config for topic {args.name}.")
    return None


Command = Callable[[AdminClient, argparse.Namespace], Any]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway topics", description="Manage Kafka topics (kafka-topics.sh's "
                                     "'--create --topic T' etc. also work in place of the subcommand).")
    add_connection_options(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    shared = argparse.ArgumentParser(add_help=False)
    add_connection_options(shared, suppress=True)
    shared.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="machine-readable output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    create = sub.add_parser("create", parents=[shared], help="create a topic")
    create.add_argument("name")
    create.add_argument("--partitions", type=int, default=-1, help="default: the broker's num.partitions")
    create.add_argument("--replication-factor", type=int, default=-1,
                        help="default: the broker's default.replication.factor")
    create.add_argument("--config", action="append", metavar="KEY=VALUE", help="a topic config (repeatable)")
    create.add_argument("--if-not-exists", action="store_true", help="succeed if the topic already exists")
    create.add_argument("--validate-only", action="store_true", help="check everything, create nothing")
    create.set_defaults(func=_create)

    list_ = sub.add_parser("list", parents=[shared], help="list topic names")
    list_.add_argument("--exclude-internal", action="store_true", help="hide __-prefixed internal topics")
    list_.set_defaults(func=_list)

    describe = sub.add_parser("describe", parents=[shared], help="partitions, leaders and overridden configs")
    describe.add_argument("names", nargs="*", metavar="NAME", help="topics (default: all)")
    describe.set_defaults(func=_describe)

    delete = sub.add_parser("delete", parents=[shared], help="delete topics")
    delete.add_argument("names", nargs="+", metavar="NAME")
    delete.add_argument("--if-exists", action="store_true", help="succeed if a topic does not exist")
    delete.set_defaults(func=_delete)

    alter = sub.add_parser("alter-config", parents=[shared], help="set or remove topic config overrides")
    alter.add_argument("name")
    alter.add_argument("--add-config", action="append", metavar="K=V,...",
                       help="configs to set; a list value goes in brackets: cleanup.policy=[compact,delete]")
    alter.add_argument("--delete-config", action="append", metavar="K,...", help="overrides to remove")
    alter.set_defaults(func=_alter_config)
    return parser


# kafka-topics.sh's action options and the subcommand each one is
_ACTIONS = {"--create": "create", "--list": "list", "--describe": "describe", "--delete": "delete"}


# the subcommands that name topics, which also take kafka-topics.sh's --topic for the name
_NAMED = frozenset({"create", "describe", "delete", "alter-config"})


def _take_topics(argv: list[str]) -> tuple[list[str], list[str]]:
    """``--topic t`` / ``--topic=t`` out of ``argv``: (the names, the other arguments)."""
    rest: list[str] = []
    names: list[str] = []
    items = iter(argv)
    for arg in items:
        if arg == "--topic":
            name = next(items, None)
            if name is None:
                raise CliError("Option --topic requires an argument")
            names.append(name)
        elif arg.startswith("--topic="):
            names.append(arg[len("--topic="):])
        else:
            rest.append(arg)
    return names, rest


def _normalise(argv: list[str]) -> list[str]:
    """kafka-topics.sh's ``--create --topic t --partitions 3`` -> ``create t --partitions 3``, so
    commands copied from Kafka's docs work; in the subcommand form (``create --topic t``) only
    ``--topic`` becomes the positional name."""
    if argv and not argv[0].startswith("-"):
        if argv[0] not in _NAMED:
            return argv
        names, rest = _take_topics(argv[1:])
        return [argv[0], *names, *rest]
    if not any(a in _ACTIONS or a == "--alter" for a in argv):
        return argv
    found = [a for a in argv if a in _ACTIONS or a == "--alter"]
    if len(found) != 1:
        raise CliError("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
    if found[0] == "--alter":
        raise CliError("--alter (changing the partition count) is not supported; for topic configs use: "
                       "seaway topics alter-config TOPIC --add-config K=V")
    names, rest = _take_topics([a for a in argv if a != found[0]])
    return [_ACTIONS[found[0]], *names, *rest]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        given = _normalise(list(sys.argv[1:] if argv is None else argv))
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    args = _parser().parse_args(given)
    func: Command = args.func
    try:
        admin, _ = open_client(AdminClient, client_config(args), args.timeout_ms)
        result = func(admin, args)
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except (KafkaException, ValueError, TypeError) as exc:
        print(f"Error: {kafka_error_text(exc)}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2))
    return 0
