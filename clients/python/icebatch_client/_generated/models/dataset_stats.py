from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.dataset_stats_batches import DatasetStatsBatches


T = TypeVar("T", bound="DatasetStats")


@_attrs_define
class DatasetStats:
    """What a monitoring page shows of a dataset (the web UI's datasets list).

    Attributes:
        active_tombstones (int): Tombstones in force at the current snapshot
        batches (DatasetStatsBatches): Batches by status (loading, staged, processing, success, failed, …)
        current_snapshot_id (int | None):
        dataset_id (str):
        last_ingest_at (datetime.datetime | None): When the newest batch landed
        rows (int): The rows a read of the current snapshot returns: from metadata (the snapshot summary's records less
            its position deletes, less the rows the tombstones not yet materialized hide), never a scan; GDPR-hidden,
            reverted and replaced rows are not counted
        rows_ingested (int): Rows the batches whose rows are live ('success') ingested: what was ingested, hidden rows
            included (0 for a CDC raw table, which no batch writes)
        snapshots (int): Snapshots the table keeps
    """

    active_tombstones: int
    batches: DatasetStatsBatches
    current_snapshot_id: int | None
    dataset_id: str
    last_ingest_at: datetime.datetime | None
    rows: int
    rows_ingested: int
    snapshots: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active_tombstones = self.active_tombstones

        batches = self.batches.to_dict()

        current_snapshot_id: int | None
        current_snapshot_id = self.current_snapshot_id

        dataset_id = self.dataset_id

        last_ingest_at: None | str
        if isinstance(self.last_ingest_at, datetime.datetime):
            last_ingest_at = self.last_ingest_at.isoformat()
        else:
            last_ingest_at = self.last_ingest_at

        rows = self.rows

        rows_ingested = self.rows_ingested

        snapshots = self.snapshots

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active_tombstones": active_tombstones,
                "batches": batches,
                "current_snapshot_id": current_snapshot_id,
                "dataset_id": dataset_id,
                "last_ingest_at": last_ingest_at,
                "rows": rows,
                "rows_ingested": rows_ingested,
                "snapshots": snapshots,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dataset_stats_batches import DatasetStatsBatches  # noqa: PLC0415

        d = dict(src_dict)
        active_tombstones = d.pop("active_tombstones")

        batches = DatasetStatsBatches.from_dict(d.pop("batches"))

        def _parse_current_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        current_snapshot_id = _parse_current_snapshot_id(d.pop("current_snapshot_id"))

        dataset_id = d.pop("dataset_id")

        def _parse_last_ingest_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_ingest_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_ingest_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_ingest_at = _parse_last_ingest_at(d.pop("last_ingest_at"))

        rows = d.pop("rows")

        rows_ingested = d.pop("rows_ingested")

        snapshots = d.pop("snapshots")

        dataset_stats = cls(
            active_tombstones=active_tombstones,
            batches=batches,
            current_snapshot_id=current_snapshot_id,
            dataset_id=dataset_id,
            last_ingest_at=last_ingest_at,
            rows=rows,
            rows_ingested=rows_ingested,
            snapshots=snapshots,
        )

        dataset_stats.additional_properties = d
        return dataset_stats

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
