"""``seaway groups``: list, describe, reset offsets of and delete consumer groups, like kafka-consumer-groups.sh.

confluent-kafka's AdminClient does the work (list_consumer_groups, describe_consumer_groups,
list_consumer_group_offsets, list_offsets, alter_consumer_group_offsets, delete_consumer_groups),
so the command works against any Kafka cluster, not just Seaway's broker. ``delete-offsets``
(Kafka's ``--delete-offsets``) sends Kafka's OffsetDelete request (API 47) to the group's
coordinator over :mod:`seaway.protocol.client`, because confluent-kafka's Python AdminClient
has no ``delete_consumer_group_offsets``; the broker refuses partitions of a topic an active
group subscribes to (GROUP_SUBSCRIBED_TO_TOPIC), as Kafka's does.

``reset-offsets --from-file FILE`` takes the CSV ``--export`` prints: ``topic,partition,offset``
lines when one ``--group`` is given, else ``group,topic,partition,offset`` (Kafka's
``parseResetPlan``); the offsets are kept within each partition's earliest and latest.

Both spellings work: ``seaway groups describe --group g`` and kafka-consumer-groups.sh's
``seaway groups --describe --group g``. Output copies Kafka's ``ConsumerGroupCommand`` layout
(same columns, widths, ``-`` for a missing value, the blank line before each table), with one column
added at the end of ``describe --offsets``: STATUS, the partition's lag status (:mod:`seaway.lag`):

* ``-`` when there is no lag figure (no committed offset, or no end offset);
* OK when the lag is 0 (or below: a committed offset past a truncated log end);
* STOPPED when the partition lags and no member of the group owns it (the group is empty, or the
  partition is unassigned): nothing will ever move it;
* otherwise, with ``--lag-samples N`` (N >= 2), Burrow's evaluator over N observations taken
  ``--lag-interval-ms`` apart: STALLED (committed offset never moved), WARNING (moving, lag never
  shrank), REWIND, or OK. One observation (the default, so ``describe`` answers at once) cannot show
  progress, and Burrow calls a window without evidence OK. The admin API gives no commit timestamps,
  so the window must be longer than the group's commit interval (``auto.commit.interval.ms``, 5 s by
  default) or a healthy group looks STALLED; Seaway's broker exports the commit-driven status at
  its /metrics.

``--time-lag`` adds TIME-LAG-MS: now minus the timestamp of the record at the committed offset, read
with one bounded fetch per lagging partition.

Failures are one line on stderr (``Error: ...``, Kafka's wording where Kafka has one) and exit
status 1; Kafka's tool prints some of them on stdout and exits 0, which scripts cannot check.
``--timeout`` is in milliseconds, as Kafka's (default 30000; ``--timeout-ms``, the other commands'
spelling, is the same option). Clients are opened through :func:`seaway.cli.cluster.open_client`:
an authentication or TLS failure stops the command with the broker's answer.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    TopicPartition,
)

# confluent-kafka re-exports these without __all__; mypy's strict mode cannot tell.
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]
from seaway.cli.cluster import DEFAULT_TIMEOUT_MS, open_client
from seaway.cli.topics import DEFAULT_BOOTSTRAP, CliError, client_config, kafka_error_text, milliseconds, shown
from seaway.lag import LagStatus, PartitionWindow, offset_lag, time_lag_ms

__all__ = ["kafka_state", "main"]

MISSING = "-"
_ACTIONS = {"--list": "list", "--describe": "describe", "--reset-offsets": "reset-offsets", "--delete": "delete",
            "--delete-offsets": "delete-offsets"}

# Kafka's GroupState.toString() for librdkafka's states
_STATE_NAMES = {
    ConsumerGroupState.UNKNOWN: "Unknown",
    ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
    ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    ConsumerGroupState.STABLE: "Stable",
    ConsumerGroupState.DEAD: "Dead",
    ConsumerGroupState.EMPTY: "Empty",
}
_STATES_BY_NAME = {name.lower(): state for state, name in _STATE_NAMES.items()}


def kafka_state(state: Any) -> str:
    """A group state as Kafka's tools print it (``Stable``, ``Empty``, ``PreparingRebalance``...)."""
    return _STATE_NAMES.get(state, "Unknown")


