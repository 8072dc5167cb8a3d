"""Dispute bundles in the browser (docs/audit.md, "Dispute bundles"; service/web/static/js/audit.js)
and from the command line against a live server: the table keeps its own signed receipts in
localStorage, the replay page's "Check the bundle" verifies the service's bundle with them
(Ed25519 by Web Crypto, under the page's own Content-Security-Policy), a tampered bundle file
fails by name, a kept receipt the log does not hold shows as a conviction; audit.js's RFC 9162
verification agrees with events/merkle.py; `speculation bundle` then `speculation verify`."""

import json
import random
import re
import time

import pytest

import web_kit
from events import merkle
from service.cli import main as cli_main
from workers.sequencer import sequencer_pass

needs_chromium = pytest.mark.skipif(web_kit.chromium_path() is None,
                                    reason="chromium is not installed (apt-get install chromium): browser tests skipped")



@pytest.fixture(scope="module")
def server():
    """The whole service on a free port for this module, allowed to take a game's seed."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    live = web_kit.LiveServer({"ALLOW_SEED": True}).start()
    yield live
    live.stop()

SEED = "ab" * 32               # a deal the seat moves in (no ace turned up as trumps)
DONE = "body[data-bundle-check=ok], body[data-bundle-check=failed]"


chromium = web_kit.module_chromium   # one Chromium for the module


def _page(chromium, bypass_csp):
    context = chromium.new_context(viewport={"width": 1000, "height": 900}, bypass_csp=bypass_csp)
    p = context.new_page()
    p.errors = []
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    return context, p


@pytest.fixture
def page(chromium):
    """No bypass_csp: the page checks the bundle under its own policy."""
    context, p = _page(chromium, False)
    yield p
    context.close()


@pytest.fixture
def playing_page(chromium):
    """web_kit.play_to_end waits with playwright's wait_for_function, which evaluates a string."""
    context, p = _page(chromium, True)
    yield p
    context.close()


def finished_game(server, seed=SEED):
    """Seat 0 (a guest, its token) against two random bots, played to the end through the
    API, the log sequenced after each move: (game id, token, the receipts the answers gave)."""
    http = server.app.test_client()
    core = server.service
    created = http.post("/v1/games", json={"type": "speculation", "options": {"deals": 1}, "seed": seed,
                                           "seats": [{}, {"bot": "random"}, {"bot": "random"}]}).json
    game_id = created["game_id"]
    claimed = http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ann"}).json
    token, kept = claimed["token"], [created["receipt"], claimed["receipt"]]
    auth = {"Authorization": f"Bearer {token}"}
    sequence, rng = sequencer_pass(core), random.Random(game_id)
    deadline = time.monotonic() + 60
    while http.get(f"/v1/games/{game_id}").json["status"] != "scored":
        assert time.monotonic() < deadline
        view = http.get(f"/v1/games/{game_id}/view", headers=auth).json
        if not view["legal_actions"]:
            time.sleep(0.02)
            continue
        template = rng.choice(view["legal_actions"])
        action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}
        answer = http.post(f"/v1/games/{game_id}/actions", json={"action": action},
                           headers={**auth, "Idempotency-Key": f"m{len(kept)}"})
        if answer.status_code == 200:
            kept.append(answer.json["receipt"])
            sequence()
    sequence()
    return game_id, token, kept


def check(page, trigger):
    page.evaluate("delete document.body.dataset.bundleCheck")
    trigger()
    page.wait_for_selector(DONE, timeout=20000)
    return page.inner_text("#bundle-report")


@needs_chromium
def test_the_replay_page_checks_the_bundle_with_the_kept_receipts(page, server, tmp_path):
    game_id, token, kept = finished_game(server)
    page.goto(f"{server.url}/web/")
    page.evaluate("([g, t, r]) => { localStorage.setItem('speculation.seats', JSON.stringify({[g]: {0: t}}));"
                  " localStorage.setItem('speculation.receipts', JSON.stringify({[g]: {0: r}})); }",
                  [game_id, token, kept])
    page.goto(f"{server.url}/web/games/{game_id}/replay")
    page.wait_for_selector("#check-bundle", timeout=30000)
    report = check(page, lambda: page.click("#check-bundle"))
    assert report.startswith("OK: all"), report
    for name in ("tree_head_signature", "receipt_signatures", "kept_receipt_signatures", "export", "receipts_in_log",
                 "seed_commitment", "checkpoints", "consistency", "inclusion_promises"):
        assert f"✓ {name}" in report, name
    assert f"{len(kept)} receipts kept on this device" in report and "seat 0" in report
    page.locator("#bundle").screenshot(path=str(tmp_path / "bundle-ok.png"))

    # The same game rewritten whole (another game's log, with its own seed and commitment,
    # under this game's id), loaded as a file: the receipts, the creation's commitment and
    # the checkpoints all fail; the forged log still holds on its own.
    bundle = server.app.test_client().get(f"/v1/games/{game_id}/bundle",
                                          headers={"Authorization": f"Bearer {token}"}).json
    other, _, _ = finished_game(server, seed="ef" * 32)
    forged = server.app.test_client().get(f"/v1/games/{other}/bundle").json["export"]
    bundle["export"] = [{**forged[0], "game_id": game_id}] + forged[1:]
    path = tmp_path / "rewritten.json"
    path.write_text(json.dumps(bundle))
    report = check(page, lambda: page.set_input_files("#bundle-file", str(path)))
    assert report.startswith("FAILED"), report
    assert "✗ receipts_in_log (receipt_not_in_log)" in report and "convicts the operator" in report
    assert "✗ seed_commitment" in report and "✗ checkpoints" in report and "✓ export" in report
    page.locator("#bundle").screenshot(path=str(tmp_path / "bundle-rewritten.png"))

    # A receipt this device kept that the service's log does not hold: a conviction.
    lost = server.service.keys.sign({**{k: v for k, v in kept[-1].items() if k != "signature"}, "head": "cd" * 32})
    page.evaluate("([g, r]) => { const all = JSON.parse(localStorage.getItem('speculation.receipts'));"
                  " all[g][0].push(r); localStorage.setItem('speculation.receipts', JSON.stringify(all)); }",
                  [game_id, lost])
    report = check(page, lambda: page.click("#check-bundle"))
    assert report.startswith("FAILED: receipt_not_in_log"), report
    assert "a kept receipt for" in report

    # Trusting only another service's keys: nothing the bundle carries is signed by them.
    stranger = tmp_path / "keys.json"
    from events.signing import Keyring

    stranger.write_text(json.dumps({"keys": Keyring.ephemeral(0).public_keys()}))
    page.set_input_files("#keys-file", str(stranger))
    page.wait_for_selector("#keys-note:has-text('1 key(s) loaded')")
    report = check(page, lambda: page.click("#check-bundle"))
    assert "✗ tree_head_signature" in report and "✗ receipt_signatures" in report
    assert "only the keys of the file you loaded" in report
    assert not page.errors, page.errors


