"""Keep the working directory off ``sys.path`` in every Seaway process.

``python -m seaway...`` puts the directory it was started in first on ``sys.path`` (and an
empty ``PYTHONPATH`` element means the same). A worker writes files where its connectors
say (FileStreamSink), so a module dropped into that directory would be importable by name:
half of a remote code execution. Each entry point calls :func:`drop_working_directory`
first; it also sets ``PYTHONSAFEPATH=1`` (Python 3.11+) so every process it spawns
(``seaway up`` starts the broker, registry and worker as ``python -m ...``) never adds the
directory in the first place.
"""

from __future__ import annotations

import os
import sys

__all__ = ["drop_working_directory"]


def drop_working_directory() -> list[str]:
    """Remove ``""`` and the working directory from ``sys.path`` (and from ``PYTHONPATH`` for
    children); the ``sys.path`` entries removed.

    Only entries that *are* the working directory go; its subdirectories and every other path
    (other ``PYTHONPATH`` entries, site-packages, editable installs) stay.
    """
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the directory was deleted: "" would still resolve against it
        cwd = None

    def is_cwd(entry: str) -> bool:
        return entry in ("", ".") or (cwd is not None and os.path.realpath(entry) == cwd)

    removed = [p for p in sys.path if is_cwd(p)]
    if removed:
        sys.path[:] = [p for p in sys.path if p not in removed]
    # PYTHONSAFEPATH covers only the implicit entry: an empty PYTHONPATH element
    # ("PYTHONPATH=:$PYTHONPATH" with nothing before) would still hand children the directory
    inherited = os.environ.get("PYTHONPATH")
    if inherited is not None:
        kept = [p for p in inherited.split(os.pathsep) if not is_cwd(p)]
        if kept:
            os.environ["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del os.environ["PYTHONPATH"]
    return removed
