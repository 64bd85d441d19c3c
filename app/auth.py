"""API keys and who may do what.

A key is `ib_<prefix>_<secret>`; the SHA-256 of the whole key is stored, never the key. Each
key belongs to one org and has a scope (read < write < admin). A request finds its key in the
process's key cache (`app.invalidation`: a revocation, by any process, empties its entry on
every API process at its commit, and the cache answers only while that channel is up), else in
the store: a revoked key answers 401 on every API process within 1 s, and on the process that
revoked it from the next request on. Expiry is checked on every request.

Dependencies: `Org` (the org's name; any valid key), `CurrentPrincipal` (org, key id, scope)
and `requires(scope, action)`, declared on a route, which answers 403 to a key whose scope is
too small and names the call in the audit trail (`app/audit/`).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import bindparam, select, update
from starlette.concurrency import run_in_threadpool

from app import invalidation
from app.db import get_engine, session_scope
from app.errors import Forbidden, Unauthorized
from app.invalidation import Cache
from app.keys import tokens
from app.keys.issue import hash_key
from app.limits import rate
from app.models import ApiKey, Scope
from app.models.base import utcnow

# `last_used_at` is written at most this often per key: one UPDATE a minute, not one a request
LAST_USED_RESOLUTION = timedelta(seconds=60)
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An Icebatch API key: `Authorization: Bearer ib_<prefix>_<secret>`.",
)


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's org, id and scope."""

    org: str
    key_id: str
    scope: Scope


@dataclass(frozen=True)
class StoredKey:
    """What a request's authentication needs of a stored key."""

    id: str
    org: str
    scope: str
    revoked_at: datetime | None
    expires_at: datetime | None
    last_used_at: datetime | None


_BY_PREFIX = select(
    ApiKey.id,
    ApiKey.org,
    ApiKey.scope,
    ApiKey.revoked_at,
    ApiKey.expires_at,
    ApiKey.last_used_at,
    ApiKey.secret_hash,
).where(ApiKey.prefix == bindparam("prefix"))  # built once: it keeps its cache key


def _keys() -> Cache[str, tuple[StoredKey, str]]:
    """Stored keys and their secret's hash, by prefix (and by `id:<key id>`)."""
    return invalidation.cache("keys", "key")


def _prefix(key: str) -> str | None:
    parts = key.split("_", 2)
    return parts[1] if len(parts) == 3 and parts[0] == "ib" else None


def _matching(found: tuple[StoredKey, str] | None, key: str) -> StoredKey | None:
    if found is None or not hmac.compare_digest(found[1], hash_key(key)):
        return None
    return found[0]


def cached_key(key: str) -> StoredKey | None | bool:
    """`find_key` from the key cache, with no I/O; False when the cache cannot say."""
    prefix = _prefix(key)
    if prefix is None:
        return None
    found = _keys().get(prefix)
    return False if found is None else _matching(found, key)


def find_key(key: str) -> StoredKey | None:
    """The stored key matching `key` (revoked and expired ones included), or None.

    From the key cache, else one autocommit query on a pooled connection, outside any session:
    no unit of work, no transaction to begin and end."""
    prefix = _prefix(key)
    if prefix is None:
        return None
    cache = _keys()
    found = cache.get(prefix)
    if found is None:
        ticket = cache.ticket()
        with get_engine().execution_options(isolation_level="AUTOCOMMIT").connect() as conn:
            row = conn.execute(_BY_PREFIX, {"prefix": prefix}).first()
        if row is None:
            return None
        stored = StoredKey(
            row.id, row.org, row.scope, row.revoked_at, row.expires_at, row.last_used_at
        )
        found = (stored, row.secret_hash)
        cache.put(prefix, found, ticket, [("key", stored.id)])
    return _matching(found, key)


def find_key_by_id(key_id: str) -> tuple[StoredKey, str] | None:
    """The stored key whose id is `key_id` and its secret's hash (what signs the catalog's
    OAuth tokens, `app.catalog.tokens`), or None; from the key cache when it has it."""
    cache = _keys()
    found = cache.get(f"id:{key_id}")
    if found is not None:
        return found
    ticket = cache.ticket()
    query = select(*_BY_PREFIX.selected_columns).where(ApiKey.id == key_id)
    with get_engine().execution_options(isolation_level="AUTOCOMMIT").connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    stored = StoredKey(row.id, row.org, row.scope, row.revoked_at, row.expires_at, row.last_used_at)
    cache.put(f"id:{key_id}", (stored, row.secret_hash), ticket, [("key", stored.id)])
    return stored, row.secret_hash


def stale_use(row: StoredKey, now: datetime) -> bool:
    """Whether the key's recorded use is older than LAST_USED_RESOLUTION (`touch` it)."""
    return row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION


def touch(row: StoredKey, now: datetime) -> None:
    """Record the key's use, at most once per LAST_USED_RESOLUTION."""
    if stale_use(row, now):
        _used(row, now)


def _used(row: StoredKey, now: datetime) -> None:
    with session_scope() as session:
        session.execute(update(ApiKey).where(ApiKey.id == row.id).values(last_used_at=now))


def rejection(row: StoredKey, now: datetime) -> str | None:
    """Why a found key may not be used now (revoked, expired), or None."""
    if row.revoked_at is not None:
        return f"this API key was revoked at {row.revoked_at.isoformat()}"
    if row.expires_at is not None and row.expires_at <= now:
        return f"this API key expired at {row.expires_at.isoformat()}"
    return None


