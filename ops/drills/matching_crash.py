"""Matching crash drill: kill -9 of any process between two steps of a chain that finds a game
(docs/matching.md, "Never half"); every chain finishes or is undone within the reconciler's
period, never half.

The chains: a challenge and a rematch (create the game; take the asker's seat) and a seek
table (mark every seek of the table; create the game; take each seat; tell each account, then
take the seeks out of the pool). The stack is the shipped one on a private redis-server: the
API under gunicorn (gevent, two processes, ops/gunicorn.conf.py) and `speculation worker
--reconcile-every PERIOD` (its reconciler's pass repairs the touched games, whose observers
take a challenge's or rematch's asker's seat, and runs the matchmaker over every pool).

The API serves the app behind the drill's pauses between steps (`drill_app`, env
DRILL_CHAIN_PAUSE "<probability>:<min s>:<max s>"): after each step of a chain, with that
probability, the request waits before its next step and marks it in the API's log. Meanwhile
clients challenge (some accepted, declined or cancelled, each expiring after 10 s), ask for
rematches of finished games from all three of their accounts at once, and seek 4-player
tables (some with bots after 1 or 3 s, some cancelled). `--size` times, at a random moment, the
API's process group (three in four kills) or the worker's is killed with SIGKILL; the chains
paused in the killed API at that moment are read from its log (a chain caught between two
steps), the store is audited at once (the half states left), and the process is restarted.

The audit (`Audit`) reads every game and every seek in the store. A half state is:
- a challenge or rematch still open whose asker's seat is not taken;
- more than one rematch of one finished game;
- a seek marked matched while another seek of its table is not, or whose game does not exist,
  has a seat not taken by its account, or whose account was not told (`seek.matched`), or
  that is still in its pool;
- a seek-table game with a seat taken for a seek that is not matched to that game (a seek
  left open: its account could be at a second table);
- a cancelled seek still in its pool.
Once the load stops, every one must be gone, and every half state seen after a kill is followed
until it is gone (how long after the kill: the figures). A seek whose opening (the POST's
append, then the pool) was cut is reported apart (`orphan_seeks`): it belongs to no table.

    python -m ops.drills.matching_crash --size 30
"""

from __future__ import annotations

import http.client
import itertools
import os
import random
import re
import sys
import threading
import time
from typing import Optional

from projections import disclosure
from projections.session import EXPIRED, OPEN
from projections.templates import fill_template

from . import _kit
from ._accounts import CHEAP_ARGON2, Answer, call, core_on

PAUSE_ENV = "DRILL_CHAIN_PAUSE"
MARK = "DRILL-STEP"
SETTINGS = {**CHEAP_ARGON2, "SPECULATION_SIGNUP_LIMIT": "100000/60", "SPECULATION_SIGNIN_LIMIT": "100000/60",
            "SPECULATION_CREATE_LIMIT": "100000/60", "SPECULATION_CHALLENGE_LIMIT": "100000/3600",
            "SPECULATION_BOT_GAMES_PER_ADDRESS": "0", "SPECULATION_LOG_LEVEL": "WARNING"}
SEEK_TYPE, SEEK_PLAYERS = "speculation", 4
CHALLENGE_TYPE = "big-shot"
REMATCH_TYPE, REMATCH_OPTIONS = "speculation", {"deals": 1}
EXPIRES_IN = 10


# --- in the API process: pauses between a chain's steps ---------------------------------------

class Pauses:
    """After a chain's step, with probability `p`, wait `lo`..`hi` seconds before its next one,
    marked in the log (`DRILL-STEP <token> <chain> <step> <id>`, then `DRILL-STEP-DONE <token>`)."""

    def __init__(self, p: float, lo: float, hi: float):
        self.p, self.lo, self.hi = p, lo, hi
        self.rng = random.Random()
        self.count = itertools.count()

    def __call__(self, chain: str, step: str, ident: str) -> None:
        if self.rng.random() >= self.p:
            return
        token = f"{os.getpid()}.{next(self.count)}"
        print(f"{MARK} {token} {chain} {step} {ident}", flush=True)
        time.sleep(self.rng.uniform(self.lo, self.hi))
        print(f"{MARK}-DONE {token}", flush=True)


