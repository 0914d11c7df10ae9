"""Verification: the record of runs and checkpoints; staff verify a range of the log."""

from __future__ import annotations

from flask import url_for

from api.auth import command_key, ledger, principal
from api.errors import PROBLEM
from api.gate import audit_read
from api.resources import RETRY_AFTER, command, location, problems, resource_blueprint
from api.schemas import ProblemSchema
from api.schemas_verification import RunSchema, VerificationSchema, VerifyArgs

blp = resource_blueprint("verification", __name__, "", "Verification runs and checkpoints")


@blp.route("/verification", methods=["GET"])
@audit_read
@blp.response(200, VerificationSchema)
@problems(blp)
def verification() -> dict:
    """The last verification run, recent runs and recent checkpoints (operator, auditor)."""
    return ledger().verification.verification(principal())


@blp.route("/verification", methods=["POST"])
@audit_read
@blp.arguments(VerifyArgs, required=False)
@blp.response(201, RunSchema, headers=location("The record of runs, this one first"))
@blp.alt_response(200, schema=RunSchema, headers=location("The record of runs"),
                  description="The same figures and result as the range's newest recorded run: "
                              "that run, `repeats` naming it; nothing new was recorded")
@blp.alt_response(503, schema=ProblemSchema, content_type=PROBLEM, headers=RETRY_AFTER,
                  description="The limit on an auditor's runs could not be checked: nothing "
                              "was recorded")
@command(blp)
def run_verification(args: dict) -> tuple[dict, int, dict[str, str]]:
    """Verify log positions `from`..`to` and record the run (operator, auditor). One run checks
    at most `max_positions` (2,000) positions: a larger range is 422 naming `to`. A run that
    finds what the range's newest recorded run found records nothing and answers that run (200,
    `repeats` naming it). A key without write rights (an auditor's) records at most 10 runs a
    minute, 5 at once: beyond that 429 with `Retry-After`."""
    run = ledger().verification.run_verification(principal(), args.get("first"), args.get("last"),
                                    command=command_key(args))
    status = 200 if run["repeats"] else 201
    return run, status, {"Location": url_for("verification.verification")}
