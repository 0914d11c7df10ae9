"""The public log (docs/transparency.md): its signed checkpoints, C2SP tlog tiles, inclusion and
consistency proofs and verifier key, for anyone and with no key; signing on demand (an
operator); and the receipt of a finished deal (whoever may read the deal)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

from flask import Response, request, url_for
from marshmallow import fields, validate
from werkzeug.routing import PathConverter

from api.auth import command_key, ledger, principal
from api.errors import PROBLEM
from api.resources import (
    RETRY_AFTER,
    ResourceBlueprint,
    command,
    location,
    problems,
    resource_blueprint,
)
from api.schemabase import Schema
from api.schemas import Args, ProblemSchema
from ledger.app.transparency import receipt_bytes
from ledger.core import tlog
from ledger.core.errors import InvalidInput

blp = ResourceBlueprint("log", __name__, url_prefix="/log",
                        description="The public log: signed checkpoints, tiles, proofs (no key "
                                    "needed)")
staff = resource_blueprint("log_signing", __name__, "/log",
                           "Signing a checkpoint of the public log on demand")
receipts = resource_blueprint("receipts", __name__, "/deals", "Receipts of finished deals")
NO_KEY: dict[str, Any] = {"security": []}
#: Tiles that are full never change; a partial tile, the checkpoint and proofs at the newest
#: size change as the log grows.
IMMUTABLE = "public, max-age=31536000, immutable"
SHORT = "public, max-age=2"
PROBLEM_ANSWER = {"schema": ProblemSchema, "content_type": PROBLEM}
#: What an operation that reads nothing but its path refuses: a header the API reads that is not
#: text (`api.inputs`).
HEADER_NOT_TEXT = "A header the API reads is not text (`field` names it)"
#: A tile's path after `tile/` in its canonical spelling (C2SP tlog-tiles): what the OpenAPI
#: document declares. The route takes any path, so that one in another spelling is answered 404
#: saying why (`tlog.parse_tile_path` decides).
TILE_PATH = (r"^(?:[0-9]|[1-5][0-9]|6[0-3]|entries)/(?:x(?!000)[0-9]{3}/(?:x[0-9]{3}/)*)?"
             r"[0-9]{3}(?:\.p/(?:[1-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5]))?$")


class TileConverter(PathConverter):
    """A tile's path, as `path` takes it, documented by its canonical pattern (`TILE_PATH`)."""

    @staticmethod
    def schema(_converter: Any) -> dict[str, Any]:
        return {"type": "string", "pattern": TILE_PATH}


class InclusionArgs(Args):
    leaf = fields.Integer(required=True, validate=validate.Range(min=0), metadata={
        "description": "The leaf's index (an event's rank in the log, from 0)"})
    size = fields.Integer(required=True, validate=validate.Range(min=1), metadata={
        "description": "The tree size (a signed checkpoint's) the proof leads to"})


class ConsistencyArgs(Args):
    old = fields.Integer(data_key="from", required=True, validate=validate.Range(min=0),
                      metadata={"description": "The older tree size"})
    new = fields.Integer(data_key="to", required=True, validate=validate.Range(min=0),
                      metadata={"description": "The newer tree size"})


class LeafArgs(Args):
    position = fields.Integer(required=True, validate=validate.Range(min=1),
                           metadata={"description": "A log position"})


class CheckpointsArgs(Args):
    least = fields.Integer(data_key="from", load_default=0, validate=validate.Range(min=0),
                        metadata={"description": "The least size listed"})


class ProofSchema(Schema):
    leaf = fields.Integer()
    size = fields.Integer()
    old = fields.Integer(data_key="from")
    new = fields.Integer(data_key="to")
    proof = fields.List(fields.String(), required=True,
                        metadata={"description": "The proof's hashes, base64, in RFC 9162 order"})


class LeafSchema(Schema):
    position = fields.Integer(required=True)
    leaf = fields.Integer(required=True)
    commitment = fields.String(required=True, metadata={
        "description": "The leaf's entry, base64: a salted commitment to the stored event"})


class CheckpointListSchema(Schema):
    origin = fields.String(required=True)
    sizes = fields.List(fields.Integer(), required=True)
    next = fields.Integer(allow_none=True, metadata={"description": "`from` of the next page"})


class SignedSchema(Schema):
    origin = fields.String(required=True)
    size = fields.Integer(required=True)
    root = fields.String(required=True, metadata={"description": "The root hash, base64"})
    note = fields.String(required=True, metadata={"description": "The signed note"})


def _text(text: str, cache: str, kind: str = "text/plain; charset=utf-8") -> Response:
    return Response(text, content_type=kind, headers={"Cache-Control": cache})