class _SeekCore:
    """The core as the matchmaker sees it, a pause after each create and claim."""

    def __init__(self, core, pause: Pauses):
        self._core, self._pause = core, pause

    def __getattr__(self, name):
        return getattr(self._core, name)

    def create_game(self, *args, **kw):
        created = self._core.create_game(*args, **kw)
        self._pause("seek", "created", created.session.game_id)
        return created

    def claim_seat(self, game_id, seat, *args, **kw):
        claimed = self._core.claim_seat(game_id, seat, *args, **kw)
        self._pause("seek", "claimed", f"{game_id}:{seat}")
        return claimed


def hook_steps(core, pause: Pauses) -> None:
    """Pauses between the steps of every chain the API runs: a challenge's or rematch's, after
    its create's append and before the observers that take the asker's seat; a seek table's,
    after each mark, the create, each claim and each notice."""

    def between_create_and_seat(session) -> None:
        platform = session.platform
        asker = platform.get("challenger") or platform.get("rematch_by")
        if asker and session.status == OPEN and session.version == 1:
            pause("rematch" if platform.get("rematch_by") else "challenge", "created", session.game_id)

    core.games.observers.insert(0, between_create_and_seat)
    seeks = core.seeks
    mark, notice = seeks._mark, seeks.accounts_notice

    def marked(seek_id, spec):
        done = mark(seek_id, spec)
        if done:
            pause("seek", "marked", seek_id)
        return done

    def told(account, seek_id, game_id, seat, spec):
        notice(account, seek_id, game_id, seat, spec)
        pause("seek", "told", seek_id)

    seeks._mark, seeks.accounts_notice = marked, told
    seeks.core = _SeekCore(core, pause)


def drill_app():
    """The service's app with the drill's pauses (gunicorn: 'ops.drills.matching_crash:drill_app()')."""
    from service.app import create_app

    app = create_app()
    spec = os.environ.get(PAUSE_ENV)
    if spec:
        p, lo, hi = (float(x) for x in spec.split(":"))
        hook_steps(app.extensions["games"], Pauses(p, lo, hi))
    return app


def paused_at_kill(log: str) -> list[tuple[str, str, str]]:
    """(chain, step, id) of every pause the log opened and never closed: the chains the kill
    caught between two steps."""
    opened = {m.group(1): (m.group(2), m.group(3), m.group(4))
              for m in re.finditer(rf"^{MARK} (\S+) (\S+) (\S+) (\S+)$", log, re.M)}
    for m in re.finditer(rf"^{MARK}-DONE (\S+)$", log, re.M):
        opened.pop(m.group(1), None)
    return list(opened.values())


# --- the audit ---------------------------------------------------------------------------------

