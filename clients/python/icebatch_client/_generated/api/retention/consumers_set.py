from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.consumer_create import ConsumerCreate
from ...models.consumer_out import ConsumerOut
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    dataset_id: str,
    *,
    body: ConsumerCreate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/datasets/{dataset_id}/consumers".format(
            dataset_id=quote(str(dataset_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ConsumerOut | Problem | None:
    if response.status_code == 200:
        response_200 = ConsumerOut.from_dict(response.json())

        return response_200

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

    if response.status_code == 410:
        response_410 = Problem.from_dict(response.json())

        return response_410

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
) -> Response[ConsumerOut | Problem]:
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
    body: ConsumerCreate,
) -> Response[ConsumerOut | Problem]:
    """Register or move a consumer's checkpoint; it pins the snapshots its next read needs.

     The checkpoint is the snapshot its next increment starts after (default: the current one).

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        body (ConsumerCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConsumerOut | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    body: ConsumerCreate,
) -> ConsumerOut | Problem | None:
    """Register or move a consumer's checkpoint; it pins the snapshots its next read needs.

     The checkpoint is the snapshot its next increment starts after (default: the current one).

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        body (ConsumerCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConsumerOut | Problem
    """

    return sync_detailed(
        dataset_id=dataset_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    body: ConsumerCreate,
) -> Response[ConsumerOut | Problem]:
    """Register or move a consumer's checkpoint; it pins the snapshots its next read needs.

     The checkpoint is the snapshot its next increment starts after (default: the current one).

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        body (ConsumerCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConsumerOut | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    body: ConsumerCreate,
) -> ConsumerOut | Problem | None:
    """Register or move a consumer's checkpoint; it pins the snapshots its next read needs.

     The checkpoint is the snapshot its next increment starts after (default: the current one).

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        body (ConsumerCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConsumerOut | Problem
    """

    return (
        await asyncio_detailed(
            dataset_id=dataset_id,
            client=client,
            body=body,
        )
    ).parsed
