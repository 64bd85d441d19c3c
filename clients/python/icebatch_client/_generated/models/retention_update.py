from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RetentionUpdate")


@_attrs_define
class RetentionUpdate:
    """A dataset's retention policy; a field left out keeps its current value.

    Attributes:
        max_snapshot_age_seconds (float | None | Unset): Snapshots younger than this are kept
        min_snapshots (int | None | Unset): The newest snapshots always kept
        orphan_age_seconds (float | None | Unset): Unreferenced files younger than this are left alone (a write in
            progress)
    """

    max_snapshot_age_seconds: float | None | Unset = UNSET
    min_snapshots: int | None | Unset = UNSET
    orphan_age_seconds: float | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_snapshot_age_seconds: float | None | Unset
        if isinstance(self.max_snapshot_age_seconds, Unset):
            max_snapshot_age_seconds = UNSET
        else:
            max_snapshot_age_seconds = self.max_snapshot_age_seconds

        min_snapshots: int | None | Unset
        if isinstance(self.min_snapshots, Unset):
            min_snapshots = UNSET
        else:
            min_snapshots = self.min_snapshots

        orphan_age_seconds: float | None | Unset
        if isinstance(self.orphan_age_seconds, Unset):
            orphan_age_seconds = UNSET
        else:
            orphan_age_seconds = self.orphan_age_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_snapshot_age_seconds is not UNSET:
            field_dict["max_snapshot_age_seconds"] = max_snapshot_age_seconds
        if min_snapshots is not UNSET:
            field_dict["min_snapshots"] = min_snapshots
        if orphan_age_seconds is not UNSET:
            field_dict["orphan_age_seconds"] = orphan_age_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_max_snapshot_age_seconds(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        max_snapshot_age_seconds = _parse_max_snapshot_age_seconds(
            d.pop("max_snapshot_age_seconds", UNSET)
        )

        def _parse_min_snapshots(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        min_snapshots = _parse_min_snapshots(d.pop("min_snapshots", UNSET))

        def _parse_orphan_age_seconds(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        orphan_age_seconds = _parse_orphan_age_seconds(
            d.pop("orphan_age_seconds", UNSET)
        )

        retention_update = cls(
            max_snapshot_age_seconds=max_snapshot_age_seconds,
            min_snapshots=min_snapshots,
            orphan_age_seconds=orphan_age_seconds,
        )

        return retention_update
