"""`make demo`: bots play a whole game through the API (in process, embedded store and
worker), then the result, the ledger's balances and the verify report are printed."""

from __future__ import annotations

import json
import time


def run_demo(app, game_type: str = "speculation", players: int = 4, level: str = "heuristic",
             timeout: float = 120.0, budget: dict | None = None) -> dict:
    """Play on `app`, the API built by the CLI on the embedded store (REDIS_URL None);
    `budget`: the search bots' budget per move ({"iterations", "time_ms"}), with level search."""
    from .embedded import EmbeddedWorker

    worker = EmbeddedWorker(app.extensions["games"], app.extensions["backend"].rq_client).start()
    client = app.test_client()
    try:
        seats = [{"bot": level, **({"budget": budget} if budget else {})} if i % 2 == 0 else {"bot": "random"}
                 for i in range(players)]
        created = client.post("/v1/games", json={"type": game_type, "seats": seats})
        if created.status_code != 201:
            raise SystemExit(f"could not create the game: {created.json['error']['message']}")
        game_id = created.json["game_id"]
        print(f"game {game_id}: {game_type}, {players} bots ({', '.join(s['bot'] for s in seats)}); "
              f"seed commitment {created.json['commitment'][:16]}…")
        deadline = time.monotonic() + timeout
        while True:
            summary = client.get(f"/v1/games/{game_id}").json
            if summary["status"] == "scored":
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"the game did not finish in {timeout:.0f} s (status {summary['status']})")
            time.sleep(0.05)
        ledger = client.get(f"/v1/games/{game_id}/ledger").json
        report = client.get(f"/v1/games/{game_id}/verify").json
        print(f"finished at version {summary['version']}; seed revealed: {summary['seed'][:16]}…")
        print("result: " + json.dumps(summary["result"]))
        print(f"ledger: {len(ledger['entries'])} transfers; final balances:")
        for account, assets in ledger["balances"].items():
            shown = {a: n for a, n in assets.items() if not a.startswith("card:")}
            if shown:
                print(f"  {account:<12} {json.dumps(shown, sort_keys=True)}")
        print("verify: " + json.dumps(report))
        return {"summary": summary, "ledger": ledger, "verify": report}
    finally:
        worker.stop()
