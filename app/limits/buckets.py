"""Token buckets per org, as GCRA (the generic cell rate algorithm): one number per org, the
theoretical arrival time (TAT) of its next request. A request at `now` is admitted when
`TAT + interval - burst * interval <= now`, and then moves TAT one interval later (from `now`
at the earliest). So `burst` requests pass at once, then one per `interval`.

Two stores of the same algorithm: `RedisBuckets` (one Lua script, Redis's own clock: every API
process of a deployment shares the bucket) when the broker is Redis, `LocalBuckets` (in the
process) in embedded mode, which has no Redis and one API process.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol, cast

import redis

log = logging.getLogger(__name__)
KEY_PREFIX = "icebatch:rate:"
REDIS_TIMEOUT_SECONDS = 0.5
_EPSILON = 1e-9


@dataclass(frozen=True)
class RatePolicy:
    """`per_second` requests a second on average, `burst` of them at once."""

    per_second: float
    burst: int

    @property
    def interval(self) -> float:
        return 1.0 / self.per_second


@dataclass(frozen=True)
class Decision:
    """Whether a request is admitted, and the bucket as it stands after it."""

    allowed: bool
    retry_after: float  # seconds until a request would be admitted (0 when this one was)
    remaining: int  # requests that would be admitted at once from now
    reset: float  # seconds until the bucket is full again


def gcra(tat: float, now: float, policy: RatePolicy) -> tuple[Decision, float]:
    """One request at `now` against a bucket whose TAT is `tat` → (decision, new TAT)."""
    interval = policy.interval
    tat = max(tat, now)
    new_tat = tat + interval
    allow_at = new_tat - policy.burst * interval
    if now + _EPSILON < allow_at:
        return Decision(False, allow_at - now, 0, tat - now), tat
    remaining = math.floor(policy.burst - (new_tat - now) / interval + _EPSILON)
    return Decision(True, 0.0, remaining, new_tat - now), new_tat


class Buckets(Protocol):
    def take(self, org: str, policy: RatePolicy) -> Decision:
        """Count one request of `org` and say whether it is admitted."""
        ...


class LocalBuckets:
    """Buckets in this process (embedded mode: one API process, no Redis)."""

    MAX_ORGS = 10_000

    def __init__(self) -> None:
        self._tats: dict[str, float] = {}
        self._lock = threading.Lock()

    def take(self, org: str, policy: RatePolicy) -> Decision:
        with self._lock:
            now = time.monotonic()
            decision, self._tats[org] = gcra(self._tats.get(org, now), now, policy)
            if len(self._tats) > self.MAX_ORGS:  # forget full buckets: they equal no entry
                self._tats = {o: t for o, t in self._tats.items() if t > now}
            return decision


# KEYS[1]: the org's bucket; ARGV: interval and burst in microseconds / requests.
# Returns {admitted 0|1, retry_after µs, remaining, reset µs}. The key expires when the bucket
# is full again (an absent key is a full bucket), so idle orgs cost no memory. TAT is written
# with '%.0f': Lua's own number-to-string keeps 14 digits, too few for microseconds since 1970.
_GCRA_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if now < allow_at then
  return {0, allow_at - now, 0, tat - now}
end
local ttl_ms = math.max(1, math.ceil((new_tat - now) / 1000))
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', ttl_ms)
return {1, 0, math.floor((burst * interval - (new_tat - now)) / interval), new_tat - now}
"""


class RedisBuckets:
    """Buckets in Redis, shared by every API process; if Redis fails, requests are admitted
    (the limiter must not take the API down with it) and a warning is logged once a minute."""

    def __init__(self, url: str) -> None:
        self._client = redis.Redis.from_url(
            url, socket_timeout=REDIS_TIMEOUT_SECONDS, socket_connect_timeout=REDIS_TIMEOUT_SECONDS
        )
        self._script = self._client.register_script(_GCRA_LUA)
        self._warned_at = 0.0

    def take(self, org: str, policy: RatePolicy) -> Decision:
        interval_us = max(1, round(policy.interval * 1_000_000))
        try:
            raw = self._script(keys=[KEY_PREFIX + org], args=[interval_us, policy.burst])
        except redis.RedisError:
            if time.monotonic() - self._warned_at > 60:
                self._warned_at = time.monotonic()
                log.warning("rate limiter: Redis failed; admitting requests", exc_info=True)
            return Decision(True, 0.0, policy.burst, 0.0)
        allowed, retry_us, remaining, reset_us = (int(v) for v in cast(list[int], raw))
        return Decision(allowed == 1, retry_us / 1e6, remaining, reset_us / 1e6)


@lru_cache(maxsize=4)
def buckets_for(broker_url: str) -> Buckets:
    """Redis buckets on the broker's Redis; in-process buckets otherwise."""
    if broker_url.startswith(("redis://", "rediss://")):
        return RedisBuckets(broker_url)
    return LocalBuckets()
