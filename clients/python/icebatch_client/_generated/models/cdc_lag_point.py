from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="CdcLagPoint")


@_attrs_define
class CdcLagPoint:
    """
    Attributes:
        accepted (int):
        at (datetime.datetime): When the beat's CDC pass took the sample
        oldest_unprocessed_age_seconds (float):
        processed (int):
        replication_lag_seconds (float):
        staged (int):
        staging_lag_seconds (float):
    """

    accepted: int
    at: datetime.datetime
    oldest_unprocessed_age_seconds: float
    processed: int
    replication_lag_seconds: float
    staged: int
    staging_lag_seconds: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        accepted = self.accepted

        at = self.at.isoformat()

        oldest_unprocessed_age_seconds = self.oldest_unprocessed_age_seconds

        processed = self.processed

        replication_lag_seconds = self.replication_lag_seconds

        staged = self.staged

        staging_lag_seconds = self.staging_lag_seconds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "accepted": accepted,
                "at": at,
                "oldest_unprocessed_age_seconds": oldest_unprocessed_age_seconds,
                "processed": processed,
                "replication_lag_seconds": replication_lag_seconds,
                "staged": staged,
                "staging_lag_seconds": staging_lag_seconds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        accepted = d.pop("accepted")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        oldest_unprocessed_age_seconds = d.pop("oldest_unprocessed_age_seconds")

        processed = d.pop("processed")

        replication_lag_seconds = d.pop("replication_lag_seconds")

        staged = d.pop("staged")

        staging_lag_seconds = d.pop("staging_lag_seconds")

        cdc_lag_point = cls(
            accepted=accepted,
            at=at,
            oldest_unprocessed_age_seconds=oldest_unprocessed_age_seconds,
            processed=processed,
            replication_lag_seconds=replication_lag_seconds,
            staged=staged,
            staging_lag_seconds=staging_lag_seconds,
        )

        cdc_lag_point.additional_properties = d
        return cdc_lag_point

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
