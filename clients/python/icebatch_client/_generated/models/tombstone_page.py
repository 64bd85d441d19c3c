from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.tombstone_out import TombstoneOut


T = TypeVar("T", bound="TombstonePage")


@_attrs_define
class TombstonePage:
    """
    Attributes:
        items (list[TombstoneOut]):
        snapshot_id (int | None):
        total (int):
        next_ (None | str | Unset): Opaque cursor of the next page: pass it as `cursor`. null on the last page.
    """

    items: list[TombstoneOut]
    snapshot_id: int | None
    total: int
    next_: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        snapshot_id: int | None
        snapshot_id = self.snapshot_id

        total = self.total

        next_: None | str | Unset
        if isinstance(self.next_, Unset):
            next_ = UNSET
        else:
            next_ = self.next_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "items": items,
                "snapshot_id": snapshot_id,
                "total": total,
            }
        )
        if next_ is not UNSET:
            field_dict["next"] = next_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tombstone_out import TombstoneOut  # noqa: PLC0415

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = TombstoneOut.from_dict(items_item_data)

            items.append(items_item)

        def _parse_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        snapshot_id = _parse_snapshot_id(d.pop("snapshot_id"))

        total = d.pop("total")

        def _parse_next_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_ = _parse_next_(d.pop("next", UNSET))

        tombstone_page = cls(
            items=items,
            snapshot_id=snapshot_id,
            total=total,
            next_=next_,
        )

        tombstone_page.additional_properties = d
        return tombstone_page

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