class Audit:
    """Every half state of the three chains in the store (see the module's docstring)."""

    def __init__(self, core, client):
        self.core, self.redis = core, client
        self.seeks = core.seeks

    def _ids(self, kind: str) -> list[str]:
        head, tail = {"game": ("game:{g:", "}:meta"), "seek": ("seek:{seek:", "}:meta")}[kind]
        found = self.redis.scan_iter(match=f"{head}*{tail}", count=1000)
        return sorted(k.decode()[len(head):-len(tail)] for k in found)

    def _seek(self, seek_id: str):
        return self.seeks.work.repository.load(f"seek/{seek_id}")

    def _in_pool(self, seek) -> bool:
        from service.matching.seeks import pool_key

        return self.redis.zscore(pool_key(seek.game_type, seek.players, seek.rated), seek.id) is not None

    def game(self, game_id: str, rematches: Optional[dict] = None) -> list[str]:
        try:
            session = self.core.load(game_id)
        except Exception:
            return []
        platform, out = session.platform, []
        asker = platform.get("challenger") or platform.get("rematch_by")
        if asker and session.status == OPEN and any(s.reserved == asker and s.kind == "open" for s in session.seats):
            out.append(f"{'rematch' if platform.get('rematch_by') else 'challenge'} {game_id}: asker's seat not taken")
        if rematches is not None and platform.get("rematch_of"):
            rematches.setdefault(platform["rematch_of"], []).append(game_id)
        if platform.get("seek") and session.status != EXPIRED:
            for seek_id in self._seated_seeks(game_id):
                seek = self._seek(seek_id)
                if seek.status != "matched" or seek.table["game_id"] != game_id:
                    out.append(f"seek table {game_id}: a seat taken for seek {seek_id}, which is {seek.status}"
                               f"{'' if seek.status != 'matched' else ' to ' + seek.table['game_id']}")
        return out

    def _seated_seeks(self, game_id: str) -> list[str]:
        """The seeks a seat of this game was taken for (the matchmaker's claims are keyed
        `seek:<seek id>` in the game's own idempotency hash)."""
        from events.store import keys

        prefix = "claim:seek:"
        return [field.decode()[len(prefix):]
                for field, _ in self.redis.hscan_iter(keys(game_id)["idem"], match=f"{prefix}*")]

    def seek(self, seek_id: str) -> tuple[list[str], bool]:
        """(half states, orphan) of one seek."""
        seek, out = self._seek(seek_id), []
        if not seek.id:
            return [], False
        if seek.status == "matched":
            spec = seek.table
            game_id = spec["game_id"]
            others = [self._seek(s) for s in spec["seeks"] if s != seek.id]
            if any(o.status != "matched" or o.table["game_id"] != game_id for o in others):
                out.append(f"seek {seek.id}: matched to {game_id}, others of its table not")
            if self.core.store.head(game_id)[0] == 0:
                out.append(f"seek {seek.id}: its game {game_id} does not exist")
            else:
                session = self.core.load(game_id)
                seat = next(i for i, s in enumerate(spec["seats"]) if s.get("seek_id") == seek.id)
                if session.status != EXPIRED and session.seats[seat].account != seek.account:
                    out.append(f"seek {seek.id}: seat {seat} of {game_id} not taken by its account")
            if self.core.store.get_idempotent(f"account/{seek.account}", f"matched:{seek.id}") is None:
                out.append(f"seek {seek.id}: its account was not told")
            if self._in_pool(seek):
                out.append(f"seek {seek.id}: matched and still in its pool")
        elif seek.status == "cancelled" and self._in_pool(seek):
            out.append(f"seek {seek.id}: cancelled and still in its pool")
        orphan = seek.status == "open" and not self._in_pool(seek)
        return out, orphan

    def run(self) -> dict:
        """Every half state now: {"problems": [...], "orphan_seeks": n, "games": n, "seeks": n}."""
        problems, orphans = [], 0
        seek_ids = self._ids("seek")
        for seek_id in seek_ids:
            found, orphan = self.seek(seek_id)
            problems += found
            orphans += orphan
        rematches: dict = {}
        game_ids = self._ids("game")
        for game_id in game_ids:
            problems += self.game(game_id, rematches)
        problems += [f"finished game {old}: {len(new)} rematches {new}"
                     for old, new in rematches.items() if len(new) > 1]
        return {"problems": problems, "orphan_seeks": orphans, "games": len(game_ids), "seeks": len(seek_ids)}

    def still(self, problem: str) -> bool:
        """Whether one half state the audit reported is still there."""
        kind, ident = problem.split(" ")[0], problem.split(" ")[1].rstrip(":")
        if kind == "seek" and problem.startswith("seek table"):
            game_id = problem.split(" ")[2].rstrip(":")
            return problem in self.game(game_id)
        if kind == "seek":
            return problem in self.seek(ident)[0]
        if kind in ("challenge", "rematch"):
            return problem in self.game(ident)
        return problem in self.run()["problems"]

    def counts(self) -> dict:
        """What the chains made: seeks by status, games by kind and status."""
        seeks: dict = {}
        for seek_id in self._ids("seek"):
            seek = self._seek(seek_id)
            seeks[seek.status] = seeks.get(seek.status, 0) + 1
        games: dict = {}
        for game_id in self._ids("game"):
            session = self.core.load(game_id)
            p = session.platform
            kind = ("challenge" if p.get("challenger") else "rematch" if p.get("rematch_by")
                    else "seek table" if p.get("seek") else "other")
            games.setdefault(kind, {})
            games[kind][session.status] = games[kind].get(session.status, 0) + 1
        return {"seeks": seeks, "games": games}


