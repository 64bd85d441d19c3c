from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.profile_merged import ProfileMerged
    from ..models.profile_record import ProfileRecord


T = TypeVar("T", bound="Profile")


@_attrs_define
class Profile:
    """
    Attributes:
        cluster_id (str): The cluster's smallest identity
        entity_id (str):
        members (list[str]): Every identity linked to this one, itself included
        merged (ProfileMerged): The records' documents deep-merged, the newer timestamp winning per field
        records (list[ProfileRecord]): The members' live records
    """

    cluster_id: str
    entity_id: str
    members: list[str]
    merged: ProfileMerged
    records: list[ProfileRecord]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cluster_id = self.cluster_id

        entity_id = self.entity_id

        members = self.members

        merged = self.merged.to_dict()

        records = []
        for records_item_data in self.records:
            records_item = records_item_data.to_dict()
            records.append(records_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cluster_id": cluster_id,
                "entity_id": entity_id,
                "members": members,
                "merged": merged,
                "records": records,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.profile_merged import ProfileMerged  # noqa: PLC0415
        from ..models.profile_record import ProfileRecord  # noqa: PLC0415

        d = dict(src_dict)
        cluster_id = d.pop("cluster_id")

        entity_id = d.pop("entity_id")

        members = cast(list[str], d.pop("members"))

        merged = ProfileMerged.from_dict(d.pop("merged"))

        records = []
        _records = d.pop("records")
        for records_item_data in _records:
            records_item = ProfileRecord.from_dict(records_item_data)

            records.append(records_item)

        profile = cls(
            cluster_id=cluster_id,
            entity_id=entity_id,
            members=members,
            merged=merged,
            records=records,
        )

        profile.additional_properties = d
        return profile

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
