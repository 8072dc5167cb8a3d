"""Snooping drill: for every registered game with hidden information, random games in
which every payload a seat or a spectator receives is compared with what the same viewer
receives in a second world that differs only in what that viewer may not know.

How: at checkpoints of a live game G, for each viewer V (every seat, and the spectator), the
log of G is copied into a new game G' with every secret V may not know relabelled: each
secret value (a card in another seat's hand, a face-down card, an undealt objective, a
committed choice not yet shown...) is mapped through a random permutation of its kind that
fixes every value V has seen (public ones, V's own). The commands of other seats are
replaced too (the platform shows others only who acted). Which values are secret, and to
whom, is declared per game below, from the rules (never from the game's own redact or
view, which are what is being tested). V then fetches, from G and from G' with its own
token: its view, the summary, the events (JSON, SSE, NDJSON, with a stream ticket), replays,
the ledger, the export, the table chat, and the answers to illegal actions. Any difference
is a leak; the report names the endpoint and the JSON path of the first difference.

    python -m ops.drills.snooping --size 3        # games per hidden-information type
"""

from __future__ import annotations

import copy
import json
import random
import secrets
from collections import defaultdict
from functools import partial
from typing import Callable, Optional

from events.envelope import GENESIS, NewEvent
from events.randomness import event_nonce
from projections import disclosure, speculate, speculation, spekulation
from projections.game import IllegalAction
from projections.registry import all_games
from projections.session import PLATFORM_EVENTS
from projections.templates import fill_template
from service.core.tokens import token_hash

from . import _kit

ALL = "all"


# --- what each game keeps secret, from its rules ----------------------------------------------
# A spec is (fields, domains): fields(type, data, ctx) lists the identity-bearing fields of one
# rules event as (path, namespace, owner), owner = the seat that may see the value, None for
# nobody, ALL for everyone; ctx is a dict the function may keep counters in. domains: kind ->
# every value of that kind (else the values seen in the log).

def _secret_duel(kind, d, ctx):
    if kind == "dealt":
        ctx["round"] = ctx.get("round", 0) + 1
        return [(("cards", i), ("card", ctx["round"]), i) for i in range(len(d["cards"]))]
    if kind == "bet":
        return [(("amount",), ("bet", ctx.get("round", 0), d["seat"]), d["seat"])] if "amount" in d else []
    if kind == "shown":
        r = ctx.get("round", 0)
        return ([(("cards", i), ("card", r), ALL) for i in range(len(d["cards"]))]
                + [(("bets", i), ("bet", r, i), ALL) for i in range(len(d["bets"]))])
    return []


def _speculation(kind, d, ctx):
    if kind == "deal":
        ctx["deal"] = d["deal"]
        return [(("deck", i), ("card", d["deal"]), None) for i in range(len(d["deck"]))]
    if kind in ("turn_up", "reveal", "offer", "deal_end", "sale") and d.get("card") is not None:
        return [(("card",), ("card", ctx.get("deal", 0)), ALL)]
    return []


def _spekulation(kind, d, ctx):
    cycles = ctx.setdefault("cycle", defaultdict(int))
    if kind == "deck_shuffled":
        cycles[d["seat"]] += 1
        return [(("order", i), ("card", d["seat"], cycles[d["seat"]]), None) for i in range(len(d["order"]))]
    if kind == "cards_drawn" and "cards" in d:
        return [(("cards", i), ("card", d["seat"], cycles[d["seat"]]), d["seat"]) for i in range(len(d["cards"]))]
    if kind == "card_committed" and "card" in d:
        return [(("card",), ("card", d["seat"], cycles[d["seat"]]), d["seat"])]
    if kind == "cards_revealed":
        return [(("cards", i), ("card", i, cycles[i]), ALL) for i in range(len(d["cards"]))]
    return []


