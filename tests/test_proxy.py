"""Trusted proxies (service/security.py, SPECULATION_TRUSTED_PROXIES): off by default; from a
listed proxy the client's address comes from X-Forwarded-For (werkzeug's ProxyFix), from any
other peer X-Forwarded-For is ignored; gunicorn trusts the same list; and the drill
(ops/drills/behind_proxy.py) in its short form, through gunicorn and a real proxy."""

from __future__ import annotations

import importlib.util

import pytest
from flask import request

from ops.drills import _kit, behind_proxy
from service import security, settings


def whoami_app(**config):
    app = _kit.make_app(_kit.fake_client(), **config)
    app.add_url_rule("/whoami", "whoami", lambda: request.remote_addr)
    return app.test_client()


def seen(http, peer, forwarded=None):
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    return http.get("/whoami", headers=headers, environ_base={"REMOTE_ADDR": peer}).get_data(as_text=True)


def test_off_by_default_forwarded_headers_are_ignored():
    assert settings.load({})["TRUSTED_PROXIES"] is None
    http = whoami_app()
    assert seen(http, "10.0.0.2", "203.0.113.7") == "10.0.0.2"


@pytest.mark.parametrize("peer, forwarded, client", [
    ("10.0.0.2", "203.0.113.7", "203.0.113.7"),                      # the proxy's client
    ("10.0.0.2", "198.51.100.1, 203.0.113.7", "203.0.113.7"),        # a forged entry before it: ignored
    ("10.0.0.2", "203.0.113.7, 10.0.0.3", "203.0.113.7"),            # two trusted proxies in a row
    ("10.0.0.2", "10.0.0.3, 10.0.0.2", "10.0.0.3"),                  # only proxies: the leftmost
    ("10.0.0.2", None, "10.0.0.2"),                                  # no header: the proxy itself
    ("10.0.0.2", "", "10.0.0.2"),
    ("10.0.0.2", "not-an-address", "10.0.0.2"),                      # garbage: the proxy, never the garbage
    ("10.0.0.2", "203.0.113.7, not-an-address", "10.0.0.2"),
    ("192.0.2.50", "203.0.113.7", "192.0.2.50"),                     # not a trusted peer: ignored
    ("::1", "2001:db8::5", "2001:db8::5"),                           # IPv6 proxy and client
    ("0:0::1", "203.0.113.7", "203.0.113.7"),                        # the peer compared as an address
])
def test_a_listed_proxy_forwards_its_clients_address(peer, forwarded, client):
    http = whoami_app(TRUSTED_PROXIES="10.0.0.2, 10.0.0.3,::1")
    assert seen(http, peer, forwarded) == client


def test_per_address_limits_count_the_client_behind_the_proxy(fake_redis):
    app = _kit.make_app(fake_redis, RATE_LIMIT="3/3600", TRUSTED_PROXIES="10.0.0.2")
    http = app.test_client()

    def via_proxy(client):
        return http.get("/v1/game-types", headers={"X-Forwarded-For": client},
                        environ_base={"REMOTE_ADDR": "10.0.0.2"}).status_code

    assert [via_proxy(f"203.0.113.{n}") for n in range(10)] == [200] * 10
    assert [via_proxy("203.0.113.99") for _ in range(4)] == [200] * 3 + [429]
    direct = [http.get("/v1/game-types", headers={"X-Forwarded-For": f"198.51.100.{n}"},
                       environ_base={"REMOTE_ADDR": "192.0.2.1"}).status_code for n in range(4)]
    assert direct == [200] * 3 + [429]


@pytest.mark.parametrize("text", ["10.0.0.0/8", "proxy.local", "10.0.0.2;10.0.0.3", "1.2.3.4.5"])
def test_a_bad_list_stops_the_start_naming_the_variable(text):
    with pytest.raises(settings.SettingsError, match="SPECULATION_TRUSTED_PROXIES"):
        settings.load({"SPECULATION_TRUSTED_PROXIES": text})
    with pytest.raises(ValueError):
        security.parse_proxies(text)


def test_the_setting_is_normalised():
    assert settings.load({"SPECULATION_TRUSTED_PROXIES": " 10.0.0.2 ,0:0::1,"})["TRUSTED_PROXIES"] == "10.0.0.2,::1"


def _gunicorn_conf(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("SPECULATION_TRUSTED_PROXIES", raising=False)
    else:
        monkeypatch.setenv("SPECULATION_TRUSTED_PROXIES", value)
    spec = importlib.util.spec_from_file_location("gunicorn_conf_under_test", _kit.REPO / "ops" / "gunicorn.conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.forwarded_allow_ips


def test_gunicorn_trusts_the_same_proxies(monkeypatch):
    """forwarded_allow_ips (X-Forwarded-Proto) is the service's list: nobody when it is unset
    (not gunicorn's default of 127.0.0.1), the listed addresses when set."""
    assert _gunicorn_conf(monkeypatch, None) == ""
    assert _gunicorn_conf(monkeypatch, "10.0.0.2, ::1") == "10.0.0.2,::1"
    assert _gunicorn_conf(monkeypatch, "not an address") == ""


def test_the_drill_short_form():
    figures = behind_proxy.run(size=6, limit=3)
    assert figures["off"]["through_proxy"] == {"requests": 18, "200": 3, "429": 15}, figures
    assert figures["on"]["through_proxy"] == {"requests": 18, "200": 18, "429": 0}, figures
    assert figures["ok"], figures
