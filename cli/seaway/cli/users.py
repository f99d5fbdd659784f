"""``seaway users``: SCRAM users of a Kafka cluster, like ``kafka-configs.sh --entity-type users``.

Through confluent-kafka's AdminClient only (DescribeUserScramCredentials and
AlterUserScramCredentials), so it works against any Kafka cluster (2.7+ with KIP-554), not just
Seaway's broker. Connection options are the other commands' (``--bootstrap-server``,
``--command-config`` with the security settings of a principal allowed to ALTER/DESCRIBE the
cluster, ``--timeout-ms``).

- ``list``: the users that have SCRAM credentials;
- ``describe [USER...]``: each user's mechanisms and iteration counts (never salts or keys);
- ``add USER [--mechanism M]... [--iterations N]``: create or replace credentials; the password
  comes from ``--password-file``, ``--password-stdin`` or a prompt, never from the command
  line (where other users of the machine could read it). The client salts and hashes it
  (PBKDF2): the password never reaches the cluster;
- ``delete USER [--mechanism M]...``: remove credentials (default: every mechanism the user has).

Kafka refuses to alter one user twice in a request, so ``add`` with two mechanisms sends two.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException

# confluent-kafka re-exports these without __all__; mypy's strict mode cannot tell.
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclOperation,
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from seaway.cli.cluster import open_client
from seaway.cli.topics import CliError, add_connection_options, client_config, kafka_error_text

__all__ = ["main"]

MECHANISMS = {"SCRAM-SHA-256": ScramMechanism.SCRAM_SHA_256, "SCRAM-SHA-512": ScramMechanism.SCRAM_SHA_512}
NAMES = {v: k for k, v in MECHANISMS.items()}
DEFAULT_ITERATIONS = 8192


def _result(future: Any, what: str, timeout: float) -> Any:
    try:
        return future.result(timeout=timeout)
    except KafkaException as exc:
        raise CliError(f"{what}: {kafka_error_text(exc)}") from None
    except TimeoutError:
        raise CliError(f"{what}: no answer from the cluster within {round(timeout * 1000)} ms") from None


def _may_describe(admin: AdminClient, timeout: float) -> None:
    """Fail cleanly unless the principal may DESCRIBE the cluster.

    Describing every user answers a missing permission with a top-level error, on which
    confluent-kafka 2.16 crashes the process (a double free); asking first avoids that.
    """
    cluster = _result(admin.describe_cluster(include_authorized_operations=True, request_timeout=timeout),
                      "describing the cluster", timeout)
    operations = cluster.authorized_operations or []  # confluent-kafka shows "none" as None
    if not {AclOperation.DESCRIBE, AclOperation.ALL} & set(operations):
        raise CliError("not authorized to describe SCRAM credentials: this principal needs DESCRIBE on the cluster")


def _descriptions(admin: AdminClient, users: list[str], timeout: float) -> dict[str, Any]:
    """{user: UserScramCredentialsDescription}; named users that have none are left out."""
    if not users:
        _may_describe(admin, timeout)
        found: dict[str, Any] = _result(admin.describe_user_scram_credentials(request_timeout=timeout),
                                        "describing SCRAM users", timeout)
        return found
    result: dict[str, Any] = {}
    futures = admin.describe_user_scram_credentials(users, request_timeout=timeout)
    assert isinstance(futures, dict)  # one future per named user
    for user, future in futures.items():
        try:
            result[user] = future.result(timeout=timeout)
        except KafkaException as exc:
            if exc.args and getattr(exc.args[0], "name", lambda: "")() == "RESOURCE_NOT_FOUND":
                continue
            raise CliError(f"describing user {user}: {kafka_error_text(exc)}") from None
    return result


def _infos(description: Any) -> list[dict[str, Any]]:
    return [{"mechanism": NAMES.get(info.mechanism, str(info.mechanism)), "iterations": info.iterations}
            for info in description.scram_credential_infos]


def _list(admin: AdminClient, args: argparse.Namespace) -> Any:
    users = sorted(_descriptions(admin, [], args.timeout_ms / 1000))
    if args.json:
        return users
    for user in users:
        print(user)
    return None


def _describe(admin: AdminClient, args: argparse.Namespace) -> Any:
    found = _descriptions(admin, list(dict.fromkeys(args.users)), args.timeout_ms / 1000)
    missing = [u for u in args.users if u not in found]
    if missing:
        raise CliError(f"no SCRAM credentials for user(s) {', '.join(missing)}")
    result = {user: _infos(found[user]) for user in sorted(found)}
    if args.json:
        return result
    for user, infos in result.items():
        shown = ", ".join(f"{i['mechanism']} (iterations={i['iterations']})" for i in infos)
        print(f"{user}: {shown}")
    return None


def _password(args: argparse.Namespace) -> str:
    if args.password_file and args.password_stdin:
        raise CliError("give the password either with --password-file or with --password-stdin")
    if args.password_file:
        try:
            text = Path(args.password_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot read --password-file {args.password_file}: {exc.strerror}") from None
        password = text.rstrip("\r\n")
    elif args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif sys.stdin.isatty():
        password = getpass.getpass(f"Password for {args.user}: ")
        if getpass.getpass("Again: ") != password:
            raise CliError("the passwords do not match")
    else:
        raise CliError("no password: use --password-file FILE, --password-stdin, or run in a terminal")
    if not password:
        raise CliError("the password is empty")
    return password


def _alter(admin: AdminClient, alteration: Any, what: str, timeout: float) -> None:
    futures = admin.alter_user_scram_credentials([alteration], request_timeout=timeout)
    for future in futures.values():
        _result(future, what, timeout)


def _add(admin: AdminClient, args: argparse.Namespace) -> Any:
    password = _password(args).encode("utf-8")
    mechanisms = list(dict.fromkeys(args.mechanism or ["SCRAM-SHA-512"]))
    for name in mechanisms:
        info = ScramCredentialInfo(MECHANISMS[name], args.iterations)
        _alter(admin, UserScramCredentialUpsertion(args.user, info, password),
               f"setting {name} credentials of {args.user}", args.timeout_ms / 1000)
        if not args.json:
            print(f"Set {name} credentials of user {args.user} (iterations={args.iterations}).")
    return {"user": args.user, "mechanisms": mechanisms, "iterations": args.iterations} if args.json else None


def _delete(admin: AdminClient, args: argparse.Namespace) -> Any:
    if args.mechanism:
        mechanisms = list(dict.fromkeys(args.mechanism))
    else:
        found = _descriptions(admin, [args.user], args.timeout_ms / 1000)
        if args.user not in found:
            raise CliError(f"user {args.user} has no SCRAM credentials")
        mechanisms = [i["mechanism"] for i in _infos(found[args.user])]
    for name in mechanisms:
        _alter(admin, UserScramCredentialDeletion(args.user, MECHANISMS[name]),
               f"deleting {name} credentials of {args.user}", args.timeout_ms / 1000)
        if not args.json:
            print(f"Deleted {name} credentials of user {args.user}.")
    return {"user": args.user, "deleted": mechanisms} if args.json else None


Command = Callable[[AdminClient, argparse.Namespace], Any]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway users", description="Manage SCRAM users of a Kafka cluster.")
    add_connection_options(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    shared = argparse.ArgumentParser(add_help=False)
    add_connection_options(shared, suppress=True)
    shared.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    list_ = sub.add_parser("list", parents=[shared], help="users with SCRAM credentials")
    list_.set_defaults(func=_list)

    describe = sub.add_parser("describe", parents=[shared], help="mechanisms and iterations of users")
    describe.add_argument("users", nargs="*", metavar="USER", help="users (default: all)")
    describe.set_defaults(func=_describe)

    mechanism_help = "SCRAM-SHA-256 or SCRAM-SHA-512 (repeatable)"
    add = sub.add_parser("add", parents=[shared], help="create or replace a user's SCRAM credentials")
    add.add_argument("user")
    add.add_argument("--mechanism", action="append", choices=sorted(MECHANISMS),
                     help=f"{mechanism_help}; default SCRAM-SHA-512")
    add.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS,
                     help=f"PBKDF2 iterations, 4096-16384 (default {DEFAULT_ITERATIONS})")
    add.add_argument("--password-file", metavar="FILE", help="read the password from FILE (first line)")
    add.add_argument("--password-stdin", action="store_true", help="read the password from stdin (first line)")
    add.set_defaults(func=_add)

    delete = sub.add_parser("delete", parents=[shared], help="delete a user's SCRAM credentials")
    delete.add_argument("user")
    delete.add_argument("--mechanism", action="append", choices=sorted(MECHANISMS),
                        help=f"{mechanism_help}; default: every mechanism the user has")
    delete.set_defaults(func=_delete)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
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
