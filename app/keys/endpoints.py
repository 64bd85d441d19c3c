from __future__ import annotations

from fastapi import APIRouter

from app.auth import Org, requires
from app.db_session import DbSession
from app.keys import service
from app.keys.schemas import KeyCreate, KeyCreated, KeyList, KeyOut
from app.models import Scope
from app.pagination import Paging, window

router = APIRouter(prefix="/v1/keys", tags=["keys"])


@router.post(
    "",
    status_code=201,
    response_model=KeyCreated,
    dependencies=[requires(Scope.ADMIN, "keys.create")],
)
def keys_create(body: KeyCreate, org: Org, session: DbSession) -> KeyCreated:
    """Create an API key of your organization; its secret is in this response only.

    Scopes: `read` (GET), `write` (also ingest, restate, consumers), `admin` (also keys,
    retention, maintenance, audit). `expires_in` bounds its life.
    """
    return service.create(session, org, body.scope, body.name, body.expires_in)


@router.get("", response_model=KeyList, dependencies=[requires(Scope.ADMIN)])
def keys_list(org: Org, session: DbSession, paging: Paging) -> KeyList:
    """Your organization's keys (never their secrets), oldest first.

    Revoked and expired keys are listed too; a page at a time (`cursor`, `Link`).
    """
    keys, after = window(service.list_keys(session, org), paging.offset, paging.limit)
    return paging.respond(KeyList(items=[service.to_out(key) for key in keys], next=after))


@router.delete(
    "/{key_id}", response_model=KeyOut, dependencies=[requires(Scope.ADMIN, "keys.revoke")]
)
def keys_revoke(key_id: str, org: Org, session: DbSession) -> KeyOut:
    """Revoke a key: it answers 401 from the next request on.

    The response is the key as revoked; revoking a revoked key changes nothing.
    """
    return service.to_out(service.revoke(session, org, key_id))
