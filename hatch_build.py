"""Hatchling build hook: compile the broker's C helpers, ``seaway.broker.log._record_walk`` and
``seaway.broker._wire``.

The produce path checks every record of every batch against its header (Kafka's
LogValidator does the same); in Python that walk costs as much as the rest of the produce
path for small records, in C a few nanoseconds a record (``broker/seaway/broker/log/
record_check.py``), and the same module checks a whole plain batch (header, CRC32C,
timestamps, records) in one call. ``_wire`` decodes Produce requests into the generated
message classes at a tenth of the generated Python decoder's cost (``broker/seaway/broker/
wire.py``). Each is one dependency-free C file, compiled here with the compiler Python was
built with. Editable installs get the shared objects next to the sources; wheels carry them
(and are then platform wheels). Without a C compiler the build still succeeds, with a
warning, and the broker runs the same code in Python (slower; it logs that).
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

SOURCES = (Path("broker/seaway/broker/log/_record_walk.c"), Path("broker/seaway/broker/_wire.c"))
"""The C sources, each compiled into the extension module of its name, in its own package."""


def compile_extension(root: Path, relative: Path) -> Path | None:
    """Compile ``relative`` next to itself; the shared object's path, or None (with a warning).

    Written to a temporary name and renamed into place: a running broker (or test) that
    has the old shared object mapped keeps its copy intact instead of crashing.
    """
    source = root / relative
    target = source.with_name(source.stem + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
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
        print(f"WARNING: cannot compile {relative} ({detail.strip()}); the broker will run its Python "
              "equivalent, which is much slower", file=sys.stderr)
        return None
    return target


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compile the extensions for wheel and editable builds (see the module docstring)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        for relative in SOURCES:
            target = compile_extension(root, relative)
            if target is None or version == "editable":
                continue  # editable: the dev-mode path (broker/) already holds the shared object
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            package = relative.parent.relative_to("broker").as_posix()  # seaway/broker[/log]
            build_data["force_include"][str(target)] = f"{package}/{target.name}"


if __name__ == "__main__":  # `python hatch_build.py`: rebuild in place after editing a C file
    here = Path(os.path.dirname(os.path.abspath(__file__)))
    built = [compile_extension(here, relative) for relative in SOURCES]  # every one, even after a failure
    sys.exit(0 if all(target is not None for target in built) else 1)
