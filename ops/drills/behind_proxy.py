"""Behind a reverse proxy drill: do the per-address limits count the clients, or the proxy?

The real processes: the API under gunicorn with the shipped configuration (ops/gunicorn.conf.py)
on a private redis-server, with a per-address RATE_LIMIT of `--limit` requests, and in front
of it a reverse proxy (a small threaded one here, doing what nginx's
`proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` does: it appends the address it
was reached from). `--size` clients, each from an address of its own (127.0.1.N: Linux routes
all of 127/8 to the loopback), send `--limit` requests each through the proxy. Run twice:

- TRUSTED_PROXIES unset (the default): every client is the proxy's 127.0.0.1, so only the
  first `--limit` requests of all pass (the figure the issue measured);
- TRUSTED_PROXIES=127.0.0.1: each client has its own count: every request passes, one client
  sending twice its share gets 429 for the second half; a client that sends a forged
  X-Forwarded-For through the proxy is still counted under its own address; and a client
  reaching the API directly (127.0.2.1, not a trusted proxy) with a new forged
  X-Forwarded-For each time is counted under its own address: 429 past the limit.

    python -m ops.drills.behind_proxy --size 40 --limit 5
"""

from __future__ import annotations

import http.client
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

from . import _kit
from .redis_server import RedisProcess, free_port

PATH = "/v1/game-types"   # cheap, no store read: only the limiter touches Redis


class ReverseProxy:
    """GET only: forwards to the API with X-Forwarded-For += the peer's address."""

    def __init__(self, upstream_port: int):
        upstream = ("127.0.0.1", upstream_port)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                forwarded = self.headers.get("X-Forwarded-For")
                peer = self.client_address[0]
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("x-forwarded-for", "connection")}
                headers["X-Forwarded-For"] = f"{forwarded}, {peer}" if forwarded else peer
                headers["X-Forwarded-Proto"] = "https"
                conn = http.client.HTTPConnection(*upstream, timeout=10)
                try:
                    conn.request("GET", self.path, headers=headers)
                    answer = conn.getresponse()
                    body = answer.read()
                finally:
                    conn.close()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True, name="reverse-proxy").start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def get(port: int, source: str, headers: Optional[dict] = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", PATH, headers=headers or {})
        answer = conn.getresponse()
        answer.read()
        return answer.status
    finally:
        conn.close()


def start_api(redis_url: str, port: int, limit: int, trusted: Optional[str]) -> _kit.ChildProcess:
    env = {"REDIS_URL": redis_url, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_WORKERS": "1",
           "SPECULATION_RATE_LIMIT": f"{limit}/3600", "SPECULATION_LOG_LEVEL": "WARNING",
           "SPECULATION_TRUSTED_PROXIES": trusted or ""}
    return _kit.ChildProcess([sys.executable, "-m", "gunicorn", "-c", str(_kit.REPO / "ops" / "gunicorn.conf.py"),
                              "service.app:create_app()"], env, name="api")


def _listening(port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def _through(port: int, clients: int, limit: int) -> list[int]:
    """Each client's `limit` requests through the proxy, all clients at once: the statuses."""
    statuses: list[list[int]] = [[] for _ in range(clients)]

    def client(i: int) -> None:
        statuses[i] = [get(port, f"127.0.1.{i + 1}") for _ in range(limit)]

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [s for per_client in statuses for s in per_client]


def _one_run(redis_server, size: int, limit: int, trusted: Optional[str]) -> dict:
    _kit.redis_client(redis_server.url).flushall()   # the private server: each run counts from zero
    api_port = free_port()
    api = start_api(redis_server.url, api_port, limit, trusted)
    proxy = None
    try:
        if not _listening(api_port, 30):
            raise RuntimeError("the API did not start: " + api.output()[-2000:])
        proxy = ReverseProxy(api_port)
        out: dict = {"trusted_proxies": trusted or "unset"}
        statuses = _through(proxy.port, size, limit)
        out["through_proxy"] = {"requests": len(statuses), "200": statuses.count(200), "429": statuses.count(429)}
        if trusted:
            greedy = [get(proxy.port, "127.0.1.1") for _ in range(limit)]   # its second share
            out["greedy_second_share"] = {"200": greedy.count(200), "429": greedy.count(429)}
            forger = [get(proxy.port, "127.0.3.1", {"X-Forwarded-For": f"203.0.113.{n}"}) for n in range(limit + 2)]
            out["forger_through_proxy"] = forger
            direct = [get(api_port, "127.0.2.1", {"X-Forwarded-For": f"198.51.100.{n}"}) for n in range(limit + 2)]
            out["spoofer_direct"] = direct
        return out
    finally:
        if proxy:
            proxy.close()
        api.stop()


def run(size: int = 40, limit: int = 5) -> dict:
    if 3600 - time.time() % 3600 < 60:   # the limit's window is the clock's hour: keep both runs inside one
        time.sleep(3600 - time.time() % 3600 + 0.5)
    redis_server = RedisProcess().start()
    try:
        off = _one_run(redis_server, size, limit, None)
        on = _one_run(redis_server, size, limit, "127.0.0.1")
    finally:
        redis_server.stop()
    want_blocked = [200] * limit + [429, 429]
    ok = (off["through_proxy"]["200"] == limit and off["through_proxy"]["429"] == size * limit - limit
          and on["through_proxy"]["200"] == size * limit and on["through_proxy"]["429"] == 0
          and on["greedy_second_share"] == {"200": 0, "429": limit}
          and on["forger_through_proxy"] == want_blocked and on["spoofer_direct"] == want_blocked)
    return {"size": size, "limit": limit, "off": off, "on": on, "ok": ok}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 40, "clients behind the proxy, each from its own address")
    p.add_argument("--limit", type=int, default=5, help="the per-address RATE_LIMIT, requests")
    args = p.parse_args(argv)
    _kit.conclude("behind_proxy", args, lambda: run(args.size, args.limit), lambda fig: (
        f"{fig['size']} clients x {fig['limit']} requests through a proxy, a limit of {fig['limit']} per "
        f"address: TRUSTED_PROXIES unset: {fig['off']['through_proxy']['200']} x 200, "
        f"{fig['off']['through_proxy']['429']} x 429 (all one address); TRUSTED_PROXIES=127.0.0.1: "
        f"{fig['on']['through_proxy']['200']} x 200, {fig['on']['through_proxy']['429']} x 429; a client's second "
        f"share {fig['on']['greedy_second_share']['429']} x 429; forged X-Forwarded-For through the proxy "
        f"{fig['on']['forger_through_proxy'].count(429)} x 429, sent directly "
        f"{fig['on']['spoofer_direct'].count(429)} x 429 of {fig['limit'] + 2}"))


if __name__ == "__main__":
    main()
