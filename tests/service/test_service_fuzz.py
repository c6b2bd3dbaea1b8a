"""Property-based requests generated from the served OpenAPI document (schemathesis):
whatever it sends, the server answers without a 5xx, in the documented error shape."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from _service_procs import ServiceProcess
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

ALPHA = "key-alpha-0123456789"


OPERATIONS = [("POST", "/v1/sessions"), ("POST", "/v1/sessions/{session_id}/turns"),
              ("GET", "/v1/sessions/{session_id}"), ("DELETE", "/v1/sessions/{session_id}"),
              ("POST", "/v1/rewrite"), ("GET", "/healthz"), ("GET", "/readyz")]


@pytest.fixture(scope="module")
def api_schema(keyed_server: ServiceProcess) -> Any:
    # the document as the running server serves it
    return schemathesis.openapi.from_url(keyed_server.base_url + "/openapi.json")


# (schemathesis' pytest loader does not run under pytest 9, so each operation's strategy is
# driven by hypothesis directly)
#: invalid data can only be generated where there is a body to get wrong (a path parameter
#: is any string, which the valid run already covers)
CASES = [(m, p, GenerationMode.POSITIVE) for m, p in OPERATIONS] + [
    (m, p, GenerationMode.NEGATIVE) for m, p in OPERATIONS if m == "POST"]


@pytest.mark.parametrize("method,path,mode", CASES, ids=[f"{m} {p} {g.value}" for m, p, g in CASES])
def test_no_server_errors(method: str, path: str, mode: GenerationMode, api_schema: Any,
                          keyed_server: ServiceProcess) -> None:
    operation = api_schema[path][method]
    seen: list[int] = []
    with keyed_server.client(ALPHA) as c:
        real = c.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def run(case: Any) -> None:
        # with a valid key and, for every other case, a session that exists: the generated
        # bodies get past authentication and lookup into validation and the engine
        if case.path_parameters and "session_id" in case.path_parameters and len(seen) % 2 == 0 \
                and method != "DELETE":
            case.path_parameters["session_id"] = real
        response = case.call(base_url=keyed_server.base_url,
                             headers={"Authorization": f"Bearer {ALPHA}"}, timeout=30)
        case.validate_response(response, checks=[not_a_server_error])
        assert response.status_code < 500, response.text
        seen.append(response.status_code)
        if response.status_code >= 400:
            body = response.json()
            assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "field"}, body

    run()
    assert seen  # requests were made
    if mode is GenerationMode.POSITIVE and method == "POST":
        assert {200, 201} & set(seen), seen  # and some got all the way through the engine
    assert not keyed_server.server_errors()


def test_openapi_document_names_every_endpoint(keyed_server: ServiceProcess) -> None:
    import httpx

    doc = httpx.get(keyed_server.base_url + "/openapi.json").json()
    paths = doc["paths"]
    assert set(paths) == {"/v1/sessions", "/v1/sessions/{session_id}/turns", "/v1/sessions/{session_id}",
                          "/v1/rewrite", "/healthz", "/readyz"}
    assert set(paths["/v1/sessions/{session_id}"]) == {"get", "delete"}
    body = paths["/v1/sessions/{session_id}/turns"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"] == "#/components/schemas/TurnIn"
    assert doc["components"]["schemas"]["TurnIn"]["properties"]["role"]["enum"] == ["user", "assistant"]
    assert "ErrorBody" in doc["components"]["schemas"]


def test_if_match_is_documented_as_a_version_string(keyed_server: ServiceProcess) -> None:
    # a header has no null: the document states a string of the form the server accepts
    import re

    import httpx

    doc = httpx.get(keyed_server.base_url + "/openapi.json").json()
    params = doc["paths"]["/v1/sessions/{session_id}/turns"]["post"]["parameters"]
    schema = next(p for p in params if p["name"] == "If-Match")["schema"]
    assert schema["type"] == "string" and "anyOf" not in schema
    assert all(re.fullmatch(schema["pattern"], v) for v in ('3', '"3"', 'W/"12"'))
    assert not any(re.fullmatch(schema["pattern"], v) for v in ("null", "", "three", '"-1"'))
