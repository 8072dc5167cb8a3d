"""Every golden game replays, verifies and shows exactly as recorded (tests/golden_games.py)."""

from __future__ import annotations

import json

import pytest

from events.envelope import canonical
from projections.speculate import parse_objective
from projections.registry import game_types
from projections.verify import verify_log
from tests.golden_games import decode_export, game_of, golden_names, load_case, observe

pytestmark = pytest.mark.quick

NAMES = golden_names()
HOSTED = [t.name for t in game_types()]      # every declared game (the tests' toy game has its rules only)


def test_there_are_golden_games_of_every_type():
    recorded = {load_case(name)[1]["type"] for name in NAMES}
    assert recorded == set(HOSTED)
    assert all(game_of(name) == load_case(name)[1]["type"] for name in NAMES)   # names say the game


def test_every_rules_version_of_every_game_has_golden_games():
    from projections.registry import get_game

    recorded: dict[str, set] = {}
    for name in NAMES:
        observed = load_case(name)[1]
        recorded.setdefault(observed["type"], set()).add(observed["rules_version"])
        assert ("-v2-" in name) == (observed["rules_version"] == 2), name   # names say the version
    for game_type, versions in recorded.items():
        assert versions == set(get_game(game_type).RULES_VERSIONS), game_type


def _events(name):
    return [(e.type, e.data) for e in decode_export(load_case(name)[0])[2]]


def test_version_2_golden_games_pass_the_points_where_the_versions_differ():
    # big-shot: an auction nobody bid in, sold free once all but the active player passed
    for name in ("big-shot-v2-3p", "big-shot-v2-4p"):
        events, players = _events(name), None
        for i, (kind, data) in enumerate(events):
            if kind == "colours_dealt":
                players = len(data["colours"])
            if kind == "lot_sold" and data["free"]:
                passes = [d["seat"] for t, d in events[i - players + 1:i] if t == "passed"]
                assert len(passes) == players - 1 and data["seat"] not in passes
                break
        else:
            raise AssertionError(f"{name}: no free lot")
    # spekulation, dice: the number die rolled with the symbol die (H on the first turn)
    for name in ("spekulation-v2-dice-plain", "spekulation-v2-dice-star"):
        kinds = [t for t, _ in _events(name)]
        starts = [i for i, t in enumerate(kinds) if t in ("symbol_rolled", "first_turn_trade")]
        assert starts and all(kinds[i + 1] == "number_rolled" for i in starts), name
    near_end = [d for t, d in _events("spekulation-v2-dice-plain")
                if t == "rank_moved" and d["direction"] == "+1" and d["to"] > 50]
    assert near_end                                                 # a +1 in the last section
    # speculation: hand sizes 4 and 5 on the default stack, `ante` given alone
    for name, chips, amounts in (("speculation-v2-4p-hand4", 50, {5, 8}), ("speculation-v2-5p-hand5", 75, {6, 10}),
                                 ("speculation-v2-4p-ante-alone", 30, {3})):
        events = _events(name)
        assert [d["starting_chips"] for t, d in events if t == "session_started"] == [chips], name
        assert {a for t, d in events if t == "antes" for a in d["amounts"]} == amounts, name
        assert {d["stock"] for t, d in events if t == "deal"} == {52 - 1 - sum(d["piles"])
                                                                 for t, d in events if t == "deal"}
    # speculate at 5 and 6 players: the re-tuned objective targets, played out
    for name, level_4 in (("speculate-v2-5p", (500, 375, 250)), ("speculate-v2-6p", (600, 450, 300))):
        events = _events(name)
        decks = [d["objective_decks"] for t, d in events if t == "game_started"][0]
        assert {tuple(sorted(v for v in parse_objective(oid)[1] if v)) for oid in decks[3]} == {tuple(sorted(level_4))}
        assert any(t == "objective_met" for t, _ in events) and events[-1][0] == "game.scored"


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


@pytest.mark.parametrize("game_type", HOSTED)
def test_a_game_created_now_follows_the_latest_rules_version_and_says_so(game_type):
    import fakeredis

    from projections.registry import get_game
    from tests.service_kit import make_service

    game = get_game(game_type)
    service, _ = make_service(fakeredis.FakeRedis())
    players = game.MIN_PLAYERS
    session = service.create(game_type, {}, [{}] + [{"bot": "random"}] * (players - 1))
    session, _ = service.claim(session.game_id, 0, "alice")
    assert session.rules_version == game.RULES_VERSION == max(game.RULES_VERSIONS)
    assert session.state.rules_version == game.RULES_VERSION
    detail = service.game(session.game_id)
    assert detail["rules_version"] == game.RULES_VERSION
    if game.RULES_VERSION > 1:
        assert detail["view"]["rules_version"] == game.RULES_VERSION
        assert service.view(session.game_id, 0)["rules_version"] == game.RULES_VERSION


@pytest.mark.parametrize("name", [n for n in NAMES if "-v2-" not in n])
def test_a_version_1_game_is_folded_with_version_1_rules(name):
    from projections.session import fold

    header, _, events = decode_export(load_case(name)[0])
    session = fold(events, header["game_id"])
    assert session.rules_version == 1 and session.state.rules_version == 1


def test_a_snapshot_whose_state_lost_its_rules_version_is_refolded(monkeypatch):
    import copy

    import fakeredis

    from projections import big_shot, snapshot
    from projections.session import fold
    from tests.service_kit import make_service

    monkeypatch.setattr(big_shot, "RULES_VERSION", 1)     # a game created before version 2 shipped
    client = fakeredis.FakeRedis()
    service, _ = make_service(client)
    session = service.create("big-shot", {}, [{}, {"bot": "random"}])
    game_id = session.game_id
    session, _ = service.claim(game_id, 0, "alice")
    assert session.rules_version == 1 and session.state.rules_version == 1
    old = copy.deepcopy(session)
    del old.state.__dict__["rules_version"]                  # as stored by the code before the field
    assert old.state.rules_version == 2                      # read through: the class default, wrong
    service.store.save_snapshot(game_id, session.version, session.head, snapshot.dumps(old))   # a JSON snapshot: a pickle is not even read
    fresh, _ = make_service(client)
    loaded = fresh.load(game_id)
    assert loaded.state.rules_version == 1
    assert loaded == fold(service.store.read(game_id), game_id)
