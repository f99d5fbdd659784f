#!/usr/bin/env python3
"""Soak the broker's decoders under atheris for longer than CI's minute.

    python scripts/fuzz_soak.py                       # both targets, 30 minutes each
    python scripts/fuzz_soak.py --minutes 240 --workers 2 --targets batch
    python scripts/fuzz_soak.py --work /var/tmp/seaway-fuzz   # keep the corpus between runs

Each target (``request``: frames as they arrive on a connection; ``batch``: a produce
request's records field; see tests/fuzz/targets.py) runs libFuzzer's fork mode with
``--workers`` processes, starting from the committed seeds (tests/fuzz/corpus/<target>)
plus whatever earlier soaks found (``<work>/<target>/corpus``, which grows run over run),
under the same limits as CI: an RSS limit, an address-space cap and a per-input timeout.
Crashing inputs land in ``<work>/<target>/crashes``; each is printed with the command that
replays it. Exit status 1 when any target crashed.

A crash fixed for good becomes a regression input: copy it to
``tests/fuzz/corpus/<target>/regression-<what-it-broke>.bin`` so the replay test in
tests/fuzz/test_fuzz.py fails if the bug returns.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FUZZ = REPO / "tests" / "fuzz"
TARGETS = ("request", "batch")


def soak(target: str, minutes: float, workers: int, work: Path, rss_limit_mb: int, timeout_s: int) -> bool:
    """Fuzz one target; True when it ran clean."""
    corpus = work / target / "corpus"
    crashes = work / target / "crashes"
    corpus.mkdir(parents=True, exist_ok=True)
    crashes.mkdir(parents=True, exist_ok=True)
    before = set(crashes.iterdir())
    harness = FUZZ / f"fuzz_{target}.py"
    cmd = [
        sys.executable, str(harness), f"-fork={workers}", f"-max_total_time={int(minutes * 60)}",
        f"-rss_limit_mb={rss_limit_mb}", f"-timeout={timeout_s}", f"-artifact_prefix={crashes}/",
        str(corpus), str(FUZZ / "corpus" / target),
    ]
    print(f"== {target}: {minutes:g} min, {workers} worker(s), corpus {corpus}", flush=True)
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    status = [line for line in proc.stderr.splitlines() if re.match(r"#\d+: cov:", line)]
    new = sorted(set(crashes.iterdir()) - before)
    print(f"   {elapsed / 60:.1f} min, exit {proc.returncode}; last status: {status[-1] if status else 'none'}")
    print(f"   corpus now {sum(1 for _ in corpus.iterdir())} inputs")
    if proc.returncode == 0 and not new:
        return True
    tail = [line for line in proc.stderr.splitlines() if not line.startswith(("INFO: Instrumenting", '"'))]
    print("\n".join(tail[-40:]))
    for path in new:
        print(f"   crash: {path}\n   replay: {sys.executable} {harness} {path}")
    return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated: request, batch")
    ap.add_argument("--minutes", type=float, default=30.0, help="per target (default 30)")
    ap.add_argument("--workers", type=int, default=1, help="fuzzing processes per target (default 1)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/seaway-fuzz"), help="corpus and crash directory")
    ap.add_argument("--rss-limit-mb", type=int, default=2048)
    ap.add_argument("--timeout", type=int, default=10, help="seconds one input may take")
    args = ap.parse_args(argv)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    unknown = set(targets) - set(TARGETS)
    if unknown:
        ap.error(f"unknown targets {sorted(unknown)}; choose from {list(TARGETS)}")
    clean = [soak(t, args.minutes, args.workers, args.work, args.rss_limit_mb, args.timeout) for t in targets]
    return 0 if all(clean) else 1


if __name__ == "__main__":
    raise SystemExit(main())
