"""Dispute bundles (docs/audit.md, "Dispute bundles"): GET /v1/games/{id}/bundle as a seat and as
a spectator, checked offline by projections/audit_verify.py, each tampering caught by the check
that names it, a live game's bundle holding nothing the seat cannot see, and the command line's
`speculation verify BUNDLE` (with --keys, --known, --kept)."""

from __future__ import annotations

import copy
import json
import random
import time

import pytest

from events.signing import Keyring
from events.transparency import sequence
from projections.audit_verify import verify_bundle
from service.app import create_app
from service.audit.receipts import split_batches
from service.bootstrap import Backend
from service.cli import main as cli_main
from workers.memory_jobs import MemoryJobs
from workers.sequencer import sequencer_pass

SHORT = {"deals": 1}   # speculation, one deal: about a dozen moves for the seat
# A deal whose opening draws do not end it (an ace turned up as trumps ends a deal at once:
# the seat would never move)
SEED = "ab" * 32


class Table:
    """The API on a Redis client, its jobs drained and its log sequenced by hand after every
    move (so the tree has a head per move: many checkpoints, many earlier heads)."""

    def __init__(self, client, **config):
        self.jobs = MemoryJobs()
        self.app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, **config},
                              backend=Backend(client, client, False), jobs=self.jobs)
        self.http = self.app.test_client()
        self.core = self.app.extensions["games"]
        self.sequence = sequencer_pass(self.core)

    def settle(self, sequenced=True):
        self.jobs.drain(self.core)
        if sequenced:
            self.sequence()

    def new_game(self, moves=None, sequenced=True, seed=SEED):
        """A game of the seat 0 (a guest) against two random bots; `moves` of the seat played
        (None: to the end). Returns (game id, seat token, [signed receipts the answers gave])."""
        body = {"type": "speculation", "options": SHORT, "seats": [{}, {"bot": "random"}, {"bot": "random"}],
                "seed": seed}
        created = self.http.post("/v1/games", json=body).json
        game_id = created["game_id"]
        claimed = self.http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ann"}).json
        token, kept = claimed["token"], [created["receipt"], claimed["receipt"]]
        rng = random.Random(game_id)
        played = 0
        while moves is None or played < moves:
            self.settle(sequenced)
            view = self.view(game_id, token)
            if view["status"] != "active":
                break
            if not view["legal_actions"]:
                continue
            template = rng.choice(view["legal_actions"])
            action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}
            answer = self.http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                                    headers={**auth(token), "Idempotency-Key": f"m{played}"})
            assert answer.status_code == 200, answer.json
            kept.append(answer.json["receipt"])
            played += 1
        self.settle(sequenced)
        return game_id, token, kept

    def view(self, game_id, token):
        return self.http.get(f"/v1/games/{game_id}/view", headers=auth(token)).json

    def bundle(self, game_id, token=None, **query):
        answer = self.http.get(f"/v1/games/{game_id}/bundle", headers=auth(token) if token else {},
                               query_string=query)
        assert answer.status_code == 200, answer.json
        return answer.json


def auth(token):
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def table(fake_redis):
    return Table(fake_redis)


@pytest.fixture
def any_table(redis_client):
    """A table on fakeredis and on a real Redis (the store and the log's two backends)."""
    return Table(redis_client)


@pytest.fixture
def finished(table):
    return _finished(table)


@pytest.fixture
def any_finished(any_table):
    return _finished(any_table)


def _finished(table):
    game_id, token, kept = table.new_game()
    assert table.http.get(f"/v1/games/{game_id}").json["status"] == "scored" and len(kept) > 5
    return table, game_id, token, kept


def failures(bundle, **kw):
    return set(verify_bundle(bundle, **kw).failures)


def resign(table, obj):
    """`obj` signed again with the service's own key: a change the signature cannot catch."""
    return table.core.keys.sign(obj)


# --- a finished game ----------------------------------------------------------------------------

