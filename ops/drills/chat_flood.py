"""Chat flood drill (issue 43): what a hostile client can do to a game's table chat, against
the real app on a private redis-server.

- a flood: one seat sends `size` messages, half of them from parallel threads over several
  API processes' apps: exactly the rate's count (5 in 10 s) are said, every other one is 429
  `chat_rate_limited` with Retry-After, and nothing else is stored;
- huge and hostile messages: a 1 MB body is 413, 281 characters, control characters, ANSI
  escapes and bidi overrides are 422 `invalid_text`, and none is stored; markup is stored and
  answered byte for byte as sent (it is the pages' job to show it as text: tests/test_web_chat.py);
- the cap: with the rate lifted, many authors fill a game's chat with 280-character messages
  up to CHAT_MAX_ENTRIES (2,000) and the next one is 409 `chat_full`: the Redis memory the
  game's chat takes at its most, and the cost of a poll (an empty `after=last` read, the
  pages' every 2.5 s) and of a first read (200 entries).

    python -m ops.drills.chat_flood --size 200      # the full drill
"""

from __future__ import annotations

import statistics
import time

from . import _kit

MARKUP = "<img src=x onerror=alert(1)><b>bold</b><script>alert(2)</script>&amp;"
HOSTILE = ["x" * 281, "bell\x07", "\x1b[2J\x1b[31mred", "rtl \u202eevil", "two\nlines", "nul\x00", "\u200b"]


