"""A confluent-kafka group consumer run as its own process by the group tests.

Writes one line per event to its output file, flushed before each synchronous commit, so
whatever the group committed is always in the file (at-least-once):
``ASSIGN p,p`` / ``REVOKE p,p`` / ``LOST p,p`` from the rebalance callbacks, ``R p o``
per record and ``E <error>`` for a failed commit. SIGTERM closes the consumer cleanly
(LeaveGroup, or a heartbeat with epoch -1); SIGKILL is a crash. ``--protocol consumer``
runs the KIP-848 protocol, where the broker owns the session timeout, heartbeat interval
and assignor (the client may not set them). ``--wait-stdin`` starts the process (interpreter,
imports) but joins only when a line arrives on stdin, so a test can time the join itself.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any, TextIO

from confluent_kafka import Consumer, KafkaException, TopicPartition


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--strategy", default="range,roundrobin")
    ap.add_argument("--instance")
    ap.add_argument("--session-ms", type=int, default=6000)
    ap.add_argument("--protocol", default="classic", choices=("classic", "consumer"))
    ap.add_argument("--wait-stdin", action="store_true")
    args = ap.parse_args()
    if args.wait_stdin:
        print("ready", flush=True)
        sys.stdin.readline()
    out: TextIO = open(args.out, "a", buffering=1)  # noqa: SIM115 - lives as long as the process
    conf: dict[str, Any] = {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 100,
    }
    if args.protocol == "consumer":
        conf["group.protocol"] = "consumer"
    else:
        conf.update({"session.timeout.ms": args.session_ms, "heartbeat.interval.ms": 500,
                     "partition.assignment.strategy": args.strategy})
    if args.instance:
        conf["group.instance.id"] = args.instance
    consumer = Consumer(conf)
    running = True

    def stop(*_: object) -> None:
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)

    def event(kind: str, parts: list[TopicPartition]) -> None:
        out.write(f"{kind} {','.join(str(p.partition) for p in parts)}\n")

    consumer.subscribe([args.topic],
                       on_assign=lambda c, ps: event("ASSIGN", ps),
                       on_revoke=lambda c, ps: event("REVOKE", ps),
                       on_lost=lambda c, ps: event("LOST", ps))
    while running:
        msgs = consumer.consume(num_messages=500, timeout=0.2)
        good = [m for m in msgs if m.error() is None]
        if not good:
            continue
        out.write("".join(f"R {m.partition()} {m.offset()}\n" for m in good))
        out.flush()
        # A failed commit (e.g. a rebalance under way) means the next owner re-reads: at-least-once.
        try:
            consumer.commit(asynchronous=False)
        except KafkaException as exc:
            out.write(f"E {exc}\n")
    consumer.close()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