# -- arguments -----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--bootstrap-server", default=DEFAULT_BOOTSTRAP, metavar="HOST:PORT",
                        help=f"brokers to connect to (default {DEFAULT_BOOTSTRAP})")
    common.add_argument("--command-config", metavar="FILE",
                        help="client .properties file (security settings and other client configs)")
    common.add_argument("--timeout", "--timeout-ms", dest="timeout_ms", type=milliseconds, default=DEFAULT_TIMEOUT_MS,
                        metavar="MS", help=f"how long to wait for the cluster, in ms (default {DEFAULT_TIMEOUT_MS})")

    def group_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--group", action="append", default=[], metavar="GROUP", help="a group (repeatable)")
        p.add_argument("--all-groups", action="store_true", help="every consumer group")

    p = argparse.ArgumentParser(
        prog="seaway groups", description="List, describe, reset offsets of and delete consumer groups "
        "(kafka-consumer-groups.sh's options; '--describe' etc. also work in place of the subcommand).")
    sub = p.add_subparsers(dest="action", required=True)

    ls = sub.add_parser("list", parents=[common], help="list consumer groups")
    ls.add_argument("--state", nargs="?", const="", default=None, metavar="STATES",
                    help="show each group's state; with a value (stable,empty), list only those")

    de = sub.add_parser("describe", parents=[common], help="offsets and lag, members or state of groups")
    group_options(de)
    what = de.add_mutually_exclusive_group()
    what.add_argument("--offsets", action="store_true", help="partitions, offsets, lag and status (default)")
    what.add_argument("--members", action="store_true", help="the group's members")
    what.add_argument("--state", action="store_true", help="the group's coordinator, state and size")
    de.add_argument("--verbose", action="store_true", help="--offsets: add the committed LEADER-EPOCH")
    de.add_argument("--lag-samples", type=int, default=1, metavar="N",
                    help="observations the STATUS column is evaluated over (default 1: at once)")
    de.add_argument("--lag-interval-ms", type=int, default=1000, metavar="MS",
                    help="time between observations (default 1000)")
    de.add_argument("--time-lag", action="store_true",
                    help="add TIME-LAG-MS: how long ago the next record to read was written (reads it)")

    rs = sub.add_parser("reset-offsets", parents=[common], help="reset an inactive group's committed offsets")
    group_options(rs)
    scope = rs.add_mutually_exclusive_group()
    scope.add_argument("--all-topics", action="store_true", help="every topic the group has offsets for")
    scope.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]",
                       help="a topic, or some of its partitions ('t:0,1'); repeatable")
    to = rs.add_mutually_exclusive_group()
    to.add_argument("--to-earliest", action="store_true")
    to.add_argument("--to-latest", action="store_true")
    to.add_argument("--to-current", action="store_true")
    to.add_argument("--to-offset", type=int, metavar="OFFSET")
    to.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss", help="UTC unless a zone is given")
    to.add_argument("--by-duration", metavar="PnDTnHnMnS", help="offsets of records this long ago")
    to.add_argument("--shift-by", type=int, metavar="N", help="current offset + N (negative: back)")
    to.add_argument("--from-file", metavar="FILE",
                    help="the offsets of a CSV file: topic,partition,offset (one --group) or "
                    "group,topic,partition,offset lines, as --export prints them")
    run = rs.add_mutually_exclusive_group()
    run.add_argument("--dry-run", action="store_true", help="only show the new offsets (the default)")
    run.add_argument("--execute", action="store_true", help="commit the new offsets")
    rs.add_argument("--export", action="store_true", help="print the plan as CSV (topic,partition,offset)")

    dl = sub.add_parser("delete", parents=[common], help="delete groups (offsets and membership)")
    group_options(dl)

    do = sub.add_parser("delete-offsets", parents=[common],
                        help="delete a group's committed offsets of some topics (refused for topics it subscribes to)")
    do.add_argument("--group", action="append", default=[], metavar="GROUP", help="the group (exactly one)")
    do.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P]",
                    help="a topic, or some of its partitions ('t:0,1'); repeatable")
    return p


