"""The HTTP side: a Flask application factory translating HTTP to ledger calls and back."""

from __future__ import annotations

import json
from typing import Any

import swagger_ui_bundle
from apispec import APISpec
from flask import Flask, g, send_from_directory
from flask.json.provider import DefaultJSONProvider
from flask_smorest import Api
from flask_smorest.spec.plugins import FlaskPlugin

from api import errors, gate, headers, observe, pages, problem_pages
from api.edge import MAX_BODY
from api.examples import add_examples
from api.inputs import LedgerRequest
from api.resources import (
    audit,
    deals,
    disputes,
    health,
    keys,
    session,
    tables,
    transparency,
    verification,
    wallets,
)
from ledger.app.application import LedgerApplication

DOCS_ASSETS = "/docs/assets/"
#: The config that shapes the OpenAPI document (the rest of it is the blueprints' routes).
DOCUMENT_CONFIG = ("API_TITLE", "API_VERSION", "OPENAPI_VERSION", "API_SPEC_OPTIONS")
#: The OpenAPI document of every app this process has built, by its config (`DOCUMENT_CONFIG`):
#: the first `create_app` writes it and every later one serves that same document, which
#: nothing changes once it is written. Writing it (flask-smorest copies every schema of every
#: operation for each app) was most of what an app cost to build, and tests build one a test.
_DOCUMENTS: dict[str, APISpec] = {}
#: Functions whose `ensure_sync` an app keeps (`LedgerFlask`): its hooks and views, and more.
SYNCED = 10_000


class LedgerFlask(Flask):
    """Flask, asking once per function whether it is a coroutine: every request passes its
    hooks and each of its view's decorators through `ensure_sync`, which asks `inspect` each
    time (twenty times a request, a tenth of what Flask itself costs a command)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._synced: dict[Any, Any] = {}

    def ensure_sync(self, func: Any) -> Any:
        try:
            return self._synced[func]
        except KeyError:
            if len(self._synced) > SYNCED:  # a function made per request would fill it
                self._synced.clear()
            synced = self._synced[func] = super().ensure_sync(func)
            return synced
        except TypeError:  # not hashable
            return super().ensure_sync(func)


class LedgerApi(Api):
    """The API and its OpenAPI document. Every operation documents the problem answers it gives
    (`api.resources.problems`), so there is no catch-all `default` answer: flask-smorest's would
    name a JSON error shape this service never sends."""

    DEFAULT_ERROR_RESPONSE_NAME = None

    def name_operations(self, app: Flask) -> None:
        """Give every operation an `operationId`: its view's name (`open_wallet`), which is
        unique across the API (a test checks), so generated clients get readable methods; and
        every body an example (`api.examples`)."""
        paths = self.spec._paths  # apispec keeps the document's paths here
        for rule in app.url_map.iter_rules():
            path = FlaskPlugin.flaskpath2openapi(rule.rule)
            for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}:
                operation = paths.get(path, {}).get(method.lower())
                if operation is not None:
                    operation.setdefault("operationId", rule.endpoint.rpartition(".")[2])
        add_examples(paths)

    def register_blueprint(self, blp: Any, *, document: bool = True, parameters: Any = None,
                           **options: Any) -> None:
        """Register a blueprint; and document its operations, unless the document was written
        before (`document=False`): then only what `Api.register_blueprint` does besides."""
        if document:
            super().register_blueprint(blp, parameters=parameters, **options)
            return
        name = options.get("name", blp.name)
        self._app.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._app.register_blueprint(blp, **options)


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Build the Flask app on an injected `LEDGER`, else one built from `SETTINGS`, else from
    the environment (`ledger.settings`)."""
    app = LedgerFlask(__name__)
    app.request_class = LedgerRequest
    app.config.from_mapping(
        MAX_CONTENT_LENGTH=MAX_BODY,
        API_TITLE="Red Dog Ledger",
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        OPENAPI_SWAGGER_UI_URL=DOCS_ASSETS,
        # No badge from the online validator: the page loads nothing from another host.
        OPENAPI_SWAGGER_UI_CONFIG={"validatorUrl": None},
        API_SPEC_OPTIONS={
            "security": [{"bearerAuth": []}],
            "info": {"description": "Event-sourced ledger for play-money Red Dog tables. "
                                    "Errors are application/problem+json naming the rule or field."},
            "components": {"securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer"}}},
        },
        LEDGER=None,
        SETTINGS=None,
    )
    if test_config:
        app.config.update(test_config)
    if isinstance(app.json, DefaultJSONProvider):
        app.json.sort_keys = False

    ledger = app.config["LEDGER"] or LedgerApplication(app.config["SETTINGS"])
    app.extensions["reddog_ledger"] = ledger
    # Open the runtime store now: one that cannot open (a read-only directory, no rights in the
    # PostgreSQL schema) stops the start instead of failing every request.
    _ = ledger.runtime

    # The tile route's converter, before the blueprint that uses it is registered.
    app.url_map.converters["tile"] = transparency.TileConverter
    api = LedgerApi(app)
    api.register_converter(transparency.TileConverter, transparency.TileConverter.schema)
    document_key = json.dumps([app.config.get(name) for name in DOCUMENT_CONFIG],
                              sort_keys=True, default=repr)
    written = _DOCUMENTS.get(document_key)
    for blueprint in (wallets.blp, tables.blp, deals.blp, disputes.blp, audit.blp, keys.blp,
                      session.blp, health.blp, verification.blp, transparency.blp,
                      transparency.staff, transparency.receipts):
        api.register_blueprint(blueprint, document=written is None)
    app.register_blueprint(pages.blp)
    app.register_blueprint(problem_pages.blp)
    observe.init_app(app, ledger)
    errors.init_app(app)
    headers.init_app(app)
    one_look_at_the_log_per_request(app, ledger)
    settings = ledger.settings
    gate.init_app(app, settings.audit_slots, settings.audit_queue, settings.audit_seconds,
                  settings.audit_share)

    if written is None:
        api.name_operations(app)
        _DOCUMENTS[document_key] = api.spec
    else:
        api.spec = written

    @app.get(f"{DOCS_ASSETS}<path:filename>")
    def docs_assets(filename: str) -> Any:
        """Serve the Swagger UI files shipped with the package (no CDN needed)."""
        return send_from_directory(swagger_ui_bundle.swagger_ui_path, filename)

    return app


def one_look_at_the_log_per_request(app: Flask, ledger: LedgerApplication) -> None:
    """Each request is a unit of work for the aggregate cache: it looks at the log for other
    processes' writes at its first load, not at every one (`ledger.store.repository`)."""

    @app.before_request
    def look_once() -> None:
        g.reddog_unit = ledger.repository.begin_unit()

    @app.teardown_request
    def done(_error: BaseException | None) -> None:
        token = g.pop("reddog_unit", None)
        if token is not None:
            ledger.repository.end_unit(token)