def _token_key(token: tokens.Token, now: datetime) -> StoredKey:
    """The key an OAuth token (`app.keys.tokens`) stands for; Unauthorized when the token is
    forged or expired (the key's own revocation and expiry are checked as for a key)."""
    found = find_key_by_id(token.key_id)
    if found is None or not token.signed_by(found[1]):
        raise Unauthorized("this token is unknown")
    if token.expired(now):
        at = datetime.fromtimestamp(token.expires, UTC).isoformat()
        raise Unauthorized(f"this token expired at {at}: ask /iceberg/v1/oauth/tokens for another")
    return found[0]


async def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    """The caller of the request from its bearer key; 401 when missing, unknown, revoked or
    expired. Computed once per request (kept on `request.state`, where the audit trail finds
    the key id of denied attempts too).

    Async: a key in the cache, a token of the process's fair-use share and a recent use cost no
    thread-pool hop; the store and Redis are called from a worker thread when needed. The
    lookup uses its own short query: a connection held from here until the endpoint runs
    (another thread-pool hop) lets a burst of requests hold every pooled connection while
    waiting for a thread, and every thread wait for a connection.
    """
    known: Principal | None = getattr(request.state, "principal", None)
    if known is not None:
        return known
    key = credentials.credentials.strip() if credentials is not None else ""
    if not key:
        raise Unauthorized(
            "send 'Authorization: Bearer <api key>' (create one: icebatch keys create)"
        )
    now = utcnow()
    token = tokens.parse(key)
    row: StoredKey | None
    if token is not None:
        row = await run_in_threadpool(_token_key, token, now)
    else:
        cached = cached_key(key)
        if cached is False:
            row = await run_in_threadpool(find_key, key)
        else:
            row = cached if isinstance(cached, StoredKey) else None
    if row is None:
        raise Unauthorized("this API key is unknown")
    request.state.key_owner = (row.org, row.id)  # for the audit trail, even when denied
    refused = rejection(row, now)
    if refused is None and stale_use(row, now):
        await run_in_threadpool(touch, row, now)
    principal = Principal(org=row.org, key_id=row.id, scope=Scope(row.scope))
    if refused is not None:
        raise Unauthorized(refused)
    request.state.principal = principal
    await rate.admit(request, principal.org)
    return principal


CurrentPrincipal = Annotated[Principal, Depends(authenticate)]


def known_caller(state: Mapping[str, Any]) -> tuple[str, str] | None:
    """(org, key id) of the request whose ASGI `state` this is, when its key was found, even
    if it was then refused (revoked, expired, too small a scope); None otherwise."""
    principal: Principal | None = state.get("principal")
    if principal is not None:
        return principal.org, principal.key_id
    owner: tuple[str, str] | None = state.get("key_owner")
    return owner


async def current_org(principal: CurrentPrincipal) -> str:
    """The org of the request's key (any scope). Async: no thread-pool hop for an attribute."""
    return principal.org


Org = Annotated[str, Depends(current_org)]


@dataclass(frozen=True)
class RequireScope:
    """A route's requirement: the smallest scope that may call it and, for a mutating route,
    the name of the call in the audit trail (e.g. `datasets.create`), completed by the value of
    the query parameter `by` when given (`batches.act` + `?action=REVERT`)."""

    scope: Scope
    action: str | None = None
    by: str | None = None

    def check(self, principal: Principal) -> Principal:
        """The principal when its scope is enough; Forbidden (403) naming the scope otherwise."""
        if not principal.scope.allows(self.scope):
            raise Forbidden(
                f"this call needs a '{self.scope}' key; yours is '{principal.scope}'",
                required_scope=self.scope.value,
                key_scope=principal.scope.value,
            )
        return principal


def requires(scope: Scope, action: str | None = None, by: str | None = None) -> Any:
    """`dependencies=[requires(Scope.WRITE, "datasets.create")]` on a route."""
    needed = RequireScope(scope, action, by)

    # a plain function, not the dataclass's __call__: FastAPI resolves a function's (string)
    # annotations in its module, and an instance has no module globals to resolve them in;
    # async: a check of an attribute needs no thread-pool hop
    async def require_scope(principal: CurrentPrincipal) -> Principal:
        return needed.check(principal)

    require_scope.requirement = needed  # type: ignore[attr-defined]
    return Depends(require_scope)


def requirement(route: APIRoute) -> RequireScope | None:
    """The scope requirement a route declares (its first `requires(...)`), or None."""
    pending = list(route.dependant.dependencies)
    while pending:
        dependant = pending.pop(0)
        needed = getattr(dependant.call, "requirement", None)
        if isinstance(needed, RequireScope):
            return needed
        pending.extend(dependant.dependencies)
    return None


def uses_key(route: APIRoute) -> bool:
    """Whether calling the route needs an API key."""
    pending = list(route.dependant.dependencies)
    while pending:
        dependant = pending.pop(0)
        if dependant.call is authenticate:
            return True
        pending.extend(dependant.dependencies)
    return False


def document_scopes(routes: list[Any], openapi: dict[str, Any]) -> None:
    """Write each keyed operation's scope into the OpenAPI document: `security: [{ApiKey:
    [scope]}]` (OpenAPI 3.1 role names), `x-icebatch-scope` and `x-icebatch-action`."""
    for route in routes:
        if not isinstance(route, APIRoute) or not uses_key(route):
            continue
        needed = requirement(route)
        scope = needed.scope if needed is not None else Scope.READ
        for method in route.methods:
            operation = openapi["paths"][route.path_format][method.lower()]
            operation["security"] = [{"ApiKey": [scope.value]}]
            operation["x-icebatch-scope"] = scope.value
            if needed is not None and needed.action:
                operation["x-icebatch-action"] = needed.action
