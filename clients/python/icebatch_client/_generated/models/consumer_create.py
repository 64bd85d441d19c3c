from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ConsumerCreate")


@_attrs_define
class ConsumerCreate:
    """
    Attributes:
        name (str): The consumer's name, unique per dataset
        snapshot_id (int | None | Unset): The snapshot the next increment starts after (default: current)
    """

    name: str
    snapshot_id: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        snapshot_id: int | None | Unset
        if isinstance(self.snapshot_id, Unset):
            snapshot_id = UNSET
        else:
            snapshot_id = self.snapshot_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if snapshot_id is not UNSET:
            field_dict["snapshot_id"] = snapshot_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_snapshot_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        snapshot_id = _parse_snapshot_id(d.pop("snapshot_id", UNSET))

        consumer_create = cls(
            name=name,
            snapshot_id=snapshot_id,
        )

        return consumer_create
