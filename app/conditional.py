"""Conditional GETs for pollers: an `ETag` on a batch, job or privacy job, and `304 Not
Modified` when the client's `If-None-Match` still names it.

A tag is made from a few columns that change whenever the response body does (a row's
`updated_at`, a job's progress), read in one small query, so the 304 path never builds the
body. `Cache-Control: private, no-cache`: a browser may keep the body but must ask again.

On PostgreSQL the tag, and the last body sent with it, are kept in the process
(`app.invalidation.Cache`) until a row they were read from changes: a poller's 304, and a
repeated full GET, then cost no thread hop, no SQL and no serialization.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app import invalidation
from app.db import read_scope
from app.etags import Tag, etag
from app.invalidation import Cache
from app.strict import DateTime

__all__ = ["OPENAPI", "RESPONSES", "Tag", "UpdatedSince", "etag", "get", "matches", "respond"]

CACHE_CONTROL = "private, no-cache"
_ETAG = {
    "description": "The version of the body: send it back as `If-None-Match`.",
    "schema": {"type": "string"},
}
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"headers": {"ETag": _ETAG}},
    304: {
        "description": "Not modified: the `If-None-Match` tag is still current (no body).",
        "headers": {"ETag": _ETAG},
    },
}
# the conditional request header, documented (the endpoint reads it from the request)
OPENAPI: dict[str, Any] = {
    "parameters": [
        {
            "name": "If-None-Match",
            "in": "header",
            "required": False,
            "description": "The `ETag` of your last answer: 304 while it is still current.",
            "schema": {"type": "string"},
        }
    ]
}
UpdatedSince = Annotated[
    DateTime | None,
    Query(description="Only items changed at or after this time (ISO 8601): what a poller needs"),
]


@dataclass(frozen=True)
class _Known:
    tag: Tag
    body: bytes | None  # the JSON last sent with the tag, when one was


# memory: at most KEPT_OBJECTS tags per process, with bodies of at most MAX_KEPT_BODY bytes
# (a batch of many files answers its big body from the store each time): ~160 MB at worst
KEPT_OBJECTS = 20_000
MAX_KEPT_BODY = 8192


def _known() -> Cache[tuple[str, ...], _Known]:
    return invalidation.cache("conditional", "batch", "job", "restatement", size=KEPT_OBJECTS)


def matches(request: Request, tag: str) -> bool:
    """Whether the request's `If-None-Match` names `tag` (or is `*`)."""
    header = request.headers.get("if-none-match")
    if not header:
        return False
    candidates = {c.strip().removeprefix("W/") for c in header.split(",")}
    return tag in candidates or "*" in candidates


def respond(request: Request, tag: str, body: Callable[[], BaseModel]) -> Response:
    """304 when the client has `tag`; else the body (built only then), tagged."""
    headers = {"ETag": tag, "Cache-Control": CACHE_CONTROL}
    if matches(request, tag):
        return Response(status_code=304, headers=headers)
    return JSONResponse(body().model_dump(mode="json"), headers=headers)


def _answer(request: Request, known: _Known) -> Response | None:
    headers = {"ETag": known.tag.value, "Cache-Control": CACHE_CONTROL}
    if matches(request, known.tag.value):
        return Response(status_code=304, headers=headers)
    if known.body is None:
        return None
    return Response(known.body, media_type="application/json", headers=headers)


async def get(
    request: Request,
    key: tuple[str, ...],
    version: Callable[[Session], Tag],
    read: Callable[[Session], tuple[Tag, BaseModel]],
) -> Response:
    """A conditional GET of the object `key` (e.g. `("batch", org, id)`): from the process's
    cache when it knows the tag (and, for a 200, the body); else in one thread-pool call and
    one short session: with an `If-None-Match`, the tag from `version`, and 304 while it
    matches; otherwise the body and its tag from `read` (the tag of the state the body shows).
    Pollers call this most: a request session (a dependency) would cost two more thread hops."""
    cache = _known()
    known = cache.get(key)
    if known is not None and known.tag.current():
        answer = _answer(request, known)
        if answer is not None:
            return answer

    def run() -> Response:
        ticket = cache.ticket()
        sent = None
        with read_scope() as session:
            tag = version(session) if request.headers.get("if-none-match") else None
            if tag is None or not matches(request, tag.value):
                tag, model = read(session)
                sent = JSONResponse(model.model_dump(mode="json")).body
        if tag.current():
            kept = sent if sent is not None and len(sent) <= MAX_KEPT_BODY else None
            cache.put(key, _Known(tag, kept), ticket, list(tag.rows))
        answer = _answer(request, _Known(tag, sent))
        assert answer is not None
        return answer

    return await run_in_threadpool(run)
