"""Every body the API reads has an example in the document, each valid for its schema; the
plain ones are accepted by the service as they stand."""

from __future__ import annotations

import jsonschema_rs
import pytest

from api.examples import EXAMPLES
from tests.api.helpers import memory_only

pytestmark = memory_only


def _resolved(schema, components):
    """The schema with its `$ref`s replaced by the components they name."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _resolved(components[schema["$ref"].rsplit("/", 1)[1]], components)
        return {key: _resolved(value, components) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_resolved(value, components) for value in schema]
    return schema


def test_every_body_has_an_example_valid_for_its_schema(client):
    document = client.get("/openapi.json").get_json()
    components = document["components"]["schemas"]
    bodies = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if "requestBody" not in operation:
                continue
            bodies += 1
            kinds = operation["requestBody"]["content"]
            if "application/json" not in kinds:  # a text body (a signed note): its example
                [(_kind, content)] = kinds.items()
                assert content["example"], (method, path)
                jsonschema_rs.validate(content["schema"], content["example"])
                continue
            content = kinds["application/json"]
            assert "example" in content, (method, path)
            schema = _resolved(content["schema"], components)
            jsonschema_rs.validate(schema, content["example"])
    assert bodies == len(EXAMPLES) + 1  # and the text body of POST /log/cosignatures


@pytest.mark.parametrize("operation, path", [
    ("open_wallet", "/wallets"), ("open_table", "/tables"), ("issue_key", "/keys")])
def test_the_plain_examples_are_accepted_as_they_stand(client, keys, operation, path):
    answer = client.post(path, json=EXAMPLES[operation], headers=keys.operator)
    assert answer.status_code == 201, answer.get_json()
