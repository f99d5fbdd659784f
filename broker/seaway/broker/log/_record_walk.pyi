"""Types of the C record walk and batch check (``_record_walk.c``); see ``record_check.py`` and
``validation.py``."""

from collections.abc import Callable

from seaway.protocol.record_batch import BatchHeader
from typing_extensions import Buffer

def walk(
    buffer: Buffer, start: int, end: int, count: int, keyless: bool, release_gil: bool = False, /
) -> tuple[int, int, list[int]]: ...
def check_batch(
    buffer: Buffer, now_ms: int, max_message_bytes: int, after_max_ms: int, before_max_ms: int, check_time: bool,
    keyless_refused: bool, /,
) -> BatchHeader | None: ...
def set_types(header_type: type[BatchHeader], crc32c: Callable[[Buffer], int], /) -> None: ...