def _normalise(argv: list[str]) -> list[str]:
    """kafka-consumer-groups.sh's ``--describe ...`` -> ``describe ...``."""
    if argv and not argv[0].startswith("-"):
        return argv
    found = [a for a in argv if a in _ACTIONS]
    if not found:
        return argv  # argparse then asks for a subcommand
    if len(found) > 1:
        raise CliError("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                       "--delete-offsets")
    rest = list(argv)
    rest.remove(found[0])
    return [_ACTIONS[found[0]], *rest]


# -- admin calls ---------------------------------------------------------------------------------


def _wait(future: Any, what: str, timeout_s: float) -> Any:
    try:
        return future.result(timeout=timeout_s)
    except KafkaException as exc:
        raise CliError(f"{what}: {kafka_error_text(exc)}") from None
    except TimeoutError:
        raise CliError(f"{what}: no answer from the cluster within {round(timeout_s * 1000)} ms") from None


def _spec(kind: str, *args: int) -> Any:
    """An OffsetSpec (its factories are untyped in confluent-kafka)."""
    return getattr(OffsetSpec, kind)(*args)


def _error_code(exc: KafkaException) -> int | None:
    err = exc.args[0] if exc.args else None
    return err.code() if isinstance(err, KafkaError) else None


@dataclass
class _Cluster:
    admin: AdminClient
    timeout_s: float

    def listings(self, **kwargs: Any) -> list[Any]:
        """ListGroups; a broker's error fails the command, as Kafka's tool fails (librdkafka reports
        errors in the result, not as an exception: an unreachable cluster would list nothing)."""
        result = _wait(self.admin.list_consumer_groups(request_timeout=self.timeout_s, **kwargs), "listing groups",
                       self.timeout_s + 5)
        if result.errors:
            error = result.errors[0]
            exc = error if isinstance(error, KafkaException) else KafkaException(error)
            raise CliError(f"listing groups: {kafka_error_text(exc)}")
        return sorted(result.valid, key=lambda g: g.group_id)

    def group_ids(self) -> list[str]:
        return [g.group_id for g in self.listings()]

    def describe(self, group: str) -> Any | None:
        """The group's description; None when it does not exist (GROUP_ID_NOT_FOUND or Dead)."""
        future = self.admin.describe_consumer_groups([group], request_timeout=self.timeout_s)[group]
        try:
            desc = future.result(timeout=self.timeout_s)
        except KafkaException as exc:
            if _error_code(exc) == KafkaError.GROUP_ID_NOT_FOUND:
                return None
            raise CliError(f"describing group {group}: {kafka_error_text(exc)}") from None
        except TimeoutError:
            raise CliError(f"describing group {group}: no answer within {round(self.timeout_s * 1000)} ms") from None
        return None if desc.state == ConsumerGroupState.DEAD else desc

    def committed(self, group: str) -> dict[tuple[str, int], TopicPartition]:
        request = [ConsumerGroupTopicPartitions(group)]
        future = self.admin.list_consumer_group_offsets(request, request_timeout=self.timeout_s)[group]
        result = _wait(future, f"listing offsets of group {group}", self.timeout_s)
        return {(tp.topic, tp.partition): tp for tp in result.topic_partitions or [] if tp.offset >= 0}

    def offsets(self, partitions: Iterable[tuple[str, int]], spec: Any) -> dict[tuple[str, int], int]:
        """Offsets by spec (latest, earliest, a timestamp); a partition that failed is left out."""
        request = {TopicPartition(t, p): spec for t, p in partitions}
        if not request:
            return {}
        futures = self.admin.list_offsets(request, request_timeout=self.timeout_s)
        found: dict[tuple[str, int], int] = {}
        for tp, future in futures.items():
            try:
                found[(tp.topic, tp.partition)] = future.result(timeout=self.timeout_s).offset
            except (KafkaException, TimeoutError):
                continue  # shown as "-", as Kafka shows a partition without a leader
        return found

    def partitions_of(self, topics: Sequence[str]) -> list[tuple[str, int]]:
        metadata = self.admin.list_topics(timeout=self.timeout_s)
        found: list[tuple[str, int]] = []
        for topic in topics:
            info = metadata.topics.get(topic)
            if info is None or info.error is not None:
                raise CliError(f'The partitions "{topic}" do not exist')  # Kafka: UnknownTopicOrPartition
            found += [(topic, p) for p in sorted(info.partitions)]
        return found


def _groups(cluster: _Cluster, args: argparse.Namespace) -> list[str]:
    if args.all_groups:
        return cluster.group_ids()
    if not args.group:
        raise CliError("Option '[describe|reset-offsets|delete]' takes one of these options: --all-groups, --group")
    return sorted(dict.fromkeys(args.group))


# -- list ----------------------------------------------------------------------------------------


def _list(cluster: _Cluster, args: argparse.Namespace) -> int:
    if args.state is None:
        for group in cluster.group_ids():
            print(group)
        return 0
    wanted: set[Any] = set()
    for name in filter(None, (s.strip().lower() for s in args.state.split(","))):
        if name not in _STATES_BY_NAME:
            valid = ", ".join(sorted(_STATE_NAMES.values()))
            raise CliError(f"Invalid state list '{args.state}'. Valid states are: {valid}")
        wanted.add(_STATES_BY_NAME[name])
    listings = cluster.listings(**({"states": wanted} if wanted else {}))
    width = max([15, *(len(g.group_id) for g in listings)]) + 10
    print(f"{'GROUP':<{width}} {'STATE':<20}")
    for g in listings:
        print(f"{g.group_id:<{width}} {kafka_state(g.state):<20}")
    return 0


# -- describe ------------------------------------------------------------------------------------


@dataclass
class _Row:
    topic: str
    partition: int
    offset: int | None
    leader_epoch: int | None
    end: int | None
    consumer: str
    host: str
    client: str

    @property
    def lag(self) -> int | None:
        return offset_lag(self.offset, self.end)


def _rows(cluster: _Cluster, group: str, desc: Any) -> list[_Row]:
    """Kafka's collectGroupsOffsets: members by assignment size (largest first), then unowned offsets."""
    committed = cluster.committed(group)
    members = [m for m in desc.members if m.assignment and m.assignment.topic_partitions]
    members.sort(key=lambda m: -len(m.assignment.topic_partitions))
    owned: list[tuple[tuple[str, int], Any]] = []
    for member in members:
        owned += [((tp.topic, tp.partition), member) for tp in member.assignment.topic_partitions]
    assigned = {key for key, _ in owned}
    unowned = sorted(k for k in committed if k not in assigned)
    ends = cluster.offsets([*assigned, *unowned], _spec("latest"))

    def row(key: tuple[str, int], consumer: str, host: str, client: str) -> _Row:
        tp = committed.get(key)
        epoch = tp.leader_epoch if tp is not None and tp.leader_epoch is not None and tp.leader_epoch >= 0 else None
        return _Row(key[0], key[1], None if tp is None else tp.offset, epoch, ends.get(key), consumer, host, client)

    rows: list[_Row] = []
    for member in members:
        keys = sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions)
        rows += [row(k, member.member_id, member.host, member.client_id) for k in keys]
    rows += [row(k, MISSING, MISSING, MISSING) for k in unowned]
    return rows


