"""What every answer carries for the browser's sake, and who the client is behind a proxy.

Headers, on every response (JSON, pages, /docs, static files, errors):

- `Content-Security-Policy`: a route's own policy (the web pages', service/web; /docs',
  service/docs_ui.py) with `frame-ancestors 'none'`, `base-uri 'none'` and
  `form-action 'none'` added when it does not name them; everything else gets `POLICY`,
  which allows nothing (a JSON answer opened in a tab runs nothing and loads nothing);
- `X-Frame-Options: DENY` (frame-ancestors for browsers that predate it),
  `X-Content-Type-Options: nosniff` (a body is only ever what its Content-Type says),
  `Referrer-Policy: no-referrer` (a game's URL, with its id, never leaks to another site).

Proxies: SPECULATION_TRUSTED_PROXIES lists the addresses of the reverse proxies in front of
the service (unset: none, the default). A request whose direct peer is one of them takes
its client's address from X-Forwarded-For (werkzeug's ProxyFix, as many hops back as the
chain of trusted proxies goes), so the per-address limits (rate, creation, streams, audits)
count the client, not the proxy; from any other peer X-Forwarded-For is ignored, so nobody
can pick the address they are counted under. gunicorn trusts X-Forwarded-Proto from the
same list (ops/gunicorn.conf.py forwarded_allow_ips).
"""

from __future__ import annotations

import ipaddress
from typing import Iterable, Optional, Union

from werkzeug.middleware.proxy_fix import ProxyFix

from .settings import BY_NAME

# Added to every policy that does not name them: no framing (clickjacking), no <base> that
# moves relative URLs, no form posting anywhere (the pages send JSON with fetch).
REQUIRED = {"frame-ancestors": "'none'", "base-uri": "'none'", "form-action": "'none'"}
POLICY = "default-src 'none'; " + "; ".join(f"{k} {v}" for k, v in REQUIRED.items())

HEADERS = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def with_required(policy: str) -> str:
    """`policy` with the REQUIRED directives it does not name appended."""
    named = {part.strip().split(" ", 1)[0].lower() for part in policy.split(";") if part.strip()}
    missing = [f"{k} {v}" for k, v in REQUIRED.items() if k not in named]
    return "; ".join([policy.strip().rstrip(";")] + missing) if missing else policy


def add_security_headers(response):
    """The after_request hook: the headers above on every response."""
    policy = response.headers.get("Content-Security-Policy")
    response.headers["Content-Security-Policy"] = with_required(policy) if policy else POLICY
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


# --- proxies ------------------------------------------------------------------------------
Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
TRUSTED_PROXIES = BY_NAME["TRUSTED_PROXIES"]


def parse_proxies(text: Optional[str]) -> tuple[Address, ...]:
    """The TRUSTED_PROXIES value (`10.0.0.2, ::1`) as addresses, read as the setting reads its
    variable (service/settings.py); ValueError names a bad one."""
    listed = TRUSTED_PROXIES.parse(text) if text else None
    return tuple(ipaddress.ip_address(item) for item in listed.split(",")) if listed else ()


def _address(text: str) -> Optional[Address]:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


class TrustedProxies:
    """WSGI middleware: ProxyFix for the X-Forwarded-For of a request from a trusted proxy.

    The client is the rightmost X-Forwarded-For entry that is not itself a trusted proxy (each
    proxy appends the address it was reached from): with the peer trusted and entries
    `client, proxy2` where proxy2 is trusted too, ProxyFix(x_for=2) takes `client`. Only
    REMOTE_ADDR changes (the original is kept in environ['werkzeug.proxy_fix.orig'])."""

    MAX_HOPS = 8

    def __init__(self, wsgi_app, proxies: Iterable[Address]):
        self.wsgi_app = wsgi_app
        self.proxies = frozenset(proxies)
        self._fixes = {hops: ProxyFix(wsgi_app, x_for=hops, x_proto=0, x_host=0, x_port=0, x_prefix=0)
                       for hops in range(1, self.MAX_HOPS + 1)}

    def hops(self, environ) -> int:
        """How many X-Forwarded-For entries, from the right, ProxyFix should go back (0: none)."""
        peer = _address(environ.get("REMOTE_ADDR") or "")
        if peer is None or peer not in self.proxies:
            return 0
        entries = [e.strip() for e in (environ.get("HTTP_X_FORWARDED_FOR") or "").split(",")]
        if not entries or not entries[-1]:
            return 0
        hops = 1
        while hops < min(len(entries), self.MAX_HOPS) and _address(entries[-hops]) in self.proxies:
            hops += 1
        return hops if _address(entries[-hops]) is not None else 0   # never a non-address

    def __call__(self, environ, start_response):
        hops = self.hops(environ)
        return (self._fixes[hops] if hops else self.wsgi_app)(environ, start_response)


def install(app) -> None:
    """The headers on every response; the proxy fix when TRUSTED_PROXIES names any."""
    app.after_request(add_security_headers)
    proxies = parse_proxies(app.config.get("TRUSTED_PROXIES"))
    if proxies:
        app.wsgi_app = TrustedProxies(app.wsgi_app, proxies)
