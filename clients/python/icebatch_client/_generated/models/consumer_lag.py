from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ConsumerLag")


@_attrs_define
class ConsumerLag:
    """
    Attributes:
        name (str):
        seconds_behind (float | None): The current snapshot's commit time less the checkpoint's (null when the
            checkpoint's snapshot is expired or none)
        sequence_number (int):
        snapshot_id (int | None): The checkpoint: the snapshot read last
        snapshots_behind (int): Snapshots committed after the checkpoint
        updated_at (datetime.datetime):
    """

    name: str
    seconds_behind: float | None
    sequence_number: int
    snapshot_id: int | None
    snapshots_behind: int
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        seconds_behind: float | None
        seconds_behind = self.seconds_behind

        sequence_number = self.sequence_number

        snapshot_id: int | None
        snapshot_id = self.snapshot_id

        snapshots_behind = self.snapshots_behind

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "seconds_behind": seconds_behind,
                "sequence_number": sequence_number,
                "snapshot_id": snapshot_id,
                "snapshots_behind": snapshots_behind,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_seconds_behind(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        seconds_behind = _parse_seconds_behind(d.pop("seconds_behind"))

        sequence_number = d.pop("sequence_number")

        def _parse_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        snapshot_id = _parse_snapshot_id(d.pop("snapshot_id"))

        snapshots_behind = d.pop("snapshots_behind")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        consumer_lag = cls(
            name=name,
            seconds_behind=seconds_behind,
            sequence_number=sequence_number,
            snapshot_id=snapshot_id,
            snapshots_behind=snapshots_behind,
            updated_at=updated_at,
        )

        consumer_lag.additional_properties = d
        return consumer_lag

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
