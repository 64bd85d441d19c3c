"""`/v1/cdc`: change events in, lag, merged profiles, config, forced runs."""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from app.auth import Org, requires
from app.cdc import debezium_accept, lag_history, profiles, service
from app.cdc.schemas import (
    CdcConfig,
    CdcConfigOut,
    CdcLag,
    CdcLagHistory,
    DebeziumAccepted,
    EventsAccepted,
    ProcessStarted,
    Profile,
)
from app.config import get_settings
from app.db_session import DbSession
from app.deps import IcebergCatalog
from app.errors import PayloadTooLarge
from app.idempotency import Idempotent
from app.models import Scope
from app.openapi import problems

router = APIRouter(prefix="/v1/cdc", tags=["cdc"])
EXAMPLE = (
    '{"op": "PUT", "entity_id": "u1", "record_type": "profile", "timestamp": '
    '"2026-11-24T10:00:00Z", "related_ids": ["email:a@x.org"], "source": "crm", '
    '"payload": {"name": "Ada", "address": {"country": "FR"}}}\n'
    '{"op": "PATCH", "entity_id": "u1", "record_type": "profile", "timestamp": '
    '"2026-11-24T10:05:00Z", "payload": {"address": {"city": "Lyon"}, "name": null}}\n'
)
EVENTS_BODY = {
    "required": True,
    "description": "Change events: JSON lines (one event per line) or one JSON array. An event "
    "is {op: PUT|PATCH|DELETE, entity_id, record_type, timestamp (ISO 8601 or epoch ms), "
    "related_ids?, source?, payload (the document for PUT, an RFC 7396 merge patch for PATCH)}.",
    "content": {
        "application/x-ndjson": {"schema": {"type": "string"}, "example": EXAMPLE},
        "application/json": {
            "schema": {"type": "array", "items": {"type": "object"}},
            "example": [
                {
                    "op": "DELETE",
                    "entity_id": "u2",
                    "record_type": "profile",
                    "timestamp": "2026-11-24T10:06:00Z",
                }
            ],
        },
    },
}


class _Body(BaseModel):
    """What an Idempotency-Key's fingerprint covers: the body's digest."""

    sha256: str


async def events_body(request: Request) -> bytes:
    """The request body, refused with 413 past `cdc_max_request_bytes` (read no further)."""
    limit = get_settings().cdc_max_request_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"an events request holds at most {limit} bytes; split it")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"an events request holds at most {limit} bytes; split it")
        chunks.append(chunk)
    return b"".join(chunks)


EventsBody = Annotated[bytes, Depends(events_body)]


@router.post(
    "/events",
    status_code=202,
    response_model=EventsAccepted,
    responses=problems({413: "The body exceeds the size limit; nothing of it was accepted"}),
    openapi_extra={"requestBody": EVENTS_BODY},
    dependencies=[requires(Scope.WRITE, "cdc.events")],
)
def cdc_events_post(
    body: EventsBody, org: Org, session: DbSession, catalog: IcebergCatalog, idempotent: Idempotent
) -> JSONResponse:
    """Accept change events; 202 once they are durable, with their sequence numbers.

    Each event gets the tenant's next sequence number (the events of one request are
    consecutive). A bad line is a 422 naming every bad line and field (`errors`), and nothing
    of the request is accepted; an event older than the staging retention window is one.
    The same `Idempotency-Key` accepts a body once; without one a retry is new events.
    """

    def run() -> EventsAccepted:
        return service.accept(catalog, session, org, body)

    return idempotent.run(_Body(sha256=hashlib.sha256(body).hexdigest()), 202, run)


DEBEZIUM_EXAMPLE = {
    "before": None,
    "after": {"id": 1001, "first_name": "Sally", "email": "sally@example.com"},
    "source": {
        "connector": "postgresql",
        "name": "dbserver1",
        "ts_ms": 1764230400000,
        "snapshot": "false",
        "schema": "inventory",
        "table": "customers",
        "lsn": 33843032,
        "sequence": '["33842928","33843032"]',
    },
    "op": "c",
    "ts_ms": 1764230400123,
}
DEBEZIUM_BODY = {
    "required": True,
    "description": "What Debezium Server's HTTP sink posts: one change event value "
    '(`{"schema", "payload"}`, or the payload alone with schemas off), or a JSON array of them '
    "(the sink's batch mode); `application/cloudevents+json` in structured mode (the value in "
    "`data`). Connectors: PostgreSQL, MySQL, MariaDB, SQL Server, MongoDB.",
    "content": {
        "application/json": {
            "schema": {"oneOf": [{"type": "object"}, {"type": "array", "items": {}}]},
            "example": DEBEZIUM_EXAMPLE,
        },
        "application/cloudevents+json": {
            "schema": {"type": "object"},
            "example": {
                "specversion": "1.0",
                "id": "name:dbserver1;lsn:33843032",
                "source": "/debezium/postgresql/dbserver1",
                "type": "io.debezium.connector.postgresql.DataChangeEvent",
                "datacontenttype": "application/json",
                "data": DEBEZIUM_EXAMPLE,
            },
        },
    },
}


