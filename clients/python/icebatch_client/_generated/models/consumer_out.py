from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ConsumerOut")


@_attrs_define
class ConsumerOut:
    """
    Attributes:
        dataset_id (str):
        name (str):
        pinned (bool): False once the checkpoint is older than the pin age
        sequence_number (int):
        snapshot_id (int | None):
        updated_at (datetime.datetime):
    """

    dataset_id: str
    name: str
    pinned: bool
    sequence_number: int
    snapshot_id: int | None
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dataset_id = self.dataset_id

        name = self.name

        pinned = self.pinned

        sequence_number = self.sequence_number

        snapshot_id: int | None
        snapshot_id = self.snapshot_id

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dataset_id": dataset_id,
                "name": name,
                "pinned": pinned,
                "sequence_number": sequence_number,
                "snapshot_id": snapshot_id,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dataset_id = d.pop("dataset_id")

        name = d.pop("name")

        pinned = d.pop("pinned")

        sequence_number = d.pop("sequence_number")

        def _parse_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        snapshot_id = _parse_snapshot_id(d.pop("snapshot_id"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        consumer_out = cls(
            dataset_id=dataset_id,
            name=name,
            pinned=pinned,
            sequence_number=sequence_number,
            snapshot_id=snapshot_id,
            updated_at=updated_at,
        )

        consumer_out.additional_properties = d
        return consumer_out

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
