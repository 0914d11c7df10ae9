"""Schemas of verification: runs on demand, the record of runs, the checkpoints."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemabase import Schema
from api.schemas import Args, WholeNumber
from api.schemas_audit import ProjectionStatusSchema


class VerifyArgs(Args):
    first = WholeNumber(data_key="from", validate=validate.Range(min=1), metadata={
        "description": "First log position to check (default: `to` less the limit, or 1)"})
    last = WholeNumber(data_key="to", validate=validate.Range(min=1), metadata={
        "description": "Last log position to check (default: the log's last)"})


class RunSchema(Schema):
    id = fields.UUID()
    by = fields.String(metadata={"description": "The API key id that ran it, or `cli`"})
    by_label = fields.String(allow_none=True, metadata={
        "description": "Who ran it, as staff read it: the key's label (a sign-in link's "
                       "session key: the link's label), `reddog verify on the server` for "
                       "`cli`; null for a key not yet in the read models"})
    by_role = fields.String(allow_none=True, metadata={
        "description": "The role of the key that ran it (null for `cli`)"})
    scope = fields.String(metadata={"description": "`range` (API) or `whole log` (reddog verify)"})
    first = fields.Integer(metadata={"description": "First position checked"})
    last = fields.Integer(metadata={"description": "Last position checked"})
    positions = fields.Integer()
    events = fields.Integer(metadata={"description": "Events read"})
    transfers = fields.Integer()
    deals_checked = fields.Integer(metadata={"description": "Finished deals checked for fairness"})
    checkpoints = fields.Integer(metadata={"description": "Checkpoints checked"})
    ok = fields.Boolean()
    first_bad_position = fields.Integer(allow_none=True)
    problem = fields.String(allow_none=True, metadata={"description": "The first failure"})
    started_at = fields.String()
    finished_at = fields.String()
    seconds = fields.Float()
    repeats = fields.UUID(allow_none=True, metadata={
        "description": "In the answer to `POST /verification`: null when this run was recorded; "
                       "else the id of the range's newest recorded run, which found the same "
                       "(figures and result), and which this answer is: nothing new was "
                       "recorded"})


class CheckpointSchema(Schema):
    position = fields.Integer(metadata={"description": "Where the checkpoint is in the log"})
    first = fields.Integer(metadata={"description": "First position it covers"})
    last = fields.Integer(metadata={"description": "Last position it covers"})
    events = fields.Integer(metadata={"description": "Events it recorded"})
    time = fields.String()
    digest = fields.String(metadata={"description": "The first 16 hex digits of its MAC"})


class VerificationSchema(Schema):
    last = fields.Nested(RunSchema, allow_none=True)
    runs = fields.List(fields.Nested(RunSchema), metadata={"description": "Newest first, 20 kept"})
    run_count = fields.Integer()
    checkpoints = fields.List(fields.Nested(CheckpointSchema), metadata={
        "description": "Newest first, 50 kept"})
    checkpoint_count = fields.Integer()
    head = fields.Integer(metadata={"description": "The log's last position"})
    max_positions = fields.Integer(metadata={"description": "Most positions one run checks"})
    projection = fields.Nested(ProjectionStatusSchema)