def _statuses(cluster: _Cluster, group: str, rows: list[_Row], samples: int, interval_ms: int) -> list[str]:
    """The STATUS column (see the module docstring for the rules)."""
    windows = {(r.topic, r.partition): PartitionWindow(max(samples, 1), 0) for r in rows}
    now_ms = int(time.time() * 1000)
    for r in rows:
        if r.offset is not None:
            windows[(r.topic, r.partition)].add_commit(r.offset, now_ms, r.end)
    for _ in range(1, samples):
        time.sleep(interval_ms / 1000)
        committed = cluster.committed(group)
        ends = cluster.offsets(windows, _spec("latest"))
        now_ms = int(time.time() * 1000)
        for key, window in windows.items():
            tp = committed.get(key)
            if tp is not None:
                window.add_commit(tp.offset, now_ms, ends.get(key))
    out: list[str] = []
    for r in rows:
        window = windows[(r.topic, r.partition)]
        lag = window.current_lag() if samples > 1 else r.lag
        if lag is None:
            out.append(MISSING)
        elif lag <= 0:
            out.append(LagStatus.OK.value)
        elif r.consumer == MISSING:
            out.append(LagStatus.STOPPED.value)
        elif len(window.offsets) < 2:
            out.append(LagStatus.OK.value)  # no evidence of progress either way: Burrow says OK
        else:
            out.append(window.evaluate(now_ms).status.value)
    return out


def _shown(value: int | None) -> str:
    return MISSING if value is None else str(value)


def _line(widths: Sequence[int], cells: Sequence[object]) -> str:
    """Java's ``%-Ns %-Ns ... %s``: each cell left-justified to its width, the cells past the widths as they are."""
    return " ".join(str(c).ljust(widths[i]) if i < len(widths) else str(c) for i, c in enumerate(cells))


def _time_lags(args: argparse.Namespace, rows: list[_Row]) -> list[str]:
    """TIME-LAG-MS per row: now - timestamp of the record at the committed offset (seaway.lag.time_lag_ms).

    One bounded read per lagging partition (a consumer that joins no group and commits nothing,
    with small fetch and queue limits); a record it cannot read in time shows ``-``.
    """
    wanted = {(r.topic, r.partition): r.offset for r in rows if r.offset is not None and (r.lag or 0) > 0}
    stamps: dict[tuple[str, int], int] = {}
    if wanted:
        consumer, _ = open_client(Consumer, client_config(args, **{
            "group.id": "seaway-groups-time-lag", "enable.auto.commit": False, "enable.partition.eof": False,
            "fetch.max.bytes": 1 << 20, "max.partition.fetch.bytes": 1 << 16, "queued.max.messages.kbytes": 1024,
            "queued.min.messages": 1}), args.timeout_ms)
        try:
            consumer.assign([TopicPartition(t, p, o) for (t, p), o in wanted.items()])
            deadline = time.monotonic() + args.timeout_ms / 1000
            while len(stamps) < len(wanted) and time.monotonic() < deadline:
                msg = consumer.poll(0.2)
                if msg is None or msg.error() is not None:
                    continue
                topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
                if topic is None or partition is None or offset is None:
                    continue
                key = (topic, partition)
                if key in wanted and key not in stamps and offset >= wanted[key]:
                    stamps[key] = msg.timestamp()[1]
                    consumer.pause([TopicPartition(topic, partition)])
        finally:
            consumer.close()
    now_ms = int(time.time() * 1000)
    return [_shown(time_lag_ms(now_ms, r.lag, stamps.get((r.topic, r.partition)))) for r in rows]


def _print_offsets(group: str, rows: list[_Row], statuses: list[str], verbose: bool,
                   time_lags: list[str] | None = None) -> None:
    gw = max([15, len(group)])
    tw = max([15, *(len(r.topic) for r in rows)])
    cw = max([15, *(len(r.consumer) for r in rows)])
    hw = max([15, *(len(r.host) for r in rows)])
    lw = max([15, *(len(r.client) for r in rows)])
    widths = [gw, tw, 10, *([15] if verbose else []), 15, 15, 15, cw, hw, lw, *([10] if time_lags else [])]
    head = ["GROUP", "TOPIC", "PARTITION", *(["LEADER-EPOCH"] if verbose else []), "CURRENT-OFFSET",
            "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID", "STATUS",
            *(["TIME-LAG-MS"] if time_lags is not None else [])]
    out = ["", _line(widths, head)]
    for i, (r, status) in enumerate(zip(rows, statuses, strict=True)):
        cells = [group, r.topic, str(r.partition), *([_shown(r.leader_epoch)] if verbose else []), _shown(r.offset),
                 _shown(r.end), _shown(r.lag), r.consumer, r.host, r.client, status,
                 *([time_lags[i]] if time_lags is not None else [])]
        out.append(_line(widths, cells))
    print("\n".join(out))