def test_a_finished_games_seat_bundle_verifies_offline(any_finished):
    table, game_id, token, kept = any_finished
    bundle = table.bundle(game_id, token)
    assert bundle["format"] == "speculation-bundle/1" and bundle["game"] == game_id and bundle["seat"] == 0
    assert bundle["keys"] == table.http.get("/v1/keys").json["keys"]
    # The seat's receipts are exactly the ones its answers gave (create, claim, every action).
    assert sorted(bundle["receipts"], key=lambda r: r["version"]) == sorted(kept, key=lambda r: r["version"])
    assert bundle["checkpoints"] and bundle["tree_heads"]
    assert set(bundle["consistency"]) == {str(h["tree_size"]) for h in bundle["tree_heads"]}
    report = verify_bundle(json.loads(json.dumps(bundle)))
    assert report.ok, report.as_dict()
    assert [c.name for c in report.checks] == ["format", "keys", "tree_head_signature", "receipt_signatures",
                                               "export", "receipts_in_log", "seed_commitment", "checkpoints",
                                               "consistency", "inclusion_promises"]
    assert report.trusted == "bundle" and "prove nothing" in report.check("keys").message
    assert "re-runs" in report.check("export").message
    # With the keys kept earlier, and the player's own receipts: still every check holds.
    keys = table.http.get("/v1/keys").json["keys"]
    report = verify_bundle(bundle, keys=keys, kept=kept)
    assert report.ok and report.trusted == "given" and report.check("kept_receipt_signatures").ok


def test_a_spectators_bundle_has_only_the_creation_receipt(finished):
    table, game_id, _, _ = finished
    bundle = table.bundle(game_id)
    assert bundle["seat"] is None
    assert [(r["first_version"], "seed_commitment" in r) for r in bundle["receipts"]] == [(1, True)]
    assert verify_bundle(bundle).ok


def test_the_receipts_are_the_seats_batches_only(table):
    """Two guests: each one's bundle holds the creation, its claim and its own moves' batches."""
    created = table.http.post("/v1/games", json={"type": "speculation", "options": SHORT, "seed": SEED,
                                                 "seats": [{}, {}, {"bot": "random"}]}).json
    game_id = created["game_id"]
    tokens = [table.http.post(f"/v1/games/{game_id}/seats/{s}", json={"name": f"p{s}"}).json["token"] for s in (0, 1)]
    rng = random.Random(3)
    for n in range(60):
        table.settle()
        views = [table.view(game_id, t) for t in tokens]
        if views[0]["status"] != "active":
            break
        seat = next((s for s in (0, 1) if views[s]["legal_actions"]), None)
        if seat is None:
            continue
        template = rng.choice(views[seat]["legal_actions"])
        action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}
        table.http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                        headers={**auth(tokens[seat]), "Idempotency-Key": f"k{n}"})
    raw = table.core.store.read_raw(game_id, 0, None)
    starts = {start: json.loads(batch[0][0]) for start, batch in split_batches(raw)}
    for seat, token in enumerate(tokens):
        bundle = table.bundle(game_id, token)
        for receipt in bundle["receipts"]:
            first = starts[receipt["first_version"]]
            assert receipt["first_version"] == 1 or (first.get("c") or first.get("d"))["seat"] == seat
        mine = [v for v, body in starts.items()
                if (body["t"] == "seat.claimed" and body["d"]["seat"] == seat) or body.get("c", {}).get("seat") == seat]
        assert sorted(r["first_version"] for r in bundle["receipts"]) == [1] + sorted(mine)
        assert verify_bundle(bundle).ok


# --- tampering, each caught by its check ----------------------------------------------------------

def test_a_changed_receipt_fails_its_signature(finished):
    table, game_id, token, _ = finished
    bundle = table.bundle(game_id, token)
    bundle["receipts"][-1]["head"] = "ab" * 32
    assert failures(bundle) == {"receipt_signatures"}


def test_a_receipt_signed_by_an_unknown_key_fails(finished):
    table, game_id, token, _ = finished
    bundle = table.bundle(game_id, token)
    stranger = Keyring.ephemeral(bundle["receipts"][0]["time"] - 1000)
    bundle["receipts"][-1] = stranger.sign(bundle["receipts"][-1])
    assert failures(bundle) == {"receipt_signatures"}
    assert "not among the trusted keys" in verify_bundle(bundle).check("receipt_signatures").message
    # The forger's key added to the bundle's own keys passes for the bundle's word, not for
    # the keys the player kept from GET /v1/keys.
    bundle["keys"].append(stranger.public_keys()[0])
    assert verify_bundle(bundle).ok
    assert failures(bundle, keys=table.http.get("/v1/keys").json["keys"]) == {"receipt_signatures"}


def test_a_changed_event_body_fails_the_export(finished):
    table, game_id, token, _ = finished
    bundle = table.bundle(game_id, token)
    row = bundle["export"][5]
    row["body"] = row["body"].replace('"at":', '"at":1', 1)
    assert "export" in failures(bundle)