@needs_chromium
def test_the_table_keeps_its_receipts(playing_page, server):
    page = playing_page
    page.goto(server.url + "/web/")
    page.wait_for_selector("#create")
    page.select_option("#new-type", "speculation")
    page.fill("#your-name", "alice")
    page.click("details:has(fieldset.options) > summary")
    page.fill("#opt-deals", "1")
    page.click("#create-button")
    page.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0"))
    game_id = page.url.split("/")[5].split("?")[0]
    web_kit.wait_status(page, ["active", "ended", "scored"])
    moves = web_kit.play_to_end(page, timeout=60)
    kept = page.evaluate("JSON.parse(localStorage.getItem('speculation.receipts'))")[game_id]
    assert [r["first_version"] for r in kept["game"]] == [1] and len(kept["0"]) == 1 + moves
    assert all(r["format"] == "speculation-receipt/1" and r["game"] == game_id for r in kept["0"])
    sequencer_pass(server.service)()
    page.goto(f"{server.url}/web/games/{game_id}/replay")
    page.wait_for_selector("#check-bundle", timeout=30000)
    report = check(page, lambda: page.click("#check-bundle"))
    assert report.startswith("OK: all"), report
    assert f"{2 + moves} receipt(s) of this game kept on this device" in report
    assert not page.errors, page.errors


@needs_chromium
def test_audit_js_verifies_rfc9162_proofs_as_merkle_py_does(page, server):
    """Every inclusion proof of trees of 1..17 leaves and every consistency proof between
    their sizes, verified by audit.js, and each failing once one hash in it is changed."""
    cases = []
    leaves = [merkle.leaf_hash(b"leaf %d" % i) for i in range(17)]
    for size in range(1, 18):
        tree = merkle.MerkleTree(leaves[:size])
        for index in range(size):
            proof = [h.hex() for h in tree.inclusion_proof(index, size)]
            cases.append(["inclusion", leaves[index].hex(), index, size, proof, tree.root().hex()])
        for first in range(1, size):
            proof = [h.hex() for h in tree.consistency_proof(first, size)]
            cases.append(["consistency", tree.root(first).hex(), first, size, proof, tree.root().hex()])
    page.goto(f"{server.url}/web/games/0123456789abcdef/replay")
    results = page.evaluate("""async (cases) => {
      const audit = await import('/web/static/js/audit.js');
      const bytes = (h) => Uint8Array.from(h.match(/../g), (x) => parseInt(x, 16));
      const run = async ([kind, a, m, n, proof, root], p) => kind === 'inclusion'
        ? audit.verifyInclusion(bytes(a), m, n, p.map(bytes), bytes(root))
        : audit.verifyConsistency(m, n, bytes(a), bytes(root), p.map(bytes));
      const out = [];
      for (const c of cases) {
        const good = await run(c, c[4]);
        const bad = c[4].length ? await run(c, [c[4][0].replace(/^./, (x) => x === '0' ? '1' : '0'), ...c[4].slice(1)]) : false;
        out.push([good, bad]);
      }
      return out;
    }""", cases)
    assert len(results) == len(cases) > 250
    assert all(good for good, _ in results), [c[:4] for c, (g, _) in zip(cases, results) if not g][:5]
    assert not any(bad for _, bad in results)


def test_speculation_bundle_then_verify(server, tmp_path, monkeypatch, capsys):
    game_id, token, _ = finished_game(server)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    out = tmp_path / "bundle.json"
    cli_main(["bundle", game_id, "--api", server.url, "--token", token, "-o", str(out)])
    bundle = json.loads(out.read_text())
    assert bundle["seat"] == 0 and len(bundle["receipts"]) > 2
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(server.app.test_client().get("/v1/keys").json))
    cli_main(["verify", str(out), "--keys", str(keys)])
    assert "OK: every check passed" in capsys.readouterr().out
    cli_main(["bundle", game_id, "--api", server.url, "-o", str(out)])   # not signed in: a spectator's
    assert json.loads(out.read_text())["seat"] is None
    bundle["export"][3]["body"] = bundle["export"][3]["body"].replace('"at":', '"at":9', 1)
    out.write_text(json.dumps(bundle))
    with pytest.raises(SystemExit) as failed:
        cli_main(["verify", str(out)])
    assert failed.value.code == 1 and "FAILED: export" in capsys.readouterr().out
