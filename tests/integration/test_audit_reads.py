"""The log's readers that check or fold every event (verify, catch-up) read it once, in large
pages, and stay exactly what they were: each event decoded once gives the state it was sealed
with and the event a reader would get; a catch-up killed between pages, or inside one, folds
every position exactly once when it resumes; verification folds its fresh read models as it
reads, and still finds a kept read model that differs from them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent

from ledger.core.digests import (
    canonical,
    read_stored_event,
    seal_header,
    sealed_state,
    split_sealed,
    state_digest,
    stored_event_digest,
)
from ledger.integrity.verify import read_pages, verify_store
from ledger.readmodels import projection as projection_module
from ledger.readmodels.fold import Fold
from ledger.readmodels.projection import PROJECTION, Projection
from ledger.readmodels.readstore import MemoryReadStore
from ledger.sim.bots import simulate_casino, simulate_table


class Killed(Exception):
    """The folding process dying at this point."""


def test_each_event_decoded_once_is_its_sealed_state_and_its_domain_event(app):
    simulate_casino(app, 4, seed="6a" * 16, bet=20)
    simulate_table(app, "polish", 3, deals=2, seed="6b" * 16)
    app.keys.issue_key("auditor", label="café ☕")  # a payload beyond ASCII
    notifications = app.recorder.select_notifications(start=1, limit=10_000)
    assert len(notifications) > 50
    for stored in notifications:
        state, event = read_stored_event(app.mapper, stored)
        sealed = sealed_state(app.mapper, stored)
        body, _mac = split_sealed(stored.state) or (b"", b"")
        assert body, "every event is written in the stored form"
        assert stored_event_digest(app.mapper, stored) == hashlib.sha256(seal_header(
            stored.topic, str(stored.originator_id), stored.originator_version) + body).hexdigest()
        assert state_digest(sealed) == hashlib.sha256(canonical(sealed)).hexdigest()
        assert {k: str(v) for k, v in state.items()} == {k: str(v) for k, v in sealed.items()}
        expected = app.mapper.to_domain_event(stored)
        assert type(event) is type(expected) and vars(event) == vars(expected)


def test_an_event_that_cannot_be_decoded_or_read_as_its_class_reads_as_none(app):
    simulate_casino(app, 1, seed="6c" * 16, bet=20)
    [stored] = app.recorder.select_notifications(start=5, limit=1)
    altered = StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                          stored.state[:-3])
    assert read_stored_event(app.mapper, altered) == (None, None)
    renamed = StoredEvent(stored.originator_id, stored.originator_version,
                          "ledger.domain.gone:Nothing", stored.state)
    state, event = read_stored_event(app.mapper, renamed)
    assert event is None and state == sealed_state(app.mapper, stored)


def test_an_event_stored_with_a_class_version_is_digested_as_it_was_stored(app):
    """An event stored with its class's version (which the library drops, or upcasts from, when
    it reads it) is decoded a second time for its sealed state: never the attributes read."""
    simulate_casino(app, 1, seed="6d" * 16, bet=20)
    [stored] = app.recorder.select_notifications(start=5, limit=1)
    versioned = StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                            stored.state[:-1] + b',"class_version":1}')
    state, event = read_stored_event(app.mapper, versioned)
    assert state == sealed_state(app.mapper, versioned) and state["class_version"] == 1
    assert "class_version" not in vars(event)
    assert state_digest(state) == stored_event_digest(app.mapper, versioned)


def test_a_catch_up_killed_between_pages_or_inside_one_folds_each_position_once(
        make_shared_app, monkeypatch):
    monkeypatch.setattr(projection_module, "PAGE", 40)
    app = make_shared_app()
    simulate_casino(app, 12, seed="6e" * 16, bet=20)
    simulate_table(app, "polish", 3, deals=2, seed="6f" * 16)
    head = app.projection.head()
    assert head > 4 * 40

    # Killed after its second page was committed.
    pages = []

    def die_after_two(folded: int) -> None:
        pages.append(folded)
        if len(pages) == 2:
            raise Killed

    with pytest.raises(Killed):
        app.projection.catch_up(progress=die_after_two)
    assert app.projection.status()["position"] == 80

    # Killed inside its next page, halfway through folding it: the page is not written at all.
    fold = Fold.fold
    calls = []

    def die_halfway(self, position, event, *known):  # type: ignore[no-untyped-def]
        calls.append(position)
        if len(calls) == 20:
            raise Killed
        fold(self, position, event, *known)

    monkeypatch.setattr(Fold, "fold", die_halfway)
    with pytest.raises(Killed):
        make_shared_app().projection.catch_up()
    monkeypatch.setattr(Fold, "fold", fold)
    assert app.projection.status()["position"] == 80

    # Another process resumes from the last page written and folds the rest, once.
    resumed = make_shared_app()
    assert resumed.projection.catch_up() == head - 80
    assert resumed.projection.status() == {"position": head, "head": head, "behind": 0}
    assert resumed.projection.differences_from_a_rebuild() == []
    assert verify_store(make_shared_app()).ok


def test_a_fresh_fold_begun_by_a_reader_goes_on_to_the_kept_position(app):
    simulate_casino(app, 8, seed="7a" * 16, bet=20)
    app.project()
    fresh = Projection(app, MemoryReadStore())
    pages = list(read_pages(app))
    half = [row for row in pages[0] if row[0] <= app.projection.head() // 2]
    fresh.fold_decoded([(position, event) for position, stored, _state, event in half
                        if not stored.topic.endswith(("SealedSeed.Sealed",
                                                      "ChainKeyFingerprint.Recorded"))],
                       half[-1][0])
    assert fresh.store.position(PROJECTION) == half[-1][0]
    assert app.projection.differences_from_a_rebuild(fresh) == []
    assert fresh.store.position(PROJECTION) == app.projection.head()


def test_verify_still_finds_a_kept_read_model_that_differs_from_a_fresh_fold(app):
    simulate_casino(app, 6, seed="7b" * 16, bet=20)
    app.project()
    assert verify_store(app).ok
    chips = app.projection.store.read("c|chips")
    chips["house"] += 1
    doctor(app.projection.store, "c|chips", chips)
    assert verify_store(app, read_models=False).ok  # the log itself still verifies
    report = verify_store(app)
    assert not report.ok
    assert [str(f).split(": ", 1)[1] for f in report.failures] == [
        "the read model differs from a fresh replay of the log"]
    assert report.failures[0].aggregate_id == "c|chips"


def doctor(store: Any, name: str, document: Any) -> None:
    """Change a kept document behind the projection's back."""
    if isinstance(store, MemoryReadStore):
        store._documents[name] = json.dumps(document)
        return
    with store._cursor() as cursor:
        cursor.execute(f"UPDATE {store.documents} SET doc = {store.mark} WHERE name = "
                       f"{store.mark}", (json.dumps(document), name))
