"""schemathesis over the registry's published OpenAPI, against a real registry process on a real broker.

The registry process (``seaway registry``) keeps its state in the ``_schemas`` topic of a
broker subprocess, as in production; schemathesis (its CLI, pinned in the dev extras) loads
``/openapi.json`` from it and runs its phases (examples, coverage, fuzzing, stateful) within
a fixed time budget. The checks: no 5xx, every status code, content type, header and body
documented, ``405`` with an ``Allow`` header listing exactly the documented methods, and
schema-violating requests refused. Positive-data acceptance is left out on purpose: a body
that matches the document (any string as ``schema``) is rarely a valid Avro schema, and the
registry must answer 422 to it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.schema_registry.registry_support import RegistryProcess
from tests.support.broker import BrokerProcess

CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "unsupported_method",
    "allow_header_conformance",
    "missing_required_header",
    "use_after_free",
])
BUDGET_S = 40


@pytest.mark.timeout(90)
def test_schemathesis_finds_no_5xx_and_no_undocumented_answer(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "broker") as broker, RegistryProcess(broker.bootstrap) as registry:
        spec = httpx.get(f"{registry.url}/openapi.json", timeout=10)
        assert spec.status_code == 200 and spec.json()["openapi"].startswith("3.")
        run = subprocess.run(
            [
                sys.executable, "-m", "schemathesis.cli", "run", f"{registry.url}/openapi.json",
                "--checks", CHECKS,
                "--max-time", str(BUDGET_S),
                "--max-examples", "25",
                # One worker: schemathesis parses code with ``ast`` in its workers, and CPython
                # 3.11.7's AST recursion guard is not thread-safe ("AST constructor recursion
                # depth mismatch", a client-side runtime error, fixed in CPython 3.11.9).
                "--workers", "1",
                "--seed", "20251125",
                "--request-timeout", "10",
                "--suppress-health-check", "all",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=BUDGET_S + 30,
            cwd=tmp_path,  # schemathesis writes its report directory here
        )
        output = run.stdout + run.stderr
        assert run.returncode == 0, output[-6000:]
        assert "Tested: 33" in output, output[-3000:]
        print("\n".join(line for line in output.splitlines() if "generated" in line or "Tested" in line))
        # The registry survived it all: still serving, and its log holds no traceback.
        assert httpx.get(f"{registry.url}/subjects", timeout=10).status_code == 200
        assert "Traceback" not in "".join(registry.output), "".join(registry.output)[-3000:]