@blp.route("/checkpoint", methods=["GET"])
@blp.response(200, {"type": "string"}, content_type="text/plain",
              description="The newest checkpoint (C2SP tlog-checkpoint) as a signed note, with "
                          "the witnesses' cosignatures")
@blp.alt_response(404, description="No public log is kept here", **PROBLEM_ANSWER)
@blp.alt_response(422, description=HEADER_NOT_TEXT, **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def checkpoint() -> Response:
    """The newest signed checkpoint of the log, with every cosignature the service was given."""
    return _text(ledger().transparency.checkpoint(), SHORT)


@blp.route("/checkpoints", methods=["GET"])
@blp.arguments(CheckpointsArgs, location="query")
@blp.response(200, CheckpointListSchema)
@blp.alt_response(422, description="`from` is not a whole number of at least 0", **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def checkpoints(args: dict[str, Any]) -> dict[str, Any]:
    """The sizes of every checkpoint signed, from `from` on, 100 at a time."""
    return ledger().transparency.checkpoints(args["least"])


SIZE = {"in": "path", "name": "size", "description": "The tree size of a signed checkpoint",
        "schema": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}}


@blp.route("/checkpoints/<int:size>", methods=["GET"], parameters=[SIZE])
@blp.response(200, {"type": "string"}, content_type="text/plain",
              description="The checkpoint signed at that size, with its cosignatures")
@blp.alt_response(404, description="No checkpoint of that size was signed", **PROBLEM_ANSWER)
@blp.alt_response(422, description="`size` is not a whole number the stores hold",
                  **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def checkpoint_at(size: int) -> Response:
    """A checkpoint signed earlier, by its size, with its cosignatures."""
    return _text(ledger().transparency.checkpoint_at(size), SHORT)


@staff.route("/checkpoints", methods=["POST"])
@staff.response(201, SignedSchema, headers=location("The checkpoint, as a signed note"))
@staff.alt_response(503, schema=ProblemSchema, content_type=PROBLEM, headers=RETRY_AFTER,
                    description="The tree does not extend what the log signed (a log put back "
                                "or changed): it signs nothing more")
@command(staff)
def sign_checkpoint() -> tuple[dict[str, Any], int, dict[str, str]]:
    """Bring the tree to the log's end and sign a checkpoint of it now (operator); the newest
    checkpoint when it covers the log already."""
    command_key()  # checked as every command's is; signing twice answers the same checkpoint
    signed = ledger().transparency.sign_now(principal())
    return signed, 201, {"Location": url_for("log.checkpoint_at", size=signed["size"])}


class TakenSchema(Schema):
    size = fields.Integer(required=True)
    witnesses = fields.List(fields.String(), required=True,
                            metadata={"description": "The witnesses whose cosignatures were kept"})


COSIGNED_EXAMPLE = (
    "reddog.invalid/ledger\n4\nvlUYsJtWzdyVVJdeX4mbvxrX4cpbnAQM6YkmjKfDKlo=\n\n"
    "\u2014 reddog.invalid/ledger g4T7rfpXR5Sl+vRxrnhmlx4MAI6/T9mpvUChxVqBpjq4wRHGoi8kN+YpEYVVMjR2"
    "kU7O76qNRBRJG1cwnGG+Q6yGDAo=\n"
    "\u2014 witness.example/w1 bwk5nwAAAABpWQABtlJVr0b1W5oOxBaB+QRM2Hf5WtE3kQXDJhu+mPhJvjpHkHQ5"
    "Qh0bmGd8Ah9R6tMfIM6K9x3nCWvzNd2OYg==\n")


@blp.route("/cosignatures", methods=["POST"])
@blp.doc(requestBody={"required": True, "content": {"text/plain": {"schema": {
    "type": "string", "description": "A checkpoint this log signed, with cosignature lines"},
    "example": COSIGNED_EXAMPLE}}}, **NO_KEY)
@blp.response(200, TakenSchema)
@blp.alt_response(413, description="The body is larger than the service reads (1 MiB)",
                  **PROBLEM_ANSWER)
@blp.alt_response(422, description="Not a checkpoint this log signed, or no cosignature by a "
                                   "witness it knows", **PROBLEM_ANSWER)
def cosignatures() -> dict[str, Any]:
    """Give the log a witness's cosignatures of one of its checkpoints (what `reddog witness
    poll` does); only those by the witnesses the service names (REDDOG_WITNESSES) are kept."""
    try:
        note = request.get_data(as_text=False).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("the body must be UTF-8 text", field="body") from None
    return ledger().transparency.take_cosignatures(note)


@blp.route("/key", methods=["GET"])
@blp.response(200, {"type": "string"}, content_type="text/plain",
              description="The log's verifier key (signed-note format: name+ID+key)")
@blp.alt_response(422, description=HEADER_NOT_TEXT, **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def key() -> Response:
    """The public key that verifies the log's checkpoints."""
    return _text(ledger().transparency.verifier_key() + "\n", "public, max-age=3600")


@blp.route("/tile/<tile:path>", methods=["GET"])
@blp.response(200, {"type": "string", "format": "binary"},
              content_type="application/octet-stream",
              description="A tile: 32-byte hashes (C2SP tlog-tiles), or an entry bundle")
@blp.alt_response(404, description="No such tile (yet), or not a canonical tile path",
                  **PROBLEM_ANSWER)
@blp.alt_response(422, description=HEADER_NOT_TEXT, **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def tile(path: str) -> Response:
    """A tile of the tree by its C2SP tlog-tiles path: `tile/<L>/<N>[.p/<W>]`, and
    `tile/entries/<N>[.p/<W>]` for the leaves' entries (their commitments)."""
    data = ledger().transparency.tile(f"tile/{path}")
    return Response(data, content_type="application/octet-stream", headers={
        "Cache-Control": SHORT if ".p/" in path else IMMUTABLE})


@blp.route("/proof/inclusion", methods=["GET"])
@blp.arguments(InclusionArgs, location="query")
@blp.response(200, ProofSchema)
@blp.alt_response(422, description="The leaf or size is beyond the tree", **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def inclusion(args: dict[str, Any]) -> dict[str, Any]:
    """The inclusion proof of a leaf in the tree of `size` leaves (RFC 9162 2.1.3)."""
    return ledger().transparency.inclusion(args["leaf"], args["size"])


@blp.route("/proof/consistency", methods=["GET"])
@blp.arguments(ConsistencyArgs, location="query")
@blp.response(200, ProofSchema)
@blp.alt_response(422, description="A size is beyond the tree, or `from` is above `to`",
                  **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def consistency(args: dict[str, Any]) -> dict[str, Any]:
    """The consistency proof from the tree of `from` leaves to the tree of `to` (RFC 9162
    2.1.4)."""
    return ledger().transparency.consistency(args["old"], args["new"])


@blp.route("/leaf", methods=["GET"])
@blp.arguments(LeafArgs, location="query")
@blp.response(200, LeafSchema)
@blp.alt_response(404, description="The position is a gap, or beyond the tree", **PROBLEM_ANSWER)
@blp.alt_response(422, description="`position` is not a whole number of at least 1",
                  **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def leaf(args: dict[str, Any]) -> dict[str, Any]:
    """The leaf of a log position, and its commitment."""
    return ledger().transparency.leaf(args["position"])


@blp.route("/checker.py", methods=["GET"])
@blp.response(200, {"type": "string"}, content_type="text/x-python",
              description="The standalone checker: Python 3.11+, standard library and "
                          "`cryptography`")
@blp.alt_response(422, description=HEADER_NOT_TEXT, **PROBLEM_ANSWER)
@blp.doc(**NO_KEY)
def checker() -> Response:
    """The checker of receipts and checkpoints (`python checker.py --help`), to run anywhere."""
    return _text(Path(tlog.__file__).read_text(), "public, max-age=3600",
                 "text/x-python; charset=utf-8")


RECEIPT_HEADERS = {"Content-Disposition": {
    "description": "`attachment; filename=receipt-<deal id>.json`", "schema": {"type": "string"}}}


@receipts.route("/<uuid:deal_id>/receipt", methods=["GET"])
@receipts.response(200, {"type": "object"}, content_type="application/json",
                   headers=RECEIPT_HEADERS,
                   description="The deal's receipt (`reddog-receipt/1`, docs/transparency.md)")
@receipts.alt_response(503, schema=ProblemSchema, content_type=PROBLEM, headers=RETRY_AFTER,
                       description="The public tree has not reached the deal yet, or signs "
                                   "nothing more: nothing to prove it against")
@problems(receipts)
def receipt(deal_id: UUID) -> Response:
    """A finished deal's receipt: its events opened (stored bytes and salt), each one's leaf and
    inclusion proof against a signed checkpoint, and its fairness data; for whoever may read
    the deal (a player: one seated at it). A deal in progress is 422 (G2)."""
    answer = ledger().transparency.receipt(principal(), deal_id)
    return Response(receipt_bytes(answer), content_type="application/json", headers={
        "Content-Disposition": f"attachment; filename=receipt-{deal_id}.json",
        "Cache-Control": "no-store"})
