"""The pagination shape's parts that need no web framework: the `Page` base of every list
response and the offset cursors (`app.pagination` takes them from a request). Response schemas
and services import these, so workers and the CLI do not load FastAPI for them."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, Field

from app.errors import InvalidInput

# SQL offsets are 64-bit integers: a larger one would fail in the driver (a 500), not answer 422
MAX_OFFSET = 1_000_000_000
DEFAULT_LIMIT = 100
MAX_LIMIT = 500
_OFFSET_TAG = "o:"


class Page(BaseModel):
    """The base of every list response: the page's items are the subclass's `items`."""

    next: str | None = Field(
        default=None,
        description="Opaque cursor of the next page: pass it as `cursor`. null on the last page.",
    )


P = TypeVar("P", bound=Page)
T = TypeVar("T")


def offset_cursor(offset: int) -> str:
    """The opaque cursor of the page starting at `offset`."""
    return base64.urlsafe_b64encode(f"{_OFFSET_TAG}{offset}".encode()).decode().rstrip("=")


def next_cursor(offset: int, limit: int, more: bool) -> str | None:
    """The cursor after a page of `limit` items at `offset`, when `more` items follow."""
    return offset_cursor(offset + limit) if more else None


def window(items: Sequence[T], offset: int, limit: int) -> tuple[list[T], str | None]:
    """The page of an in-memory list at `offset`, and the cursor after it."""
    return list(items[offset : offset + limit]), next_cursor(
        offset, limit, offset + limit < len(items)
    )


def cursor_offset(cursor: str | None) -> int:
    """The offset an offset cursor stands for (0 for none); InvalidInput for any other string."""
    if not cursor:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    value = text.removeprefix(_OFFSET_TAG)
    if not text.startswith(_OFFSET_TAG) or not value.isdigit() or int(value) > MAX_OFFSET:
        raise InvalidInput(f"cursor {cursor!r} is not one this API returned: pass a page's `next`")
    return int(value)
