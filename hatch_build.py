"""Hatchling build hook: compile the broker's one C helper, ``seaway.broker.log._record_walk``.

The produce path checks every record of every batch against its header (Kafka's
LogValidator does the same); in Python that walk costs as much as the rest of the produce
path for small records, in C a few nanoseconds a record (``broker/seaway/broker/log/
record_check.py``). It is one dependency-free C file, compiled here with the compiler
Python was built with. Editable installs get the shared object next to the source; wheels
carry it (and are then platform wheels). Without a C compiler the build still succeeds,
with a warning, and the broker runs the same checks in Python (slower; it logs that).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("broker/seaway/broker/log/_record_walk.c")


def compile_extension(root: Path) -> Path | None:
    """Compile SOURCE next to itself; the shared object's path, or None (with a warning).

    Written to a temporary name and renamed into place: a running broker (or test) that
    has the old shared object mapped keeps its copy intact instead of crashing.
    """
    source = root / SOURCE
    target = source.with_name("_record_walk" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    command = [
        *compiler,
        "-O2",
        "-shared",
        "-fPIC",
        "-I" + sysconfig.get_paths()["include"],
        str(source),
        "-o",
        str(partial),
    ]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
        os.replace(partial, target)
    except (OSError, subprocess.CalledProcessError) as exc:
        partial.unlink(missing_ok=True)
        detail = getattr(exc, "stderr", "") or str(exc)
        print(f"WARNING: cannot compile {SOURCE} ({detail.strip()}); the broker will check records in "
              "Python, which is much slower", file=sys.stderr)
        return None
    return target


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compile the extension for wheel and editable builds (see the module docstring)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        target = compile_extension(root)
        if target is None or version == "editable":
            return  # editable: the dev-mode path (broker/) already holds the shared object
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        build_data["force_include"][str(target)] = "seaway/broker/log/" + target.name


if __name__ == "__main__":  # `python hatch_build.py`: rebuild in place after editing the C file
    sys.exit(0 if compile_extension(Path(os.path.dirname(os.path.abspath(__file__)))) else 1)
