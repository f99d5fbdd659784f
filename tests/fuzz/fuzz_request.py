#!/usr/bin/env python3
"""atheris harness: bytes on a broker connection -> size prefix, header, generated decoder.

    python tests/fuzz/fuzz_request.py -max_total_time=60 /tmp/new-corpus tests/fuzz/corpus/request

See :mod:`tests.fuzz.targets` for the contract and docs/broker.md "Fuzzing and crash
testing" for how CI and the soak script run it.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.fuzz._atheris_main import run

if __name__ == "__main__":
    run("request_target", "REQUEST_ERRORS")
