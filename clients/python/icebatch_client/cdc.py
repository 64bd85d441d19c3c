"""CDC replication in the SDK: config, events posted in chunks, lag, profiles, forced runs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from icebatch_client._base import Base, _key
from icebatch_client._generated.api.cdc import (
    cdc_config_get,
    cdc_config_put,
    cdc_lag_get,
    cdc_process,
    cdc_profiles_get,
)
from icebatch_client._generated.models import (
    CdcConfig,
    CdcConfigOut,
    CdcLag,
    DebeziumAccepted,
    EventsAccepted,
    ProcessStarted,
    Profile,
)
from icebatch_client.errors import raise_for


def _chunks(events: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for event in events:
        chunk.append(event)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class Cdc(Base):
    """Your tenant's lake replica (tenant = the key's organization)."""

    def cdc_config(self) -> CdcConfigOut:
        """The tenant's config, and its raw table (dataset id and Spark name)."""
        found: CdcConfigOut = self._ok(cdc_config_get.sync_detailed(client=self._api))
        return found

    def cdc_configure(
        self,
        pushdown: list[dict[str, str]] | None = None,
        *,
        retention_days: float = 7,
        **options: Any,
    ) -> CdcConfigOut:
        """Set pushdown columns ({name, path, type}), the retention window and the cadence
        (`process_interval_seconds`, `backlog_threshold`); admin key."""
        body = CdcConfig.from_dict(
            {"pushdown": pushdown or [], "retention_days": retention_days, **options}
        )
        found: CdcConfigOut = self._ok(cdc_config_put.sync_detailed(client=self._api, body=body))
        return found

    def post_events(
        self, events: Iterable[dict[str, Any]], *, chunk_size: int = 10_000
    ) -> list[EventsAccepted]:
        """Post change events, `chunk_size` per request (JSON lines). Each request carries its
        own Idempotency-Key, so a retried chunk is accepted once."""
        accepted: list[EventsAccepted] = []
        for chunk in _chunks(events, chunk_size):
            body = "\n".join(json.dumps(e, default=str) for e in chunk).encode()
            response = self._http.post(
                "/v1/cdc/events",
                content=body,
                headers={"Content-Type": "application/x-ndjson", "Idempotency-Key": _key()},
            )
            raise_for(response)
            accepted.append(EventsAccepted.from_dict(response.json()))
        return accepted

    def post_debezium(
        self, values: Iterable[dict[str, Any] | None], *, batch_size: int = 200
    ) -> list[DebeziumAccepted]:
        """Post Debezium change event values (`{"schema", "payload"}` or the payload alone;
        None for a Kafka tombstone) as JSON arrays of `batch_size`, as Debezium Server's HTTP
        sink does. A retried array is safe (the SDK retries a lost answer): each change is known
        by its log position, and a second delivery counts as a duplicate."""
        accepted: list[DebeziumAccepted] = []
        for batch in _chunks(values, batch_size):
            response = self._http.post(
                "/v1/cdc/debezium",
                content=json.dumps(batch, default=str).encode(),
                # no server-side key needed: it marks the POST as safe to send again
                headers={"Content-Type": "application/json", "Idempotency-Key": _key()},
            )
            raise_for(response)
            accepted.append(DebeziumAccepted.from_dict(response.json()))
        return accepted

    def cdc_lag(self) -> CdcLag:
        """Accepted, staged and processed events, and the staging and replication lags."""
        found: CdcLag = self._ok(cdc_lag_get.sync_detailed(client=self._api))
        return found

    def profile(self, entity_id: str) -> Profile:
        """The merged profile of an identity (NotFound when it has no record and no link)."""
        found: Profile = self._ok(cdc_profiles_get.sync_detailed(entity_id, client=self._api))
        return found

    def cdc_process(self, *, wait: bool = True, timeout: float | None = None) -> CdcLag:
        """Stage and process now instead of on the schedule; with `wait`, return the lag once
        every event accepted before the call is applied."""
        target = self.cdc_lag().accepted
        started: ProcessStarted = self._ok(cdc_process.sync_detailed(client=self._api))
        if not wait:
            return self.cdc_lag()
        return self.wait_replicated(target, timeout=timeout, started=started)

    def wait_replicated(
        self,
        through: int | None = None,
        *,
        timeout: float | None = None,
        started: ProcessStarted | None = None,
    ) -> CdcLag:
        """Poll the lag until events up to sequence `through` (default: all accepted so far)
        are applied; TimeoutError after `timeout` seconds."""
        target = self.cdc_lag().accepted if through is None else through
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = self.poll_interval
        while True:
            lag = self.cdc_lag()
            if lag.processed >= target:
                return lag
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(
                    f"{lag.processed} of {target} events applied after {timeout} s "
                    f"(staged {lag.staged})"
                )
            time.sleep(pause)
            pause = min(pause * 2, self.max_poll_interval)
