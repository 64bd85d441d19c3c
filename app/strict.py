"""Parameter types that accept what the document declares and nothing else: pydantic's lax mode
takes a number for a `date-time` (`0.5` as seconds since the epoch); these refuse it."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import BeforeValidator

# RFC 3339's date-time (its offset optional, read as UTC's by the services, as ISO 8601 allows)
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?", re.ASCII
)
DATE_TIME_HINT = "expected an RFC 3339 date-time such as 2024-01-31T09:30:00Z"


def _date_time(value: Any) -> Any:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _DATE_TIME.fullmatch(value):
        raise ValueError(f"{value!r} is not a date-time: {DATE_TIME_HINT}")
    return value


DateTime = Annotated[datetime, BeforeValidator(_date_time)]
