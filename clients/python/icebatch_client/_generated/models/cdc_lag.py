from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.stream_lag import StreamLag


T = TypeVar("T", bound="CdcLag")


@_attrs_define
class CdcLag:
    """The tenant's progress (the seed's ProgressMap) and its two lags.

    Attributes:
        accepted (int): Events accepted (= the last sequence number given)
        newest_accepted_timestamp (datetime.datetime | None):
        newest_processed_timestamp (datetime.datetime | None):
        newest_staged_timestamp (datetime.datetime | None):
        oldest_unprocessed_age_seconds (float): How long the oldest event not yet applied has waited since it was
            accepted
        oldest_unstaged_age_seconds (float): How long the oldest event not yet staged has waited since it was accepted
        processed (int): Events applied to the raw table
        processed_at (datetime.datetime | None): When the processor last committed
        replication_lag_seconds (float): Newest staged event time minus newest processed event time (the seed's lag)
        staged (int): Events appended to the staging table
        staging_lag_seconds (float): Newest accepted event time minus newest staged event time
        tenant (str):
        streams (list[StreamLag] | Unset): The Debezium Redis streams the tenant reads
    """

    accepted: int
    newest_accepted_timestamp: datetime.datetime | None
    newest_processed_timestamp: datetime.datetime | None
    newest_staged_timestamp: datetime.datetime | None
    oldest_unprocessed_age_seconds: float
    oldest_unstaged_age_seconds: float
    processed: int
    processed_at: datetime.datetime | None
    replication_lag_seconds: float
    staged: int
    staging_lag_seconds: float
    tenant: str
    streams: list[StreamLag] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        accepted = self.accepted

        newest_accepted_timestamp: None | str
        if isinstance(self.newest_accepted_timestamp, datetime.datetime):
            newest_accepted_timestamp = self.newest_accepted_timestamp.isoformat()
        else:
            newest_accepted_timestamp = self.newest_accepted_timestamp

        newest_processed_timestamp: None | str
        if isinstance(self.newest_processed_timestamp, datetime.datetime):
            newest_processed_timestamp = self.newest_processed_timestamp.isoformat()
        else:
            newest_processed_timestamp = self.newest_processed_timestamp

        newest_staged_timestamp: None | str
        if isinstance(self.newest_staged_timestamp, datetime.datetime):
            newest_staged_timestamp = self.newest_staged_timestamp.isoformat()
        else:
            newest_staged_timestamp = self.newest_staged_timestamp

        oldest_unprocessed_age_seconds = self.oldest_unprocessed_age_seconds

        oldest_unstaged_age_seconds = self.oldest_unstaged_age_seconds

        processed = self.processed

        processed_at: None | str
        if isinstance(self.processed_at, datetime.datetime):
            processed_at = self.processed_at.isoformat()
        else:
            processed_at = self.processed_at

        replication_lag_seconds = self.replication_lag_seconds

        staged = self.staged

        staging_lag_seconds = self.staging_lag_seconds

        tenant = self.tenant

        streams: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.streams, Unset):
            streams = []
            for streams_item_data in self.streams:
                streams_item = streams_item_data.to_dict()
                streams.append(streams_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "accepted": accepted,
                "newest_accepted_timestamp": newest_accepted_timestamp,
                "newest_processed_timestamp": newest_processed_timestamp,
                "newest_staged_timestamp": newest_staged_timestamp,
                "oldest_unprocessed_age_seconds": oldest_unprocessed_age_seconds,
                "oldest_unstaged_age_seconds": oldest_unstaged_age_seconds,
                "processed": processed,
                "processed_at": processed_at,
                "replication_lag_seconds": replication_lag_seconds,
                "staged": staged,
                "staging_lag_seconds": staging_lag_seconds,
                "tenant": tenant,
            }
        )
        if streams is not UNSET:
            field_dict["streams"] = streams

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stream_lag import StreamLag  # noqa: PLC0415

        d = dict(src_dict)
        accepted = d.pop("accepted")

        def _parse_newest_accepted_timestamp(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                newest_accepted_timestamp_type_0 = datetime.datetime.fromisoformat(data)

                return newest_accepted_timestamp_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        newest_accepted_timestamp = _parse_newest_accepted_timestamp(
            d.pop("newest_accepted_timestamp")
        )

        def _parse_newest_processed_timestamp(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                newest_processed_timestamp_type_0 = datetime.datetime.fromisoformat(
                    data
                )

                return newest_processed_timestamp_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        newest_processed_timestamp = _parse_newest_processed_timestamp(
            d.pop("newest_processed_timestamp")
        )

        def _parse_newest_staged_timestamp(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                newest_staged_timestamp_type_0 = datetime.datetime.fromisoformat(data)

                return newest_staged_timestamp_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        newest_staged_timestamp = _parse_newest_staged_timestamp(
            d.pop("newest_staged_timestamp")
        )

        oldest_unprocessed_age_seconds = d.pop("oldest_unprocessed_age_seconds")

        oldest_unstaged_age_seconds = d.pop("oldest_unstaged_age_seconds")

        processed = d.pop("processed")

        def _parse_processed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                processed_at_type_0 = datetime.datetime.fromisoformat(data)

                return processed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        processed_at = _parse_processed_at(d.pop("processed_at"))

        replication_lag_seconds = d.pop("replication_lag_seconds")

        staged = d.pop("staged")

        staging_lag_seconds = d.pop("staging_lag_seconds")

        tenant = d.pop("tenant")

        _streams = d.pop("streams", UNSET)
        streams: list[StreamLag] | Unset = UNSET
        if _streams is not UNSET:
            streams = []
            for streams_item_data in _streams:
                streams_item = StreamLag.from_dict(streams_item_data)

                streams.append(streams_item)

        cdc_lag = cls(
            accepted=accepted,
            newest_accepted_timestamp=newest_accepted_timestamp,
            newest_processed_timestamp=newest_processed_timestamp,
            newest_staged_timestamp=newest_staged_timestamp,
            oldest_unprocessed_age_seconds=oldest_unprocessed_age_seconds,
            oldest_unstaged_age_seconds=oldest_unstaged_age_seconds,
            processed=processed,
            processed_at=processed_at,
            replication_lag_seconds=replication_lag_seconds,
            staged=staged,
            staging_lag_seconds=staging_lag_seconds,
            tenant=tenant,
            streams=streams,
        )

        cdc_lag.additional_properties = d
        return cdc_lag

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
