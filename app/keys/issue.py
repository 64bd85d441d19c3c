"""Making an API key: the org name's rule, the key's form and the hash its row keeps. Apart from
`app.auth` (the requests' side, on FastAPI) so that `icebatch keys create` starts without the
web stack."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime

from sqlalchemy.orm import Session

from app.errors import InvalidInput
from app.models import ApiKey, Scope

ORG_RE = re.compile(r"^[a-z][a-z0-9_]{1,62}$")


def hash_key(key: str) -> str:
    """What a key's row keeps of its secret."""
    return hashlib.sha256(key.encode()).hexdigest()


def issue_key(
    session: Session,
    org: str,
    scope: Scope,
    *,
    name: str | None = None,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Store a new key for `org`; return its row and the key (the only time it is visible)."""
    if not ORG_RE.match(org):
        raise InvalidInput(
            "org names are 2-63 characters: lowercase letters, digits and '_', "
            "starting with a letter (they name the Iceberg namespace)"
        )
    prefix = secrets.token_hex(6)
    key = f"ib_{prefix}_{secrets.token_urlsafe(32)}"
    row = ApiKey(
        org=org,
        prefix=prefix,
        secret_hash=hash_key(key),
        scope=Scope(scope).value,
        name=name,
        expires_at=expires_at,
    )
    session.add(row)
    session.flush()
    return row, key


def create_key(session: Session, org: str, scope: Scope = Scope.ADMIN) -> str:
    """Store a new key for `org` and return it (the only time it is visible)."""
    return issue_key(session, org, scope)[1]
