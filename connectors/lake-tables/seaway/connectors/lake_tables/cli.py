"""``seaway lake compact|expire``: table upkeep for what the Iceberg and Delta sinks land.

Point it at the connector's own config (a ``.properties`` or JSON file, as given to ``seaway connectors
create``): the catalog (``iceberg.catalog.*``) or the tables' location (``delta.tables.location``) and
the tables come from there; ``--table`` picks some.

    seaway lake compact --config orders-iceberg.properties [--table db.orders] [--target-file-size BYTES]
    seaway lake expire  --config orders-iceberg.properties --older-than-ms 86400000 --retain-last 10 --orphans
    seaway lake compact --config orders-delta.properties
    seaway lake expire  --config orders-delta.properties --retention-hours 168

Run it from cron (or a Kubernetes CronJob) next to the running sink; each run prints one line per table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from seaway.properties import load_properties_file

__all__ = ["main"]

_ICEBERG = ("IcebergSinkConnector", "IcebergSink", "org.apache.iceberg.connect.IcebergSinkConnector")
_DELTA = ("DeltaSinkConnector", "DeltaSink")


def _load(path: str) -> dict[str, str]:
    file = Path(path)
    if not file.is_file():
        raise SystemExit(f"seaway lake: no such file: {path}")
    text = file.read_text()
    if text.lstrip().startswith("{"):
        body = json.loads(text)
        body = body.get("config", body)
        return {str(k): str(v) for k, v in body.items()}
    return load_properties_file(file)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seaway lake", description="Compact and expire Iceberg and Delta tables "
                                     "written by Seaway's table sinks.")
    sub = parser.add_subparsers(dest="action", required=True)
    for action, help_ in (("compact", "rewrite small data files into target-sized ones"),
                          ("expire", "expire old snapshots / vacuum, delete orphan files")):
        p = sub.add_parser(action, help=help_)
        p.add_argument("--config", required=True, help="the connector's config (.properties or JSON)")
        p.add_argument("--table", action="append", default=[],
                       help="a table (Iceberg: namespace.table; Delta: the topic); default: the connector's")
        if action == "compact":
            p.add_argument("--target-file-size", type=int, default=None,
                           help="bytes (default: the table's write.target-file-size-bytes / delta-rs's)")
        else:
            p.add_argument("--older-than-ms", type=int, default=5 * 86_400_000,
                           help="Iceberg: expire snapshots older than this (default 5 days, Iceberg's "
                                "history.expire.max-snapshot-age-ms)")
            p.add_argument("--retain-last", type=int, default=1, help="Iceberg: snapshots always kept (default 1)")
            p.add_argument("--orphans", action="store_true",
                           help="Iceberg: also delete files no snapshot references")
            p.add_argument("--orphan-age-ms", type=int, default=3 * 86_400_000,
                           help="Iceberg: only orphans older than this (default 3 days)")
            p.add_argument("--retention-hours", type=int, default=168,
                           help="Delta: vacuum files unreferenced for longer than this (default 168, Delta's 7 days)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    props = _load(args.config)
    kind = props.get("connector.class", "")
    if kind in _ICEBERG:
        return _iceberg(args, props)
    if kind in _DELTA:
        return _delta(args, props)
    print(f"seaway lake: {args.config}: connector.class={kind!r} is neither the Iceberg nor the Delta sink",
          file=sys.stderr)
    return 2


def _iceberg(args: argparse.Namespace, props: dict[str, str]) -> int:
    from seaway.connectors.lake_tables.iceberg_config import IcebergSinkConfig
    from seaway.connectors.lake_tables.iceberg_tables import IcebergTables
    from seaway.connectors.lake_tables.maintenance import iceberg_compact, iceberg_expire

    config = IcebergSinkConfig.from_props(props)
    tables = IcebergTables(config)
    names = args.table or tables.connector_tables()
    for name in names:
        table = tables.load(name)
        if table is None:
            print(f"{name}: no such table", file=sys.stderr)
            return 1
        if args.action == "compact":
            c = iceberg_compact(table, args.target_file_size)
            print(f"{name}: {c.files_rewritten} of {c.files_before} files rewritten into {c.files_written} "
                  f"({c.rows} rows)")
        else:
            e = iceberg_expire(table, args.older_than_ms, args.retain_last, args.orphans, args.orphan_age_ms)
            print(f"{name}: {e.snapshots_expired} snapshots expired, {e.files_deleted} orphan files deleted")
    return 0


def _delta(args: argparse.Namespace, props: dict[str, str]) -> int:
    from seaway.connectors.lake_tables.delta_config import DeltaSinkConfig
    from seaway.connectors.lake_tables.maintenance import delta_compact, delta_expire

    config = DeltaSinkConfig.from_props(props)
    topics = args.table or [t.strip() for t in props.get("topics", "").split(",") if t.strip()]
    for topic in topics:
        uri = config.table_uri(topic)
        if args.action == "compact":
            c = delta_compact(uri, config.storage_options, args.target_file_size)
            print(f"{uri}: {c.files_rewritten} of {c.files_before} files rewritten into {c.files_written}")
        else:
            e = delta_expire(uri, args.retention_hours, config.storage_options)
            print(f"{uri}: {e.files_deleted} unreferenced files vacuumed, log entries past the retention removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
