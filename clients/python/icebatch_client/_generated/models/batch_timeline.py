from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.timeline_bucket import TimelineBucket

if TYPE_CHECKING:
    from ..models.batch_bucket import BatchBucket


T = TypeVar("T", bound="BatchTimeline")


@_attrs_define
class BatchTimeline:
    """Batches over time by status: the last 48 buckets, oldest first, empty ones included.

    Attributes:
        bucket (TimelineBucket):
        buckets (list[BatchBucket]):
        dataset_id (str):
    """

    bucket: TimelineBucket
    buckets: list[BatchBucket]
    dataset_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bucket = self.bucket.value

        buckets = []
        for buckets_item_data in self.buckets:
            buckets_item = buckets_item_data.to_dict()
            buckets.append(buckets_item)

        dataset_id = self.dataset_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bucket": bucket,
                "buckets": buckets,
                "dataset_id": dataset_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.batch_bucket import BatchBucket  # noqa: PLC0415

        d = dict(src_dict)
        bucket = TimelineBucket(d.pop("bucket"))

        buckets = []
        _buckets = d.pop("buckets")
        for buckets_item_data in _buckets:
            buckets_item = BatchBucket.from_dict(buckets_item_data)

            buckets.append(buckets_item)

        dataset_id = d.pop("dataset_id")

        batch_timeline = cls(
            bucket=bucket,
            buckets=buckets,
            dataset_id=dataset_id,
        )

        batch_timeline.additional_properties = d
        return batch_timeline

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
