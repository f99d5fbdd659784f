"""scripts/up.sh: one progress line per install step without pip's noise, and no install when nothing changed.

The script runs as it is, in a copy of the repository's shape (its pyproject.toml files and two
connectors), with a ``.venv`` whose ``python -m pip`` is a stand-in that prints pip-like noise
and records its arguments, and whose ``seaway`` records how it was started: installing the real
858 MB takes a minute and a network, and what is under test is the script's own logic (the
real install was run by hand; the sizes it prints come from it). Before issue 27.13 the script
was silent for the whole install and installed everything again on every start.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("bash", "sh", "dirname", "sha256sum", "cut", "cat", "sed", "tail", "rm", "mkdir")

FAKE_PYTHON = """#!/bin/bash
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "pip $*" >> "$CALLS"
  echo "Collecting something-noisy"
  echo "  Downloading something_noisy-1.0-py3-none-any.whl (858 MB)"
  case " $* " in *" $FAIL_ON "*) echo "ERROR: No matching distribution found for broken-dep"; exit 1 ;; esac
  echo "Successfully installed something-noisy-1.0"
  exit 0
fi
exec {real} "$@"
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository of up.sh's shape with a stand-in .venv (pip and seaway record their calls)."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "up.sh", repo / "scripts" / "up.sh")
    (repo / "pyproject.toml").write_text('[project]\nname = "seaway"\n')
    (repo / "hatch_build.py").write_text("# build hook\n")
    for name in ("jdbc", "spark-sink"):
        (repo / "connectors" / name).mkdir(parents=True)
        (repo / "connectors" / name / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n')
    (repo / "connectors" / "README.md").write_text("not a connector\n")
    (repo / "connectors" / "zz-notes").mkdir()  # a folder without pyproject.toml, last: skipped
    venv = repo / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(FAKE_PYTHON.replace("{real}", sys.executable))
    (venv / "seaway").write_text('#!/bin/bash\necho "seaway started: $*"\n')
    (venv / "activate").write_text(f'PATH="{venv}:$PATH"\n')
    for script in ("python", "seaway"):
        (venv / script).chmod(0o755)
    tools = tmp_path / "tools"  # what the script needs, and no java
    tools.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (tools / tool).symlink_to(found)
    return repo


def _up(repo: Path, *args: str, **env: str) -> tuple[int, list[str], list[str]]:
    """Run scripts/up.sh; (exit status, its output lines, the pip calls it made)."""
    calls = repo / "pip-calls.txt"
    calls.unlink(missing_ok=True)
    result = subprocess.run(["bash", str(repo / "scripts" / "up.sh"), *args], capture_output=True, text=True,
                            timeout=60, check=False, cwd=repo.parent,
                            env={"PATH": str(repo.parent / "tools"), "HOME": str(repo.parent), "CALLS": str(calls),
                                 "FAIL_ON": env.pop("FAIL_ON", "nothing-fails"), **env})
    made = calls.read_text().splitlines() if calls.exists() else []
    return result.returncode, (result.stdout + result.stderr).splitlines(), made


@pytest.mark.timeout(120)
def test_progress_lines_then_no_install_when_nothing_changed(repo: Path) -> None:
    code, lines, calls = _up(repo, "--broker-port", "19092")
    assert code == 0, lines
    steps = [re.sub(r"done \(\d+s\)$", "done (Ns)", line) for line in lines if line.startswith("seaway: [")]
    assert steps == [
        "seaway: [1/4] pip itself ... done (Ns)",
        "seaway: [2/4] Seaway itself: broker, Connect runtime, schema registry, CLI ... done (Ns)",
        "seaway: [3/4] connectors/jdbc: JDBC source and sink (SQLAlchemy, psycopg, PyMySQL) ... done (Ns)",
        "seaway: [4/4] connectors/spark-sink: Spark sink (PySpark: about 490 MB) ... done (Ns)",
    ], lines
    assert not [line for line in lines if "Collecting" in line or "Successfully" in line]  # pip's noise: logged
    assert "Successfully installed" in (repo / ".venv" / "seaway-install.log").read_text()
    assert [c.split(" install ", 1)[1] for c in calls] == [
        "--disable-pip-version-check --upgrade pip", "--disable-pip-version-check -e .",
        "--disable-pip-version-check -e connectors/jdbc", "--disable-pip-version-check -e connectors/spark-sink"]
    assert "seaway: note: no java on PATH; the Spark sink needs Java 17 at run time " \
           "(e.g. apt-get install openjdk-17-jre-headless)" in lines
    assert lines[-1] == "seaway started: up --data-dir ./data --broker-port 19092"

    # again, nothing changed: no pip at all, straight to `seaway up`
    code, lines, calls = _up(repo)
    assert code == 0, lines
    assert calls == []
    assert "seaway: already installed in .venv, nothing changed since (SEAWAY_REINSTALL=1 installs again)" in lines
    assert lines[-1] == "seaway started: up --data-dir ./data"

    # a connector's dependencies changed: install again; SEAWAY_REINSTALL=1 forces it
    with (repo / "connectors" / "jdbc" / "pyproject.toml").open("a") as f:
        f.write('dependencies = ["sqlalchemy"]\n')
    assert len(_up(repo)[2]) == 4
    assert _up(repo)[2] == []
    assert len(_up(repo, SEAWAY_REINSTALL="1")[2]) == 4


@pytest.mark.timeout(120)
def test_a_failed_step_shows_pips_error_and_installs_again_next_time(repo: Path) -> None:
    code, lines, calls = _up(repo, FAIL_ON="connectors/spark-sink")
    assert code == 1
    assert "seaway: [4/4] connectors/spark-sink: Spark sink (PySpark: about 490 MB) ... FAILED" in lines
    assert "    ERROR: No matching distribution found for broken-dep" in lines  # the log's tail, indented
    assert not any(line.startswith("seaway started") for line in lines)
    assert not (repo / ".venv" / "seaway-install.stamp").exists()
    code, lines, calls = _up(repo)
    assert code == 0 and len(calls) == 4, lines  # not skipped: the last install did not finish


def test_the_readme_gives_exactly_two_set_up_commands() -> None:
    """A newcomer's set-up is scripts/up.sh and scripts/test.sh, nothing else to type first."""
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    commands = [line for block in re.findall(r"```bash\n(.*?)```", setup, re.S) for line in block.splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert commands == ["bash scripts/up.sh", "bash scripts/test.sh"]