def test_a_game_rewritten_whole_with_its_seed_and_commitment_is_caught(finished):
    """The operator replaces the game's log by another that verifies on its own: another seed
    and commitment, the chain recomputed (here: another game of the same table's, played with
    another seed). The creation receipt's signed commitment, the receipts and the checkpoints
    all say it is not the log the service showed."""
    table, game_id, token, _ = finished
    bundle = table.bundle(game_id, token)
    other, _, _ = table.new_game(seed="ef" * 32)
    forged = table.bundle(other)["export"]
    forged[0] = {**forged[0], "game_id": game_id}
    bundle["export"] = forged
    report = verify_bundle(bundle)
    assert report.check("export").ok, "the forged log holds on its own"
    assert {"receipt_not_in_log", "seed_commitment", "checkpoints"} <= set(report.failures)
    assert report.check("receipts_in_log").failure == "receipt_not_in_log"


def test_an_altered_checkpoint_proof_fails(finished):
    table, game_id, token, _ = finished
    bundle = table.bundle(game_id, token)
    proof = next(cp for cp in bundle["checkpoints"] if cp["inclusion"])["inclusion"]
    proof[0] = "00" * 32
    assert failures(bundle) == {"checkpoints"}


def test_an_altered_tree_head_root_fails(finished):
    table, game_id, token, _ = finished
    bundle = table.bundle(game_id, token)
    bundle["tree_head"]["root_hash"] = "11" * 32
    assert {"tree_head_signature", "checkpoints", "fork"} <= failures(bundle)
    # Signed again by the service: the signature holds, the proofs do not reach the root.
    bundle["tree_head"] = resign(table, bundle["tree_head"])
    assert "checkpoints" in failures(bundle) and "tree_head_signature" not in failures(bundle)


def test_known_heads_must_be_prefixes_of_the_bundles(finished):
    table, game_id, token, _ = finished
    table.new_game(moves=2)    # heads that hold none of the game's checkpoints
    log = table.core.transparency
    size = log.latest_head()["tree_size"]
    earlier = log.head_at(size - 1) or log.heads()[0]
    # A genuine head kept earlier: proved by the proof the bundle carries from its size.
    bundle = table.bundle(game_id, token, known=str(earlier["tree_size"]))
    report = verify_bundle(bundle, known_heads=[earlier])
    assert report.ok and report.check("known_heads").ok
    # A head of the same size the service signed with another root: a fork.
    forked = resign(table, {**{k: v for k, v in earlier.items() if k not in ("key_id", "signature")},
                            "root_hash": "22" * 32})
    report = verify_bundle(bundle, known_heads=[forked])
    assert report.check("known_heads").failure == "fork"
    # A genuine head whose size the bundle carries no proof from: not proved, so a fork.
    other = next(h for h in log.heads() if str(h["tree_size"]) not in bundle["consistency"]
                 and h["tree_size"] < size)
    assert verify_bundle(bundle, known_heads=[other]).check("known_heads").failure == "fork"


def test_a_promise_of_inclusion_broken(redis_client):
    """A sequencer that leaves a game out until after its receipts' include_by (1 ms here): the
    checkpoint comes, but in no head signed in time."""
    table = Table(redis_client, AUDIT_INCLUDE_WITHIN=1)
    game_id, token, _ = table.new_game(moves=3, sequenced=False)

    class Skipping:   # the operator's index: the game is never touched
        def __init__(self, index):
            self.index = index

        def touched(self, since, until, limit):
            return [(g, at) for g, at in self.index.touched(since, until, limit) if g != game_id]

    time.sleep(0.01)
    table.new_game(moves=1, sequenced=False)
    core = table.core
    assert sequence(core.transparency, core.store, Skipping(core.index), core.keys.sign).logged
    time.sleep(0.01)
    table.sequence()     # the game logged at last, late
    bundle = table.bundle(game_id, token)
    assert bundle["checkpoints"]
    report = verify_bundle(bundle)
    assert report.failures == ["inclusion_promise_broken"], report.as_dict()
    assert report.check("inclusion_promises").name == "inclusion_promises"


def test_a_kept_receipt_the_log_does_not_hold_convicts(finished):
    table, game_id, token, kept = finished
    bundle = table.bundle(game_id, token)
    lost = resign(table, {**{k: v for k, v in kept[-1].items() if k != "signature"}, "head": "cd" * 32})
    report = verify_bundle(bundle, kept=[lost])
    assert report.failures == ["receipt_not_in_log"]
    assert "kept receipt" in report.check("receipts_in_log").message


