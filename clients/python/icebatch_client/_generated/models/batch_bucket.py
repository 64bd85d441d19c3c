from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.batch_bucket_counts import BatchBucketCounts


T = TypeVar("T", bound="BatchBucket")


@_attrs_define
class BatchBucket:
    """
    Attributes:
        counts (BatchBucketCounts): Batches created in the bucket, by their status now (absent: none)
        start (datetime.datetime): The bucket's start (UTC)
    """

    counts: BatchBucketCounts
    start: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        counts = self.counts.to_dict()

        start = self.start.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "counts": counts,
                "start": start,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.batch_bucket_counts import BatchBucketCounts  # noqa: PLC0415

        d = dict(src_dict)
        counts = BatchBucketCounts.from_dict(d.pop("counts"))

        start = datetime.datetime.fromisoformat(d.pop("start"))

        batch_bucket = cls(
            counts=counts,
            start=start,
        )

        batch_bucket.additional_properties = d
        return batch_bucket

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
