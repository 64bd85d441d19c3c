"""Key management for the CLI and `/v1/keys`: create (the secret shown once), list, revoke."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy.orm import Session

from app.errors import InvalidInput
from app.keys import repository
from app.keys.issue import issue_key
from app.keys.schemas import KeyCreated, KeyOut
from app.models import ApiKey, Scope
from app.models.base import utcnow

_DURATION = re.compile(r"^([1-9][0-9]{0,5})([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> timedelta:
    """`30d`, `12h`, `15m`, `90s`, `2w` → a timedelta."""
    match = _DURATION.match(text.strip())
    if match is None:
        raise InvalidInput(
            f"expires_in {text!r} is not a duration: a number and s, m, h, d or w (e.g. 30d)"
        )
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


def to_out(key: ApiKey) -> KeyOut:
    """A key as listed (the schema has no field for its secret or hash)."""
    return KeyOut.model_validate(key, from_attributes=True)


def create(
    session: Session, org: str, scope: Scope, name: str | None, expires_in: str | None
) -> KeyCreated:
    """A new key of `org`; the response is the only place its secret appears."""
    expires_at = utcnow() + parse_duration(expires_in) if expires_in else None
    row, secret = issue_key(session, org, scope, name=name, expires_at=expires_at)
    return KeyCreated(**to_out(row).model_dump(), key=secret)


def list_keys(session: Session, org: str | None) -> Sequence[ApiKey]:
    return repository.list_keys(session, org)


def revoke(session: Session, org: str | None, key_id: str) -> ApiKey:
    """Revoke a key (again: no change); it answers 401 from the next request on."""
    key = repository.get(session, org, key_id)
    if key.revoked_at is None:
        key.revoked_at = utcnow()
        session.flush()
    return key