def _print_members(group: str, desc: Any) -> None:
    members = list(desc.members)
    gw = max([15, len(group)])
    cw = max([15, *(len(m.member_id) for m in members)])
    iw = max([17, *(len(m.group_instance_id or "") for m in members)])
    hw = max([15, *(len(m.host) for m in members)])
    lw = max([15, *(len(m.client_id) for m in members)])
    with_instance = any(m.group_instance_id for m in members)
    # Kafka's "%-Ns ... %-15s ": every column padded, and a space after the last
    if with_instance:
        widths = [gw, cw, iw, hw, lw, 15]
        lines = ["", _line(widths, ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"])]
    else:
        widths = [gw, cw, hw, lw, 15]
        lines = ["", _line(widths, ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"])]
    lines[1] += " "
    for m in members:
        n = len(m.assignment.topic_partitions) if m.assignment and m.assignment.topic_partitions else 0
        if with_instance:
            lines.append(_line(widths, [group, m.member_id, m.group_instance_id or "", m.host, m.client_id, n]) + " ")
        else:
            lines.append(_line(widths, [group, m.member_id, m.host, m.client_id, n]) + " ")
    print("\n".join(lines))


def _print_state(group: str, desc: Any) -> None:
    node = desc.coordinator
    coordinator = MISSING if node is None else f"{node.host}:{node.port}  ({node.id})"
    gw = max(15, len(group))
    cw = max(25, len(coordinator))
    widths = [gw, cw, 20, 20]
    print("\n" + _line(widths, ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]))
    print(_line(widths, [group, coordinator, desc.partition_assignor or MISSING, kafka_state(desc.state),
                         len(desc.members)]))


def _describe(cluster: _Cluster, args: argparse.Namespace) -> int:
    if args.lag_samples < 1 or args.lag_interval_ms < 0:
        raise CliError("--lag-samples must be >= 1 and --lag-interval-ms >= 0")
    failed = False
    for group in _groups(cluster, args):
        desc = cluster.describe(group)
        if desc is None:
            print(f"Error: Consumer group '{group}' does not exist.", file=sys.stderr)
            failed = True
            continue
        state = kafka_state(desc.state)
        if state == "Empty":
            print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
        elif state in ("PreparingRebalance", "CompletingRebalance"):
            print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
        if args.members:
            _print_members(group, desc)  # Kafka prints the header even for a group without members
        elif args.state:
            _print_state(group, desc)
        else:
            rows = _rows(cluster, group, desc)
            if rows:
                statuses = _statuses(cluster, group, rows, args.lag_samples, args.lag_interval_ms)
                time_lags = _time_lags(args, rows) if args.time_lag else None
                _print_offsets(group, rows, statuses, args.verbose, time_lags)
    return 1 if failed else 0


# -- reset-offsets -------------------------------------------------------------------------------


def parse_datetime(text: str) -> int:
    """Kafka's ``Utils.getDateTime``: 'YYYY-MM-DDTHH:mm:SS[.sss][zone]' -> epoch ms; no zone means UTC."""
    value = text.strip()
    if "T" not in value:
        raise CliError(f"Error parsing timestamp {shown(text)}: it does not contain a 'T' according to ISO8601 format")
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    elif not re.search(r"[+-]\d\d:?\d\d$", value.split("T", 1)[1]):
        value += "+00:00"
    try:
        return int(_dt.datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        raise CliError(f"Error parsing timestamp {shown(text)}: expected YYYY-MM-DDTHH:mm:SS.sss") from None


_DURATION = re.compile(r"^([-+]?)P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$", re.IGNORECASE)


def parse_duration_ms(text: str) -> int:
    """Java's ``Duration.parse`` for 'PnDTnHnMn.nS' -> milliseconds."""
    m = _DURATION.match(text.strip())
    if m is None or text.strip().upper() in ("P", "PT") or text.strip().upper().endswith("T"):
        raise CliError(f"Text cannot be parsed to a Duration: {shown(text)} (expected PnDTnHnMnS)")
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in m.groups()[1:])
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    return int(total * 1000) * (-1 if m.group(1) == "-" else 1)


def _partitions_to_reset(cluster: _Cluster, group: str, args: argparse.Namespace) -> list[tuple[str, int]]:
    if args.all_topics:
        return sorted(cluster.committed(group))
    if not args.topic:
        if args.from_file is not None:
            return []  # the file names the partitions (Kafka's getPartitionsToReset)
        raise CliError("One of the reset scopes should be defined: --all-topics, --topic.")
    found, whole = _topic_args(args.topic)
    found += cluster.partitions_of(whole)
    known = set(cluster.partitions_of(sorted({t for t, _ in found})))
    missing = [f"{t}-{p}" for t, p in found if (t, p) not in known]
    if missing:
        raise CliError(f'The partitions "{",".join(missing)}" do not exist')
    return sorted(dict.fromkeys(found))


def _topic_args(topics: Sequence[str]) -> tuple[list[tuple[str, int]], list[str]]:
    """``--topic`` values: the partitions named (``t:0,1``), and the topics named whole."""
    found: list[tuple[str, int]] = []
    whole: list[str] = []
    for arg in topics:
        if ":" not in arg:
            whole.append(arg)
            continue
        topic, _, parts = arg.partition(":")
        if not topic or ":" in parts:
            raise CliError(f"Invalid topic arg '{arg}', expected topic name and partitions")
        for part in parts.split(","):
            try:
                found.append((topic, int(part)))
            except ValueError:
                raise CliError(f"Invalid partition '{part}' specified in topic arg '{arg}'") from None
    return found, whole


def parse_reset_plan(text: str, groups: Sequence[str]) -> dict[str, dict[tuple[str, int], int]]:
    """Kafka's ``parseResetPlan``: ``topic,partition,offset`` lines for the one ``--group`` given
    (when the first line has three fields), else ``group,topic,partition,offset`` lines. Blank
    lines are skipped (``--export`` ends with one)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    single = len(groups) == 1 and bool(lines) and len(lines[0].split(",")) == 3
    plan: dict[str, dict[tuple[str, int], int]] = {}
    for number, line in enumerate(lines, 1):
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != (3 if single else 4):
            expected = "topic,partition,offset" if single else "group,topic,partition,offset"
            raise CliError(f"line {number} of the reset plan, {shown(line)}: expected {expected}")
        group, (topic, partition, offset) = (groups[0], fields) if single else (fields[0], fields[1:])
        try:
            plan.setdefault(group, {})[(topic, int(partition))] = int(offset)
        except ValueError:
            raise CliError(f"line {number} of the reset plan, {shown(line)}: partition and offset must be "
                           "integers") from None
    return plan


def _plan(cluster: _Cluster, group: str, args: argparse.Namespace,
          partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Kafka's prepareOffsetsToReset: the new offset per partition, kept within [earliest, latest]."""
    def clamp(requested: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        starts = cluster.offsets(requested, _spec("earliest"))
        ends = cluster.offsets(requested, _spec("latest"))
        out: dict[tuple[str, int], int] = {}
        for key, offset in requested.items():
            # Kafka's checkOffsetsRange warns, so that a clamped --shift-by/--to-offset is no surprise
            if key in ends and offset > ends[key]:
                print(f"WARN New offset ({offset}) is higher than latest offset for topic partition "
                      f"{key[0]}-{key[1]}. Value will be set to {ends[key]}", file=sys.stderr)
                offset = ends[key]
            elif key in starts and offset < starts[key]:
                print(f"WARN New offset ({offset}) is lower than earliest offset for topic partition "
                      f"{key[0]}-{key[1]}. Value will be set to {starts[key]}", file=sys.stderr)
                offset = starts[key]
            out[key] = offset
        return out

    def by_spec(spec: Any, what: str) -> dict[tuple[str, int], int]:
        found = cluster.offsets(partitions, spec)
        for t, p in partitions:
            if (t, p) not in found:
                raise CliError(f"Error getting {what} offset of topic partition: {t}-{p}")
        return found

    def by_time(ts: int) -> dict[tuple[str, int], int]:
        found = cluster.offsets(partitions, _spec("for_timestamp", ts))
        empty = [k for k in partitions if found.get(k, -1) < 0]
        for t, p in empty:
            print(f"\nWarn: Partition {p} from topic {t} is empty. Falling back to latest known offset.")
        found.update(cluster.offsets(empty, _spec("latest")))
        for t, p in partitions:
            if found.get((t, p), -1) < 0:
                raise CliError(f"Error getting offset by timestamp of topic partition: {t}-{p}")
        return {k: found[k] for k in partitions}

    if args.from_file is not None:
        plan = _file_plan(args).get(group)
        if plan is None:
            raise CliError(f"No reset plan for group {group} found")
        known = set(cluster.partitions_of(sorted({t for t, _ in plan})))
        absent = [f"{t}-{p}" for t, p in plan if (t, p) not in known]
        if absent:
            raise CliError(f'The partitions "{",".join(absent)}" do not exist')
        return clamp(plan)  # Kafka's checkOffsetsRange
    if args.to_offset is not None:
        return clamp(dict.fromkeys(partitions, args.to_offset))
    if args.to_earliest:
        return by_spec(_spec("earliest"), "starting")
    if args.to_latest:
        return by_spec(_spec("latest"), "ending")
    if args.shift_by is not None:
        current = cluster.committed(group)
        for t, p in partitions:
            if (t, p) not in current:
                raise CliError(f"Cannot shift offset for partition {t}-{p} since there is no current committed offset")
        return clamp({k: current[k].offset + args.shift_by for k in partitions})
    if args.to_datetime is not None:
        return by_time(parse_datetime(args.to_datetime))
    if args.by_duration is not None:
        return by_time(int(time.time() * 1000) - parse_duration_ms(args.by_duration))
    if args.to_current:
        current = cluster.committed(group)
        missing = [k for k in partitions if k not in current]
        ends = by_spec(_spec("latest"), "ending") if missing else {}
        return {k: current[k].offset if k in current else ends[k] for k in partitions}
    raise CliError("Option '--reset-offsets' requires one of the following scenarios: --to-datetime, --by-duration, "
                   "--to-earliest, --to-latest, --shift-by, --from-file, --to-current, --to-offset")


def _file_plan(args: argparse.Namespace) -> dict[str, dict[tuple[str, int], int]]:
    try:
        with open(args.from_file, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise CliError(f"--from-file {args.from_file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:  # named, instead of the codec's message alone
        raise CliError(f"--from-file {args.from_file}: not UTF-8 text (byte {exc.start})") from None
    return parse_reset_plan(text, args.group)


def _reset(cluster: _Cluster, args: argparse.Namespace) -> int:
    if not (args.dry_run or args.execute):
        print("WARN: No action will be performed as the --execute option is missing. In version 5.0, this command "
              "will require either --dry-run or --execute to be specified. You should add the --dry-run option "
              "explicitly if you are scripting this command and want to keep the current default behavior without "
              "prompting.")
    plans: dict[str, dict[tuple[str, int], int]] = {}
    refused: list[str] = []
    for group in _groups(cluster, args):
        desc = cluster.describe(group)
        if desc is not None and kafka_state(desc.state) not in ("Empty", "Dead"):
            refused.append(f"Assignments can only be reset if the group '{group}' is inactive, but the current "
                           f"state is {kafka_state(desc.state)}.")
            continue
        plan = _plan(cluster, group, args, _partitions_to_reset(cluster, group, args))
        if args.execute and plan:
            request = [ConsumerGroupTopicPartitions(group, [TopicPartition(t, p, o) for (t, p), o in plan.items()])]
            future = cluster.admin.alter_consumer_group_offsets(request, request_timeout=cluster.timeout_s)[group]
            result = _wait(future, f"resetting offsets of group {group}", cluster.timeout_s)
            errors = [f"{tp.topic}-{tp.partition}: {tp.error}" for tp in result.topic_partitions or [] if tp.error]
            if errors:
                raise CliError(f"resetting offsets of group {group}: {'; '.join(errors)}")
        plans[group] = plan
    if args.export:
        single = len(args.group) == 1  # Kafka's isSingleGroupQuery: one --group given
        print("".join(f"{t},{p},{o}\n" if single else f"{g},{t},{p},{o}\n"
                      for g, plan in plans.items() for (t, p), o in plan.items()))
    elif plans:
        gw = max([15, *(len(g) for g in plans)])
        tw = max([15, *(len(t) for plan in plans.values() for t, _ in plan)])
        widths = [gw, tw, 10]
        lines = ["", _line(widths, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"])]
        lines += [_line(widths, [g, t, p, o]) for g, plan in plans.items() for (t, p), o in plan.items()]
        print("\n".join(lines))
    for message in refused:
        print(f"Error: {message}", file=sys.stderr)
    return 1 if refused else 0


# -- delete --------------------------------------------------------------------------------------


def _quoted(groups: Iterable[str]) -> str:
    return ", ".join("'" + g + "'" for g in groups)


def _delete(cluster: _Cluster, args: argparse.Namespace) -> int:
    groups = _groups(cluster, args)
    if not groups:
        print("Deletion of requested consumer groups () was successful.")
        return 0
    futures = cluster.admin.delete_consumer_groups(groups, request_timeout=cluster.timeout_s)
    ok: list[str] = []
    failed: dict[str, str] = {}
    for group in groups:
        try:
            futures[group].result(timeout=cluster.timeout_s)
            ok.append(group)
        except KafkaException as exc:
            failed[group] = kafka_error_text(exc)
        except TimeoutError:
            failed[group] = f"no answer within {round(cluster.timeout_s * 1000)} ms"
    if not failed:
        print(f"Deletion of requested consumer groups ({_quoted(ok)}) was successful.")
        return 0
    print("Error: Deletion of some consumer groups failed:", file=sys.stderr)
    for group, error in failed.items():
        print(f"* Group '{group}' could not be deleted due to: {error}", file=sys.stderr)
    if ok:
        print(f"\nThese consumer groups were deleted successfully: {_quoted(ok)}")
    return 1


# -- delete-offsets ------------------------------------------------------------------------------

# Kafka's Errors messages for the answers OffsetDelete gives
_OFFSET_DELETE_MESSAGES = {
    3: "UNKNOWN_TOPIC_OR_PARTITION: This server does not host this topic-partition.",
    29: "TOPIC_AUTHORIZATION_FAILED: Topic authorization failed.",
    30: "GROUP_AUTHORIZATION_FAILED: Group authorization failed.",
    24: "INVALID_GROUP_ID: The configured groupId is invalid.",
    68: "NON_EMPTY_GROUP: The group is not empty.",
    69: "GROUP_ID_NOT_FOUND: The group id does not exist.",
    86: "GROUP_SUBSCRIBED_TO_TOPIC: The consumer group is actively subscribed to the topic.",
}
_RETRY_COORDINATOR = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def _error_text(code: int) -> str:
    from seaway.protocol.errors import error_for_code

    return _OFFSET_DELETE_MESSAGES.get(code) or error_for_code(code).name


async def _offset_delete(args: argparse.Namespace, group: str, partitions: list[tuple[str, int]]
                         ) -> tuple[int, dict[tuple[str, int], int]]:
    """OffsetDelete at the group's coordinator: (top-level error code, error code per partition)."""
    from seaway.cli.topics import _command_config
    from seaway.protocol.client import KafkaConnection, KafkaWireError
    from seaway.protocol.client_security import protocol_security
    from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
    from seaway.protocol.messages.find_coordinator_response import FindCoordinatorResponse
    from seaway.protocol.messages.offset_delete_request import (
        OffsetDeleteRequest,
        OffsetDeleteRequestPartition,
        OffsetDeleteRequestTopic,
    )
    from seaway.protocol.messages.offset_delete_response import OffsetDeleteResponse
    from seaway.security.kafka_client import ClientConfigError

    try:
        security = protocol_security(_command_config(args))
    except (ClientConfigError, ValueError) as exc:
        raise CliError(f"{args.command_config}: {exc}") from None
    timeout = args.timeout_ms / 1000
    deadline = time.monotonic() + timeout
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    request = OffsetDeleteRequest(group_id=group, topics=[
        OffsetDeleteRequestTopic(name=t, partitions=[OffsetDeleteRequestPartition(partition_index=p) for p in ps])
        for t, ps in by_topic.items()])
    try:
        while True:
            bootstrap = await KafkaConnection.open_any(args.bootstrap_server, "seaway-groups", timeout, security)
            try:
                found, _ = await bootstrap.call(FindCoordinatorRequest(key=group, key_type=0), FindCoordinatorResponse,
                                                cap=3, timeout=timeout)
            finally:
                await bootstrap.close()
            code = found.error_code
            if code == 0:
                conn = await KafkaConnection.open(found.host, found.port, "seaway-groups", timeout, security)
                try:
                    answer, _ = await conn.call(request, OffsetDeleteResponse, timeout=timeout)
                finally:
                    await conn.close()
                code = answer.error_code
            if code in _RETRY_COORDINATOR and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                continue
            if code != 0 or found.error_code != 0:
                return code, {}
            return 0, {(t.name, p.partition_index): p.error_code for t in answer.topics for p in t.partitions}
    except (KafkaWireError, TimeoutError) as exc:
        raise CliError(f"deleting offsets of group {group}: {exc or 'no answer from the cluster'}") from None


def _delete_offsets(cluster: _Cluster, args: argparse.Namespace) -> int:
    """Kafka's ``deleteOffsets``: a first line on the whole request, then TOPIC, PARTITION, STATUS per partition."""
    if len(args.group) != 1:
        raise CliError("Option [delete-offsets] takes exactly one --group")
    if not args.topic:
        raise CliError("Option [delete-offsets] takes at least one --topic")
    group = args.group[0]
    named, whole = _topic_args(args.topic)
    metadata = cluster.admin.list_topics(timeout=cluster.timeout_s)
    partitions = list(dict.fromkeys(named))
    unknown: list[str] = []
    for topic in whole:
        info = metadata.topics.get(topic)
        if info is None or info.error is not None:
            unknown.append(topic)  # Kafka: "Not Provided" with UNKNOWN_TOPIC_OR_PARTITION
        else:
            partitions += [(topic, p) for p in sorted(info.partitions)]
    top, errors = asyncio.run(_offset_delete(args, group, partitions)) if partitions else (0, {})
    results = {key: top if top else errors.get(key, 0) for key in partitions}
    results.update({(topic, -1): 3 for topic in unknown})
    failed = [code for code in results.values() if code]
    topics = ", ".join(args.topic)
    if top in (0, 3, 29, 86) and not failed:
        print(f"Request succeed for deleting offsets with topic {topics} group {group}")
    elif top in (0, 3, 29, 86):
        print("Error: Encounter some partition level error, see the follow-up details:", file=sys.stderr)
    elif top == 68:
        print(f"Error: Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.",
              file=sys.stderr)
    elif top == 69:
        print(f"Error: '{group}' does not exist.", file=sys.stderr)
    elif top == 30:
        print(f"Error: Access to '{group}' is not authorized.", file=sys.stderr)
    else:
        print(f"Error: Encounter some unknown error: {_error_text(top)}", file=sys.stderr)
    lines = ["", _line([30, 15, 15], ["TOPIC", "PARTITION", "STATUS"])]
    for (topic, partition), code in sorted(results.items(), key=lambda item: item[0][0] + str(item[0][1])):
        lines.append(_line([30, 15, 15], [topic, partition if partition >= 0 else "Not Provided",
                                          f"Error: {_error_text(code)}" if code else "Successful"]))
    print("\n".join(lines))
    return 1 if failed else 0


_COMMANDS: dict[str, Callable[[_Cluster, argparse.Namespace], int]] = {
    "list": _list, "describe": _describe, "reset-offsets": _reset, "delete": _delete,
    "delete-offsets": _delete_offsets,
}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        given = _normalise(list(sys.argv[1:] if argv is None else argv))
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    args = _parser().parse_args(given)
    try:
        admin, _ = open_client(AdminClient, client_config(args), args.timeout_ms)
        cluster = _Cluster(admin, args.timeout_ms / 1000)
        return _COMMANDS[args.action](cluster, args)
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except (KafkaException, ValueError, TypeError) as exc:
        print(f"Error: {kafka_error_text(exc)}", file=sys.stderr)
        return 1
