"""The HTTP side: a Flask application factory translating HTTP to ledger calls and back."""

from __future__ import annotations

from typing import Any

import swagger_ui_bundle
from flask import Flask, send_from_directory
from flask_smorest import Api

from api import errors, gate, pages
from api.resources import (
    audit,
    deals,
    disputes,
    keys,
    session,
    tables,
    verification,
    wallets,
)
from ledger.services.application import LedgerApplication

DOCS_ASSETS = "/docs/assets/"


class LedgerApi(Api):
    """The API and its OpenAPI document. Every operation documents the problem answers it gives
    (`api.resources.problems`), so there is no catch-all `default` answer: flask-smorest's would
    name a JSON error shape this service never sends."""

    DEFAULT_ERROR_RESPONSE_NAME = None


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Build the Flask app on an injected `LEDGER`, else one built from `SETTINGS`, else from
    the environment (`ledger.settings`)."""
    app = Flask(__name__)
    app.config.from_mapping(
        MAX_CONTENT_LENGTH=1024 * 1024,
        API_TITLE="Red Dog Ledger",
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        OPENAPI_SWAGGER_UI_URL=DOCS_ASSETS,
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
    app.json.sort_keys = False

    ledger = app.config["LEDGER"] or LedgerApplication(app.config["SETTINGS"])
    app.extensions["reddog_ledger"] = ledger
    # Open the runtime store now: one that cannot open (a read-only directory, no rights in the
    # PostgreSQL schema) stops the start instead of failing every request.
    _ = ledger.runtime

    api = LedgerApi(app)
    for blueprint in (wallets.blp, tables.blp, deals.blp, disputes.blp, audit.blp, keys.blp,
                      session.blp, verification.blp):
        api.register_blueprint(blueprint)
    app.register_blueprint(pages.blp)
    errors.init_app(app)
    settings = ledger.settings
    gate.init_app(app, settings.audit_slots, settings.audit_queue, settings.audit_seconds)

    @app.get(f"{DOCS_ASSETS}<path:filename>")
    def docs_assets(filename: str) -> Any:
        """Serve the Swagger UI files shipped with the package (no CDN needed)."""
        return send_from_directory(swagger_ui_bundle.swagger_ui_path, filename)

    @app.get("/health")
    def health() -> dict[str, Any]:
        """Say the service is up and which store backs it."""
        return {"status": "ok", "store": ledger.store.kind}

    return app
