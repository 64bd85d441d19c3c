from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RetentionOut")


@_attrs_define
class RetentionOut:
    """
    Attributes:
        custom (list[str]): The fields set on this dataset (others: defaults)
        max_snapshot_age_seconds (float): Snapshots younger than this are kept
        min_snapshots (int): The newest snapshots always kept
        orphan_age_seconds (float): Unreferenced files younger than this are left alone (a write in progress)
    """

    custom: list[str]
    max_snapshot_age_seconds: float
    min_snapshots: int
    orphan_age_seconds: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        custom = self.custom

        max_snapshot_age_seconds = self.max_snapshot_age_seconds

        min_snapshots = self.min_snapshots

        orphan_age_seconds = self.orphan_age_seconds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "custom": custom,
                "max_snapshot_age_seconds": max_snapshot_age_seconds,
                "min_snapshots": min_snapshots,
                "orphan_age_seconds": orphan_age_seconds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        custom = cast(list[str], d.pop("custom"))

        max_snapshot_age_seconds = d.pop("max_snapshot_age_seconds")

        min_snapshots = d.pop("min_snapshots")

        orphan_age_seconds = d.pop("orphan_age_seconds")

        retention_out = cls(
            custom=custom,
            max_snapshot_age_seconds=max_snapshot_age_seconds,
            min_snapshots=min_snapshots,
            orphan_age_seconds=orphan_age_seconds,
        )

        retention_out.additional_properties = d
        return retention_out

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
