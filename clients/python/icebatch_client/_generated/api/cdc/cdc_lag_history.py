from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.cdc_lag_history import CdcLagHistory
from ...models.problem import Problem
from ...types import Response


def _get_kwargs() -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/cdc/lag/history",
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CdcLagHistory | Problem | None:
    if response.status_code == 200:
        response_200 = CdcLagHistory.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

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
) -> Response[CdcLagHistory | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[CdcLagHistory | Problem]:
    """Your tenant's lag over time, oldest first.

     Samples the scheduler's CDC pass took (at most one per `sample_seconds`, kept
    `retention_seconds`): accepted, staged and processed events and the lags of `GET /lag`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CdcLagHistory | Problem]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
) -> CdcLagHistory | Problem | None:
    """Your tenant's lag over time, oldest first.

     Samples the scheduler's CDC pass took (at most one per `sample_seconds`, kept
    `retention_seconds`): accepted, staged and processed events and the lags of `GET /lag`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CdcLagHistory | Problem
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
) -> Response[CdcLagHistory | Problem]:
    """Your tenant's lag over time, oldest first.

     Samples the scheduler's CDC pass took (at most one per `sample_seconds`, kept
    `retention_seconds`): accepted, staged and processed events and the lags of `GET /lag`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CdcLagHistory | Problem]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
) -> CdcLagHistory | Problem | None:
    """Your tenant's lag over time, oldest first.

     Samples the scheduler's CDC pass took (at most one per `sample_seconds`, kept
    `retention_seconds`): accepted, staged and processed events and the lags of `GET /lag`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CdcLagHistory | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
