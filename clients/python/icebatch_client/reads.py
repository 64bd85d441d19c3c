"""Reading: rows now or at a snapshot, increments between snapshots (Arrow), and consumers
that read each increment once from a server-side checkpoint."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx

from icebatch_client._base import Base, _snapshot
from icebatch_client._generated.api.retention import consumers_list, consumers_set
from icebatch_client._generated.models import ConsumerCreate
from icebatch_client.errors import raise_for

if TYPE_CHECKING:  # pyarrow is imported by the reads only: a client that never reads starts fast
    import pyarrow as pa


@dataclass(frozen=True)
class Changes:
    """An increment: the rows, and the range it covers, (from_snapshot, to_snapshot]."""

    table: pa.Table
    from_snapshot: int | None
    to_snapshot: int | None


@dataclass(frozen=True)
class Increment:
    """What a consumer has not read yet: rows appended and rows deleted over the range."""

    appended: pa.Table
    deleted: pa.Table
    from_snapshot: int | None
    to_snapshot: int | None


class Reads(Base):
    """Rows and increments as `pyarrow.Table`s."""

    def _arrow(self, path: str, params: dict[str, Any]) -> tuple[pa.Table, httpx.Headers]:
        import pyarrow as pa

        with self._http.stream("GET", path, params={**params, "format": "arrow"}) as response:
            raise_for(response)
            data = response.read()
        if not data:
            return pa.table({}), response.headers
        return pa.ipc.open_stream(data).read_all(), response.headers

    def read_rows(self, dataset: str, *, as_of: int | str | datetime | None = None) -> pa.Table:
        """The rows visible now, or at `as_of` (a snapshot id or a time)."""
        params: dict[str, Any] = {}
        if as_of is not None:
            params["as_of"] = as_of.isoformat() if isinstance(as_of, datetime) else str(as_of)
        table, _ = self._arrow(f"/v1/datasets/{self.dataset_id(dataset)}/rows", params)
        return table

    def changes(
        self,
        dataset: str,
        *,
        since_snapshot: int | None = None,
        to_snapshot: int | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        kind: str = "appended",
    ) -> Changes:
        """The rows `kind` (appended or deleted) over (since_snapshot, to_snapshot]; the range
        the server resolved comes back with them."""
        params: dict[str, Any] = {"kind": kind}
        for name, value in (
            ("from_snapshot", since_snapshot),
            ("to_snapshot", to_snapshot),
            ("since", since),
            ("until", until),
        ):
            if value is not None:
                params[name] = value.isoformat() if isinstance(value, datetime) else value
        table, headers = self._arrow(f"/v1/datasets/{self.dataset_id(dataset)}/changes", params)
        return Changes(
            table,
            _snapshot(headers.get("X-Icebatch-From-Snapshot")),
            _snapshot(headers.get("X-Icebatch-To-Snapshot")),
        )

    def consumer(self, dataset: str, name: str) -> Consumer:
        """A consumer reading the dataset's increments from its server-side checkpoint."""
        return Consumer(self, self.dataset_id(dataset), name)


class Consumer:
    """Reads each increment once: from its checkpoint (kept by the server, which pins the
    snapshots it needs) to the current snapshot; `commit` moves the checkpoint on."""

    def __init__(self, client: Reads, dataset_id: str, name: str) -> None:
        self.client, self.dataset_id, self.name = client, dataset_id, name

    def checkpoint(self) -> int | None:
        """The snapshot the next increment starts after (None: from the empty table)."""
        for consumer in self.client._pages(
            lambda cursor: consumers_list.sync_detailed(
                self.dataset_id, client=self.client._api, limit=500, cursor=cursor
            )
        ):
            if consumer.name == self.name:
                found = consumer.snapshot_id
                return found if isinstance(found, int) else None
        return None

    def next_increment(self) -> Increment:
        """The rows appended and deleted since the checkpoint, up to the current snapshot."""
        start = self.checkpoint()
        appended = self.client.changes(self.dataset_id, since_snapshot=start, kind="appended")
        deleted = self.client.changes(
            self.dataset_id, since_snapshot=start, to_snapshot=appended.to_snapshot, kind="deleted"
        )
        return Increment(appended.table, deleted.table, start, appended.to_snapshot)

    def commit(self, increment: Increment) -> None:
        """Move the checkpoint to the increment's end: the next read starts after it."""
        if increment.to_snapshot is None:
            return
        body = ConsumerCreate.from_dict({"name": self.name, "snapshot_id": increment.to_snapshot})
        self.client._ok(
            consumers_set.sync_detailed(self.dataset_id, client=self.client._api, body=body)
        )
