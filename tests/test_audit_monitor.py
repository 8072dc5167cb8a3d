"""The monitor (service/audit/monitor.py, `speculation audit`): on an honest service it finds
nothing run after run as games move; each kind of finding, one test each; the state's right
edge of the tree; the command line's exit codes and state file.

The service runs in process (the drill's Stack: the Flask test client as the API, sequencer
passes run right after each command); the operator's attacks are the drill's own
(ops/drills/audit_attacks.py)."""

from __future__ import annotations

import json
import os
import random
import time

import pytest
from click.testing import CliRunner

from events import merkle
from ops.drills import _kit
from ops.drills.audit_attacks import (ForkedView, Scratch, Stack, act, delete, drop_leaves, open_game,
                                      playable_game, rewrite, some_games)
from service.audit import monitor as monitor_module
from service.audit.monitor import Monitor, MonitorError, frontier_append, frontier_root, load_state

INCLUDE_WITHIN_MS = 1000     # a loaded machine may pause a few hundred ms between two commands


@pytest.fixture(params=["fakeredis", "redis"])
def stack(request):
    client = request.getfixturevalue("fake_redis" if request.param == "fakeredis" else "real_redis")
    return Stack(client, INCLUDE_WITHIN_MS)


def kinds(report) -> list[str]:
    return sorted(f.kind for f in report.findings)


def wait_past(receipts) -> None:
    due = max(r["include_by"] for r in receipts)
    while time.time() * 1000 <= due + 5:
        time.sleep(0.02)


def test_the_right_edge_of_the_tree_hashes_as_rfc_9162():
    rng = random.Random(7)
    leaves = [rng.randbytes(32) for _ in range(130)]
    frontier = []
    for size, leaf in enumerate(leaves):
        frontier = frontier_append(frontier, size, leaf)
        assert len(frontier) == bin(size + 1).count("1")
        assert frontier_root(frontier) == merkle.root(leaves[:size + 1])
    assert frontier_root([]) == merkle.EMPTY_ROOT


def test_an_honest_service_gives_no_finding_run_after_run(stack):
    rng = random.Random(1)
    players = some_games(stack, rng, 4)
    monitor = stack.monitor(sample=2, seed=1)
    first = monitor.run()
    assert first.ok, first.as_dict()
    assert first.previous_tree_size == 0 and first.tree_size == stack.core.transparency.size() == first.entries_read
    assert first.games["logged"] == 4
    for round_ in range(2):
        for player in players:
            act(stack, player, rng, 2)
        players.append(open_game(stack, rng, 10_000))          # a game played to its end
        receipts = [r for p in players for r in p.receipts]
        wait_past(receipts)
        open_game(stack, rng, 0)                               # a head past every include_by
        # The state goes through its JSON file between runs, as the command line's does.
        monitor = Monitor(stack.get, json.loads(json.dumps(monitor.state)), sample=2, rng=random.Random(round_))
        report = monitor.run(receipts=receipts)
        assert report.ok, report.as_dict()
        assert report.previous_tree_size < report.tree_size == stack.core.transparency.size()
        assert report.receipts["due"] == report.receipts["kept"] == report.receipts["checked"] > 0
        assert report.games["logged"] >= 1 and report.games["sampled"] >= 1
    assert report.games["replayed"] >= 1          # ended games re-run through GET /verify
    # A peer that saw the same log, earlier or later, agrees.
    peer = stack.monitor(sample=0)
    assert peer.run().ok
    assert monitor.run(peers=[peer.state]).ok and peer.run(peers=[monitor.state]).heads_compared == 1


def test_a_game_rewritten_after_it_was_logged(stack):
    rng = random.Random(2)
    victim, other = some_games(stack, rng, 2)
    monitor = stack.monitor(sample=0)
    assert monitor.run().ok
    rewrite(stack, Scratch(), victim.game, rng)
    stack.restart()
    late = stack.monitor(sample=0)          # a monitor whose first run reads the whole log
    report = late.run(receipts=victim.receipts + other.receipts)
    assert set(kinds(report)) == {"rewritten"}
    assert {f.game for f in report.findings} == {victim.game}
    assert {f.check for f in report.findings} == {"logged_game", "receipt"}
    # The first monitor sees it when the game is sampled, and through the player's receipts.
    sampled = Monitor(stack.get, monitor.state, sample=5).run()
    assert {f.game for f in sampled.findings} == {victim.game} and kinds(sampled)[0] == "rewritten"


def test_a_game_deleted_after_it_was_logged(stack):
    rng = random.Random(3)
    victim, _ = some_games(stack, rng, 2)
    delete(stack, victim.game)
    report = stack.monitor(sample=0).run()
    assert [(f.kind, f.game, f.check) for f in report.findings] == [("deleted", victim.game, "logged_game")]


