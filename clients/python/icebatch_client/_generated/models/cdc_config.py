from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.pushdown import Pushdown
    from ..models.source import Source


T = TypeVar("T", bound="CdcConfig")


@_attrs_define
class CdcConfig:
    """
    Attributes:
        backlog_threshold (int | Unset): Unprocessed events that start a run at once, without waiting the interval
            Default: 50000.
        process_interval_seconds (float | Unset): How often the processor runs with work waiting Default: 5.0.
        pushdown (list[Pushdown] | Unset): Typed columns pulled from the document at merge time, so filters prune files.
            Columns can be added later (rows get them when next written), not changed.
        retention_days (float | Unset): Staging retention window: events older than this are refused (422) Default: 7.0.
        sources (list[Source] | Unset): Debezium source tables: key columns and record type. A table not listed has the
            key `id` (`_id` for MongoDB) and its name as record type
        streams (list[str] | Unset): Redis Streams Debezium Server's Redis sink writes (one per table, named
            `<topic.prefix>.<schema>.<table>`), read with the consumer group `icebatch.<org>`
    """

    backlog_threshold: int | Unset = 50000
    process_interval_seconds: float | Unset = 5.0
    pushdown: list[Pushdown] | Unset = UNSET
    retention_days: float | Unset = 7.0
    sources: list[Source] | Unset = UNSET
    streams: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        backlog_threshold = self.backlog_threshold

        process_interval_seconds = self.process_interval_seconds

        pushdown: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.pushdown, Unset):
            pushdown = []
            for pushdown_item_data in self.pushdown:
                pushdown_item = pushdown_item_data.to_dict()
                pushdown.append(pushdown_item)

        retention_days = self.retention_days

        sources: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.sources, Unset):
            sources = []
            for sources_item_data in self.sources:
                sources_item = sources_item_data.to_dict()
                sources.append(sources_item)

        streams: list[str] | Unset = UNSET
        if not isinstance(self.streams, Unset):
            streams = self.streams

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if backlog_threshold is not UNSET:
            field_dict["backlog_threshold"] = backlog_threshold
        if process_interval_seconds is not UNSET:
            field_dict["process_interval_seconds"] = process_interval_seconds
        if pushdown is not UNSET:
            field_dict["pushdown"] = pushdown
        if retention_days is not UNSET:
            field_dict["retention_days"] = retention_days
        if sources is not UNSET:
            field_dict["sources"] = sources
        if streams is not UNSET:
            field_dict["streams"] = streams

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.pushdown import Pushdown  # noqa: PLC0415
        from ..models.source import Source  # noqa: PLC0415

        d = dict(src_dict)
        backlog_threshold = d.pop("backlog_threshold", UNSET)

        process_interval_seconds = d.pop("process_interval_seconds", UNSET)

        _pushdown = d.pop("pushdown", UNSET)
        pushdown: list[Pushdown] | Unset = UNSET
        if _pushdown is not UNSET:
            pushdown = []
            for pushdown_item_data in _pushdown:
                pushdown_item = Pushdown.from_dict(pushdown_item_data)

                pushdown.append(pushdown_item)

        retention_days = d.pop("retention_days", UNSET)

        _sources = d.pop("sources", UNSET)
        sources: list[Source] | Unset = UNSET
        if _sources is not UNSET:
            sources = []
            for sources_item_data in _sources:
                sources_item = Source.from_dict(sources_item_data)

                sources.append(sources_item)

        streams = cast(list[str], d.pop("streams", UNSET))

        cdc_config = cls(
            backlog_threshold=backlog_threshold,
            process_interval_seconds=process_interval_seconds,
            pushdown=pushdown,
            retention_days=retention_days,
            sources=sources,
            streams=streams,
        )

        return cdc_config
