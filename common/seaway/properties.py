"""Java ``.properties`` files, read exactly as ``java.util.Properties.load`` reads them.

Kafka, Kafka Connect and Confluent read every config file with ``Properties.load``, so a
file a user brings from them must mean the same thing here, to the character. The rules,
in the order Java applies them:

Natural lines and logical lines
    Lines end at ``\\n``, ``\\r`` or ``\\r\\n``. A line whose content ends in an odd number
    of backslashes continues on the next line: the backslash and the line break go, and
    so does the next line's leading white space (space, tab, form feed). A blank line
    ends a continuation. Leading white space of every line is skipped; lines that are
    then empty are ignored.
Comments
    A line whose first non-blank character is ``#`` or ``!`` while no logical line is
    under way is a comment, whole (a trailing backslash does not continue a comment). A
    continuation line that starts with ``#`` is not a comment: it is part of the line it
    continues.
Key and value
    The key runs to the first unescaped ``=``, ``:`` or white space. After it, white
    space is skipped, then at most one ``=`` or ``:``, then white space again; the rest
    of the line is the value, trailing white space included (Java keeps it; Kafka's
    ConfigDef trims numbers, booleans, lists and classes when it parses them).
Escapes (in keys and values)
    ``\\t`` ``\\n`` ``\\r`` ``\\f``, ``\\uXXXX`` (exactly four hex digits, else
    :class:`PropertiesError` as Java's "Malformed \\\\uxxxx encoding."), and a backslash
    before any other character stands for that character (``\\:`` ``\\=`` ``\\ `` ``\\\\``).
Duplicates
    A later key replaces an earlier one.

One deviation, on purpose: Java's ``load(InputStream)`` decodes bytes as ISO-8859-1;
:func:`load_properties_file` decodes UTF-8 (``Properties.load(Reader)`` with a UTF-8
reader), which reads every ASCII file identically and non-ASCII text as users write it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from seaway.errors import SeawayError

__all__ = ["PropertiesError", "format_properties", "load_properties", "load_properties_file"]

_BLANK = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_ESCAPED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}


class PropertiesError(SeawayError, ValueError):
    """A ``.properties`` text Java would refuse to load (a malformed ``\\uXXXX``)."""


def load_properties(text: str) -> dict[str, str]:
    """The keys and values of a ``.properties`` text (see the module docstring for the rules)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        props[key] = value
    return props


def load_properties_file(path: str | Path) -> dict[str, str]:
    """:func:`load_properties` of a UTF-8 file. Raises OSError when it cannot be read."""
    return load_properties(Path(path).read_text(encoding="utf-8"))


def format_properties(props: Mapping[str, str], header: Sequence[str] = ()) -> str:
    """A ``.properties`` text that :func:`load_properties` (and Java) reads back as ``props``.

    Java's ``Properties.store`` escaping: backslash, ``=``, ``:``, ``#``, ``!``, tab, line
    breaks and form feed everywhere, spaces in keys and a value's leading space; other
    control characters as ``\\uXXXX``. ``header`` lines are written first as ``#`` comments.
    """
    lines = [f"# {line}" for line in header]
    lines += [f"{_escape(key, key=True)}={_escape(value, key=False)}" for key, value in props.items()]
    return "\n".join([*lines, ""])


def _escape(text: str, *, key: bool) -> str:
    out: list[str] = []
    for i, char in enumerate(text):
        if char == " ":
            out.append("\\ " if key or i == 0 else " ")
        elif char in "\\=:#!":
            out.append("\\" + char)
        elif char in _ESCAPED:
            out.append(_ESCAPED[char])
        elif char < " " or char == "\x7f":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def _logical_lines(text: str) -> list[str]:
    """Java's ``LineReader.readLine``, character by character: the logical lines of ``text``.

    Lines keep their escapes (a continuation's backslash excepted); :func:`_split`
    resolves those. A faithful state machine rather than a split on line breaks, because
    Java's corner cases live in its order of checks: a comment is recognised only while the
    logical line is still empty (so ``\\`` then a line starting ``#`` is a comment, while
    ``k=a\\`` then ``#b`` is ``k=a#b``); a continuation backslash right before the end of
    the text (or before a final ``\n``, but not a final ``\r\n``) still yields its line,
    even an empty one.
    """
    lines: list[str] = []
    buf: list[str] = []
    skip_white, appended_begin, backslash, skip_lf, comment = True, False, False, False, False
    end = len(text)
    for pos, char in enumerate(text):
        if skip_lf:
            skip_lf = False
            if char == "\n":
                continue
        if comment:
            if char in "\r\n":
                comment, skip_white = False, True
                skip_lf = char == "\r"  # Java's comment loop swallows the \n of a \r\n too
            continue
        if skip_white:
            if char in _BLANK or (not appended_begin and char in "\r\n"):
                continue
            skip_white = appended_begin = False
        if not buf and char in "#!":
            comment = True
            continue
        if char not in "\r\n":
            buf.append(char)
            backslash = not backslash if char == "\\" else False
            continue
        if not buf:
            skip_white = True
            continue
        if pos + 1 >= end:  # the text ends with this line break
            lines.append("".join(buf[:-1] if backslash else buf))
            return lines
        if backslash:
            buf.pop()
            skip_white = appended_begin = True
            backslash = False
            skip_lf = char == "\r"
        else:  # a new readLine call starts
            lines.append("".join(buf))
            buf = []
            skip_white = True
    if buf:
        lines.append("".join(buf[:-1] if backslash else buf))
    return lines


def _split(line: str) -> tuple[str, str]:
    """Java's ``Properties.load0`` on one logical line: (key, value), both unescaped."""
    end = len(line)
    key_end, value_start, has_separator, escaped = end, end, False, False
    for i, char in enumerate(line):
        if not escaped and char in "=:":
            key_end, value_start, has_separator = i, i + 1, True
            break
        if not escaped and char in _BLANK:
            key_end, value_start = i, i + 1
            break
        escaped = char == "\\" and not escaped
    while value_start < end:
        char = line[value_start]
        if char not in _BLANK:
            if has_separator or char not in "=:":
                break
            has_separator = True
        value_start += 1
    return _unescape(line[:key_end]), _unescape(line[value_start:])


def _unescape(raw: str) -> str:
    """Java's ``Properties.loadConvert``."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i, end = 0, len(raw)
    surrogates = False
    while i < end:
        char = raw[i]
        i += 1
        if char != "\\" or i >= end:
            out.append(char)
            continue
        char = raw[i]
        i += 1
        if char == "u":
            digits = raw[i : i + 4]
            if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesError(f"Malformed \\uxxxx encoding: \\u{digits}")
            out.append(chr(int(digits, 16)))
            i += 4
            surrogates = True
        else:
            out.append(_ESCAPES.get(char, char))
    text = "".join(out)
    if surrogates:  # Java strings are UTF-16: an escaped surrogate pair is one character
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text
