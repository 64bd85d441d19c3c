import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.job_list import JobList
from ...models.job_state import JobState
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    state: JobState | None | Unset = UNSET,
    kind: None | str | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    dataset_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_state: None | str | Unset
    if isinstance(state, Unset):
        json_state = UNSET
    elif isinstance(state, JobState):
        json_state = state.value
    else:
        json_state = state
    params["state"] = json_state

    json_kind: None | str | Unset
    if isinstance(kind, Unset):
        json_kind = UNSET
    else:
        json_kind = kind
    params["kind"] = json_kind

    json_updated_since: None | str | Unset
    if isinstance(updated_since, Unset):
        json_updated_since = UNSET
    elif isinstance(updated_since, datetime.datetime):
        json_updated_since = updated_since.isoformat()
    else:
        json_updated_since = updated_since
    params["updated_since"] = json_updated_since

    json_dataset_id: None | str | Unset
    if isinstance(dataset_id, Unset):
        json_dataset_id = UNSET
    else:
        json_dataset_id = dataset_id
    params["dataset_id"] = json_dataset_id

    json_since: None | str | Unset
    if isinstance(since, Unset):
        json_since = UNSET
    elif isinstance(since, datetime.datetime):
        json_since = since.isoformat()
    else:
        json_since = since
    params["since"] = json_since

    json_until: None | str | Unset
    if isinstance(until, Unset):
        json_until = UNSET
    elif isinstance(until, datetime.datetime):
        json_until = until.isoformat()
    else:
        json_until = until
    params["until"] = json_until

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/jobs",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> JobList | Problem | None:
    if response.status_code == 200:
        response_200 = JobList.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[JobList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    state: JobState | None | Unset = UNSET,
    kind: None | str | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    dataset_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> Response[JobList | Problem]:
    """List your organization's jobs, newest first.

     Filter by `state`, `kind`, `dataset_id` and creation time (`since`, `until`); a page at a
    time (`cursor`, `Link`). A poller passes `updated_since` (the time of its last poll) to get
    only what changed.

    Args:
        state (JobState | None | Unset):
        kind (None | str | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        dataset_id (None | str | Unset): Only the jobs of this dataset, its id or its name
            (directly, or through its batches and restatements)
        since (datetime.datetime | None | Unset): Only jobs created at or after this time (RFC
            3339)
        until (datetime.datetime | None | Unset): Only jobs created before this time (RFC 3339)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobList | Problem]
    """

    kwargs = _get_kwargs(
        state=state,
        kind=kind,
        updated_since=updated_since,
        dataset_id=dataset_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    state: JobState | None | Unset = UNSET,
    kind: None | str | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    dataset_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> JobList | Problem | None:
    """List your organization's jobs, newest first.

     Filter by `state`, `kind`, `dataset_id` and creation time (`since`, `until`); a page at a
    time (`cursor`, `Link`). A poller passes `updated_since` (the time of its last poll) to get
    only what changed.

    Args:
        state (JobState | None | Unset):
        kind (None | str | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        dataset_id (None | str | Unset): Only the jobs of this dataset, its id or its name
            (directly, or through its batches and restatements)
        since (datetime.datetime | None | Unset): Only jobs created at or after this time (RFC
            3339)
        until (datetime.datetime | None | Unset): Only jobs created before this time (RFC 3339)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobList | Problem
    """

    return sync_detailed(
        client=client,
        state=state,
        kind=kind,
        updated_since=updated_since,
        dataset_id=dataset_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    state: JobState | None | Unset = UNSET,
    kind: None | str | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    dataset_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> Response[JobList | Problem]:
    """List your organization's jobs, newest first.

     Filter by `state`, `kind`, `dataset_id` and creation time (`since`, `until`); a page at a
    time (`cursor`, `Link`). A poller passes `updated_since` (the time of its last poll) to get
    only what changed.

    Args:
        state (JobState | None | Unset):
        kind (None | str | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        dataset_id (None | str | Unset): Only the jobs of this dataset, its id or its name
            (directly, or through its batches and restatements)
        since (datetime.datetime | None | Unset): Only jobs created at or after this time (RFC
            3339)
        until (datetime.datetime | None | Unset): Only jobs created before this time (RFC 3339)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobList | Problem]
    """

    kwargs = _get_kwargs(
        state=state,
        kind=kind,
        updated_since=updated_since,
        dataset_id=dataset_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    state: JobState | None | Unset = UNSET,
    kind: None | str | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    dataset_id: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> JobList | Problem | None:
    """List your organization's jobs, newest first.

     Filter by `state`, `kind`, `dataset_id` and creation time (`since`, `until`); a page at a
    time (`cursor`, `Link`). A poller passes `updated_since` (the time of its last poll) to get
    only what changed.

    Args:
        state (JobState | None | Unset):
        kind (None | str | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        dataset_id (None | str | Unset): Only the jobs of this dataset, its id or its name
            (directly, or through its batches and restatements)
        since (datetime.datetime | None | Unset): Only jobs created at or after this time (RFC
            3339)
        until (datetime.datetime | None | Unset): Only jobs created before this time (RFC 3339)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobList | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            state=state,
            kind=kind,
            updated_since=updated_since,
            dataset_id=dataset_id,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
