from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ErrorGroup")


@_attrs_define
class ErrorGroup:
    """
    Attributes:
        batch_ids (list[str]): The newest of them (at most 5)
        batches (int): Failed batches with at least one
        errors (int): Row-level errors with this reason
        last_at (datetime.datetime | None): When the newest of them failed
        reason (str): The row-level error's reason, as the batches report it
    """

    batch_ids: list[str]
    batches: int
    errors: int
    last_at: datetime.datetime | None
    reason: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        batch_ids = self.batch_ids

        batches = self.batches

        errors = self.errors

        last_at: None | str
        if isinstance(self.last_at, datetime.datetime):
            last_at = self.last_at.isoformat()
        else:
            last_at = self.last_at

        reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "batch_ids": batch_ids,
                "batches": batches,
                "errors": errors,
                "last_at": last_at,
                "reason": reason,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        batch_ids = cast(list[str], d.pop("batch_ids"))

        batches = d.pop("batches")

        errors = d.pop("errors")

        def _parse_last_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_at = _parse_last_at(d.pop("last_at"))

        reason = d.pop("reason")

        error_group = cls(
            batch_ids=batch_ids,
            batches=batches,
            errors=errors,
            last_at=last_at,
            reason=reason,
        )

        error_group.additional_properties = d
        return error_group

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
