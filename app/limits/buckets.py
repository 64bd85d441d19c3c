"""Token buckets per org, as GCRA (the generic cell rate algorithm): one number per org, the
theoretical arrival time (TAT) of its next request. A request at `now` is admitted when
`TAT + interval - burst * interval <= now`, and then moves TAT one interval later (from `now`
at the earliest). So `burst` requests pass at once, then one per `interval`.

Two stores of the same algorithm: `RedisBuckets` (one Lua script, Redis's own clock: every API
process of a deployment shares the bucket) when the broker is Redis, `LocalBuckets` (in the
process) in embedded mode, which has no Redis and one API process.

A process's share: while an org's bucket stays at least half full after it, a Redis call takes
`share_size(policy)` tokens at once (5 % of a second's rate) for this process to spend without
I/O during the next `SHARE_SECONDS`; an org near its limit takes one token a request, as
before. So the bucket never admits more than its policy (a share is taken from it), and an org
far below its limit costs Redis one call per share, not one per request. What a share leaves
unspent when it lapses is lost: at most 5 % of the rate per process, and only while the bucket
is half full anyway, so it never turns an admission into a refusal.
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
SHARE_SECONDS = 1.0
SHARE_OF_RATE = 0.05


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


def share_size(policy: RatePolicy) -> int:
    """Tokens a process takes at once while its org's bucket stays half full."""
    return max(1, min(int(policy.per_second * SHARE_OF_RATE), policy.burst // 10))


class Buckets(Protocol):
    def take(self, org: str, policy: RatePolicy) -> Decision:
        """Count one request of `org` and say whether it is admitted."""
        ...

    def take_held(self, org: str, policy: RatePolicy) -> Decision | None:
        """A token of what this process holds for `org`, with no I/O; None when it holds none
        (then `take`)."""
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

    def take_held(self, org: str, policy: RatePolicy) -> Decision | None:
        return self.take(org, policy)  # in memory already


@dataclass
class _Share:
    policy: RatePolicy
    left: int
    remaining: int  # what the bucket had left once the share was taken
    until: float  # time.monotonic() at which the share lapses
    full_at: float  # time.monotonic() at which the bucket is full again, as of the share


# KEYS[1]: the org's bucket; ARGV: interval in microseconds, burst, and the share wanted (tokens
# taken at once when the bucket stays at least half full after them; else one).
# Returns {admitted 0|1, retry_after µs, remaining, reset µs, tokens taken}. The key expires when
# the bucket is full again (an absent key is a full bucket), so idle orgs cost no memory. TAT is
# written with '%.0f': Lua's own number-to-string keeps 14 digits, too few for µs since 1970.
_GCRA_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local n = 1
if want > 1 and 2 * (tat + want * interval - now) <= burst * interval then n = want end
local new_tat = tat + n * interval
local allow_at = new_tat - burst * interval
if now < allow_at then
  return {0, allow_at - now, 0, tat - now, 0}
end
local ttl_ms = math.max(1, math.ceil((new_tat - now) / 1000))
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', ttl_ms)
return {1, 0, math.floor((burst * interval - (new_tat - now)) / interval), new_tat - now, n}
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
        self._shares: dict[str, _Share] = {}
        self._lock = threading.Lock()

    def take_held(self, org: str, policy: RatePolicy) -> Decision | None:
        with self._lock:
            share = self._shares.get(org)
            if share is None or share.left <= 0 or share.policy != policy:
                return None
            if share.until <= time.monotonic():
                del self._shares[org]
                return None
            share.left -= 1
            now = time.monotonic()
            return Decision(True, 0.0, share.remaining + share.left, max(0.0, share.full_at - now))

    def take(self, org: str, policy: RatePolicy) -> Decision:
        held = self.take_held(org, policy)
        if held is not None:
            return held
        interval_us = max(1, round(policy.interval * 1_000_000))
        want = share_size(policy)
        asked_at = time.monotonic()
        try:
            raw = self._script(keys=[KEY_PREFIX + org], args=[interval_us, policy.burst, want])
        except redis.RedisError:
            if time.monotonic() - self._warned_at > 60:
                self._warned_at = time.monotonic()
                log.warning("rate limiter: Redis failed; admitting requests", exc_info=True)
            return Decision(True, 0.0, policy.burst, 0.0)
        allowed, retry_us, remaining, reset_us, taken = (int(v) for v in cast(list[int], raw))
        if taken > 1:
            with self._lock:
                if len(self._shares) > LocalBuckets.MAX_ORGS:
                    self._shares.clear()
                until, full_at = asked_at + SHARE_SECONDS, asked_at + reset_us / 1e6
                self._shares[org] = _Share(policy, taken - 1, remaining, until, full_at)
            remaining += taken - 1
        return Decision(allowed == 1, retry_us / 1e6, remaining, reset_us / 1e6)


@lru_cache(maxsize=4)
def buckets_for(broker_url: str) -> Buckets:
    """Redis buckets on the broker's Redis; in-process buckets otherwise."""
    if broker_url.startswith(("redis://", "rediss://")):
        return RedisBuckets(broker_url)
    return LocalBuckets()
