"""The decoders against arbitrary bytes: the committed corpus replayed, then 60 s of atheris each.

The replay runs every seed (frames and batches real clients sent, codec-made frames for
versions no client sent) and every ``regression-*`` input a fuzzer once crashed on
through the targets in this process: a regression input fails here the moment its bug
comes back. The fuzzing runs each harness in a subprocess for ``SEAWAY_FUZZ_SECONDS``
(60 by default) under an RSS limit and a per-input timeout, starting from the corpus and
writing new inputs to a temporary directory, never into the committed corpus; any
uncaught exception, limit or timeout is a crash and fails the test with the input.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fuzz.targets import BATCH_ERRORS, REQUEST_ERRORS, batch_target, request_target

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
REPO = HERE.parent.parent
SECONDS = int(os.environ.get("SEAWAY_FUZZ_SECONDS", "60"))
RSS_LIMIT_MB = 2048
INPUT_TIMEOUT_S = 10

TARGETS: dict[str, tuple[Callable[[bytes], int], tuple[type[Exception], ...]]] = {
    "request": (request_target, REQUEST_ERRORS),
    "batch": (batch_target, BATCH_ERRORS),
}


def _rss_limit_mb() -> int:
    """RSS_LIMIT_MB above what this process has already peaked at.

    libFuzzer checks its limit against getrusage's ru_maxrss, and Linux carries a process's
    peak RSS across fork and execve: a fuzzer started by a pytest process that once held
    2.4 GB (late in the whole suite) reports 2.4 GB before its first input and stops as
    "out of memory". The harness' own address-space cap (RLIMIT_AS, _atheris_main.py) still
    bounds what an input can make the decoders allocate.
    """
    inherited_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return RSS_LIMIT_MB + inherited_mb


def _inputs(kind: str) -> list[Path]:
    return sorted((CORPUS / kind).iterdir())


@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_corpus_replays_within_the_contract(kind: str) -> None:
    target, allowed = TARGETS[kind]
    inputs = _inputs(kind)
    assert len(inputs) >= 20, "the seed corpus is missing"
    decoded = 0
    for path in inputs:
        try:
            decoded += target(path.read_bytes())
        except allowed:
            pass
        except Exception as exc:
            raise AssertionError(f"{path.name}: {type(exc).__name__}: {exc}") from exc
    assert decoded > 0, "no seed decoded: the targets no longer match the corpus"


@pytest.mark.timeout(SECONDS + 120)
@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_fuzz_for_a_minute_without_a_crash(kind: str, tmp_path: Path) -> None:
    new = tmp_path / "new-inputs"
    new.mkdir()
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    cmd = [
        sys.executable, str(HERE / f"fuzz_{kind}.py"),
        f"-max_total_time={SECONDS}", f"-rss_limit_mb={_rss_limit_mb()}", f"-timeout={INPUT_TIMEOUT_S}",
        f"-artifact_prefix={artifacts}/", "-print_final_stats=1",
        str(new), str(CORPUS / kind),
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=SECONDS + 90)
    lines = [line for line in proc.stderr.splitlines() if not line.startswith(("INFO: Instrumenting", '"'))]
    crashes = sorted(p.name for p in artifacts.iterdir())
    assert proc.returncode == 0 and not crashes, (
        f"fuzz_{kind} crashed (exit {proc.returncode}, artifacts {crashes}):\n" + "\n".join(lines[-60:])
    )
    runs = [line for line in lines if line.startswith("stat::number_of_executed_units:")]
    assert runs and int(runs[0].split(":")[-1]) > 1000, "the fuzzer barely ran:\n" + "\n".join(lines[-30:])
