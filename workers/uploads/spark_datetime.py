"""A CSV cell read as a date or a timestamp the way the Spark ingest's cast reads it (Spark 3.5,
`spark.sql.ansi.enabled=false`, session time zone UTC): the value, None where the cast gives
null (a bad row), or `Undecided` where only Spark can say exactly.

What the cast reads, after trimming the characters up to a space from both ends:
- a date: an optional sign, a year of 4 to 7 digits, then optionally `-` and a month of 1 or 2
  digits, then optionally `-` and a day of 1 or 2 digits, after which a space or a `T` ends it
  (whatever follows is ignored): `2024`, `2024-3`, `2024-03-01`, `+2024-3-1T10:00` are dates;
  a missing month or day is 1;
- a timestamp: the same date with a year of 4 to 6 digits, then optionally a space or `T` and a
  time: an hour of 1 or 2 digits, optionally `:` minutes, then optionally `:` seconds, then
  optionally `.` and a fraction (digits past the sixth dropped); after the seconds or the
  fraction, the rest is a zone (`Z`, `+02:00`, `UTC`, `Europe/Paris`, ...). A `timestamptz`
  is the instant in that zone (UTC without one); a `timestamp` (Spark's TIMESTAMP_NTZ) is the
  date and time as written, the zone checked and dropped.
Then the parts must make a real date and time (month 1-12, the month's days, hour 0-23, ...).

Decided here: texts of ASCII characters whose year Python's `datetime` holds (1-9999) and whose
zone, if any, is `Z` or `±hh:mm`. `Undecided`: a zone of another form, a time with no date for a
`timestamptz` (the cast takes today's; a `timestamp` is null), a year outside 1-9999 that makes
a real date, any other character (Spark's trimming of them is its own). Held to Spark's own
cast by tests/workers/batches/test_spark_casts.py.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

# Spark's casts trim the characters up to a space from a cell's ends (UTF8String.trimAll); 0x7f
# and non-ASCII are left to Spark here
BLANKS = "".join(map(chr, range(33)))
_DATE = re.compile(r"([+-]?)([0-9]{4,7})(?:-([0-9]{1,2})(?:-([0-9]{1,2})(?:[ T].*)?)?)?", re.S)
_TIMESTAMP = re.compile(
    r"([+-]?)([0-9]{4,6})(?:-([0-9]{1,2})(?:-([0-9]{1,2})"
    r"(?:[ T]([0-9]{1,2})(?::([0-9]{1,2})(?::([0-9]{1,2})(?:\.([0-9]*))?([^0-9.].*)?)?)?)?)?)?",
    re.S,
)
_OFFSET = re.compile(r"([+-])([0-9]{2}):([0-9]{2})")
_TIME_ONLY = re.compile(r"T.*|[0-9]{1,2}:.*", re.S)


class Undecided(Exception):
    """Only Spark's own parsing can say what the cast makes of this text."""


def _text(cell: str) -> str:
    text = cell.strip(BLANKS)
    if not text.isascii() or "\x7f" in text:
        raise Undecided("a character Spark's trimming and parsing treat their own way")
    return text


def _days_in(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)  # proleptic Gregorian
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _real_date(
    sign: str, year_text: str, month_text: str | None, day_text: str | None
) -> date | None:
    """The date of the parts; None when they make none; Undecided for a real date whose year
    Python cannot hold."""
    year = -int(year_text) if sign == "-" else int(year_text)
    month = int(month_text) if month_text else 1
    day = int(day_text) if day_text else 1
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(year, month):
        return None
    if not 1 <= year <= 9999:
        raise Undecided(f"the year {year}, outside what Python's dates hold")
    return date(year, month, day)


def spark_date(cell: str) -> date | None:
    """The cell as Spark's cast to DATE reads it (None: null)."""
    text = _text(cell)
    found = _DATE.fullmatch(text)
    return None if found is None else _real_date(*found.groups())


def spark_timestamp(cell: str, with_zone: bool) -> datetime | None:
    """The cell as Spark's cast to TIMESTAMP (`with_zone`, an aware datetime in UTC) or
    TIMESTAMP_NTZ (a naive one) reads it (None: null)."""
    text = _text(cell)
    found = _TIMESTAMP.fullmatch(text)
    if found is None:
        if with_zone and _TIME_ONLY.fullmatch(text):  # TIMESTAMP_NTZ: null
            raise Undecided("a time without a date (Spark's cast takes today's)")
        return None
    sign, year, month, day, hour, minute, second, fraction, zone = found.groups()
    moment = _real_date(sign, year, month, day)
    if moment is None:
        return None
    hours, minutes, seconds = (int(part) if part else 0 for part in (hour, minute, second))
    if hours > 23 or minutes > 59 or seconds > 59:
        return None
    micros = int((fraction or "")[:6].ljust(6, "0"))
    local = datetime(moment.year, moment.month, moment.day, hours, minutes, seconds, micros)
    try:
        offset = _offset(zone or "")
    except ValueError:  # an offset Java's ZoneOffset refuses: the cast gives null
        return None
    if not with_zone:
        return local
    at = local.replace(tzinfo=offset or UTC)
    try:
        return at.astimezone(UTC)
    except OverflowError:  # an instant before year 1 or after 9999 in UTC
        raise Undecided("an instant outside what Python's datetimes hold") from None


def _offset(zone: str) -> timezone | None:
    """The zone written after the seconds: None for none; ValueError for an offset beyond
    ±18:00 or with minutes past 59 (Java's ZoneOffset refuses them); Undecided for a form
    other than `Z` or `±hh:mm` (Java's ZoneId reads many: `UTC`, `+2`, `GMT+1`, regions)."""
    if zone == "":
        return None
    if zone == "Z":
        return UTC
    found = _OFFSET.fullmatch(zone)
    if found is None:
        raise Undecided(f"the zone {zone!r}")
    sign, hours, minutes = found.groups()
    if int(minutes) > 59 or int(hours) * 60 + int(minutes) > 18 * 60:
        raise ValueError(f"the offset {zone!r}")
    delta = timedelta(hours=int(hours), minutes=int(minutes))
    return timezone(-delta if sign == "-" else delta)
