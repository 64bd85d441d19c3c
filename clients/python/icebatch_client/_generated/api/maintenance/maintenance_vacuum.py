from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.job_out import JobOut
from ...models.problem import Problem
from ...models.vacuum_request import VacuumRequest
from ...types import UNSET, Response, Unset


def _get_kwargs(
    dataset_id: str,
    *,
    body: VacuumRequest,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/datasets/{dataset_id}/vacuum".format(
            dataset_id=quote(str(dataset_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> JobOut | Problem | None:
    if response.status_code == 202:
        response_202 = JobOut.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

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
) -> Response[JobOut | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    body: VacuumRequest,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[JobOut | Problem]:
    """Purge tombstoned rows and tombstones (a job: scan, purge data, purge metadata, commit).

     A dry run's job result is the plan: files, bytes, rows to purge. 409 while another
    vacuum or compaction of the dataset is queued or running.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (VacuumRequest): A vacuum: `full` purges every active tombstone; `partial` stays
            within its budgets.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobOut | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    body: VacuumRequest,
    idempotency_key: None | str | Unset = UNSET,
) -> JobOut | Problem | None:
    """Purge tombstoned rows and tombstones (a job: scan, purge data, purge metadata, commit).

     A dry run's job result is the plan: files, bytes, rows to purge. 409 while another
    vacuum or compaction of the dataset is queued or running.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (VacuumRequest): A vacuum: `full` purges every active tombstone; `partial` stays
            within its budgets.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobOut | Problem
    """

    return sync_detailed(
        dataset_id=dataset_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    body: VacuumRequest,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[JobOut | Problem]:
    """Purge tombstoned rows and tombstones (a job: scan, purge data, purge metadata, commit).

     A dry run's job result is the plan: files, bytes, rows to purge. 409 while another
    vacuum or compaction of the dataset is queued or running.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (VacuumRequest): A vacuum: `full` purges every active tombstone; `partial` stays
            within its budgets.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobOut | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    body: VacuumRequest,
    idempotency_key: None | str | Unset = UNSET,
) -> JobOut | Problem | None:
    """Purge tombstoned rows and tombstones (a job: scan, purge data, purge metadata, commit).

     A dry run's job result is the plan: files, bytes, rows to purge. 409 while another
    vacuum or compaction of the dataset is queued or running.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (VacuumRequest): A vacuum: `full` purges every active tombstone; `partial` stays
            within its budgets.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobOut | Problem
    """

    return (
        await asyncio_detailed(
            dataset_id=dataset_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
