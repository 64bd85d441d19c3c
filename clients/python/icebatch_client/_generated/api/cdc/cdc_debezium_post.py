from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.cdc_debezium_post_json_body import CdcDebeziumPostJsonBody
from ...models.cdc_debezium_post_json_body_type_0 import CdcDebeziumPostJsonBodyType0
from ...models.debezium_accepted import DebeziumAccepted
from ...models.problem import Problem
from ...types import UNSET, Response


def _get_kwargs(
    *,
    body: CdcDebeziumPostJsonBody
    | CdcDebeziumPostJsonBodyType0
    | list[Any]
    | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/cdc/debezium",
    }

    if isinstance(body, CdcDebeziumPostJsonBody):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/cloudevents+json"
    if isinstance(body, CdcDebeziumPostJsonBodyType0 | list[Any]):
        if isinstance(body, CdcDebeziumPostJsonBodyType0):
            _kwargs["json"] = body.to_dict()
        else:
            _kwargs["json"] = body

        headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DebeziumAccepted | Problem | None:
    if response.status_code == 202:
        response_202 = DebeziumAccepted.from_dict(response.json())

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

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

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
) -> Response[DebeziumAccepted | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CdcDebeziumPostJsonBody
    | CdcDebeziumPostJsonBodyType0
    | list[Any]
    | Unset = UNSET,
) -> Response[DebeziumAccepted | Problem]:
    """Accept Debezium change events, each source row's changes once and in log position order.

     `c`, `r` (snapshot read) and `u` put the row's `after` image; `d` deletes it (key from
    `before`); `t` deletes every row of the table; `m`, schema changes, heartbeats and null
    values (Kafka tombstones) are skipped and counted. The entity id comes from the key columns
    of the table's entry in `sources` (`PUT /v1/cdc/config`; default `id`), the event time from
    `source.ts_ms`. A change already accepted (same source, table, key and log position: the
    sink's retries, Kafka Connect's redeliveries) is a duplicate, one older than its row's
    newest is superseded: neither is applied again. 202 once the new changes are durable; a bad
    element is a 422 naming its index and field, and nothing of the request is accepted.

    Args:
        body (CdcDebeziumPostJsonBody):
        body (CdcDebeziumPostJsonBodyType0 | list[Any]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DebeziumAccepted | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: CdcDebeziumPostJsonBody
    | CdcDebeziumPostJsonBodyType0
    | list[Any]
    | Unset = UNSET,
) -> DebeziumAccepted | Problem | None:
    """Accept Debezium change events, each source row's changes once and in log position order.

     `c`, `r` (snapshot read) and `u` put the row's `after` image; `d` deletes it (key from
    `before`); `t` deletes every row of the table; `m`, schema changes, heartbeats and null
    values (Kafka tombstones) are skipped and counted. The entity id comes from the key columns
    of the table's entry in `sources` (`PUT /v1/cdc/config`; default `id`), the event time from
    `source.ts_ms`. A change already accepted (same source, table, key and log position: the
    sink's retries, Kafka Connect's redeliveries) is a duplicate, one older than its row's
    newest is superseded: neither is applied again. 202 once the new changes are durable; a bad
    element is a 422 naming its index and field, and nothing of the request is accepted.

    Args:
        body (CdcDebeziumPostJsonBody):
        body (CdcDebeziumPostJsonBodyType0 | list[Any]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DebeziumAccepted | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CdcDebeziumPostJsonBody
    | CdcDebeziumPostJsonBodyType0
    | list[Any]
    | Unset = UNSET,
) -> Response[DebeziumAccepted | Problem]:
    """Accept Debezium change events, each source row's changes once and in log position order.

     `c`, `r` (snapshot read) and `u` put the row's `after` image; `d` deletes it (key from
    `before`); `t` deletes every row of the table; `m`, schema changes, heartbeats and null
    values (Kafka tombstones) are skipped and counted. The entity id comes from the key columns
    of the table's entry in `sources` (`PUT /v1/cdc/config`; default `id`), the event time from
    `source.ts_ms`. A change already accepted (same source, table, key and log position: the
    sink's retries, Kafka Connect's redeliveries) is a duplicate, one older than its row's
    newest is superseded: neither is applied again. 202 once the new changes are durable; a bad
    element is a 422 naming its index and field, and nothing of the request is accepted.

    Args:
        body (CdcDebeziumPostJsonBody):
        body (CdcDebeziumPostJsonBodyType0 | list[Any]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DebeziumAccepted | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CdcDebeziumPostJsonBody
    | CdcDebeziumPostJsonBodyType0
    | list[Any]
    | Unset = UNSET,
) -> DebeziumAccepted | Problem | None:
    """Accept Debezium change events, each source row's changes once and in log position order.

     `c`, `r` (snapshot read) and `u` put the row's `after` image; `d` deletes it (key from
    `before`); `t` deletes every row of the table; `m`, schema changes, heartbeats and null
    values (Kafka tombstones) are skipped and counted. The entity id comes from the key columns
    of the table's entry in `sources` (`PUT /v1/cdc/config`; default `id`), the event time from
    `source.ts_ms`. A change already accepted (same source, table, key and log position: the
    sink's retries, Kafka Connect's redeliveries) is a duplicate, one older than its row's
    newest is superseded: neither is applied again. 202 once the new changes are durable; a bad
    element is a 422 naming its index and field, and nothing of the request is accepted.

    Args:
        body (CdcDebeziumPostJsonBody):
        body (CdcDebeziumPostJsonBodyType0 | list[Any]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DebeziumAccepted | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
