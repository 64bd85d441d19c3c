"""The CDC replication gauges of `/metrics`, one series per tenant (gathered with the operator
metrics in `app.metrics`)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from app.cdc.schemas import CdcLag

CDC_GAUGES = [
    (
        "icebatch_cdc_staging_lag_seconds",
        "Newest accepted minus newest staged event time",
        "staging_lag_seconds",
    ),
    (
        "icebatch_cdc_oldest_unstaged_age_seconds",
        "Age of the oldest accepted event not yet staged (0: none)",
        "oldest_unstaged_age_seconds",
    ),
    (
        "icebatch_cdc_replication_lag_seconds",
        "Newest staged minus newest processed event time (the seed's replication lag)",
        "replication_lag_seconds",
    ),
    (
        "icebatch_cdc_oldest_unprocessed_age_seconds",
        "Age of the oldest accepted event not yet applied to the raw table (0: none)",
        "oldest_unprocessed_age_seconds",
    ),
]


def cdc_families(lags: list[CdcLag]) -> Iterator[Metric]:
    """Per tenant, so the tenant that is behind shows by name (not in a max or an average)."""
    events = GaugeMetricFamily(
        "icebatch_cdc_events",
        "CDC events per tenant: accepted, staged, processed",
        labels=["tenant", "stage"],
    )
    for lag in lags:
        for stage in ("accepted", "staged", "processed"):
            events.add_metric([lag.tenant, stage], getattr(lag, stage))
    yield events
    for name, documentation, attribute in CDC_GAUGES:
        gauge = GaugeMetricFamily(name, documentation, labels=["tenant"])
        for lag in lags:
            gauge.add_metric([lag.tenant], getattr(lag, attribute))
        yield gauge
    yield from _stream_families(lags)


STREAM_GAUGES = [
    ("icebatch_cdc_stream_pending", "Entries delivered to the tenant's group, not acknowledged"),
    ("icebatch_cdc_stream_undelivered", "Entries not yet delivered to the tenant's group"),
    ("icebatch_cdc_stream_oldest_age_seconds", "Age of the oldest entry not yet acknowledged"),
    ("icebatch_cdc_stream_dead_letters", "Entries set aside as unreadable"),
]


def _stream_families(lags: list[CdcLag]) -> Iterator[Metric]:
    """Per Debezium Redis stream a tenant reads (`app/cdc/streams.py`)."""
    families = {
        name: GaugeMetricFamily(name, doc, labels=["tenant", "stream"])
        for name, doc in STREAM_GAUGES
    }
    for lag in lags:
        for stream in lag.streams:
            if stream.error is not None:
                continue
            labels = [lag.tenant, stream.stream]
            families["icebatch_cdc_stream_pending"].add_metric(labels, stream.pending)
            undelivered = stream.undelivered if stream.undelivered is not None else 0
            families["icebatch_cdc_stream_undelivered"].add_metric(labels, undelivered)
            oldest = max(stream.oldest_pending_age_seconds, stream.oldest_undelivered_age_seconds)
            families["icebatch_cdc_stream_oldest_age_seconds"].add_metric(labels, oldest)
            families["icebatch_cdc_stream_dead_letters"].add_metric(labels, stream.dead_letters)
    yield from families.values()