# --- the stack -----------------------------------------------------------------------------------

class ApiProcess:
    """gunicorn (ops/gunicorn.conf.py, gevent) serving `drill_app()` in a process group of its
    own (a kill takes its workers with it); the same port on every start."""

    def __init__(self, redis_url: str, processes: int, pause: str):
        from ops.drills.redis_server import free_port

        self.redis_url, self.processes, self.pause = redis_url, processes, pause
        self.port = free_port()
        self.child: Optional[_kit.ChildProcess] = None
        self.starts = 0

    def start(self, timeout: float = 90) -> float:
        env = {"REDIS_URL": self.redis_url, "RQ_REDIS_URL": self.redis_url, "GUNICORN_WORKERS": str(self.processes),
               "GUNICORN_BIND": f"127.0.0.1:{self.port}", "GUNICORN_WORKER_CLASS": "gevent",
               "GUNICORN_CMD_ARGS": "", PAUSE_ENV: self.pause, **SETTINGS}
        started = time.monotonic()
        conf = str(_kit.REPO / "ops" / "gunicorn.conf.py")
        self.child = _kit.ChildProcess([sys.executable, "-m", "gunicorn", "-c", conf,
                                        "ops.drills.matching_crash:drill_app()"], env, name="api")
        self.starts += 1

        def up() -> bool:
            answer = self.call("GET", "/v1/game-types", timeout=2)
            return answer is not None and answer.status == 200

        if not _kit.wait_until(up, timeout, every=0.1):
            raise RuntimeError("the API did not start: " + self.child.output()[-3000:])
        return time.monotonic() - started

    def call(self, method: str, path: str, token: Optional[str] = None, body=None,
             timeout: float = 20) -> Optional[Answer]:
        """One request; None when the connection failed (the API is down or was killed)."""
        try:
            return call(self.port, method, path, token, body, timeout=timeout)
        except (OSError, http.client.HTTPException):
            return None

    def kill(self) -> list:
        self.child.kill()
        return paused_at_kill(self.child.output())

    def stop(self) -> None:
        if self.child:
            self.child.stop()


class Worker:
    def __init__(self, redis_url: str, period: float):
        self.redis_url, self.period = redis_url, period
        self.child: Optional[_kit.ChildProcess] = None

    def start(self) -> float:
        started = time.monotonic()
        self.child = _kit.start_worker(self.redis_url, reconcile_every=self.period,
                                       extra_env={"SPECULATION_LOG_LEVEL": "WARNING", **CHEAP_ARGON2})
        return time.monotonic() - started

    def kill(self) -> list:
        self.child.kill()
        return []

    def stop(self) -> None:
        if self.child:
            self.child.stop()


# --- the load --------------------------------------------------------------------------------------