def _speculate(kind, d, ctx):
    if kind == "game_started":
        out = [(("event_deck", i), ("event",), None) for i in range(len(d["event_deck"]))]
        for level, deck in enumerate(d["objective_decks"], start=1):
            out += [(("objective_decks", level - 1, i), ("objective", level), None) for i in range(len(deck))]
        return out
    if kind == "cards_dealt":
        return [(("cards", i), ("event",), d["seat"]) for i in range(len(d["cards"]))]
    if kind == "card_drawn" and "card" in d:
        return [(("card",), ("event",), d["seat"])]
    if kind == "deck_reshuffled" and "order" in d:
        return [(("order", i), ("event",), None) for i in range(len(d["order"]))]
    if kind == "event_played":
        return [(("card",), ("event",), ALL)]
    if kind == "objective_dealt" and "objective" in d:
        return [(("objective",), ("objective", d["level"]), d["seat"])]
    if kind == "objective_met":
        return [(("objective",), ("objective", d["level"]), ALL)]
    return []


# Keyed by each game module's own NAME (the games are named only in their declarations);
# "secret-duel" is the tests' toy game, which ops cannot import.
SPECS: dict[str, tuple[Callable, dict]] = {
    "secret-duel": (_secret_duel, {"card": list(range(1, 10)), "bet": [0, 1, 2, 3]}),
    speculation.NAME: (_speculation, {}),
    spekulation.NAME: (_spekulation, {}),
    speculate.NAME: (_speculate, {}),
}


def hidden_games() -> list[str]:
    return sorted(name for name, game in all_games().items() if game.HIDDEN_INFORMATION)


# --- relabelling ------------------------------------------------------------------------------

def _get(obj, path):
    for key in path:
        obj = obj[key]
    return obj


