"""Types of the C record walk (``_record_walk.c``); see ``record_check.py``."""

from typing_extensions import Buffer

def walk(
    buffer: Buffer, start: int, end: int, count: int, keyless: bool, release_gil: bool = False, /
) -> tuple[int, int, list[int]]: ...
