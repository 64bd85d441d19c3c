from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.problem_error import ProblemError


T = TypeVar("T", bound="Problem")


@_attrs_define
class Problem:
    """An error, as RFC 9457 problem details. Members beyond the five of the RFC are
    extensions; those below are the ones the API sends, others may be added.

        Attributes:
            detail (str): What happened here and what to do about it
            status (int): The HTTP status code
            title (str): A short summary of the kind of problem
            type_ (str): A URI naming the kind of problem (`https://icebatch.dev/problems/<slug>`, or `about:blank` for
                plain HTTP errors)
            batch_id (None | str | Unset): The batch the problem is about
            batch_status (None | str | Unset): 409 on a batch: the batch's status, which forbids the call
            dataset_id (None | str | Unset): The dataset the problem is about
            errors (list[ProblemError] | None | Unset): 422: each invalid input
            file (None | str | Unset): 507: the file that was not kept
            instance (None | str | Unset): The path of the request
            job_id (None | str | Unset): 409: the job already running that blocks this one
            key_scope (None | str | Unset): 403: the scope of your key
            limit (None | str | Unset): 429: the fair-use limit reached (`request_rate`, `inflight_jobs`)
            oldest_retained_snapshot_id (int | None | Unset): 410: where reading can start again
            required_scope (None | str | Unset): 403: the scope the call needs
            restatement_id (None | str | Unset): 409: the pending revert or replay of the batch
            retry_after_seconds (int | None | Unset): 429 and 503: seconds to wait (also in `Retry-After`)
            snapshot_id (int | None | Unset): 410: the snapshot that retention expired
    """

    detail: str
    status: int
    title: str
    type_: str
    batch_id: None | str | Unset = UNSET
    batch_status: None | str | Unset = UNSET
    dataset_id: None | str | Unset = UNSET
    errors: list[ProblemError] | None | Unset = UNSET
    file: None | str | Unset = UNSET
    instance: None | str | Unset = UNSET
    job_id: None | str | Unset = UNSET
    key_scope: None | str | Unset = UNSET
    limit: None | str | Unset = UNSET
    oldest_retained_snapshot_id: int | None | Unset = UNSET
    required_scope: None | str | Unset = UNSET
    restatement_id: None | str | Unset = UNSET
    retry_after_seconds: int | None | Unset = UNSET
    snapshot_id: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        detail = self.detail

        status = self.status

        title = self.title

        type_ = self.type_

        batch_id: None | str | Unset
        if isinstance(self.batch_id, Unset):
            batch_id = UNSET
        else:
            batch_id = self.batch_id

        batch_status: None | str | Unset
        if isinstance(self.batch_status, Unset):
            batch_status = UNSET
        else:
            batch_status = self.batch_status

        dataset_id: None | str | Unset
        if isinstance(self.dataset_id, Unset):
            dataset_id = UNSET
        else:
            dataset_id = self.dataset_id

        errors: list[dict[str, Any]] | None | Unset
        if isinstance(self.errors, Unset):
            errors = UNSET
        elif isinstance(self.errors, list):
            errors = []
            for errors_type_0_item_data in self.errors:
                errors_type_0_item = errors_type_0_item_data.to_dict()
                errors.append(errors_type_0_item)

        else:
            errors = self.errors

        file: None | str | Unset
        if isinstance(self.file, Unset):
            file = UNSET
        else:
            file = self.file

        instance: None | str | Unset
        if isinstance(self.instance, Unset):
            instance = UNSET
        else:
            instance = self.instance

        job_id: None | str | Unset
        if isinstance(self.job_id, Unset):
            job_id = UNSET
        else:
            job_id = self.job_id

        key_scope: None | str | Unset
        if isinstance(self.key_scope, Unset):
            key_scope = UNSET
        else:
            key_scope = self.key_scope

        limit: None | str | Unset
        if isinstance(self.limit, Unset):
            limit = UNSET
        else:
            limit = self.limit

        oldest_retained_snapshot_id: int | None | Unset
        if isinstance(self.oldest_retained_snapshot_id, Unset):
            oldest_retained_snapshot_id = UNSET
        else:
            oldest_retained_snapshot_id = self.oldest_retained_snapshot_id

        required_scope: None | str | Unset
        if isinstance(self.required_scope, Unset):
            required_scope = UNSET
        else:
            required_scope = self.required_scope

        restatement_id: None | str | Unset
        if isinstance(self.restatement_id, Unset):
            restatement_id = UNSET
        else:
            restatement_id = self.restatement_id

        retry_after_seconds: int | None | Unset
        if isinstance(self.retry_after_seconds, Unset):
            retry_after_seconds = UNSET
        else:
            retry_after_seconds = self.retry_after_seconds

        snapshot_id: int | None | Unset
        if isinstance(self.snapshot_id, Unset):
            snapshot_id = UNSET
        else:
            snapshot_id = self.snapshot_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "detail": detail,
                "status": status,
                "title": title,
                "type": type_,
            }
        )
        if batch_id is not UNSET:
            field_dict["batch_id"] = batch_id
        if batch_status is not UNSET:
            field_dict["batch_status"] = batch_status
        if dataset_id is not UNSET:
            field_dict["dataset_id"] = dataset_id
        if errors is not UNSET:
            field_dict["errors"] = errors
        if file is not UNSET:
            field_dict["file"] = file
        if instance is not UNSET:
            field_dict["instance"] = instance
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if key_scope is not UNSET:
            field_dict["key_scope"] = key_scope
        if limit is not UNSET:
            field_dict["limit"] = limit
        if oldest_retained_snapshot_id is not UNSET:
            field_dict["oldest_retained_snapshot_id"] = oldest_retained_snapshot_id
        if required_scope is not UNSET:
            field_dict["required_scope"] = required_scope
        if restatement_id is not UNSET:
            field_dict["restatement_id"] = restatement_id
        if retry_after_seconds is not UNSET:
            field_dict["retry_after_seconds"] = retry_after_seconds
        if snapshot_id is not UNSET:
            field_dict["snapshot_id"] = snapshot_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.problem_error import ProblemError  # noqa: PLC0415

        d = dict(src_dict)
        detail = d.pop("detail")

        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        def _parse_batch_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        batch_id = _parse_batch_id(d.pop("batch_id", UNSET))

        def _parse_batch_status(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        batch_status = _parse_batch_status(d.pop("batch_status", UNSET))

        def _parse_dataset_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dataset_id = _parse_dataset_id(d.pop("dataset_id", UNSET))

        def _parse_errors(data: object) -> list[ProblemError] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                errors_type_0 = []
                _errors_type_0 = data
                for errors_type_0_item_data in _errors_type_0:
                    errors_type_0_item = ProblemError.from_dict(errors_type_0_item_data)

                    errors_type_0.append(errors_type_0_item)

                return errors_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ProblemError] | None | Unset, data)

        errors = _parse_errors(d.pop("errors", UNSET))

        def _parse_file(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        file = _parse_file(d.pop("file", UNSET))

        def _parse_instance(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        instance = _parse_instance(d.pop("instance", UNSET))

        def _parse_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        job_id = _parse_job_id(d.pop("job_id", UNSET))

        def _parse_key_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key_scope = _parse_key_scope(d.pop("key_scope", UNSET))

        def _parse_limit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        limit = _parse_limit(d.pop("limit", UNSET))

        def _parse_oldest_retained_snapshot_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        oldest_retained_snapshot_id = _parse_oldest_retained_snapshot_id(
            d.pop("oldest_retained_snapshot_id", UNSET)
        )

        def _parse_required_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        required_scope = _parse_required_scope(d.pop("required_scope", UNSET))

        def _parse_restatement_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        restatement_id = _parse_restatement_id(d.pop("restatement_id", UNSET))

        def _parse_retry_after_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        retry_after_seconds = _parse_retry_after_seconds(
            d.pop("retry_after_seconds", UNSET)
        )

        def _parse_snapshot_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        snapshot_id = _parse_snapshot_id(d.pop("snapshot_id", UNSET))

        problem = cls(
            detail=detail,
            status=status,
            title=title,
            type_=type_,
            batch_id=batch_id,
            batch_status=batch_status,
            dataset_id=dataset_id,
            errors=errors,
            file=file,
            instance=instance,
            job_id=job_id,
            key_scope=key_scope,
            limit=limit,
            oldest_retained_snapshot_id=oldest_retained_snapshot_id,
            required_scope=required_scope,
            restatement_id=restatement_id,
            retry_after_seconds=retry_after_seconds,
            snapshot_id=snapshot_id,
        )

        problem.additional_properties = d
        return problem

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
