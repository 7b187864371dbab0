"""Cloudflare's published DNS-records contract, as the fake Cloudflare enforces it on every request and response.

The description (`graphsite/schemas/cloudflare-dns-records.openapi.json`, see SOURCES.md) is loaded once and
normalised in memory, never on disk, where the upstream text cannot be satisfied as written:

1. Its `discriminator: {propertyName: type}` has no `mapping`, so a validator looks for a schema named after the
   record type (`#/components/schemas/A`) and rejects every record; the mapping is derived from each member's
   `type` enum (A → dns-records_ARecord, …), which is what the upstream means.
2. Cloudflare answers `"comment": null` for a record without a comment while the description types it as a plain
   string: the comment is made nullable.
3. `data` is required in every record response, although only the record types with structured data carry it
   (an A record has none): it is dropped from the `required` lists.
4. The 4XX responses describe `result` as a record or array, yet Cloudflare sends `"result": null` with an error
   (and `enum: [null]` without `nullable` can never validate): the error `result` is null only.
The zone lookup (`GET /zones?name=`) lies outside this description; the server checks that envelope by hand.
Answers the lab injects on purpose (`faults.py`: error statuses and lies such as `success: false` in a 200) are
never checked: they are meant to break the contract, and the server logs each as injected instead.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from typing import Any

from openapi_core.exceptions import OpenAPIError

from graphsite.paths import schema_path

SCHEMA_NAME = "cloudflare-dns-records.openapi.json"
# The description's own server: requests are validated as if they had been sent there.
CONTRACT_HOST = "https://api.cloudflare.com"


@dataclass(frozen=True)
class ContractViolation:
    """Why a request or response does not fit the contract, in one line."""

    message: str


def _derive_mappings(node: Any, schemas: dict[str, Any]) -> None:
    if isinstance(node, dict):
        discriminator = node.get("discriminator")
        if discriminator and "mapping" not in discriminator and "anyOf" in node:
            mapping = {}
            for member in node["anyOf"]:
                target = schemas[member["$ref"].rsplit("/", 1)[1]]
                for value in target["properties"][discriminator["propertyName"]].get("enum", []):
                    mapping[value] = member["$ref"]
            discriminator["mapping"] = mapping
        for child in node.values():
            _derive_mappings(child, schemas)
    elif isinstance(node, list):
        for child in node:
            _derive_mappings(child, schemas)


def normalise(spec: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of the description with the four fixes of the module docstring applied."""
    spec = copy.deepcopy(spec)
    schemas = spec["components"]["schemas"]
    _derive_mappings(spec, schemas)
    schemas["dns-records_comment"]["nullable"] = True
    for path_item in spec["paths"].values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            error = operation["responses"]["4XX"]["content"]["application/json"]["schema"]
            error["properties"]["result"] = {"nullable": True, "enum": [None]}
    record = schemas["dns-records_dns-record-response"]
    record["required"] = [key for key in record["required"] if key != "data"]
    return spec


class _Request:
    """The shape openapi-core reads from a request (its Request protocol)."""

    def __init__(self, method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str],
                 body: bytes | None, content_type: str) -> None:
        from openapi_core.datatypes import RequestParameters
        from werkzeug.datastructures import Headers, ImmutableMultiDict

        self.host_url = CONTRACT_HOST
        self.method = method.lower()
        self.path = path
        self.body = body or b""
        self.content_type = content_type or "application/json"
        self.parameters = RequestParameters(query=ImmutableMultiDict(query), header=Headers(headers),
                                            cookie=ImmutableMultiDict(), path={})


class _Response:
    def __init__(self, status: int, body: bytes) -> None:
        from werkzeug.datastructures import Headers

        self.status_code = status
        self.data = body
        self.headers = Headers({"Content-Type": "application/json"})
        self.content_type = "application/json"


def _describe(exc: Exception) -> str:
    """Return the most specific reason openapi-core gives, in one line."""
    cause = exc.__cause__ or exc
    errors = getattr(cause, "schema_errors", None)
    if errors:
        deepest = errors[0]
        while deepest.context:
            deepest = min(deepest.context, key=lambda e: len(e.message))
        where = "/".join(str(p) for p in deepest.absolute_path)
        return f"{exc.__class__.__name__}: {where + ': ' if where else ''}{deepest.message}"
    return f"{exc.__class__.__name__}: {cause}".replace("\n", " ")


@dataclass
class Contract:
    """The normalised description, ready to validate; build it once with `Contract.load()`."""

    api: Any = field(repr=False)

    @classmethod
    @functools.cache
    def load(cls) -> Contract:
        from openapi_core import OpenAPI

        spec = json.loads(schema_path(SCHEMA_NAME).read_text(encoding="utf-8"))
        return cls(OpenAPI.from_dict(normalise(spec)))

    def check_request(self, method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str],
                      body: bytes | None, content_type: str = "application/json") -> ContractViolation | None:
        """Return why the request breaks the contract, or None when it fits."""
        try:
            self.api.validate_request(_Request(method, path, query, headers, body, content_type))
        except OpenAPIError as exc:
            return ContractViolation(_describe(exc))
        return None

    def check_response(self, method: str, path: str, status: int, body: bytes) -> ContractViolation | None:
        """Return why the response breaks the contract, or None when it fits."""
        try:
            self.api.validate_response(_Request(method, path, [], {}, None, ""), _Response(status, body))
        except OpenAPIError as exc:
            return ContractViolation(_describe(exc))
        return None
