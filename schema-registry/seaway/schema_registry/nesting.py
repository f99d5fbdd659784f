"""How deeply a JSON text nests, measured *without* parsing it.

Every parser the registry feeds is recursive: Python's ``json`` module, avro's
``make_avsc_object``, fastavro, and our own canonical emitter, default validator and
compatibility walk. A schema nested a few hundred levels deep used to end in
``RecursionError`` (an HTML-less 500 and a reset keep-alive connection), and worse, avro
wraps each level's failure with the text of the level below, so an error message could grow
to hundreds of megabytes. So every JSON text from the network (request bodies, schema
texts, references) is measured here first, iteratively, and refused with 42201 when it
nests deeper than :data:`MAX_JSON_DEPTH`.

The count works on bytes at C speed: strings are cut out with one regular expression (a
bracket inside a string does not nest), the remaining ``[``/``{`` and ``]``/``}`` become
+1/-1, and a running sum gives the depth, chunk by chunk so a deep text stops early. A text
with fewer opening brackets than the limit cannot be too deep and is not scanned at all (the
common case, a few microseconds). Invalid JSON is measured as if valid; its parser reports it.
"""

from __future__ import annotations

import re
from array import array
from itertools import accumulate

__all__ = ["MAX_JSON_DEPTH", "json_depth_exceeds"]

#: Nesting levels a JSON text may have. A record nested in a record costs three levels
#: (object, ``fields`` array, field object), so 200 leaves room for about 65 nested records,
#: far beyond real schemas, while the deepest walk stays well inside Python's default
#: recursion limit of 1,000 frames (avro uses two to three frames per level).
MAX_JSON_DEPTH = 200

# A JSON string, possessive so a long unterminated one cannot make the engine backtrack.
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_BRACKETS = b"[]{}"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKETS)
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # as signed bytes: +1, +1, -1, -1
_CHUNK = 1 << 16


def json_depth_exceeds(text: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``text`` nests arrays/objects deeper than ``limit`` levels."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    steps = _STRING.sub(b"", raw).translate(_STEPS, _NOT_BRACKETS)
    depth = 0
    for start in range(0, len(steps), _CHUNK):
        chunk = array("b", steps[start : start + _CHUNK])
        if max(accumulate(chunk, initial=depth)) > limit:
            return True
        depth += sum(chunk)
    return False
