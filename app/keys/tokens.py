"""Short-lived bearer tokens for clients that only speak OAuth2 (the Iceberg REST catalog's
`POST /iceberg/v1/oauth/tokens`, client credentials: `client_id` = a key's id, `client_secret`
= the key).

A token is `ibt.<key id>.<expiry, unix seconds>.<signature>`, signed with HMAC-SHA256 by the
stored hash of its key's secret: nothing to store, no server secret to share between API
processes, and it dies with its key — `app.auth.authenticate` reads the key's row for every
token as for every key, so a revoked or expired key fails the tokens it signed at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime

PREFIX = "ibt."


@dataclass(frozen=True)
class Token:
    key_id: str
    expires: int  # unix seconds
    signature: str

    def signed_by(self, secret_hash: str) -> bool:
        return hmac.compare_digest(self.signature, _sign(secret_hash, self.key_id, self.expires))

    def expired(self, now: datetime) -> bool:
        return self.expires <= now.timestamp()


def _sign(secret_hash: str, key_id: str, expires: int) -> str:
    digest = hmac.new(secret_hash.encode(), f"{key_id}.{expires}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(digest.digest()).decode().rstrip("=")


def issue(key_id: str, secret_hash: str, now: datetime, seconds: int) -> str:
    """A token for the key, valid `seconds` from `now`."""
    expires = int(now.timestamp()) + seconds
    return f"{PREFIX}{key_id}.{expires}.{_sign(secret_hash, key_id, expires)}"


def parse(bearer: str) -> Token | None:
    """The token `bearer` is, or None when it is not one (an API key, or malformed)."""
    if not bearer.startswith(PREFIX):
        return None
    parts = bearer[len(PREFIX) :].split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return Token(parts[0], int(parts[1]), parts[2])