def test_a_checkpoint_kept_out_of_the_log_breaks_the_receipts_promise(stack):
    rng = random.Random(4)
    victim = playable_game(stack, rng, 0)
    stack.index.hidden.add(victim.game)       # the operator's sequencer skips the game
    act(stack, victim, rng, 1)
    monitor = stack.monitor(sample=0)
    early = monitor.run(receipts=victim.receipts)
    assert early.ok and early.receipts["due"] < len(victim.receipts)   # not due yet: no finding before include_by
    wait_past(victim.receipts)
    open_game(stack, rng, 0)
    report = monitor.run(receipts=victim.receipts)
    assert [(f.kind, f.game, f.check) for f in report.findings] == [("missed_promise", victim.game, "promise")]
    assert report.receipts["due"] == len(victim.receipts) and report.receipts["kept"] == len(victim.receipts) - 1


def test_a_log_rebuilt_without_a_leaf_is_a_fork_to_a_monitor_that_held_it(stack):
    rng = random.Random(5)
    players = some_games(stack, rng, 3)
    monitor = stack.monitor(sample=0)
    assert monitor.run().ok
    kept = dict(monitor.state["tree_head"])
    drop_leaves(stack, {stack.core.transparency.leaf_indexes(players[1].game)[-1]})
    stack.restart()
    report = monitor.run()
    assert kinds(report) == ["fork"] and report.findings[0].check == "consistency"
    assert monitor.state["tree_head"] == kept          # it keeps the head it could prove, and says so again
    for player in players:
        act(stack, player, rng, 1)
    open_game(stack, rng, 0)
    assert kinds(monitor.run()) == ["fork"]


def test_a_fork_shown_to_one_monitor_is_caught_by_comparing_heads(stack):
    rng = random.Random(6)
    some_games(stack, rng, 2)
    honest = stack.monitor(sample=0)
    assert honest.run().ok
    before = json.loads(json.dumps(honest.state))
    some_games(stack, rng, 2)
    view = ForkedView(stack, drop=before["tree_head"]["tree_size"])    # a leaf A has not seen yet
    shown = Monitor(view.get, before, sample=0)
    assert shown.run().ok                             # the fork holds together on its own
    assert honest.run().ok
    compared = honest.run(peers=[shown.state])
    assert [(f.kind, f.check) for f in compared.findings] == [("fork", "peer")]
    assert [(f.kind, f.check) for f in Monitor(stack.get, shown.state, sample=0).run().findings] == \
        [("fork", "consistency")]


def test_a_head_or_receipt_that_does_not_verify(stack):
    rng = random.Random(8)
    player, = some_games(stack, rng, 1)

    def tampered(path):
        status, body = stack.get(path)
        if path == "/v1/log/tree-head":
            body = {**body, "timestamp": body["timestamp"] + 1}
        return status, body
    report = Monitor(tampered, None, sample=0).run()
    assert [(f.kind, f.check) for f in report.findings] == [("bad_signature", "tree_head")]
    forged = dict(player.receipts[-1], version=player.receipts[-1]["version"] + 1)
    report = stack.monitor(sample=0).run(receipts=[forged])
    assert [(f.kind, f.check, f.game) for f in report.findings] == [("bad_signature", "receipt", player.game)]


def test_a_key_that_vanishes_or_changes(stack):
    rng = random.Random(9)
    some_games(stack, rng, 1)
    monitor = stack.monitor(sample=0)
    assert monitor.run().ok
    listed = stack.get("/v1/keys")[1]["keys"]

    def answering(keys):
        return lambda path: (200, {"keys": keys}) if path == "/v1/keys" else stack.get(path)

    def key_findings(keys) -> list:
        report = Monitor(answering(keys), json.loads(json.dumps(monitor.state)), sample=0).run()
        return [f for f in report.findings if f.kind == "key_changed"]
    assert [f.check for f in key_findings([{**listed[0], "public_key": "A" * 43}])] == ["keys"]
    assert "no longer listed" in key_findings([])[0].message
    assert key_findings([{**listed[0], "valid_from": listed[0]["valid_from"] - 1}])
    # A rotation (the current key ended, a new one listed) is not a finding.
    assert key_findings([{**listed[0], "key_id": "0" * 16}, {**listed[0], "valid_until": 2 ** 52}]) == []
    assert key_findings(listed + [{**listed[0], "key_id": "1" * 16}]) == []


