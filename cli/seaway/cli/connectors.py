"""``seaway connectors``: manage connectors through a Connect worker's REST API (kcctl-like).

Every subcommand is one or two REST calls made with httpx, so it works against any Kafka
Connect worker, not only Seaway's. Output is a readable table or summary by default and the
REST response as JSON with ``--json``. Any failure (an error response, an unreachable worker,
an unreadable file) is one line on stderr, ``Error: ...``, and exit status 1.

A secured worker (HTTPS, HTTP Basic authentication: :mod:`seaway.connect.rest.security`):
``--url https://...`` with ``--ca-file`` (PEM CAs that sign the worker's certificate; default:
the system's), ``--cert``/``--key`` for a client certificate, and ``--user`` whose password
comes from ``--password-file``, the ``SEAWAY_CONNECT_PASSWORD`` environment variable or a
prompt, never from the command line (where other users of the machine could read it).
``--timeout-ms`` bounds each request, in milliseconds as every command's timeout (the
seconds-valued ``--timeout`` of earlier versions is refused with a hint).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import ssl
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from seaway.cli.cluster import DEFAULT_TIMEOUT_MS
from seaway.cli.topics import CliError, milliseconds, parse_properties, refuse_seconds_timeout, shown

__all__ = ["DEFAULT_URL", "load_connector_file", "main", "render_table"]

DEFAULT_URL = "http://localhost:8083"


def render_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns separated by two spaces, header first."""
    cells = [[str(c) for c in header]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells)


def load_connector_file(path: str, name: str | None = None) -> tuple[str, dict[str, str]]:
    """``(name, config)`` from a ``.properties`` file or a ``.json`` file.

    JSON may be Kafka's create request (``{"name": ..., "config": {...}}``) or a flat config
    holding ``name``. ``name`` overrides the file's.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    if path.endswith(".properties"):
        config: dict[str, Any] = parse_properties(text)
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CliError(f"{path} is not valid JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise CliError(f"{path} must hold a JSON object")
        config = dict(doc["config"]) if isinstance(doc.get("config"), dict) else dict(doc)
        if name is None and isinstance(doc.get("name"), str):
            name = doc["name"]
    final = name or config.get("name")
    if not final:
        raise CliError(f"{path} names no connector: add a 'name' or pass --name")
    config = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    config["name"] = str(final)
    return str(final), config


class Api:
    """The few REST calls the commands make; error responses become :class:`CliError`."""

    def __init__(self, url: str, timeout: float, *, auth: tuple[str, str] | None = None,
                 verify: ssl.SSLContext | bool = True) -> None:
        self.url = url.rstrip("/")
        self.client = httpx.Client(base_url=self.url, timeout=timeout, auth=auth, verify=verify)

    def call(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None) -> Any:
        try:
            reply = self.client.request(method, path, json=body, params=params)
        except httpx.HTTPError as exc:
            raise CliError(f"cannot reach the Connect REST API at {self.url}: {exc}") from None
        if reply.status_code >= 400:
            hint = "; the worker asks for credentials: --user NAME" if reply.status_code == 401 else ""
            raise CliError(f"{_error_message(reply)} (HTTP {reply.status_code}){hint}")
        return reply.json() if reply.content else None


def _error_message(reply: httpx.Response) -> str:
    """Kafka Connect's ``{"error_code", "message"}``'s message; any other body as compact JSON or text."""
    try:
        doc = reply.json()
    except ValueError:
        return reply.text.strip() or reply.reason_phrase
    message = doc.get("message") if isinstance(doc, dict) else None
    if isinstance(message, str) and message:
        return message
    return json.dumps(doc if message is None else message, ensure_ascii=False, separators=(", ", ": "))


def _path(name: str, *rest: str) -> str:
    return "/".join(["/connectors", quote(name, safe=""), *rest])


def _tasks_summary(status: dict[str, Any]) -> str:
    tasks = status.get("tasks", [])
    running = sum(1 for t in tasks if t.get("state") == "RUNNING")
    return f"{running}/{len(tasks)}"


# -- subcommands: each returns (json document, readable text) -------------------------------------

def _list(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    doc = api.call("GET", "/connectors", params={"expand": ["status", "info"]})
    rows = []
    for name in sorted(doc):
        info, status = doc[name].get("info", {}), doc[name].get("status", {})
        rows.append([name, info.get("type", ""), status.get("connector", {}).get("state", ""),
                     _tasks_summary(status), info.get("config", {}).get("connector.class", "")])
    text = render_table(["NAME", "TYPE", "STATE", "TASKS", "CLASS"], rows) if rows else "No connectors."
    return doc, text


def _create(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    name, config = load_connector_file(args.file, args.name)
    body: dict[str, Any] = {"name": name, "config": config}
    if args.initial_state:
        body["initial_state"] = args.initial_state
    doc = api.call("POST", "/connectors", body)
    return doc, f"Created connector {doc['name']}."


_STARTING = frozenset({"UNASSIGNED", "RUNNING", "RESTARTING"})


def _connector_state(api: Api, name: str) -> str:
    """The connector's state, or UNASSIGNED while the worker has none to report yet."""
    try:
        return str(api.call("GET", _path(name, "status"))["connector"]["state"])
    except CliError:  # 404 right after a create, before the status is written
        return "UNASSIGNED"


