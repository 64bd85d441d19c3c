"""The GCRA buckets against a textbook token bucket, and the Redis and in-process stores."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.limits.buckets import Buckets, LocalBuckets, RatePolicy, RedisBuckets, gcra, share_size
from tests.fixtures.environments import STORES, Environment
from tests.fixtures.profile import budget

EPS = 1e-9


class TokenBucket:
    """The independent model: `burst` tokens, refilled continuously at `rate`, one a request."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.last: float | None = None

    def take(self, now: float) -> tuple[bool, float, int, float]:
        """→ (admitted, seconds until a token, whole tokens left, seconds until full)."""
        if self.last is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1 - EPS:
            self.tokens -= 1
            admitted, wait = True, 0.0
        else:
            admitted, wait = False, (1 - self.tokens) / self.rate
        left = max(0, math.floor(self.tokens + EPS))
        return admitted, wait, left, (self.burst - self.tokens) / self.rate


@budget(200)
@given(
    rate=st.sampled_from([0.5, 1.0, 2.0, 4.0, 8.0, 100.0]),
    burst=st.integers(min_value=1, max_value=12),
    gaps_ms=st.lists(st.integers(min_value=0, max_value=1500), min_size=1, max_size=60),
)
def test_gcra_is_a_token_bucket(rate: float, burst: int, gaps_ms: list[int]) -> None:
    policy = RatePolicy(rate, burst)
    model = TokenBucket(rate, burst)
    now = 1000.0
    tat = now
    for gap in gaps_ms:
        now += gap / 1000
        decision, tat = gcra(tat, now, policy)
        admitted, wait, left, full = model.take(now)
        assert decision.allowed == admitted
        assert decision.retry_after == pytest.approx(wait, abs=1e-6)
        assert decision.remaining == left
        assert decision.reset == pytest.approx(full, abs=1e-6)


def test_burst_then_one_per_interval() -> None:
    policy = RatePolicy(per_second=2, burst=3)
    tat, now = 0.0, 10.0
    remaining = []
    for _ in range(3):
        decision, tat = gcra(tat, now, policy)
        assert decision.allowed
        remaining.append(decision.remaining)
    assert remaining == [2, 1, 0]
    refused, tat_after = gcra(tat, now, policy)
    assert not refused.allowed
    assert tat_after == tat  # a refusal does not drain the bucket further
    assert refused.retry_after == pytest.approx(0.5)  # one interval
    assert refused.reset == pytest.approx(1.5)  # three intervals to be full
    assert not gcra(tat, now + 0.49, policy)[0].allowed
    decision, tat = gcra(tat, now + 0.5, policy)
    assert decision.allowed
    assert not gcra(tat, now + 0.5, policy)[0].allowed
    assert gcra(tat, now + 10, policy)[0].remaining == 2  # full again, one taken


@pytest.fixture(params=STORES)
def buckets(
    request: pytest.FixtureRequest, environments: dict[str, Environment]
) -> Iterator[Buckets]:
    """In-process buckets (embedded) or Redis buckets on the test run's own Redis database."""
    if request.param == "embedded":
        yield LocalBuckets()
    else:
        yield RedisBuckets(environments["postgres"].env["ICEBATCH_BROKER_URL"])


def test_store_admits_a_burst_then_the_rate(buckets: Buckets) -> None:
    org, policy = f"org_{uuid.uuid4().hex[:8]}", RatePolicy(per_second=4, burst=3)
    started = time.monotonic()
    decisions = [buckets.take(org, policy) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    elapsed = time.monotonic() - started
    refused = decisions[-1]
    # one interval (0.25 s) after the bucket ran dry, less the time the four calls took
    assert 0.25 - elapsed - 0.01 <= refused.retry_after <= 0.25
    assert 0.75 - elapsed - 0.01 <= refused.reset <= 0.75
    assert buckets.take(f"org_{uuid.uuid4().hex[:8]}", policy).allowed  # buckets are per org
    time.sleep(refused.retry_after + 0.01)
    assert buckets.take(org, policy).allowed
    assert not buckets.take(org, policy).allowed


@pytest.mark.skipif("postgres" not in STORES, reason="Redis is not used")
def test_redis_bucket_is_shared_by_processes(environments: dict[str, Environment]) -> None:
    """Two API processes (two clients with their own connections) drain one bucket."""
    url = environments["postgres"].env["ICEBATCH_BROKER_URL"]
    first, second = RedisBuckets(url), RedisBuckets(url)
    org, policy = f"org_{uuid.uuid4().hex[:8]}", RatePolicy(per_second=0.5, burst=4)
    taken = [b.take(org, policy).allowed for b in (first, second, first, second, first, second)]
    assert taken == [True, True, True, True, False, False]


def test_redis_down_admits() -> None:
    """A limiter that cannot reach Redis lets requests through rather than failing them."""
    dead = RedisBuckets("redis://127.0.0.1:1/0")
    decision = dead.take("org_x", RatePolicy(per_second=1, burst=5))
    assert decision.allowed
    assert decision.remaining == 5


@pytest.mark.skipif("postgres" not in STORES, reason="Redis is not used")
@budget(25)
@given(
    rate=st.sampled_from([20.0, 100.0, 400.0, 2000.0]),
    burst=st.sampled_from([10, 40, 200, 1000]),
    picks=st.lists(st.integers(min_value=0, max_value=2), min_size=50, max_size=400),
)
def test_shares_never_admit_more_than_the_bucket(
    environments: dict[str, Environment], rate: float, burst: int, picks: list[int]
) -> None:
    """Three processes take shares of one org's bucket as fast as they can: the requests they
    admit never exceed what the bucket allows (burst + rate × elapsed), and while the bucket
    stays half full they cost Redis fewer calls than requests."""
    url = environments["postgres"].env["ICEBATCH_BROKER_URL"]
    processes = [RedisBuckets(url) for _ in range(3)]
    org, policy = f"org_{uuid.uuid4().hex[:8]}", RatePolicy(per_second=rate, burst=burst)
    calls = 0
    for store in processes:
        script = store._script

        def counted(*args: object, script: object = script, **kwargs: object) -> object:
            nonlocal calls
            calls += 1
            return script(*args, **kwargs)  # type: ignore[operator]

        store._script = counted  # type: ignore[assignment]
    started = time.monotonic()
    admitted = sum(processes[p].take(org, policy).allowed for p in picks)
    elapsed = time.monotonic() - started
    assert admitted <= burst + rate * elapsed + 1
    if share_size(policy) > 1 and len(picks) <= burst // 2:
        assert calls < len(picks)  # far below the limit: shares, not one call a request