class Load:
    """Clients finding games, each a thread, until stopped; connection failures (the API being
    killed) are counted and the client goes on."""

    def __init__(self, api: ApiProcess, accounts: list[dict], finished: list[dict], seed: int):
        self.api, self.accounts, self.finished = api, accounts, finished
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.sent: dict = {}
        self.threads: list[threading.Thread] = []

    def _note(self, what: str, answer: Optional[Answer]) -> Optional[Answer]:
        key = f"{what} {'failed' if answer is None else answer.status}"
        with self.lock:
            self.sent[key] = self.sent.get(key, 0) + 1
        return answer

    def start(self) -> None:
        for n, target in enumerate((self.challenges, self.challenges, self.seeks, self.seeks, self.seeks,
                                    self.rematches)):
            thread = threading.Thread(target=target, args=(random.Random(self.rng.random()),), daemon=True,
                                      name=f"load-{n}")
            thread.start()
            self.threads.append(thread)

    def halt(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(60)

    def challenges(self, rng: random.Random) -> None:
        while not self.stop.is_set():
            a, b = rng.sample(self.accounts, 2)
            made = self._note("challenge", self.api.call("POST", "/v1/challenges", a["token"], {
                "type": CHALLENGE_TYPE, "seats": [{"me": True}, {"account": b["name"]}], "expires_in": EXPIRES_IN}))
            if made is not None and made.status == 201:
                game_id, roll = made.body["game_id"], rng.random()
                if roll < 0.4:
                    self._note("accept", self.api.call("POST", f"/v1/challenges/{game_id}/accept", b["token"]))
                elif roll < 0.55:
                    self._note("decline", self.api.call("POST", f"/v1/challenges/{game_id}/decline", b["token"]))
                elif roll < 0.65:
                    self._note("cancel", self.api.call("POST", f"/v1/challenges/{game_id}/cancel", a["token"]))
            self.stop.wait(0.25 if made is None else rng.uniform(0.02, 0.1))

    def seeks(self, rng: random.Random) -> None:
        while not self.stop.is_set():
            who = rng.choice(self.accounts)
            made = self._note("seek", self.api.call("POST", "/v1/seeks", who["token"], {
                "type": SEEK_TYPE, "players": SEEK_PLAYERS, "bots_after": rng.choice([None, None, 1, 3])}))
            if made is not None and (made.status == 409 or (made.status == 201 and rng.random() < 0.1)):
                mine = self.api.call("GET", "/v1/seeks", who["token"])
                open_ones = [s for s in (mine.body or {}).get("seeks", []) if s["status"] == "open"] if mine else []
                if open_ones:
                    gone = rng.choice(open_ones)["seek_id"]
                    self._note("cancel seek", self.api.call("DELETE", f"/v1/seeks/{gone}", who["token"]))
            self.stop.wait(0.25 if made is None else rng.uniform(0.02, 0.12))

    def rematches(self, rng: random.Random) -> None:
        for game in itertools.cycle(self.finished):   # once round, a rematch asked again lands on the same game
            if self.stop.is_set():
                return
            barrier = threading.Barrier(len(game["tokens"]))

            def ask(token: str) -> None:
                barrier.wait()
                self._note("rematch", self.api.call("POST", f"/v1/games/{game['game_id']}/rematch", token, {}))

            askers = [threading.Thread(target=ask, args=(t,)) for t in game["tokens"]]
            for t in askers:
                t.start()
            for t in askers:
                t.join()
            self.stop.wait(rng.uniform(0.2, 0.6))


# --- set-up ----------------------------------------------------------------------------------------

def make_accounts(api: ApiProcess, count: int, seed: int) -> list[dict]:
    out = []
    for n in range(count):
        name = f"m{seed}x{n:02d}crash"
        made = api.call("POST", "/v1/accounts", body={"username": name, "password": "a drill's own password"})
        assert made is not None and made.status == 201, made and made.body
        session = api.call("POST", "/v1/sessions", body={"username": name, "password": "a drill's own password"})
        out.append({"name": name, "id": made.body["account"]["id"], "token": session.body["token"]})
    return out


def finished_games(core, accounts: list[dict], count: int, rng: random.Random) -> list[dict]:
    """`count` scored games of three accounts each, played through the core (random legal
    actions), each for a rematch asked by its three accounts at once."""
    out = []
    for n in range(count):
        trio = rng.sample(accounts, 3)
        seats = [{"reserved": a["id"]} for a in trio]
        game_id = core.create_game(REMATCH_TYPE, REMATCH_OPTIONS, seats).session.game_id
        for seat, account in enumerate(trio):
            core.claim_seat(game_id, seat, None, f"drill-{seat}", account=account["id"])
        for step in range(10_000):
            session = core.load(game_id)
            if session.status != "active":
                break
            seat = rng.choice(session.to_act())
            legal = disclosure.view_for(session, seat)["legal_actions"]
            core.act(game_id, seat, fill_template(rng.choice(legal), rng), expected_version=session.version,
                     idempotency_key=f"drill-{step}", decision=session.decision(seat))
        core.score(game_id)
        out.append({"game_id": game_id, "tokens": [a["token"] for a in trio]})
    return out


# --- the drill ---------------------------------------------------------------------------------------

def _gaps(starts: list[float]) -> dict:
    """From one reconciler pass's start to the next (the period plus the pass's own time, and
    a worker's restart after its kill)."""
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    return {"passes": len(starts), "p50": _percentile(gaps, 50), "p90": _percentile(gaps, 90),
            "max": _percentile(gaps, 100)}


def _percentile(values: list[float], q: float) -> Optional[float]:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))], 3)


