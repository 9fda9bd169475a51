"""Dates and times: into `dtype: string` as ISO 8601 text, into `int64` as a count since 1970.

They arrive as NumPy datetime64 values (a Parquet file's timestamp and date columns), as Python
`datetime` / `date` objects (custom builders), or as text that the feature's `format:` reads (a
strptime format such as `%d/%m/%Y`, or `iso8601`). A time with a time zone is taken in UTC; a
time without one is taken as it is. The text written is ISO 8601: `2024-03-01` for a date,
`2024-03-01T12:30:00` for a time, with the fraction of a second only where there is one (to the
source's precision). A count is exact: a time that is not a whole number of `time_unit` is an
error, not rounded.
"""
from __future__ import annotations

import datetime
import functools
import re
from typing import Any, Iterable, Sequence

import numpy as np

from .dtypes import Invalid

ISO_8601 = "iso8601"
UNITS = {"days": "D", "s": "s", "ms": "ms", "us": "us", "ns": "ns"}  # spec name -> NumPy's unit
DEFAULT_UNIT = "s"
_NANOSECONDS = {"D": 86_400 * 10**9, "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_FRACTION_DIGITS = {"ms": 3, "us": 6, "ns": 9}
_TIME_DIRECTIVES = set("HIMSfpXcTRrz")  # strptime directives that read a time of day

# How exports write dates as text other than ISO 8601, in the order tried: a column's format is
# the first that reads all its texts (so 03/04/2024 is taken as March 4, US style, unless some
# text reads only day first). Each also with a time of day (TEXT_TIMES) after it.
TEXT_DATES = ("%b %d %Y", "%b %d, %Y", "%B %d %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%d-%b-%Y", "%d-%b-%y",
              "%m/%d/%Y", "%d/%m/%Y", "%Y/%m/%d", "%d.%m.%Y", "%m-%d-%Y", "%d-%m-%Y", "%m/%d/%y", "%d/%m/%y")
TEXT_TIMES = ("", " %H:%M", " %H:%M:%S", " %I:%M %p", " %I:%M:%S %p")
_ISO_DATE = re.compile(r"\s*[0-9]{4}-[0-9]{2}-[0-9]{2}")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# what a TEXT_DATES date starts like (checked before strptime tries the 80 formats)
_DATE_LIKE = re.compile(rf"\s*([0-9]{{1,4}}[/.-][0-9]{{1,2}}[/.-][0-9]{{2,4}}|[0-9]{{1,2}}[ -]{_MONTH}[ -]|{_MONTH},? +[0-9])",
                        re.IGNORECASE)


def holds_times(flat: Sequence[Any], default: Any = None) -> bool:
    """Whether a batch of values are dates or times (judged by its first value that is there and
    is not the feature's `default`: a batch whose first rows are missing holds the default, text
    or a count, in their place)."""
    if isinstance(flat, np.ndarray):
        return flat.dtype.kind == "M"
    first = next((item for item in flat if item is not None
                  and (default is None or type(item) is not type(default) or item != default)), None)
    return isinstance(first, (np.datetime64, datetime.date))


def converted(flat: Sequence[Any], dtype: str, text_format: str | None, unit: str | None) -> Any:
    """The dates and times among the values (and, with a `text_format`, the text) as ISO 8601 text
    (`dtype` string) or int64 counts of `unit` since 1970-01-01; other values (a default given as
    the count or the text to store) are left as they are. Raises Invalid naming the first value
    that can't be read or stored."""
    if dtype not in ("string", "int64"):
        raise Invalid(0, f"a date or time goes into dtype string (ISO 8601 text) or int64 (a count since "
                         f"1970-01-01), not {dtype}")
    if isinstance(flat, np.ndarray) and flat.dtype.kind == "M":
        return _stored(_checked(flat), np.full(len(flat), _unit(flat) == "D"), dtype, unit)
    if flat and all(type(item) is np.datetime64 for item in flat):  # a Parquet column's list items
        array = np.array(flat)
        return _stored(_checked(array), np.full(len(array), _unit(array) == "D"), dtype, unit)
    positions = [index for index, item in enumerate(flat) if _is_time(item, text_format)]
    values = []
    for index in positions:
        try:
            values.append(_time(flat[index], text_format))
        except Invalid as invalid:
            raise invalid.at(index) from None
    try:
        array = _checked(np.array(values) if values else np.zeros(0, "datetime64[s]"))  # the finest unit given
        dates = np.array([_is_date(flat[index], text_format) for index in positions], dtype=bool)
        stored = _stored(array, dates, dtype, unit)
    except Invalid as invalid:
        raise invalid.at(positions[invalid.index]) from None
    out = list(flat)
    for index, value in zip(positions, stored if isinstance(stored, list) else stored.tolist()):
        out[index] = value
    return out


def parsed_time(item: Any, text_format: str | None) -> np.datetime64:
    """One date or time (text read by `text_format`, or ISO 8601 without one) as a datetime64;
    raises Invalid naming what was expected."""
    return _time(item, text_format)


@functools.lru_cache(maxsize=4096)  # a long table's positions repeat from one sequence to the next
def is_date_text(text: str) -> bool:
    """Whether `text` is a date (or time) written as text in one of the TEXT_DATES formats, which,
    unlike ISO 8601 (`2024-03-01`), don't sort as text in date order."""
    if _ISO_DATE.match(text) or not _DATE_LIKE.match(text):
        return False
    stripped = text.strip()
    return any(_reads(stripped, date + time) for date in TEXT_DATES for time in TEXT_TIMES)


def text_formats(texts: Iterable[str]) -> list[str]:
    """The formats of TEXT_DATES (each with or without a time of day) that read every one of the
    `texts`, in the order tried: the first is the format to declare; more than one means the
    texts can be read either way (day or month first)."""
    texts = list(dict.fromkeys(text.strip() for text in texts))
    found = []
    for date in TEXT_DATES:
        for time in TEXT_TIMES:
            text_format = date + time
            if texts and all(_reads(text, text_format) for text in texts):
                found.append(text_format)
    return found


def has_time_of_day(text_format: str) -> bool:
    """Whether a strptime format reads a time of day (else it reads dates)."""
    return any(f"%{directive}" in text_format for directive in _TIME_DIRECTIVES)


def _reads(text: str, text_format: str) -> bool:
    try:
        datetime.datetime.strptime(text, text_format)
    except ValueError:
        return False
    return True


def _stored(times: np.ndarray, dates: np.ndarray, dtype: str, unit: str | None) -> Any:
    if dtype == "string":
        return _iso_texts(times, dates)
    return _counts(times, UNITS[unit or DEFAULT_UNIT])


def _unit(times: np.ndarray) -> str:
    return np.datetime_data(times.dtype)[0]


def _is_time(item: Any, text_format: str | None) -> bool:
    return isinstance(item, (np.datetime64, datetime.date)) or (text_format is not None and isinstance(item, str))


def _checked(times: np.ndarray) -> np.ndarray:
    missing = np.isnat(times)
    if missing.any():
        raise Invalid(int(np.flatnonzero(missing)[0]), "NaT (not a time); expected a date or time")
    return times


def _time(item: Any, text_format: str | None) -> np.datetime64:
    """One value as a datetime64: a date in days, a Python time in microseconds, NumPy's in its own
    unit (an Invalid's index is the caller's to set)."""
    if isinstance(item, str):
        item = _parsed(item, text_format)
    if isinstance(item, datetime.datetime):
        if item.tzinfo is not None:
            item = item.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return np.datetime64(item, "us")
    if isinstance(item, datetime.date):
        return np.datetime64(item, "D")
    return item


def _parsed(text: str, text_format: str | None) -> datetime.datetime | datetime.date:
    stripped = text.strip()
    try:
        if text_format is None or text_format == ISO_8601:
            if "T" not in stripped and " " not in stripped and ":" not in stripped:
                return datetime.date.fromisoformat(stripped)
            return datetime.datetime.fromisoformat(stripped.replace("Z", "+00:00"))
        return datetime.datetime.strptime(stripped, text_format)
    except ValueError:
        raise Invalid(0, f"expected a date or time{_as_text(text_format)}, received ", text) from None


def _is_date(item: Any, text_format: str | None) -> bool:
    """A value with no time of day: a date object, or text read by a format without one."""
    if isinstance(item, str):
        if text_format is None or text_format == ISO_8601:
            stripped = item.strip()
            return "T" not in stripped and " " not in stripped and ":" not in stripped
        return not has_time_of_day(text_format)
    if isinstance(item, np.datetime64):
        return np.datetime_data(item.dtype)[0] == "D"
    return isinstance(item, datetime.date) and not isinstance(item, datetime.datetime)


def _as_text(text_format: str | None) -> str:
    return f" as text in the format {text_format!r}" if text_format and text_format != ISO_8601 else \
        " (ISO 8601 text, e.g. 2024-03-01 or 2024-03-01T12:30:00)" if text_format else ""


def _iso_texts(times: np.ndarray, dates: np.ndarray) -> list[str]:
    """ISO 8601 text: the date alone for dates; else to the second, and the fraction where there is one."""
    unit = np.datetime_data(times.dtype)[0]
    seconds = times.astype("datetime64[s]")  # NumPy floors, so a fraction is never negative
    texts = np.datetime_as_string(seconds).astype(object)
    if dates.any():
        texts[dates] = np.datetime_as_string(times[dates].astype("datetime64[D]")).astype(object)
    digits = _FRACTION_DIGITS.get(unit)
    if digits is not None:
        fractions = (times - seconds).astype(f"timedelta64[{unit}]").astype(np.int64)
        for index in np.flatnonzero((fractions != 0) & ~dates).tolist():
            texts[index] = f"{texts[index]}.{int(fractions[index]):0{digits}d}"
    return texts.tolist()


def _counts(times: np.ndarray, unit: str) -> np.ndarray:
    """int64 counts of `unit` since 1970-01-01T00:00:00, exactly."""
    source = np.datetime_data(times.dtype)[0]
    values = times.astype(np.int64)
    ratio = _NANOSECONDS[source] / _NANOSECONDS[unit]
    if ratio >= 1:
        factor = int(ratio)
        limit = np.iinfo(np.int64).max // factor
        beyond = np.abs(values) > limit
        if beyond.any():
            index = int(np.flatnonzero(beyond)[0])
            raise Invalid(index, f"{times[index]} is beyond int64 as a count of {_unit_name(unit)}")
        return values * factor
    divisor = int(round(1 / ratio))
    counts, rest = np.divmod(values, divisor)
    if rest.any():
        index = int(np.flatnonzero(rest)[0])
        finer = [name for name, code in UNITS.items() if _NANOSECONDS[code] < _NANOSECONDS[unit]]
        raise Invalid(index, f"{_iso_texts(times[index : index + 1], np.zeros(1, bool))[0]} is not a whole number of "
                             f"{_unit_name(unit)}; set `time_unit` to {' or '.join(finer[:2])} to keep it")
    return counts


def _unit_name(unit: str) -> str:
    return {"D": "days", "s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}[unit]