def run(size: int = 200, cap: int = 2000, apps: int = 4, url: str = "") -> dict:
    def measure(client) -> dict:
        from workers.memory_jobs import MemoryJobs

        made = [_kit.make_app(client, jobs=MemoryJobs(), CHAT_MAX_ENTRIES=cap) for _ in range(apps)]
        http = made[0].test_client()
        game_id, tokens = _game(http)
        say = _sayer(tokens)
        fig: dict = {}
        # the flood: half in sequence, half released together over the apps
        answers = [say(http, game_id, 0, f"flood {n}") for n in range(size // 2)]
        answers += [(s, None, b) for s, _, b in _kit.all_at_once(
            made, lambda h: h.post(f"/v1/games/{game_id}/chat", json={"channel": "players", "text": "flood!"},
                                   headers={"Authorization": f"Bearer {tokens[0]}"}), size - size // 2)]
        statuses = [a[0] for a in answers]
        stored = len(http.get(f"/v1/games/{game_id}/chat", headers=_auth(tokens[0])).json["items"])
        fig["flood"] = {"sent": size, "said": statuses.count(201), "refused_429": statuses.count(429),
                        "other": len(statuses) - statuses.count(201) - statuses.count(429), "stored": stored,
                        "codes": sorted({b["error"]["code"] for s, _, b in answers if s == 429})}
        # huge and hostile bodies, from the other seat
        huge = http.post(f"/v1/games/{game_id}/chat", data=b'{"channel":"players","text":"' + b"x" * 1_000_000 + b'"}',
                         headers={**_auth(tokens[1]), "Content-Type": "application/json"}).status_code
        hostile = [say(http, game_id, 1, text)[0] for text in HOSTILE]
        markup = say(http, game_id, 1, MARKUP)
        after = http.get(f"/v1/games/{game_id}/chat", headers=_auth(tokens[1])).json["items"]
        fig["hostile"] = {"huge_1mb": huge, "refused": hostile, "stored": len(after) - stored,
                          "markup_as_sent": markup[0] == 201 and after[-1]["text"] == MARKUP}
        # the cap, with the rate lifted
        filler = [_kit.make_app(client, jobs=MemoryJobs(), CHAT_MAX_ENTRIES=cap, CHAT_RATE="100000/10")]
        full_game, full_tokens = _game(filler[0].test_client())
        fill = filler[0].test_client()
        say_full = _sayer(full_tokens)
        sent = {201: 0, 409: 0}
        start = time.monotonic()
        for n in range(cap + 20):
            status, _, body = say_full(fill, full_game, n % 2, "y" * 280)
            sent[status] = sent.get(status, 0) + 1
            if status == 409:
                fig.setdefault("full_code", body["error"]["code"])
        fig["cap"] = {"cap": cap, "said": sent.get(201, 0), "refused_409": sent.get(409, 0),
                      "seconds_to_fill": round(time.monotonic() - start, 2),
                      "chat_memory_bytes": sum(client.memory_usage(k) or 0 for k in client.keys(f"game:{{g:{full_game}}}:chat*")),
                      "game_log_memory_bytes": client.memory_usage(f"game:{{g:{full_game}}}:events")}
        last = fill.get(f"/v1/games/{full_game}/chat", headers=_auth(full_tokens[0]), query_string={"after": cap}).json
        polls, firsts = [], []
        for _ in range(200):
            t = time.perf_counter()
            fill.get(f"/v1/games/{full_game}/chat", headers=_auth(full_tokens[0]), query_string={"after": last["last"]})
            polls.append(time.perf_counter() - t)
        for _ in range(20):
            t = time.perf_counter()
            page = fill.get(f"/v1/games/{full_game}/chat", headers=_auth(full_tokens[0])).json
            firsts.append(time.perf_counter() - t)
        fig["reads"] = {"empty_poll_ms_p50": _ms(statistics.median(polls)), "empty_poll_ms_p95": _ms(_p95(polls)),
                        "first_page_items": len(page["items"]), "first_page_ms_p50": _ms(statistics.median(firsts))}
        return fig

    if url:
        return _judge(measure(_kit.redis_client(url)))
    with _kit.private_redis() as server:
        return _judge(measure(_kit.redis_client(server.url)))


def _game(http):
    game_id = http.post("/v1/games", json={"type": "big-shot", "seats": [{}, {}]}).json["game_id"]
    tokens = [http.post(f"/v1/games/{game_id}/seats/{s}", json={"name": f"p{s}"}).json["token"] for s in (0, 1)]
    return game_id, tokens


def _auth(token):
    return {"Authorization": f"Bearer {token}"}


def _sayer(tokens):
    def say(http, game_id, seat, text):
        answer = http.post(f"/v1/games/{game_id}/chat", json={"channel": "players", "text": text},
                           headers=_auth(tokens[seat]))
        return answer.status_code, answer.headers.get("Retry-After"), answer.json
    return say


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _p95(values: list) -> float:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


def _judge(fig: dict) -> dict:
    flood, hostile, cap = fig["flood"], fig["hostile"], fig["cap"]
    fig["ok"] = (flood["said"] == 5 and flood["refused_429"] == flood["sent"] - 5 and flood["other"] == 0
                 and flood["stored"] == 5 and flood["codes"] == ["chat_rate_limited"]
                 and hostile["huge_1mb"] == 413 and hostile["refused"] == [422] * len(HOSTILE)
                 and hostile["stored"] == 1 and hostile["markup_as_sent"]
                 and cap["said"] == cap["cap"] and cap["refused_409"] == 20 and fig.get("full_code") == "chat_full")
    return fig


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 200, "messages one seat floods")
    p.add_argument("--cap", type=int, default=2000, help="CHAT_MAX_ENTRIES")
    args = p.parse_args(argv)
    _kit.conclude("chat_flood", args, lambda: run(args.size, args.cap), lambda fig: (
        f"a flood of {fig['flood']['sent']}: {fig['flood']['said']} said, {fig['flood']['refused_429']} refused 429; "
        f"huge and hostile refused {fig['hostile']['refused']}; the cap {fig['cap']['cap']}: {fig['cap']['said']} said, "
        f"{fig['cap']['refused_409']} refused 409, {fig['cap']['chat_memory_bytes']} bytes of chat; an empty poll "
        f"p50 {fig['reads']['empty_poll_ms_p50']} ms"))


if __name__ == "__main__":
    main()
