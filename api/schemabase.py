"""The base of every marshmallow schema the API declares."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema as MarshmallowSchema


class Schema(MarshmallowSchema):
    """A marshmallow schema that a deep copy shares rather than copies.

    A schema instance is a description: once made, nothing changes it. flask-smorest keeps the
    instances an operation documents in a dict on its view, and deep-copies that dict at every
    decorator (an operation documents up to nine answers, each copy holding all the instances
    before it), once more when the view is routed and again for each app it registers the
    blueprint in. Copying the instances (their fields, options and hooks) was nearly half of
    importing the API and of building its first app: each server, worker and command-line
    start paid about half a second for it. The documents themselves are copied as before: what
    flask-smorest and apispec fill in or replace is theirs, in their own dicts."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Schema:
        return self
