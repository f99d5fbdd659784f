#!/usr/bin/env python3
"""atheris harness: a produce request's records field -> batch headers, validation, records.

    python tests/fuzz/fuzz_batch.py -max_total_time=60 /tmp/new-corpus tests/fuzz/corpus/batch

See :mod:`tests.fuzz.targets` for the contract and docs/broker.md "Fuzzing and crash
testing" for how CI and the soak script run it.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.fuzz._atheris_main import run

if __name__ == "__main__":
    run("batch_target", "BATCH_ERRORS")
