"""Sign-up race drill: parallel sign-ups for one name make exactly one account
(docs/accounts.md, "Usernames and passwords": the name is its own aggregate, claimed at
expected version 0).

The API under gunicorn (the shipped configuration, gevent worker) with two API processes on
a private redis-server (the sign-up limit raised, Argon2id made cheap so that the sign-ups
reach the name's claim together: `--real-argon2` keeps the defaults). Each round, `--size`
clients, each on its own connection with its own password, released together by a barrier,
sign up for one name: in even rounds all spelled alike, in odd rounds each a different
spelling that folds to the same name (case, look-alike letters and digits, `_` and `-`,
fullwidth forms). Then:

- exactly one answer is 201 and every other one 409 `username_taken`;
- exactly one account holds the name: the public profile, the name's own aggregate and every
  opened account (read through the core) agree on the winner; the winner's password signs
  in to it and a loser's does not.

    python -m ops.drills.sign_up_race --size 50 --rounds 6
"""

from __future__ import annotations

import random
import threading
from urllib.parse import quote

from service.accounts.names import check_username, username_key

from . import _kit
from ._accounts import CHEAP_ARGON2, Api, core_on, sign_in

_SUBSTITUTES = {"o": "0", "l": "1", "i": "1", "s": "5", "z": "2", "b": "8"}


def _fullwidth(c: str) -> str:
    return chr(ord(c) - 0x21 + 0xFF01) if "!" <= c <= "~" else c


def spellings(base: str, count: int, rng: random.Random) -> list[str]:
    """`count` different spellings of `base`, each a valid username with base's key."""
    key = username_key(check_username(base)[0])
    out: list[str] = []
    seen = set()
    for _ in range(50_000):
        if len(out) == count:
            break
        chars = []
        for n, c in enumerate(base):
            roll = rng.random()
            if c in _SUBSTITUTES and roll < 0.3:
                c = _SUBSTITUTES[c]
            elif roll < 0.55:
                c = c.upper()
            elif roll < 0.65:
                c = _fullwidth(c)
            if n and rng.random() < 0.12:
                c = rng.choice("_-") + c
            chars.append(c)
        text = "".join(chars)
        if text in seen:
            continue
        seen.add(text)
        try:
            display, got = check_username(text)
        except Exception:
            continue
        if got == key:
            out.append(text)
    if len(out) < count:
        raise RuntimeError(f"only {len(out)} spellings of {base!r}")
    return out


def _children_cpu(api: Api) -> dict:
    from ops.bench.waiting import children_of, cpu_of

    return {pid: cpu_of([pid]) for pid in children_of(api.server.proc.pid)}


def one_round(api: Api, core, names: list[str], key: str, round_no: int) -> dict:
    n = len(names)
    barrier = threading.Barrier(n)
    answers: list = [None] * n
    passwords = [f"race password {round_no} number {i}" for i in range(n)]

    def client(i: int) -> None:
        barrier.wait()
        answers[i] = api.call("POST", "/v1/accounts", body={"username": names[i], "password": passwords[i]})

    cpu0 = _children_cpu(api)
    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cpu1 = _children_cpu(api)
    statuses = [f"{a.status} {a.code or ''}".strip() for a in answers]
    won = [i for i, a in enumerate(answers) if a.status == 201]
    out = {"round": round_no, "spellings": len(set(names)), "answers": {s: statuses.count(s) for s in set(statuses)},
           "api_processes_busy": sum(1 for pid in cpu1 if cpu1[pid] - cpu0.get(pid, 0) > 0),
           "slowest_s": round(max(a.seconds for a in answers), 3)}
    winner = answers[won[0]].body["account"]["id"] if len(won) == 1 else None
    out["winner"] = winner
    # who holds the name: the public profile, the name's aggregate, every opened account
    profile = api.call("GET", f"/v1/accounts/{quote(names[-1])}")
    out["profile_id"] = profile.body.get("id") if profile.status == 200 else profile.status
    out["name_holder"] = core.accounts.names.repository.load(f"username/{key}").account_id
    holders = []
    offset = 0
    while True:
        ids = core.accounts.index.accounts(offset, 1000)
        for account_id in ids:
            account = core.accounts.account_repository.load(f"account/{account_id}")
            if account.opened and account.username_key == key:
                holders.append(account_id)
        if len(ids) < 1000:
            break
        offset += 1000
    out["accounts_with_the_name"] = holders
    if winner:
        right = sign_in(api, names[0], passwords[won[0]])
        out["winner_signs_in"] = right.status == 201 and right.body["account"]["id"] == winner
        loser = next(i for i in range(n) if i not in won)
        out["loser_password"] = sign_in(api, names[0], passwords[loser]).status
    out["ok"] = (out["answers"] == {"201": 1, "409 username_taken": n - 1} and winner is not None
                 and out["profile_id"] == winner == out["name_holder"] and holders == [winner]
                 and out.get("winner_signs_in") is True and out.get("loser_password") == 401)
    return out


def run(size: int = 50, rounds: int = 6, seed: int = 1, processes: int = 2, real_argon2: bool = False) -> dict:
    rng = random.Random(seed)
    settings = {"SPECULATION_SIGNUP_LIMIT": "100000/60", "SPECULATION_SIGNIN_LIMIT": "100000/60",
                **({} if real_argon2 else CHEAP_ARGON2)}
    with _kit.private_redis() as server:
        api = Api(server.url, processes, **settings)
        core = core_on(server.url)
        try:
            api.call("GET", "/v1/game-types")
            results = []
            for r in range(rounds):
                base = f"solid{seed}{rng.choice('abcdefghjkmnpqrtuxy')}{r}race"
                key = username_key(check_username(base)[0])
                names = [base] * size if r % 2 == 0 else spellings(base, size, rng)
                results.append(one_round(api, core, names, key, r))
        finally:
            api.stop()
            core.accounts.hashing.close()
    answers: dict = {}
    for r in results:
        for k, v in r["answers"].items():
            answers[k] = answers.get(k, 0) + v
    return {"size": size, "rounds": rounds, "processes": processes, "argon2": "defaults" if real_argon2 else "cheap",
            "answers": answers, "one_account_each_round": sum(len(r["accounts_with_the_name"]) == 1 for r in results),
            "busy_processes_min": min(r["api_processes_busy"] for r in results),
            "slowest_s": max(r["slowest_s"] for r in results),
            "failures": [r for r in results if not r["ok"]][:5], "ok": all(r["ok"] for r in results)}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 50, "parallel sign-ups for one name, per round")
    p.add_argument("--rounds", type=int, default=6, help="names raced for (odd rounds: look-alike spellings)")
    p.add_argument("--processes", type=int, default=2, help="API processes")
    p.add_argument("--real-argon2", action="store_true", help="Argon2id defaults (64 MiB, t=3) instead of cheap")
    args = p.parse_args(argv)
    _kit.conclude("sign_up_race", args, lambda: run(args.size, args.rounds, args.seed, args.processes,
                                                    args.real_argon2), lambda fig: (
        f"{fig['rounds']} names x {fig['size']} parallel sign-ups on {fig['processes']} API processes "
        f"(Argon2id {fig['argon2']}): {fig['answers'].get('201', 0)} x 201, "
        f"{fig['answers'].get('409 username_taken', 0)} x 409 username_taken, other answers "
        f"{ {k: v for k, v in fig['answers'].items() if k not in ('201', '409 username_taken')} }; exactly one "
        f"account holds the name in {fig['one_account_each_round']}/{fig['rounds']} rounds; both processes "
        f"served in every round: {fig['busy_processes_min'] == fig['processes']} ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
