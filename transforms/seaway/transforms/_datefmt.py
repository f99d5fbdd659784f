"""Java ``SimpleDateFormat`` patterns, in UTC, for TimestampConverter and TimestampRouter.

Kafka users write ``format=yyyy-MM-dd'T'HH:mm:ss.SSS`` and ``timestamp.format=yyyyMMdd``;
those patterns are compiled here once (at configure time) into a formatter and a regex
parser working on epoch milliseconds. Always UTC, as both Kafka SMTs set it.

Supported letters (Java's meaning): ``G`` era (AD), ``y``/``Y`` year (``yy`` = two digits),
``M``/``L`` month (``M``/``MM`` number, ``MMM`` short name, ``MMMM`` full name), ``d`` day of
month, ``D`` day of year, ``E`` day name (``EEE`` short, ``EEEE`` full), ``u`` day number
(1 = Monday), ``a`` AM/PM, ``H`` hour 0-23, ``k`` hour 1-24, ``K`` hour 0-11, ``h`` hour 1-12,
``m`` minute, ``s`` second, ``S`` millisecond (as a number, like Java), ``z`` ``Z`` ``X`` zone
(always UTC when formatting; offsets such as ``+0200``, ``+02:00``, ``Z``, ``UTC``, ``GMT``
are honoured when parsing), quoted text ``'...'`` and ``''``. Unsupported letters (``w W F``)
and unknown letters are a configuration error. Parsing is strict (Java's default is
lenient: it would roll ``2024-13-01`` over into 2025); as in Java, text after the matched
pattern is ignored.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

__all__ = ["JavaDateFormat", "PatternError"]

_MS_PER_DAY = 86_400_000
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_MONTH_BY_NAME = {**{m.lower(): i + 1 for i, m in enumerate(_MONTHS)},
                  **{m[:3].lower(): i + 1 for i, m in enumerate(_MONTHS)}}
_NUMERIC = set("yYMLdDuHkKhmsS")
_SUPPORTED = _NUMERIC | set("GEazZX")
_JAVA_LETTERS = set("GyYMLwWDdFEuaHkKhmsSzZX")
# The coarsest time unit a letter depends on, to reuse the last formatted string.
_RESOLUTION = {"S": 1, "s": 1000, "m": 60_000, "H": 3_600_000, "k": 3_600_000, "K": 3_600_000,
               "h": 3_600_000, "a": 3_600_000}


class PatternError(ValueError):
    """The pattern is not a (supported) SimpleDateFormat pattern."""


@dataclass(frozen=True, slots=True)
class _Field:
    letter: str
    count: int


_Token = _Field | str


def _tokenize(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                tokens.append("'")
                i += 2
                continue
            end = i + 1
            text: list[str] = []
            while True:
                if end >= n:
                    raise PatternError(f"Unterminated quote in pattern: {pattern}")
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            tokens.append("".join(text))
            i = end + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < n and pattern[j] == c:
                j += 1
            if c not in _JAVA_LETTERS:
                raise PatternError(f"Illegal pattern character '{c}'")
            if c not in _SUPPORTED:
                raise PatternError(f"Pattern character '{c}' is not supported by Seaway")
            tokens.append(_Field(c, j - i))
            i = j
        else:
            tokens.append(c)
            i += 1
    return tokens


def _pad(number: int, count: int) -> str:
    return str(number).zfill(count)


class JavaDateFormat:
    """A compiled SimpleDateFormat pattern: ``format(ms) -> str`` and ``parse(str) -> ms``, in UTC."""

    __slots__ = ("_last", "_regex", "_resolution", "_tokens", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokenize(pattern)
        fields = [t for t in self._tokens if isinstance(t, _Field)]
        self._resolution = min((_RESOLUTION.get(f.letter, _MS_PER_DAY) for f in fields), default=_MS_PER_DAY)
        self._last: tuple[int, str] | None = None
        self._regex = self._build_regex()

    @property
    def resolution(self) -> int:
        """Milliseconds within which :meth:`format` gives the same text: ``ms // resolution`` equal."""
        return self._resolution

    # -- formatting -----------------------------------------------------------------------------
    def format(self, millis: int) -> str:
        """The timestamp (ms since epoch, UTC) as text; the last result is reused within its resolution."""
        bucket = millis // self._resolution
        last = self._last
        if last is not None and last[0] == bucket:
            return last[1]
        text = self._format(millis)
        self._last = (bucket, text)
        return text

    def _format(self, millis: int) -> str:
        days, rem = divmod(millis, _MS_PER_DAY)
        try:
            date = datetime.date.fromordinal(_EPOCH_ORDINAL + days)
        except (ValueError, OverflowError):
            raise ValueError(f"Timestamp {millis} is out of the supported range") from None
        hour, rem = divmod(rem, 3_600_000)
        minute, rem = divmod(rem, 60_000)
        second, ms = divmod(rem, 1000)
        out: list[str] = []
        for token in self._tokens:
            if isinstance(token, str):
                out.append(token)
                continue
            c, n = token.letter, token.count
            if c in "yY":
                out.append(_pad(date.year % 100, 2) if n == 2 else _pad(date.year, n))
            elif c in "ML":
                out.append(_MONTHS[date.month - 1] if n >= 4 else _MONTHS[date.month - 1][:3] if n == 3
                           else _pad(date.month, n))
            elif c == "d":
                out.append(_pad(date.day, n))
            elif c == "D":
                out.append(_pad(date.timetuple().tm_yday, n))
            elif c == "E":
                name = _DAYS[date.weekday()]
                out.append(name if n >= 4 else name[:3])
            elif c == "u":
                out.append(_pad(date.isoweekday(), n))
            elif c == "a":
                out.append("AM" if hour < 12 else "PM")
            elif c == "H":
                out.append(_pad(hour, n))
            elif c == "k":
                out.append(_pad(hour or 24, n))
            elif c == "K":
                out.append(_pad(hour % 12, n))
            elif c == "h":
                out.append(_pad(hour % 12 or 12, n))
            elif c == "m":
                out.append(_pad(minute, n))
            elif c == "s":
                out.append(_pad(second, n))
            elif c == "S":
                out.append(_pad(ms, n))
            elif c == "G":
                out.append("AD")
            elif c == "z":
                out.append("Coordinated Universal Time" if n >= 4 else "UTC")
            elif c == "Z":
                out.append("+0000")
            else:  # X
                out.append("Z")
        return "".join(out)

    # -- parsing --------------------------------------------------------------------------------
    def _build_regex(self) -> re.Pattern[str]:
        parts: list[str] = []
        tokens = self._tokens
        for i, token in enumerate(tokens):
            if isinstance(token, str):
                parts.append(re.escape(token))
                continue
            c, n = token.letter, token.count
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            abutting = isinstance(following, _Field) and following.letter in _NUMERIC and not (
                following.letter in "ML" and following.count >= 3)
            group = f"(?P<{c}{i}>"
            if c in "ML" and n >= 3:
                parts.append(group + "[A-Za-z]+)")
            elif c in _NUMERIC:
                parts.append(group + (rf"\d{{{n}}})" if abutting else r"\d+)"))
            elif c == "E":
                parts.append(group + "[A-Za-z]+)")
            elif c == "a":
                parts.append(group + "[AaPp][Mm])")
            elif c == "G":
                parts.append(group + "[AaBb][Dd]|BC)")
            else:  # zone
                parts.append(group + r"Z|UTC|GMT(?:[+-]\d{1,2}:?\d{2})?|[+-]\d{2}(?::?\d{2})?)")
        return re.compile("".join(parts))

    def parse(self, text: str) -> int:
        """Milliseconds since the epoch; :class:`ValueError` if ``text`` does not match."""
        match = self._regex.match(text)
        if match is None:
            raise ValueError(f"Unparseable date: \"{text}\"")
        year, month, day, yday = 1970, 1, 1, None
        hour = minute = second = ms = offset = 0
        pm: bool | None = None
        twelve_hour = False
        for i, token in enumerate(self._tokens):
            if isinstance(token, str):
                continue
            raw = match.group(f"{token.letter}{i}")
            c = token.letter
            if c in "yY":
                year = _two_digit_year(int(raw)) if token.count <= 2 and len(raw) == 2 else int(raw)
            elif c in "ML":
                month = int(raw) if raw.isdigit() else _month(raw)
            elif c == "d":
                day = int(raw)
            elif c == "D":
                yday = int(raw)
            elif c == "H":
                hour = int(raw)
            elif c == "k":
                hour = int(raw) % 24
            elif c in "Kh":
                hour, twelve_hour = int(raw) % 12, True
            elif c == "a":
                pm = raw.upper() == "PM"
            elif c == "m":
                minute = int(raw)
            elif c == "s":
                second = int(raw)
            elif c == "S":
                ms = int(raw)
            elif c in "zZX":
                offset = _offset_minutes(raw)
        if pm and (twelve_hour or hour < 12):
            hour += 12
        if not (hour < 24 and minute < 60 and second < 60 and ms < 1000):
            raise ValueError(f"Unparseable date: \"{text}\"")
        date = (datetime.date(year, 1, 1) + datetime.timedelta(days=yday - 1) if yday is not None
                else datetime.date(year, month, day))
        days = date.toordinal() - _EPOCH_ORDINAL
        return (((days * 24 + hour) * 60 + minute - offset) * 60 + second) * 1000 + ms


def _month(name: str) -> int:
    try:
        return _MONTH_BY_NAME[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown month name: {name}") from None


def _two_digit_year(yy: int) -> int:
    """Java's rule: the century that puts the year within 80 years before and 20 after now."""
    now = datetime.datetime.now(datetime.UTC).year
    year = now - now % 100 + yy
    if year > now + 20:
        year -= 100
    elif year <= now - 80:
        year += 100
    return year


def _offset_minutes(zone: str) -> int:
    if zone in ("Z", "UTC", "GMT"):
        return 0
    body = zone[3:] if zone.startswith("GMT") else zone
    sign = -1 if body[0] == "-" else 1
    digits = body[1:].replace(":", "")
    hours, minutes = (int(digits[:-2]), int(digits[-2:])) if len(digits) > 2 else (int(digits), 0)
    return sign * (hours * 60 + minutes)
