from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.consumer_lag import ConsumerLag


T = TypeVar("T", bound="ConsumerLagList")


@_attrs_define
class ConsumerLagList:
    """Each consumer's checkpoint and how far behind the current snapshot it is.

    Attributes:
        consumers (list[ConsumerLag]):
        current_snapshot_id (int | None):
        dataset_id (str):
    """

    consumers: list[ConsumerLag]
    current_snapshot_id: int | None
    dataset_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        consumers = []
        for consumers_item_data in self.consumers:
            consumers_item = consumers_item_data.to_dict()
            consumers.append(consumers_item)

        current_snapshot_id: int | None
        current_snapshot_id = self.current_snapshot_id

        dataset_id = self.dataset_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "consumers": consumers,
                "current_snapshot_id": current_snapshot_id,
                "dataset_id": dataset_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consumer_lag import ConsumerLag  # noqa: PLC0415

        d = dict(src_dict)
        consumers = []
        _consumers = d.pop("consumers")
        for consumers_item_data in _consumers:
            consumers_item = ConsumerLag.from_dict(consumers_item_data)

            consumers.append(consumers_item)

        def _parse_current_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        current_snapshot_id = _parse_current_snapshot_id(d.pop("current_snapshot_id"))

        dataset_id = d.pop("dataset_id")

        consumer_lag_list = cls(
            consumers=consumers,
            current_snapshot_id=current_snapshot_id,
            dataset_id=dataset_id,
        )

        consumer_lag_list.additional_properties = d
        return consumer_lag_list

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
