from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_timeline import BatchTimeline
from ...models.problem import Problem
from ...models.timeline_bucket import TimelineBucket
from ...types import UNSET, Response, Unset


def _get_kwargs(
    dataset_id: str,
    *,
    bucket: TimelineBucket | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_bucket: str | Unset = UNSET
    if not isinstance(bucket, Unset):
        json_bucket = bucket.value

    params["bucket"] = json_bucket

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/datasets/{dataset_id}/batch-timeline".format(
            dataset_id=quote(str(dataset_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> BatchTimeline | Problem | None:
    if response.status_code == 200:
        response_200 = BatchTimeline.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

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
) -> Response[BatchTimeline | Problem]:
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
    bucket: TimelineBucket | Unset = UNSET,
) -> Response[BatchTimeline | Problem]:
    """Batches over time by status: per hour (the last 48) or per day (the last 48).

     Each bucket counts the batches created in it, by their status now.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        bucket (TimelineBucket | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchTimeline | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        bucket=bucket,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    bucket: TimelineBucket | Unset = UNSET,
) -> BatchTimeline | Problem | None:
    """Batches over time by status: per hour (the last 48) or per day (the last 48).

     Each bucket counts the batches created in it, by their status now.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        bucket (TimelineBucket | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchTimeline | Problem
    """

    return sync_detailed(
        dataset_id=dataset_id,
        client=client,
        bucket=bucket,
    ).parsed


async def asyncio_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    bucket: TimelineBucket | Unset = UNSET,
) -> Response[BatchTimeline | Problem]:
    """Batches over time by status: per hour (the last 48) or per day (the last 48).

     Each bucket counts the batches created in it, by their status now.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        bucket (TimelineBucket | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchTimeline | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        bucket=bucket,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    bucket: TimelineBucket | Unset = UNSET,
) -> BatchTimeline | Problem | None:
    """Batches over time by status: per hour (the last 48) or per day (the last 48).

     Each bucket counts the batches created in it, by their status now.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        bucket (TimelineBucket | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchTimeline | Problem
    """

    return (
        await asyncio_detailed(
            dataset_id=dataset_id,
            client=client,
            bucket=bucket,
        )
    ).parsed