class Follow:
    """Each half state an audit after a kill reported, checked every `every` seconds until it is
    gone: how long after its kill."""

    def __init__(self, audit: Audit, every: float = 0.25):
        self.audit, self.every = audit, every
        self.pending: dict = {}      # half state -> monotonic time of the kill after which it was seen
        self.healed: dict = {}       # half state -> seconds from that kill until it was gone
        self.after_kill: dict = {}   # half state -> the kill after which it was seen
        self.passes: list[float] = []  # the reconciler passes' starts (their watermarks)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="follow")
        self.thread.start()

    def add(self, problems: list[str], killed_at: float, kill: int) -> None:
        with self.lock:
            for problem in problems:
                if problem not in self.healed and problem not in self.pending:
                    self.pending[problem] = killed_at
                    self.after_kill[problem] = kill

    def _run(self) -> None:
        while not self.done.is_set():
            self.check()
            try:   # when each reconciler pass started (it sets the watermark to its start)
                mark = self.audit.core.index.watermark()
                if mark and (not self.passes or mark != self.passes[-1]):
                    self.passes.append(mark)
            except Exception:
                pass
            self.done.wait(self.every)

    def check(self) -> None:
        with self.lock:
            pending = list(self.pending.items())
        for problem, at in pending:
            try:
                gone = not self.audit.still(problem)
            except Exception:   # a read in the middle of a kill's restart: next round
                continue
            if gone:
                with self.lock:
                    self.healed[problem] = time.monotonic() - at
                    self.pending.pop(problem, None)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(30)
        self.check()


