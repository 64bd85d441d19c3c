"""One pagination shape for every list of the API.

A list answers `{"items": [...], "next": <cursor> | null}` and takes `limit` and `cursor` (the
`next` of the page before). The cursor is opaque to clients: most lists encode an offset in it,
the audit trail a position in its sequence. When there is a next page the response also carries
`Link: <url>; rel="next"` (RFC 8288), the same URL with the cursor set, for clients that follow
links.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query, Request, Response

from app.pages import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_OFFSET,
    P,
    Page,
    cursor_offset,
    next_cursor,
    offset_cursor,
    window,
)

__all__ = [
    "MAX_OFFSET",
    "Page",
    "PageRequest",
    "Paging",
    "cursor_offset",
    "next_cursor",
    "offset_cursor",
    "paging",
    "window",
]


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
