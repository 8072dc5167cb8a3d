"""The CLI's commands that run on the game store, on a Redis Cluster (issue 45): the store on the
run's loopback valkey cluster (REDIS_CLUSTER_NODES), the job queue on a private plain Redis
(RQ_REDIS_URL), as docs/operations.md sets them up. `speculation worker --burst` plays an
all-bot game's turns and scores it; the operator's commands (`accounts rebuild`,
`ratings-rebuild`, `chat remove`, `archive move`) run there too; settings that cannot work
together stop a command with exit 2 and the reason, not a traceback; `serve` (one machine, its
own Redis) refuses a cluster setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from service import cli
from service.bootstrap import build_backend, build_core, is_cluster, settings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = "ab" * 32
STORE_VARIABLES = ("REDIS_URL", "SPECULATION_REDIS_URL", "RQ_REDIS_URL", "SPECULATION_RQ_REDIS_URL",
                   "REDIS_CLUSTER_NODES", "SPECULATION_REDIS_CLUSTER_NODES")


@pytest.fixture
def cluster_env(monkeypatch, redis_cluster, cluster_redis, real_redis, redis_server):
    """The environment of a cluster deployment (emptied cluster, emptied queue Redis)."""
    for name in STORE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    env = {"REDIS_CLUSTER_NODES": redis_cluster.seed_nodes, "RQ_REDIS_URL": redis_server.url,
           "SPECULATION_ALLOW_SEED": "1"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def core(cluster_env):
    """The core an API process on that environment builds."""
    config = settings()
    backend = build_backend(config)
    assert is_cluster(backend.store_client) and not is_cluster(backend.rq_client)
    return build_core(config, backend)


def run(capsys, *args) -> tuple[int, str, str]:
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def test_a_burst_worker_plays_an_all_bot_game_on_the_cluster_to_scored(core, cluster_env):
    session = core.create("speculation", {"deals": 2}, [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "random"}],
                          seed=SEED)
    assert core.load(session.game_id).status == "active"
    env = {k: v for k, v in os.environ.items() if k not in STORE_VARIABLES}
    worker = subprocess.run([sys.executable, "-m", "service.cli", "worker", "--burst"], cwd=ROOT,
                            env={**env, **cluster_env}, capture_output=True, text=True, timeout=180, check=False)
    assert worker.returncode == 0, worker.stderr[-3000:]
    final = core.load(session.game_id)
    assert final.status == "scored", (final.status, worker.stderr[-3000:])
    assert core.verify(session.game_id)["ok"]
    moves = [e.cmd["by"] for e in core.store.read(session.game_id) if e.cmd]
    assert moves and set(moves) <= {"bot:heuristic", "bot:random"}


def test_the_operators_commands_run_on_the_cluster(capsys, core, tmp_path):
    from projections.chat import Viewer

    game_id = core.create("big-shot", {}, [{}, {}]).game_id
    assert [core.claim(game_id, s, f"p{s}")[1] for s in (0, 1)]
    core.chat.post(game_id, Viewer(seat=0), "players", "something awful")
    code, out, err = run(capsys, "chat", "remove", game_id, "1", "--reason", "abuse")
    assert code == 0 and json.loads(out)["removal"]["reason"] == "abuse", err
    items = core.chat.read(game_id, Viewer(seat=1))["items"]
    assert [(i["kind"], i["text"], i["removed"]) for i in items] == [("message", None, True), ("removal", None, False)]

    code, out, err = run(capsys, "accounts", "rebuild")
    assert code == 0 and out.startswith("rebuilt 0 accounts") and "accounts of 1 games" in out, (out, err)
    code, out, err = run(capsys, "ratings-rebuild", "big-shot")
    assert code == 0 and out.startswith("big-shot: 0 rated game(s)"), (out, err)
    code, out, err = run(capsys, "archive", "move", game_id, "--archive", str(tmp_path / "archive"))
    assert code == 0 and game_id in json.loads(out), err


def test_a_cluster_without_a_queue_redis_stops_the_command_with_its_reason(capsys, cluster_env, monkeypatch):
    monkeypatch.delenv("RQ_REDIS_URL")
    code, _, err = run(capsys, "accounts", "rebuild")
    assert code == cli.EXIT_USAGE and "RQ_REDIS_URL" in err and "Traceback" not in err
    monkeypatch.delenv("REDIS_CLUSTER_NODES")
    code, _, err = run(capsys, "ratings-rebuild")
    assert code == cli.EXIT_USAGE and "REDIS_CLUSTER_NODES" in err


def test_serve_refuses_a_cluster_rather_than_start_a_redis_beside_it(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("REDIS_CLUSTER_NODES", "127.0.0.1:7000")
    monkeypatch.setenv("RQ_REDIS_URL", "redis://127.0.0.1:7001/0")
    code, _, err = run(capsys, "serve", "--data", str(tmp_path / "var"))
    assert code == cli.EXIT_USAGE and "speculation worker" in err and not (tmp_path / "var").exists()
