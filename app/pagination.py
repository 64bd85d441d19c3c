"""One pagination shape for every list of the API.

A list answers `{"items": [...], "next": <cursor> | null}` and takes `limit` and `cursor` (the
`next` of the page before). The cursor is opaque to clients: most lists encode an offset in it,
the audit trail a position in its sequence. When there is a next page the response also carries
`Link: <url>; rel="next"` (RFC 8288), the same URL with the cursor set, for clients that follow
links.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Query, Request, Response
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


@dataclass(frozen=True)
class PageRequest:
    """The page a list request asks for, and the response whose `Link` header names the next."""

    cursor: str | None
    limit: int
    request: Request
    response: Response

    @property
    def offset(self) -> int:
        """The offset the cursor encodes (for lists paged by offset)."""
        return cursor_offset(self.cursor)

    def respond(self, page: P) -> P:
        """`page`, with `Link: <…>; rel="next"` set when it has a next page."""
        if page.next is not None:
            url = self.request.url.include_query_params(cursor=page.next)
            self.response.headers["Link"] = f'<{url}>; rel="next"'
        return page


def paging(default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> Any:
    """The dependency taking the `limit` and `cursor` query parameters of a list (`limit`:
    `default` when absent, `maximum` at most)."""

    # defaults, not Annotated: the annotations are strings, which cannot see this closure
    def page_request(
        request: Request,
        response: Response,
        limit: int = Query(default, ge=1, le=maximum, description="Items per page"),
        cursor: str | None = Query(
            None, max_length=64, description="The `next` of the page before"
        ),
    ) -> PageRequest:
        return PageRequest(cursor=cursor, limit=limit, request=request, response=response)

    return Depends(page_request)


Paging = Annotated[PageRequest, paging()]
