from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.error_group import ErrorGroup


T = TypeVar("T", bound="ErrorGroups")


@_attrs_define
class ErrorGroups:
    """Row-level errors of the dataset's failed batches, grouped by reason, most first.

    Attributes:
        dataset_id (str):
        failed_batches_read (int): At most this many newest failed batches read
        groups (list[ErrorGroup]):
    """

    dataset_id: str
    failed_batches_read: int
    groups: list[ErrorGroup]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dataset_id = self.dataset_id

        failed_batches_read = self.failed_batches_read

        groups = []
        for groups_item_data in self.groups:
            groups_item = groups_item_data.to_dict()
            groups.append(groups_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dataset_id": dataset_id,
                "failed_batches_read": failed_batches_read,
                "groups": groups,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.error_group import ErrorGroup  # noqa: PLC0415

        d = dict(src_dict)
        dataset_id = d.pop("dataset_id")

        failed_batches_read = d.pop("failed_batches_read")

        groups = []
        _groups = d.pop("groups")
        for groups_item_data in _groups:
            groups_item = ErrorGroup.from_dict(groups_item_data)

            groups.append(groups_item)

        error_groups = cls(
            dataset_id=dataset_id,
            failed_batches_read=failed_batches_read,
            groups=groups,
        )

        error_groups.additional_properties = d
        return error_groups

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