# --- a live game ------------------------------------------------------------------------------------

def test_a_live_games_seat_bundle_holds_nothing_hidden(any_table):
    table = any_table
    game_id, token, _ = table.new_game(moves=3)
    assert table.http.get(f"/v1/games/{game_id}").json["status"] == "active"
    bundle = table.bundle(game_id, token)
    seat_export = [json.loads(line) for line in table.http.get(
        f"/v1/games/{game_id}/export", headers=auth(token)).get_data(as_text=True).splitlines()]
    assert bundle["export"] == seat_export
    assert not seat_export[0]["complete"] and "seed" not in seat_export[0]
    assert all("body" not in row for row in bundle["export"][1:])
    text = json.dumps(bundle)
    assert table.core.sessions.seed(game_id) not in text
    report = verify_bundle(bundle)
    assert report.ok, report.as_dict()
    assert "a live game's export" in report.check("export").message
    # A spectator's: the spectator's export, the creation's receipt alone.
    spectator = table.bundle(game_id)
    assert spectator["export"] == [json.loads(line) for line in table.http.get(
        f"/v1/games/{game_id}/export").get_data(as_text=True).splitlines()]
    assert [r["version"] for r in spectator["receipts"]] == [bundle["receipts"][0]["version"]]
    assert verify_bundle(spectator).ok


def test_bad_queries_are_4xx(finished):
    table, game_id, _, _ = finished
    for known in ("x", "0", "1,,2", ",".join(["1"] * 65)):
        answer = table.http.get(f"/v1/games/{game_id}/bundle", query_string={"known": known})
        assert answer.status_code == 422 and "known" in answer.json["error"]["message"], known
    assert table.http.get("/v1/games/0123456789abcdef/bundle").status_code == 404
    assert table.http.get(f"/v1/games/{game_id}/bundle", headers=auth("nope")).status_code == 401


# --- the command line -------------------------------------------------------------------------------

def run_cli(args, monkeypatch, capsys, config_home=None):
    if config_home is not None:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    try:
        cli_main(args)
        code = 0
    except SystemExit as done:
        code = done.code
    out = capsys.readouterr()
    return code, out.out + out.err


def test_speculation_verify_a_bundle_file(finished, tmp_path, monkeypatch, capsys):
    table, game_id, token, kept = finished
    bundle = table.bundle(game_id, token)
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle, indent=1))
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(table.http.get("/v1/keys").json))
    code, out = run_cli(["verify", str(path)], monkeypatch, capsys, tmp_path / "empty")
    assert code == 0 and "OK: every check passed" in out and "the bundle's own" in out, out
    code, out = run_cli(["verify", str(path), "--keys", str(keys), "--json"], monkeypatch, capsys)
    assert code == 0 and json.loads(out)["trusted_keys"]["source"] == "given"

    # The player's kept receipts: one the log does not hold convicts the operator.
    home = tmp_path / "home"
    (home / "speculation").mkdir(parents=True)
    lost = resign(table, {**{k: v for k, v in kept[-1].items() if k != "signature"}, "head": "cd" * 32})
    (home / "speculation" / "receipts.ndjson").write_text("\n".join(json.dumps(r) for r in kept + [lost]) + "\n")
    code, out = run_cli(["verify", str(path), "--kept"], monkeypatch, capsys, home)
    assert code == 1 and "receipt_not_in_log" in out, out

    tampered = copy.deepcopy(bundle)
    tampered["receipts"][0]["seed_commitment"] = "00" * 32
    path.write_text(json.dumps(tampered))
    code, out = run_cli(["verify", str(path)], monkeypatch, capsys)
    assert code == 1 and "FAILED" in out and "receipt_signatures" in out, out

    # Another service's keys: nothing of this bundle is trusted.
    stranger = tmp_path / "stranger.json"
    stranger.write_text(json.dumps({"keys": Keyring.ephemeral(0).public_keys()}))
    path.write_text(json.dumps(bundle))
    code, out = run_cli(["verify", str(path), "--keys", str(stranger)], monkeypatch, capsys)
    assert code == 1 and "tree_head_signature" in out
    code, out = run_cli(["verify", str(path), "--receipt", "1:" + "00" * 32], monkeypatch, capsys)
    assert code == 2