def _get(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    """The connector's config and tasks; right after a create, waits up to ``--wait`` s for its tasks.

    A worker creates a connector's tasks only once the connector has started and computed its
    task configs (in a cluster, after a rebalance too), so a GET straight after POST can list no
    tasks; Kafka's REST API answers the same. Rather than show an empty list as if it were the
    answer, ``get`` polls while the connector is starting and says why when there are none.
    """
    doc = api.call("GET", _path(args.name))
    state = ""
    deadline = time.monotonic() + max(0.0, args.wait)
    while not doc.get("tasks"):
        state = _connector_state(api, args.name)
        if state not in _STARTING or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
        doc = api.call("GET", _path(args.name))
    config = doc.get("config", {})
    tasks = ", ".join(str(t["task"]) for t in doc.get("tasks", []))
    if not tasks:
        tasks = (f"none yet (the connector is {state} and has not started its tasks; run again in a moment)"
                 if state in _STARTING else f"none (the connector is {state})")
    lines = [f"Name:   {doc['name']}", f"Type:   {doc['type']}", f"Class:  {config.get('connector.class', '')}",
             f"Tasks:  {tasks}", "Config:"]
    lines += [f"  {k} = {v}" for k, v in sorted(config.items())]
    return doc, "\n".join(lines)


def _config(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    if args.file:
        _, config = load_connector_file(args.file, args.name)
        doc = api.call("PUT", _path(args.name, "config"), config)["config"]
    elif args.set or args.unset:
        patch: dict[str, str | None] = {}
        for item in args.set or []:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise CliError(f"expected key=value, got {shown(item)}")
            patch[key.strip()] = value.strip()
        patch.update(dict.fromkeys(args.unset or []))
        doc = api.call("PATCH", _path(args.name, "config"), patch)["config"]
    else:
        doc = api.call("GET", _path(args.name, "config"))
    return doc, "\n".join(f"{k} = {v}" for k, v in sorted(doc.items()))


def _status(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    doc = api.call("GET", _path(args.name, "status"))
    rows = [["connector", "", doc["connector"]["state"], doc["connector"].get("worker_id", ""),
             _first_line(doc["connector"].get("trace"))]]
    rows += [["task", t["id"], t["state"], t.get("worker_id", ""), _first_line(t.get("trace"))]
             for t in doc.get("tasks", [])]
    text = f"{doc['name']} ({doc.get('type', 'unknown')})\n" + render_table(
        ["INSTANCE", "ID", "STATE", "WORKER", "TRACE"], rows)
    return doc, text


def _first_line(trace: str | None) -> str:
    if not trace:
        return ""
    lines = [line for line in trace.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _simple(method: str, verb: str, suffix: str | None) -> Callable[[Api, argparse.Namespace], tuple[Any, str]]:
    def run(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
        api.call(method, _path(args.name, suffix) if suffix else _path(args.name))
        return {"name": args.name, "action": verb}, f"{verb.capitalize()} connector {args.name}."
    return run


def _restart(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    if args.task is not None:
        api.call("POST", _path(args.name, "tasks", str(args.task), "restart"))
        return {"name": args.name, "task": args.task, "action": "restarted"}, \
            f"Restarted task {args.task} of connector {args.name}."
    params = {"includeTasks": str(args.include_tasks).lower(), "onlyFailed": str(args.only_failed).lower()}
    doc = api.call("POST", _path(args.name, "restart"), params=params)
    if doc is None:
        return {"name": args.name, "action": "restarted"}, f"Restarted connector {args.name}."
    restarting = [f"task {t['id']}" for t in doc.get("tasks", []) if t.get("state") == "RESTARTING"]
    if doc["connector"]["state"] == "RESTARTING":
        restarting.insert(0, "connector")
    return doc, f"Restarting {args.name}: {', '.join(restarting) or 'nothing to restart'}."


def _offsets(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    if args.reset:
        doc = api.call("DELETE", _path(args.name, "offsets"))
        return doc, str(doc["message"])
    if args.set:
        try:
            body = json.loads(Path(args.set).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise CliError(f"cannot read offsets from {args.set}: {exc}") from None
        doc = api.call("PATCH", _path(args.name, "offsets"), body)
        return doc, str(doc["message"])
    doc = api.call("GET", _path(args.name, "offsets"))
    rows = [[json.dumps(e["partition"], sort_keys=True), json.dumps(e["offset"], sort_keys=True)]
            for e in doc.get("offsets", [])]
    return doc, render_table(["PARTITION", "OFFSET"], rows) if rows else "No offsets."


def _plugins(api: Api, args: argparse.Namespace) -> tuple[Any, str]:
    doc = api.call("GET", "/connector-plugins", params={"connectorsOnly": str(not args.all).lower()})
    rows = [[p["class"], p["type"], p.get("version", ""), p.get("error", "")] for p in doc]
    header = ["CLASS", "TYPE", "VERSION"] + (["ERROR"] if any(r[3] for r in rows) else [])
    return doc, render_table(header, [r[: len(header)] for r in rows])


# -- argument parsing -------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway connectors", description="Manage connectors of a Connect worker.")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"the worker's REST API (default {DEFAULT_URL})")
    parser.add_argument("--json", action="store_true", help="print the REST response as JSON")
    parser.add_argument("--timeout-ms", type=milliseconds, default=DEFAULT_TIMEOUT_MS, metavar="MS",
                        help=f"per request, in milliseconds (default {DEFAULT_TIMEOUT_MS})")
    refuse_seconds_timeout(parser)
    parser.add_argument("--ca-file", metavar="FILE", help="PEM CA certificate(s) to verify an https worker")
    parser.add_argument("--cert", metavar="FILE", help="PEM client certificate (mutual TLS)")
    parser.add_argument("--key", metavar="FILE", help="PEM private key of --cert (unencrypted)")
    parser.add_argument("--user", metavar="NAME", help="HTTP Basic authentication user")
    parser.add_argument("--password-file", metavar="FILE",
                        help="the --user's password (first line); else $SEAWAY_CONNECT_PASSWORD, else a prompt")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, run: Callable[[Api, argparse.Namespace], tuple[Any, str]], help_: str,
            named: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("--url", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
        if named:
            p.add_argument("name", help="connector name")
        p.set_defaults(run=run)
        return p

    add("list", _list, "list connectors with their type, state and tasks", named=False)
    create = add("create", _create, "create a connector from a .json or .properties file", named=False)
    create.add_argument("file", help="connector config (.json: {name, config} or flat; .properties)")
    create.add_argument("--name", help="connector name (overrides the file's)")
    create.add_argument("--initial-state", choices=["RUNNING", "PAUSED", "STOPPED"], type=str.upper)
    get = add("get", _get, "show a connector's config and tasks")
    get.add_argument("--wait", type=float, default=10.0, metavar="SECONDS",
                     help="while a just-created connector has no tasks yet, wait this long for them (default 10)")
    config = add("config", _config, "show a connector's config, or change it with --set/--unset/--file")
    config.add_argument("--set", action="append", metavar="KEY=VALUE", help="set a key (PATCH); repeatable")
    config.add_argument("--unset", action="append", metavar="KEY", help="remove a key (PATCH); repeatable")
    config.add_argument("--file", help="replace the whole config from a .json or .properties file (PUT)")
    add("status", _status, "show the connector's and its tasks' states")
    add("pause", _simple("PUT", "paused", "pause"), "pause the connector and its tasks")
    add("resume", _simple("PUT", "resumed", "resume"), "resume a paused or stopped connector")
    add("stop", _simple("PUT", "stopped", "stop"), "stop the connector (its tasks shut down)")
    restart = add("restart", _restart, "restart the connector, its tasks, or one task")
    restart.add_argument("--include-tasks", action="store_true", help="restart its tasks too")
    restart.add_argument("--only-failed", action="store_true", help="restart only failed instances")
    restart.add_argument("--task", type=int, metavar="N", help="restart only task N")
    add("delete", _simple("DELETE", "deleted", None), "delete the connector")
    offsets = add("offsets", _offsets, "show, alter (--set FILE) or reset (--reset) a stopped connector's offsets")
    group = offsets.add_mutually_exclusive_group()
    group.add_argument("--reset", action="store_true", help="reset all offsets (connector must be STOPPED)")
    group.add_argument("--set", metavar="FILE", help='alter offsets from a JSON file {"offsets": [...]}')
    plugins = add("plugins", _plugins, "list installed connector plugins", named=False)
    plugins.add_argument("--all", action="store_true", help="also converters, transformations and predicates")
    return parser


def _verify(args: argparse.Namespace) -> ssl.SSLContext | bool:
    if not (args.ca_file or args.cert or args.key):
        return True
    if bool(args.cert) != bool(args.key):
        raise CliError("--cert and --key go together")
    try:
        context = ssl.create_default_context(cafile=args.ca_file)
        if args.cert:
            context.load_cert_chain(args.cert, args.key)
    except (OSError, ssl.SSLError) as exc:
        raise CliError(f"cannot use --ca-file/--cert/--key: {getattr(exc, 'strerror', None) or exc}") from None
    return context


def _auth(args: argparse.Namespace) -> tuple[str, str] | None:
    if args.user is None:
        if args.password_file:
            raise CliError("--password-file needs --user")
        return None
    if args.password_file:
        try:
            password = Path(args.password_file).read_text(encoding="utf-8").splitlines()[0:1]
        except OSError as exc:
            raise CliError(f"cannot read --password-file {args.password_file}: {exc.strerror}") from None
        return args.user, password[0] if password else ""
    if "SEAWAY_CONNECT_PASSWORD" in os.environ:
        return args.user, os.environ["SEAWAY_CONNECT_PASSWORD"]
    if sys.stdin.isatty():
        return args.user, getpass.getpass(f"Password for {args.user}: ")
    raise CliError("no password for --user: use --password-file FILE, $SEAWAY_CONNECT_PASSWORD, or a terminal")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        api = Api(args.url, args.timeout_ms / 1000, auth=_auth(args), verify=_verify(args))
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    try:
        doc, text = args.run(api, args)
    except CliError as exc:
        print("Error: " + "; ".join(line for line in str(exc).splitlines() if line.strip()), file=sys.stderr)
        return 1
    finally:
        api.client.close()
    print(json.dumps(doc, indent=2) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