@router.post(
    "/debezium",
    status_code=202,
    response_model=DebeziumAccepted,
    responses=problems({413: "The body exceeds the size limit; nothing of it was accepted"}),
    openapi_extra={"requestBody": DEBEZIUM_BODY},
    dependencies=[requires(Scope.WRITE, "cdc.debezium")],
)
def cdc_debezium_post(
    body: EventsBody, request: Request, org: Org, session: DbSession, catalog: IcebergCatalog
) -> DebeziumAccepted:
    """Accept Debezium change events, each source row's changes once and in log position order.

    `c`, `r` (snapshot read) and `u` put the row's `after` image; `d` deletes it (key from
    `before`); `t` deletes every row of the table; `m`, schema changes, heartbeats and null
    values (Kafka tombstones) are skipped and counted. The entity id comes from the key columns
    of the table's entry in `sources` (`PUT /v1/cdc/config`; default `id`), the event time from
    `source.ts_ms`. A change already accepted (same source, table, key and log position: the
    sink's retries, Kafka Connect's redeliveries) is a duplicate, one older than its row's
    newest is superseded: neither is applied again. 202 once the new changes are durable; a bad
    element is a 422 naming its index and field, and nothing of the request is accepted.
    """
    content_type = request.headers.get("content-type")
    return debezium_accept.accept(catalog, session, org, body, content_type)


@router.get("/lag", response_model=CdcLag)
def cdc_lag_get(org: Org, session: DbSession) -> CdcLag:
    """Your tenant's progress and lag: accepted, staged and processed events.

    Staging lag: newest accepted minus newest staged event time, and the age of the oldest
    event not yet staged. Replication lag (the seed's figure): newest staged minus newest
    processed event time, and the age of the oldest event not yet applied.
    """
    return service.lag(session, org)


@router.get("/lag/history", response_model=CdcLagHistory)
def cdc_lag_history(org: Org, session: DbSession) -> CdcLagHistory:
    """Your tenant's lag over time, oldest first.

    Samples the scheduler's CDC pass took (at most one per `sample_seconds`, kept
    `retention_seconds`): accepted, staged and processed events and the lags of `GET /lag`.
    """
    return lag_history.history(session, org)


@router.get("/config", response_model=CdcConfigOut)
def cdc_config_get(org: Org, session: DbSession) -> CdcConfigOut:
    """Your tenant's CDC config: pushdown columns, retention window, processing cadence.

    Also names the raw table: its dataset id (for `/v1/datasets/{id}/rows` and `/changes`)
    and its Spark name. A tenant that never posted an event has the defaults and no table.
    """
    return service.get_config(session, org)


@router.put(
    "/config",
    response_model=CdcConfigOut,
    responses=problems({409: "A pushdown column that already holds values would change"}),
    dependencies=[requires(Scope.ADMIN, "cdc.config")],
)
def cdc_config_put(
    body: CdcConfig, org: Org, session: DbSession, catalog: IcebergCatalog
) -> CdcConfigOut:
    """Set your tenant's CDC config (the raw table is created if it does not exist yet).

    Pushdown columns are typed values pulled from a JSON path at merge time; they can be added
    (rows get them when they are next written), not changed or removed.
    """
    service.put_config(catalog, org, body)
    session.expire_all()
    return service.get_config(session, org)


@router.post(
    "/process",
    status_code=202,
    response_model=ProcessStarted,
    dependencies=[requires(Scope.WRITE, "cdc.process")],
)
def cdc_process(org: Org, session: DbSession, catalog: IcebergCatalog) -> ProcessStarted:
    """Run the dumper and the processor now, without waiting for the schedule.

    Returns their jobs (`GET /v1/jobs/{id}`); a job of the tenant already queued or running is
    returned instead of a new one.
    """
    return service.force_process(catalog, session, org)


@router.get(
    "/profiles/{entity_id}",
    response_model=Profile,
    responses=problems({404: "The identity has no live record and no link"}),
)
def cdc_profiles_get(
    entity_id: str, org: Org, session: DbSession, catalog: IcebergCatalog
) -> Profile:
    """The merged profile of an identity: its cluster's members, records and merged document.

    Identities linked through `related_ids` (at any time) form a cluster; `merged` deep-merges
    the members' documents, the newer timestamp winning field by field.
    """
    return profiles.profile(session, catalog, org, entity_id)
