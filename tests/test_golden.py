"""Every golden game replays, verifies and shows exactly as recorded (tests/golden_games.py)."""

from __future__ import annotations

import json

import pytest

from events.envelope import canonical
from projections.verify import verify_log
from tests.golden_games import decode_export, golden_names, load_case, observe

NAMES = golden_names()


def test_there_are_golden_games_of_every_type():
    recorded = {load_case(name)[1]["type"] for name in NAMES}
    assert recorded == {"speculation", "spekulation", "speculate", "big-shot"}


@pytest.mark.parametrize("name", NAMES)
def test_golden_game_verifies(name):
    records, observed = load_case(name)
    header, raw, _ = decode_export(records)
    assert header["complete"] is True
    report = verify_log(raw, header["seed"], header["game_id"], head=(len(raw), raw[-1][1]))
    assert report.ok, report.as_dict()
    assert report.seed_checked


@pytest.mark.parametrize("name", NAMES)
def test_golden_game_shows_as_recorded(name):
    records, observed = load_case(name)
    header, _, events = decode_export(records)
    replayed = json.loads(canonical(observe(header, events)))
    assert replayed["result"] == observed["result"]
    for version, views in observed["views"].items():
        for viewer, view in views.items():
            assert canonical(replayed["views"][version][viewer]) == canonical(view), (version, viewer)
    assert canonical(replayed) == canonical(observed)