def _put(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def relabel(bodies: list[dict], game_type: str, viewer: Optional[int], rng: random.Random,
            full: Optional[list[dict]] = None) -> tuple[list[dict], int]:
    """The log with every secret `viewer` may not know relabelled; (log, values changed).
    `full`: the whole log, whose values complete each kind's domain."""
    spec = SPECS.get(game_type)
    out = copy.deepcopy(bodies)
    changed = 0
    for body in out:   # others' commands: the platform shows only who acted
        cmd = body.get("c")
        if cmd and cmd.get("seat") != viewer:
            cmd["action"] = {"type": "relabelled", "n": secrets.token_hex(4)}
    if spec is None:
        return out, changed
    fields, domains = spec

    def walk(log):
        ctx, found = {}, []
        for i, body in enumerate(log):
            if body["t"] not in PLATFORM_EVENTS:
                found += [(i, path, ns, owner) for path, ns, owner in fields(body["t"], body["d"], ctx)]
        return found

    seen = defaultdict(set)
    for source in (full or bodies,):
        for i, path, ns, owner in walk(source):
            seen[ns[0]].add(_get(source[i]["d"], path))
    occurrences = walk(bodies)
    fixed = defaultdict(set)
    for i, path, ns, owner in occurrences:
        if owner == ALL or (owner is not None and owner == viewer):
            fixed[ns].add(_get(bodies[i]["d"], path))
    sigma = {}
    for ns in {o[2] for o in occurrences}:
        domain = set(domains.get(ns[0], ())) | seen[ns[0]]
        free = sorted(domain - fixed[ns], key=repr)
        sigma[ns] = dict(zip(free, rng.sample(free, len(free))))
    for i, path, ns, owner in occurrences:
        if owner == ALL or (owner is not None and owner == viewer):
            continue
        value = _get(out[i]["d"], path)
        new = sigma[ns].get(value, value)
        changed += new != value
        _put(out[i]["d"], path, new)
    return out, changed


def twin(service, game_id: str, bodies: list[dict], seats: int) -> tuple[str, list[str]]:
    """A new game holding `bodies` as its log (same seed), with fresh seat tokens."""
    meta = service.store.get_meta(game_id, "seed", "type")
    twin_id = secrets.token_hex(8)
    tokens = [secrets.token_urlsafe(24) for _ in range(seats)]
    events = [NewEvent(b["t"], b["d"], b["s"], b.get("c")) for b in bodies]
    extra = {f"token:{token_hash(t)}": str(s) for s, t in enumerate(tokens)}
    service.store.append(twin_id, events, base_version=0, base_head=GENESIS, expected_version=0,
                         meta={"seed": meta["seed"], "type": meta["type"], **extra},
                         nonce=partial(event_nonce, meta["seed"]))
    for s, t in enumerate(tokens):
        service.index.record_token(token_hash(t), twin_id, s)
    return twin_id, tokens


# --- payloads ---------------------------------------------------------------------------------

# (clock readings too: when a game moved, the server's clock when it answered, an idle game's
# last move; a deadline is an "at")
VOLATILE = {"game_id", "hash", "prev_hash", "head", "at", "created_at", "ticket", "moved_at", "server_time",
            "idle_since"}


def _normal(obj, game_id):
    if isinstance(obj, dict):
        return {k: _normal(v, game_id) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, (list, tuple)):
        return [_normal(v, game_id) for v in obj]
    if isinstance(obj, str):
        return obj.replace(game_id, "GAME")
    return obj


def _lines(text: str) -> list:
    out = []
    for line in text.splitlines():
        if line.startswith("data: "):
            out.append(json.loads(line[6:]))
        elif line.startswith("{"):
            out.append(json.loads(line))
    return out


def payloads(http, game_id: str, token: Optional[str], at_versions: list[int], probes: list[dict]) -> dict:
    """Everything `token`'s holder (None: a spectator) can fetch about the game, normalised."""
    auth = _kit.auth(token)
    base = f"/v1/games/{game_id}"
    out = {}

    def get(name, path, **kw):
        response = http.get(base + path, headers={**auth, **kw.pop("headers", {})}, **kw)
        out[name] = (response.status_code, response.get_json(silent=True)
                     if response.mimetype == "application/json" else _lines(response.get_data(as_text=True)))

    if token is None:
        get("summary", "")
    else:
        get("view", "/view")
    get("events", "/events")
    get("events-sse", "/events", headers={"Accept": "text/event-stream"}, query_string={"follow": 0})
    get("events-ndjson", "/events", headers={"Accept": "application/x-ndjson"}, query_string={"follow": 0})
    for at in at_versions:
        get(f"replay@{at}", "/replay", query_string={"at": at})
    get("ledger", "/ledger")
    get("export", "/export")
    get("chat", "/chat")
    ticket = http.post(base + "/stream-tickets", headers=auth).get_json()
    out["events-by-ticket"] = (200, http.get(base + "/events", query_string={"ticket": ticket["ticket"]}).get_json())
    for n, action in enumerate(probes):
        response = http.post(base + "/actions", json={"action": action}, headers=_kit.auth(token, f"probe-{n}"))
        out[f"illegal action {json.dumps(action, sort_keys=True)}"] = (response.status_code, response.get_json())
    return {name: _normal(value, game_id) for name, value in out.items()}


def first_difference(a, b, path="") -> Optional[str]:
    if type(a) is not type(b):
        return path or "(root)"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}.{key}" if path else str(key)
            found = first_difference(a[key], b[key], f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else (path or "(root)")


def _probes(session, viewer: int, rng: random.Random) -> list[dict]:
    """Actions that are illegal for `viewer` in the real game: unknown types, bare action
    types, and other seats' legal moves (which may name their secrets)."""
    game = session.game
    candidates = [{"type": "no-such-action"}] + [{"type": t} for t in sorted(game.ACTION_SCHEMAS)]
    for seat in session.to_act():
        if seat != viewer:
            legal = disclosure.view_for(session, seat)["legal_actions"]
            candidates += [fill_template(a, rng) for a in legal[:3]]
    out = []
    for action in candidates:
        try:
            game.decide(session.state, viewer, action, _NoDraw())
        except IllegalAction:
            out.append(action)
        except Exception:
            continue
    return out[:6]


class _NoDraw:
    def __getattr__(self, name):
        raise RuntimeError("a legal action: not a probe")


def check_game(app, game_type: str, rng: random.Random, checkpoints: int = 3) -> dict:
    service = app.extensions["games"]
    http = app.test_client()
    game_id, tokens = _kit.create_playable(service, game_type, rng)
    # Play the whole game first (to know every value of each kind), remembering the moves.
    moves = []
    full_rng = random.Random(rng.random())
    shadow_id, shadow_tokens = _kit.create_open_game(service, game_type, seed=service.store.get_meta(game_id, "seed")["seed"])
    while True:
        session = service.load(shadow_id)
        if session.status != "active":
            break
        seat = full_rng.choice(session.to_act())
        action = fill_template(full_rng.choice(disclosure.view_for(session, seat)["legal_actions"]), full_rng)
        moves.append((seat, action))
        service.act(shadow_id, seat, action, idempotency_key=f"m{len(moves)}", expected_version=session.version)
    full = [json.loads(b) for b, _ in service.store.read_raw(shadow_id)]
    stops = sorted(rng.sample(range(len(moves)), min(checkpoints, len(moves))))
    leaks, compared, relabelled = [], 0, 0
    for n, (seat, action) in enumerate(moves):
        if n in stops:
            session = service.load(game_id)
            if session.status != "active":
                break
            bodies = [json.loads(b) for b, _ in service.store.read_raw(game_id)]
            at_versions = sorted({1, max(1, session.version // 2), session.version})
            for viewer in [None] + list(range(len(session.seats))):
                world, changed = relabel(bodies, game_type, viewer, rng, full)
                relabelled += changed
                twin_id, twin_tokens = twin(service, game_id, world, len(session.seats))
                probes = _probes(session, viewer, rng) if viewer is not None else []
                real = payloads(http, game_id, tokens[viewer] if viewer is not None else None, at_versions, probes)
                other = payloads(http, twin_id, twin_tokens[viewer] if viewer is not None else None, at_versions, probes)
                for name in real:
                    compared += 1
                    where = first_difference(real[name], other[name])
                    if where:
                        leaks.append({"game": game_type, "viewer": "spectator" if viewer is None else f"seat {viewer}",
                                      "version": session.version, "payload": name, "field": where})
        service.act(game_id, seat, action, idempotency_key=f"m{n}", expected_version=service.load(game_id).version)
    return {"type": game_type, "payloads_compared": compared, "secrets_relabelled": relabelled, "leaks": leaks}


def run(size: int = 2, seed: int = 1, checkpoints: int = 3, games=None) -> dict:
    rng = random.Random(seed)
    app = _kit.make_app(_kit.fake_client())
    results = []
    for name in games or hidden_games():
        for _ in range(size):
            results.append(check_game(app, name, rng, checkpoints))
    leaks = [leak for r in results for leak in r["leaks"]]
    missing = [name for name in hidden_games() if name not in SPECS]
    return {"games": len(results), "types": sorted({r["type"] for r in results}),
            "payloads_compared": sum(r["payloads_compared"] for r in results),
            "secrets_relabelled": sum(r["secrets_relabelled"] for r in results),
            "leaks": len(leaks), "first_leaks": leaks[:20], "types_without_secret_spec": missing,
            "ok": not leaks and not missing}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 3, "games per hidden-information type")
    p.add_argument("--checkpoints", type=int, default=4)
    args = p.parse_args(argv)
    _kit.conclude("snooping", args, lambda: run(args.size, args.seed, args.checkpoints), lambda fig: (
        f"{fig['games']} games ({', '.join(fig['types'])}): {fig['payloads_compared']} payloads "
        f"compared with worlds where {fig['secrets_relabelled']} secrets were relabelled; {fig['leaks']} leaks"
        + (f"; no secret spec for {fig['types_without_secret_spec']}" if fig["types_without_secret_spec"] else "")
        + f" ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
