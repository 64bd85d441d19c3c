"""The fair-use refusals' counter, shared by the request-rate limit (`rate`, on the API's
ASGI stack) and the in-flight jobs limit (`inflight`, which services call: no web framework)."""

from __future__ import annotations

from prometheus_client import Counter

REJECTIONS = Counter(
    "icebatch_fair_use_rejections_total", "Requests refused by a fair-use limit (429)", ["limit"]
)