def test_a_bad_answer_stops_the_run_and_keeps_the_state(stack):
    rng = random.Random(10)
    some_games(stack, rng, 1)
    monitor = stack.monitor(sample=0)
    assert monitor.run().ok
    kept = json.loads(json.dumps(monitor.state))
    some_games(stack, rng, 1)
    # It fails on a game's events, after the new head was proved and its leaves read: nothing kept.
    broken = Monitor(lambda path: (503, None) if path.endswith("/events") else stack.get(path),
                     json.loads(json.dumps(kept)), sample=0)
    with pytest.raises(MonitorError):
        broken.run()
    assert broken.state == kept
    assert Monitor(stack.get, broken.state, sample=0).run().entries_read > 0
    with pytest.raises(ValueError):
        load_state({"format": "something else"})


def test_the_command_line_runs_saves_its_state_and_exits_1_on_a_finding(stack, tmp_path, monkeypatch):
    from service.cli import cli

    rng = random.Random(11)
    victim, other = some_games(stack, rng, 2)
    monkeypatch.setattr(monitor_module, "http_getter", lambda api: stack.get)
    state = tmp_path / "monitor.json"
    receipts = tmp_path / "receipts.ndjson"
    receipts.write_text("".join(json.dumps(r) + "\n" for r in victim.receipts))
    runner = CliRunner()
    done = runner.invoke(cli, ["audit", "--api", "http://in-process", "--state", str(state), "--receipts",
                               str(receipts)])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["ok"] and report["findings"] == [] and report["games_checked"]["logged"] == 2
    saved = json.loads(state.read_text())
    assert saved["tree_head"]["tree_size"] == stack.core.transparency.size() and os.stat(state).st_size > 0
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps(saved))
    delete(stack, victim.game)
    done = runner.invoke(cli, ["audit", "--api", "http://in-process", "--state", str(state), "--receipts",
                               str(receipts), "--peer", str(peer)])
    assert done.exit_code == 1, done.output
    report = json.loads(done.output)
    assert {(f["kind"], f["game"]) for f in report["findings"]} == {("deleted", victim.game)}
    assert report["heads_compared"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    done = runner.invoke(cli, ["audit", "--api", "http://in-process", "--state", str(bad)])
    assert done.exit_code == 2 and "monitor state" in done.output


def test_a_bundle_given_to_the_monitor(stack, tmp_path):
    """A bundle's receipts are held to the log and its heads compared (`--bundle`)."""
    if not stack.has_bundles:
        pytest.skip("GET /v1/games/{id}/bundle is not served yet")
    rng = random.Random(12)
    victim, _ = some_games(stack, rng, 2)
    status, bundle = stack.get(f"/v1/games/{victim.game}/bundle", victim.token)
    assert status == 200
    monitor = stack.monitor(sample=0)
    report = monitor.run(bundles=[bundle])
    assert report.ok and report.heads_compared >= 1 and report.receipts["given"] == len(bundle["receipts"]) > 0
    delete(stack, victim.game)
    report = Monitor(stack.get, monitor.state, sample=0).run(bundles=[bundle])
    assert [(f.kind, f.check, f.game) for f in report.findings] == [("deleted", "receipt", victim.game)]


def test_speculation_audit_against_a_live_server(tmp_path):
    """The command line over HTTP, the embedded worker's own sequencer thread logging."""
    import httpx

    from ops.live_server import LiveServer
    from service.cli import cli

    server = LiveServer({"ALLOW_SEED": True}).start()
    try:
        created = httpx.post(f"{server.url}/v1/games", json={"type": "speculation", "options": {"deals": 1},
                                                             "seats": [{}, {"bot": "random"}, {"bot": "random"}]}).json()
        game = created["game_id"]
        assert _kit.wait_until(lambda: httpx.get(f"{server.url}/v1/log/tree-head").status_code == 200, 10)
        state = tmp_path / "state.json"
        runner = CliRunner()
        first = runner.invoke(cli, ["audit", "--api", server.url, "--state", str(state)])
        assert first.exit_code == 0, first.output
        assert json.loads(first.output)["games_checked"]["logged"] == 1
        httpx.post(f"{server.url}/v1/games/{game}/seats/0", json={"name": "ann"}).raise_for_status()
        assert _kit.wait_until(lambda: httpx.get(f"{server.url}/v1/log/tree-head").json()["tree_size"] >= 2, 10)
        second = runner.invoke(cli, ["audit", "--api", server.url, "--state", str(state)])
        assert second.exit_code == 0, second.output
        assert json.loads(second.output)["previous_tree_size"] == 1
    finally:
        server.stop()
    gone = CliRunner().invoke(cli, ["audit", "--api", server.url, "--state", str(state)])
    assert gone.exit_code == 4 and "cannot reach" in gone.output
