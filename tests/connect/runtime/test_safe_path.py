"""The working directory is never on a Seaway process's sys.path, nor on its children's (issue 14.6)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """\
import subprocess, sys
from seaway.connect.runtime.safe_path import drop_working_directory
drop_working_directory()
try:
    import planted
    print("parent imported planted")
except ImportError:
    print("parent safe")
# what `seaway up` does: start a part as `python -m <module>` with this environment
child = subprocess.run([sys.executable, "-m", "planted"], capture_output=True, text=True)
print("child ran planted" if "PLANTED RAN" in child.stdout else "child safe")
"""


def test_the_working_directory_is_dropped_and_children_never_get_it(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text("print('PLANTED RAN')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONPATH"] = os.pathsep + env.get("PYTHONPATH", "")  # a leading empty entry means "."
    run = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.stdout.split("\n")[:2] == ["parent safe", "child safe"], run.stdout + run.stderr
    # without the call, both would have run it: the probe is meaningful
    unsafe = subprocess.run([sys.executable, "-c", "import planted"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert "PLANTED RAN" in unsafe.stdout


def test_the_seaway_command_started_with_python_m_drops_it(tmp_path: Path) -> None:
    """``python -m seaway.cli.main`` (as ``seaway up`` starts its parts) puts the directory first: main() drops it."""
    (tmp_path / "seaway_probe_cmd.py").write_text("raise SystemExit('imported from the working directory')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    code = ("import runpy, sys; sys.argv = ['seaway', '--help']\n"
            "try:\n    runpy.run_module('seaway.cli.main', run_name='__main__')\nexcept SystemExit: pass\n"
            "import os; print(os.getcwd() in sys.path, '' in sys.path, os.environ.get('PYTHONSAFEPATH'))")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.stdout.strip().splitlines()[-1] == "False False 1", run.stdout + run.stderr
