from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.snapshot_out_icebatch import SnapshotOutIcebatch
    from ..models.snapshot_out_summary import SnapshotOutSummary
    from ..models.snapshot_out_tombstone import SnapshotOutTombstone
    from ..models.snapshot_out_tombstones import SnapshotOutTombstones


T = TypeVar("T", bound="SnapshotOut")


@_attrs_define
class SnapshotOut:
    """
    Attributes:
        committed_at (datetime.datetime):
        icebatch (SnapshotOutIcebatch): What committed it: Icebatch's summary keys (batch id, restatement, request id,
            …)
        operation (str): Iceberg's: append, overwrite, delete or replace
        parent_id (int | None):
        sequence_number (int | None):
        snapshot_id (int):
        summary (SnapshotOutSummary):
        tombstone (SnapshotOutTombstone): The tombstone.* keys this snapshot set
        tombstones (SnapshotOutTombstones): Tombstones in force: {file, inherited, added, deleted, total}
    """

    committed_at: datetime.datetime
    icebatch: SnapshotOutIcebatch
    operation: str
    parent_id: int | None
    sequence_number: int | None
    snapshot_id: int
    summary: SnapshotOutSummary
    tombstone: SnapshotOutTombstone
    tombstones: SnapshotOutTombstones
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        committed_at = self.committed_at.isoformat()

        icebatch = self.icebatch.to_dict()

        operation = self.operation

        parent_id: int | None
        parent_id = self.parent_id

        sequence_number: int | None
        sequence_number = self.sequence_number

        snapshot_id = self.snapshot_id

        summary = self.summary.to_dict()

        tombstone = self.tombstone.to_dict()

        tombstones = self.tombstones.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "committed_at": committed_at,
                "icebatch": icebatch,
                "operation": operation,
                "parent_id": parent_id,
                "sequence_number": sequence_number,
                "snapshot_id": snapshot_id,
                "summary": summary,
                "tombstone": tombstone,
                "tombstones": tombstones,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.snapshot_out_icebatch import SnapshotOutIcebatch  # noqa: PLC0415
        from ..models.snapshot_out_summary import SnapshotOutSummary  # noqa: PLC0415
        from ..models.snapshot_out_tombstone import (
            SnapshotOutTombstone,  # noqa: PLC0415
        )
        from ..models.snapshot_out_tombstones import (
            SnapshotOutTombstones,  # noqa: PLC0415
        )

        d = dict(src_dict)
        committed_at = datetime.datetime.fromisoformat(d.pop("committed_at"))

        icebatch = SnapshotOutIcebatch.from_dict(d.pop("icebatch"))

        operation = d.pop("operation")

        def _parse_parent_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        parent_id = _parse_parent_id(d.pop("parent_id"))

        def _parse_sequence_number(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        sequence_number = _parse_sequence_number(d.pop("sequence_number"))

        snapshot_id = d.pop("snapshot_id")

        summary = SnapshotOutSummary.from_dict(d.pop("summary"))

        tombstone = SnapshotOutTombstone.from_dict(d.pop("tombstone"))

        tombstones = SnapshotOutTombstones.from_dict(d.pop("tombstones"))

        snapshot_out = cls(
            committed_at=committed_at,
            icebatch=icebatch,
            operation=operation,
            parent_id=parent_id,
            sequence_number=sequence_number,
            snapshot_id=snapshot_id,
            summary=summary,
            tombstone=tombstone,
            tombstones=tombstones,
        )

        snapshot_out.additional_properties = d
        return snapshot_out

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
