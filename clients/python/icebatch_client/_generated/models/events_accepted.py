from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EventsAccepted")


@_attrs_define
class EventsAccepted:
    """
    Attributes:
        accepted (int): Events accepted (durable) by this request
        first_sequence (int): Sequence number of the request's first event
        last_sequence (int): Sequence number of the request's last event
    """

    accepted: int
    first_sequence: int
    last_sequence: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        accepted = self.accepted

        first_sequence = self.first_sequence

        last_sequence = self.last_sequence

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "accepted": accepted,
                "first_sequence": first_sequence,
                "last_sequence": last_sequence,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        accepted = d.pop("accepted")

        first_sequence = d.pop("first_sequence")

        last_sequence = d.pop("last_sequence")

        events_accepted = cls(
            accepted=accepted,
            first_sequence=first_sequence,
            last_sequence=last_sequence,
        )

        events_accepted.additional_properties = d
        return events_accepted

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
