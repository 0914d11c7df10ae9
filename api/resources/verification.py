"""Verification: the record of runs and checkpoints; staff verify a range of the log."""

from __future__ import annotations

from flask import url_for

from api.auth import command_key, ledger, principal
from api.gate import audit_read
from api.resources import command, location, problems, resource_blueprint
from api.schemas_verification import RunSchema, VerificationSchema, VerifyArgs

blp = resource_blueprint("verification", __name__, "", "Verification runs and checkpoints")


@blp.route("/verification", methods=["GET"])
@blp.response(200, VerificationSchema)
@problems(blp)
@audit_read
def verification() -> dict:
    """The last verification run, recent runs and recent checkpoints (operator, auditor)."""
    return ledger().verification(principal())


@blp.route("/verification", methods=["POST"])
@blp.arguments(VerifyArgs, required=False)
@blp.response(201, RunSchema, headers=location("The record of runs, this one first"))
@command(blp)
@audit_read
def run_verification(args: dict) -> tuple[dict, int, dict[str, str]]:
    """Verify log positions `from`..`to` and record the run (operator, auditor). One run checks
    at most `max_positions` (2,000) positions: a larger range is 422 naming `to`."""
    run = ledger().run_verification(principal(), args.get("first"), args.get("last"),
                                    command=command_key(args))
    return run, 201, {"Location": url_for("verification.verification")}