def run(size: int = 30, seed: int = 1, period: float = 2.0, accounts: int = 16, processes: int = 2,
        pause: str = "0.3:0.05:0.4", gap: tuple = (0.5, 2.0), worker_share: float = 0.25,
        rematch_games: Optional[int] = None, heal_timeout: float = 60.0) -> dict:
    rng = random.Random(seed)
    kills: list[dict] = []
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        core = core_on(server.url, **{k.replace("SPECULATION_", ""): v for k, v in CHEAP_ARGON2.items()})
        audit = Audit(core, client)
        api, worker = ApiProcess(server.url, processes, pause), Worker(server.url, period)
        load = follow = None
        try:
            api.start()
            worker.start()
            people = make_accounts(api, accounts, seed)
            finished = finished_games(core, people, rematch_games or max(6, 2 * size), rng)
            load = Load(api, people, finished, seed)
            follow = Follow(audit)
            load.start()
            targets = ["api"] * size
            for n in rng.sample(range(size), int(round(size * worker_share))):
                targets[n] = "worker"
            for n, target in enumerate(targets):
                time.sleep(rng.uniform(*gap))
                process = api if target == "api" else worker
                killed_at = time.monotonic()
                caught = process.kill()
                seen = audit.run()
                audited = time.monotonic() - killed_at
                follow.add(seen["problems"], killed_at, n)
                restart = process.start()
                kills.append({"n": n, "process": target, "caught_between_steps": caught,
                              "half_states": len(seen["problems"]), "sample": seen["problems"][:3],
                              "audit_s": round(audited, 2), "restart_s": round(restart, 2)})
            load.halt()
            stopped = time.monotonic()
            final = audit.run()
            while final["problems"] and time.monotonic() - stopped < heal_timeout:
                time.sleep(0.25)
                final = audit.run()
            clean_after = time.monotonic() - stopped
            follow.stop()
            made = audit.counts()
        finally:
            if load is not None:
                load.stop.set()
            if follow is not None:
                follow.done.set()
            api.stop()
            worker.stop()
            core.accounts.hashing.close()
    by_step: dict = {}
    for k in kills:
        for chain, step, _ in k["caught_between_steps"]:
            by_step[f"{chain} after {step}"] = by_step.get(f"{chain} after {step}", 0) + 1
    heal_times = sorted(follow.healed.values())
    seen = len(follow.healed) + len(follow.pending)
    by_chain: dict = {}
    for problem, seconds in follow.healed.items():
        chain = "seek table" if problem.startswith("seek") else problem.split(" ")[0]
        by_chain[chain] = max(by_chain.get(chain, 0.0), round(seconds, 2))
    return {
        "size": size, "period_s": period, "pause": pause, "api_processes": processes,
        "kills": {name: sum(k["process"] == name for k in kills) for name in ("api", "worker")},
        "kills_between_steps": sum(bool(k["caught_between_steps"]) for k in kills),
        "chains_caught_between_steps": sum(len(k["caught_between_steps"]) for k in kills),
        "caught_by_step": dict(sorted(by_step.items())),
        "kills_leaving_half_states": sum(k["half_states"] > 0 for k in kills),
        "half_states_seen": seen, "half_states_healed": len(follow.healed),
        "heal_s_p50": _percentile(heal_times, 50), "heal_s_p90": _percentile(heal_times, 90),
        "heal_s_max": _percentile(heal_times, 100), "heal_s_max_by_chain": by_chain,
        "unhealed": list(follow.pending)[:10],
        "slowest": [{"half_state": problem, "healed_s": round(seconds, 2), "after_kill": follow.after_kill[problem]}
                    for problem, seconds in sorted(follow.healed.items(), key=lambda x: -x[1])[:8]],
        "clean_after_load_s": round(clean_after, 2), "final_problems": final["problems"][:20],
        "orphan_seeks": final["orphan_seeks"], "games": final["games"], "seeks": final["seeks"],
        "made": made, "requests": dict(sorted(load.sent.items())),
        "restart_s_max": max((k["restart_s"] for k in kills), default=None),
        "reconciler_pass_gaps_s": _gaps(follow.passes),
        "audit_s_max": max((k["audit_s"] for k in kills), default=None),
        "kills_detail": kills,
        "ok": not final["problems"] and not follow.pending and len(kills) == size}


def summary(fig: dict) -> str:
    made = fig["made"]
    games = {kind: sum(v.values()) for kind, v in made["games"].items()}
    return (f"{fig['kills']['api']} kill -9 of the API and {fig['kills']['worker']} of the worker "
            f"(reconciler every {fig['period_s']:g} s): {fig['kills_between_steps']} kills caught "
            f"{fig['chains_caught_between_steps']} chains between two steps ({fig['caught_by_step']}); "
            f"{fig['kills_leaving_half_states']} kills left half states ({fig['half_states_seen']} in all), "
            f"healed {fig['half_states_healed']}/{fig['half_states_seen']} (p50 {fig['heal_s_p50']} s, max "
            f"{fig['heal_s_max']} s after the kill, restart included; max by chain {fig['heal_s_max_by_chain']}); "
            f"half states left after the load: "
            f"{len(fig['final_problems'])} (clean {fig['clean_after_load_s']} s after it stopped); "
            f"games {games}, seeks {made['seeks']}, orphan seeks {fig['orphan_seeks']} ({fig['seconds']} s)")


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 30, "kills (API or worker)")
    p.add_argument("--period", type=float, default=2.0, help="the reconciler's period, seconds")
    p.add_argument("--accounts", type=int, default=16)
    p.add_argument("--pause", default="0.3:0.05:0.4", help="probability:min:max seconds of a pause between steps")
    args = p.parse_args(argv)
    _kit.conclude("matching_crash", args, lambda: run(args.size, args.seed, args.period, args.accounts,
                                                      pause=args.pause), summary)


if __name__ == "__main__":
    main()
