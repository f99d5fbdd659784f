"""``python -m seaway.broker``: the same as ``seaway broker``."""

from __future__ import annotations

import sys

from seaway.broker.cli import main

if __name__ == "__main__":
    sys.exit(main())
