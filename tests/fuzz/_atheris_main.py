"""The common body of the atheris harnesses: instrument, bound memory, run libFuzzer.

A harness is ``run(target_name, allowed_errors)`` from a script: the target module
(:mod:`tests.fuzz.targets`) and the protocol code it calls are imported under atheris'
coverage instrumentation; the address space is capped (``SEAWAY_FUZZ_AS_MB``, default
3072), so an input that makes the decoder allocate past the cap raises MemoryError,
which, not being a documented decode error, is reported as a crash with the input
saved. libFuzzer's own flags (``-max_total_time``, ``-rss_limit_mb``, ``-timeout``,
corpus directories, ``-artifact_prefix``) pass through ``sys.argv``.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
from collections.abc import Callable

import atheris


def run(target_name: str, errors_name: str) -> None:
    # Coverage feedback from the decoders only: they are imported (and so instrumented)
    # first; the broker modules the targets also import (handler registry, log config)
    # are not, so their code does not dilute the coverage map.
    with atheris.instrument_imports(include=["seaway.protocol"]):
        import seaway.protocol.messages
        import seaway.protocol.records  # noqa: F401
    produce_checks = ["seaway.broker.log.validation", "seaway.broker.log.record_check"]
    with atheris.instrument_imports(include=[*produce_checks, "tests.fuzz.targets"]):
        from tests.fuzz import targets
    target: Callable[[bytes], int] = getattr(targets, target_name)
    allowed: tuple[type[Exception], ...] = getattr(targets, errors_name)

    def one_input(data: bytes) -> None:
        with contextlib.suppress(*allowed):
            target(data)

    cap = int(os.environ.get("SEAWAY_FUZZ_AS_MB", "3072")) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
