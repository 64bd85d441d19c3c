"""`Idempotency-Key` on POSTs: a retried request gets the first response, nothing runs twice.

An endpoint takes the `Idempotent` dependency and returns `idempotent.run(body, run)`: a
`JSONResponse`, which FastAPI does not validate or document. Such an endpoint therefore declares
`response_model=` (and `status_code=`) on its route, or OpenAPI loses its response schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.auth import Org
from app.db import finish_request, session_scope
from app.db_session import DbSession
from app.errors import Conflict, InvalidInput
from app.models import IdempotencyKey

IdempotencyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        max_length=255,
        description="Any unique string; a retry with the same key gets the first response.",
    ),
]


def fingerprint(request: Request, body: BaseModel | None) -> str:
    parts = [request.method, request.url.path, str(request.url.query)]
    if body is not None:
        parts.append(body.model_dump_json(by_alias=True))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def run_once(
    session: Session,
    org: str,
    key: str | None,
    request: Request,
    body: BaseModel | None,
    status: int,
    run: Callable[[], BaseModel],
) -> JSONResponse:
    """Run `run` (→ the response model, answered with `status`) once per key; replay its
    response to retries."""
    if key is None:
        response = run()
        return JSONResponse(jsonable_encoder(response, by_alias=True), status_code=status)
    digest = fingerprint(request, body)
    existing = session.scalar(
        select(IdempotencyKey).where(IdempotencyKey.org == org, IdempotencyKey.key == key)
    )
    if existing is None:
        record = IdempotencyKey(org=org, key=key, fingerprint=digest)
        try:
            with session.begin_nested():
                session.add(record)
        except IntegrityError:
            raise Conflict(
                f"a request with Idempotency-Key {key!r} is in progress; retry it shortly"
            ) from None
        try:
            response = run()
        except BaseException:
            _forget_on_sqlite(session, org, key)
            raise
        record.status_code = status
        record.response = jsonable_encoder(response, by_alias=True)
        session.flush()
        return JSONResponse(record.response, status_code=status)
    if existing.fingerprint != digest:
        raise InvalidInput(
            f"Idempotency-Key {key!r} was first used for another request; use a new key"
        )
    if existing.status_code is None:
        raise Conflict(f"a request with Idempotency-Key {key!r} is in progress; retry it shortly")
    headers = {"Idempotent-Replayed": "true"}
    return JSONResponse(existing.response, status_code=existing.status_code, headers=headers)


def _forget_on_sqlite(session: Session, org: str, key: str) -> None:
    """A request that failed leaves no key behind, so its retry runs again.

    On PostgreSQL the key's row goes with the request's rolled-back transaction. SQLite's driver
    opens no transaction before a SAVEPOINT, so releasing it committed the row on its own
    (which also frees the write lock the Iceberg catalog's connection waits for): the row is
    deleted here, after the request's own writes are rolled back.
    """
    if session.get_bind().dialect.name != "sqlite":
        return
    session.rollback()
    with session_scope() as own:
        own.execute(
            delete(IdempotencyKey).where(
                IdempotencyKey.org == org,
                IdempotencyKey.key == key,
                IdempotencyKey.status_code.is_(None),
            )
        )


@dataclass(frozen=True)
class Idempotency:
    """A request's idempotency context: its session, organization and `Idempotency-Key`."""

    session: Session
    org: str
    key: str | None
    request: Request

    def run(
        self, body: BaseModel | None, status: int, run: Callable[[], BaseModel]
    ) -> JSONResponse:
        """`run` (the service call: → its response model, answered with `status`, which the
        endpoint chooses) once per key; a retry replays its response.

        The answer is rendered here, so the request's unit of work ends here too, in the
        endpoint's thread (`app.db.finish_request`)."""
        answer = run_once(self.session, self.org, self.key, self.request, body, status, run)
        finish_request(self.session)
        return answer


async def idempotency(
    session: DbSession, org: Org, request: Request, key: IdempotencyHeader = None
) -> Idempotency:
    """Async: it only gathers what the endpoint's thread will use (no thread-pool hop)."""
    return Idempotency(session, org, key, request)


Idempotent = Annotated[Idempotency, Depends(idempotency)]
