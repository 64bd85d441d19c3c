"""API keys: `ib_<prefix>_<secret>`; the SHA-256 of the whole key is stored, never the key."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db import session_scope
from app.errors import InvalidInput, Unauthorized
from app.limits import rate
from app.models import ApiKey

ORG_RE = re.compile(r"^[a-z][a-z0-9_]{1,62}$")


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(session: Session, org: str) -> str:
    """Store a new key for `org` and return it (the only time it is visible)."""
    if not ORG_RE.match(org):
        raise InvalidInput(
            "org names are 2-63 characters: lowercase letters, digits and '_', "
            "starting with a letter (they name the Iceberg namespace)"
        )
    prefix = secrets.token_hex(6)
    key = f"ib_{prefix}_{secrets.token_urlsafe(32)}"
    session.add(ApiKey(org=org, prefix=prefix, secret_hash=_hash(key)))
    session.flush()
    return key


def org_of_key(session: Session, key: str) -> str | None:
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != "ib":
        return None
    row = session.scalar(select(ApiKey).where(ApiKey.prefix == parts[1]))
    if row is None or row.revoked_at is not None:
        return None
    return row.org if hmac.compare_digest(row.secret_hash, _hash(key)) else None


def current_org(request: Request) -> str:
    """The org of the request's bearer key; 401 when missing or unknown.

    The lookup uses its own short session: a connection held from here until the endpoint runs
    (another thread-pool hop) lets a burst of requests hold every pooled connection while
    waiting for a thread, and every thread wait for a connection.
    """
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized(
            "send 'Authorization: Bearer <api key>' (create one: icebatch keys create)"
        )
    with session_scope() as session:
        org = org_of_key(session, key.strip())
    if org is None:
        raise Unauthorized("this API key is unknown or revoked")
    rate.admit(request, org)
    return org


Org = Annotated[str, Depends(current_org)]
