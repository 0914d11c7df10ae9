"""The bench's kept stores built by bulk copy, small: the replay section's histories (a template
the application wrote, then copies of its last block with their versions moved on) load at every
version, copied or not, as the version asked for; the audit section's store (a template's deals
copied as new deals of the same players) folds, and its feed, report and recall answer from the
index of the copies too. What the copies are not (sealed for what they say) is in the modules'
docstrings; no figure is checked here."""

from __future__ import annotations

import json

import pytest

from tests.bench import audit, replay
from tests.bench.common import Progress

pytestmark = pytest.mark.slow


def test_a_replay_history_past_its_template_loads_at_every_version(tmp_path, monkeypatch
                                                                    ) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(replay, "BLOCK", 500)
    monkeypatch.setattr(replay, "TEMPLATE", 1_000)
    source = replay.kept_source(tmp_path, 3_250, Progress("test"))
    info = json.loads((tmp_path / f"replay-v{replay.FORMAT}-3250" / "built.json").read_text())
    assert info["template"] == 1_000 and info["block"] == 500
    app = source.app()
    try:
        for aggregate_id in replay.KINDS.values():
            for version in (None, 1, 999, 1_000, 1_001, 1_600, 2_500, 3_199, 3_250):
                expected = 3_250 if version is None else version
                elapsed, _ = replay.load(app, aggregate_id, version, expected)
                assert elapsed >= 0
            # The copies are rows of their own, each snapshot a copy at its own version.
            stored = app.snapshots.recorder.select_events(aggregate_id, gt=1_000)
            assert [s.originator_version for s in stored] == list(range(1_100, 3_201, 100))
    finally:
        app.close()


def test_the_audit_store_past_its_template_folds_and_answers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from api import create_app

    url, built = audit.kept_store(tmp_path, 6_000, 2_000, Progress("test"))
    assert built["template"] == 2_000 and built["copied"] > 0 and built["events"] == 6_000
    app = audit.kept_app(url, rate_limit=0)
    try:
        app.project()
        assert app.projection.store.position("ledger") == app.recorder.max_notification_id()
        key, _ = app.keys.issue_key("auditor", label="test")
        client = create_app({"LEDGER": app}).test_client()
        headers = {"Authorization": f"Bearer {key}"}
        for _name, path, query, _goal in audit.requests(app):
            response = client.get(path, query_string=query, headers=headers)
            assert response.status_code == 200, (path, query, response.get_data(as_text=True))
        # The copies' deals are deals of their own: more settled deals than the template made.
        settled = client.get("/events", query_string={"type": "Settled", "limit": 500},
                             headers=headers).get_json()["entries"]
        deals = {entry["aggregate_id"] for entry in settled}
        assert len(deals) == len(settled) > 0
    finally:
        app.close()
