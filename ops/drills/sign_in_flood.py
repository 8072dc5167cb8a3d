"""Sign-in flood drill: wrong passwords for one account from many addresses are slowed, then
refused; the lock keeps the owner's known device working, is not extended by the flood, and
ends (docs/accounts.md, "Sign-in, lockout and recovery").

The API under gunicorn (the shipped configuration: gevent worker, one process, real Argon2id
defaults: 64 MiB, t=3) on a private redis-server, behind a trusted proxy
(SPECULATION_TRUSTED_PROXIES=127.0.0.1: each request's X-Forwarded-For is its client
address), the per-address limits as shipped (SIGNIN_LIMIT 30 per 5 minutes). The owner signs
up and signs in once (its `device`). Then:

1. `--size` sign-ins with wrong passwords for the owner's name, from `--addresses` addresses
   (each under the per-address limit), `--concurrency` at a time: each answer's status and
   code (401 `bad_credentials`: a password actually checked, one Argon2id verify each; 429
   `sign_in_locked` once SIGNIN_LOCK_AFTER wrong passwords locked the name);
2. the right password from a new device: 429 `sign_in_locked`, Retry-After <= 900;
3. the right password with the owner's `device`: 201 at once;
4. more wrong passwords, then the right one from a new device again `--gap` seconds later:
   still locked, its Retry-After smaller by the time passed (the lock is not extended);
5. with `--wait-lock`: waits out the lock and signs in from a new device: 201; the lock's
   length from its first 429 to that sign-in is reported.

    python -m ops.drills.sign_in_flood --size 1000 --wait-lock     # about 15 minutes
"""

from __future__ import annotations

import queue
import threading
import time

from . import _kit
from ._accounts import Api, sign_in, sign_up

LOCK_SECONDS = 900


def _address(n: int) -> str:
    return f"10.{100 + n // 62500}.{n // 250 % 250}.{n % 250 + 1}"


def _from(address: str) -> dict:
    return {"X-Forwarded-For": address}


def flood(api: Api, username: str, size: int, addresses: int, concurrency: int, first: int = 0) -> list[dict]:
    """`size` wrong-password sign-ins, `concurrency` at a time, spread over `addresses`."""
    todo: queue.Queue = queue.Queue()
    for i in range(size):
        todo.put(i)
    out: list[dict] = []
    lock = threading.Lock()

    def client() -> None:
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            sent = time.perf_counter()
            answer = sign_in(api, username, f"wrong guess number {first + i}",
                             headers=_from(_address(1000 + (first + i) % addresses)))
            with lock:
                out.append({"i": i, "sent": sent, "status": answer.status, "code": answer.code,
                            "seconds": answer.seconds, "retry_after": answer.headers.get("retry-after")})

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(out, key=lambda a: a["sent"])


def _median(values) -> float | None:
    values = sorted(values)
    return round(values[len(values) // 2], 4) if values else None


def run(size: int = 1000, addresses: int = 200, concurrency: int = 20, gap: float = 10.0,
        wait_lock: bool = False, seed: int = 1, lock_after: int | None = None) -> dict:
    settings = {"SPECULATION_TRUSTED_PROXIES": "127.0.0.1"}
    if lock_after:
        settings["SPECULATION_SIGNIN_LOCK_AFTER"] = str(lock_after)
    with _kit.private_redis() as server:
        api = Api(server.url, 1, **settings)
        try:
            return _drill(api, f"owner{seed}", size, addresses, concurrency, gap, wait_lock, lock_after or 10)
        finally:
            api.stop()


def _drill(api: Api, username: str, size: int, addresses: int, concurrency: int, gap: float,
           wait_lock: bool, lock_after: int) -> dict:
    home = _from("10.0.0.1")
    assert sign_up(api, username, headers=home).status == 201
    first = sign_in(api, username, headers=home)
    assert first.status == 201, first.body
    device = first.body["device"]
    fig: dict = {"size": size, "addresses": addresses, "concurrency": concurrency, "lock_after": lock_after,
                 "first_sign_in_s": round(first.seconds, 3)}
    t0 = time.perf_counter()
    answers = flood(api, username, size, addresses, concurrency)
    fig["flood_s"] = round(time.perf_counter() - t0, 2)
    counts: dict = {}
    for a in answers:
        key = f"{a['status']} {a['code']}"
        counts[key] = counts.get(key, 0) + 1
    fig["answers"] = counts
    checked = [a for a in answers if a["status"] == 401]
    locked = [a for a in answers if a["code"] == "sign_in_locked"]
    fig["passwords_checked"] = len(checked)
    fig["checked_median_s"] = _median(a["seconds"] for a in checked)
    fig["locked_median_s"] = _median(a["seconds"] for a in locked)
    fig["locked_max_s"] = round(max((a["seconds"] for a in locked), default=0), 4)
    fig["first_locked_after"] = next((n for n, a in enumerate(answers) if a["code"] == "sign_in_locked"), None)
    retry = [int(a["retry_after"]) for a in locked if a["retry_after"] and a["retry_after"].isdigit()]
    fig["flood_retry_after"] = [min(retry), max(retry)] if retry else None
    locked_at = locked[0]["sent"] if locked else None
    # the right password from a new device: refused while locked
    new_device = sign_in(api, username, headers=_from("10.0.0.2"))
    fig["right_password_new_device"] = f"{new_device.status} {new_device.code}"
    ra1, ra1_at = new_device.headers.get("retry-after"), time.perf_counter()
    fig["retry_after_1"] = int(ra1) if ra1 and ra1.isdigit() else None
    # the owner's known device: in at once
    known = sign_in(api, username, device=device, headers=_from("10.0.0.3"))
    fig["known_device"] = known.status
    fig["known_device_s"] = round(known.seconds, 3)
    # the lock is not extended by what comes while it holds
    time.sleep(gap / 2)
    more = flood(api, username, 20, addresses, 4, first=size)
    fig["during_lock"] = {f"{s} {c}": sum(1 for a in more if (a["status"], a["code"]) == (s, c))
                          for s, c in {(a["status"], a["code"]) for a in more}}
    time.sleep(gap / 2)
    again = sign_in(api, username, headers=_from("10.0.0.4"))
    ra2, ra2_at = again.headers.get("retry-after"), time.perf_counter()
    fig["right_password_new_device_again"] = f"{again.status} {again.code}"
    fig["retry_after_2"] = int(ra2) if ra2 and ra2.isdigit() else None
    fig["seconds_between"] = round(ra2_at - ra1_at, 2)
    ok = (fig["right_password_new_device"] == "429 sign_in_locked" and fig["retry_after_1"] is not None
          and 0 < fig["retry_after_1"] <= LOCK_SECONDS and known.status == 201
          and fig["right_password_new_device_again"] == "429 sign_in_locked" and fig["retry_after_2"] is not None
          # not extended: smaller by the time passed (whole seconds, one of rounding)
          and fig["retry_after_2"] <= fig["retry_after_1"] - int(ra2_at - ra1_at) + 1
          and fig["retry_after_2"] < fig["retry_after_1"]
          and set(counts) <= {"401 bad_credentials", "429 sign_in_locked"} and locked
          # every password checked was in flight before the lock: at most lock_after + concurrency - 1
          and lock_after <= len(checked) <= lock_after + concurrency - 1 and len(checked) + len(locked) == size
          and all(k == "429 sign_in_locked" for k in fig["during_lock"]))
    if wait_lock:
        time.sleep(max(0, fig["retry_after_2"] - 2))
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline:
            last = sign_in(api, username, headers=_from("10.0.0.5"))
            if last.status != 429:
                break
            time.sleep(0.5)
        fig["after_the_lock"] = f"{last.status} {last.code or ''}".strip()
        fig["lock_lasted_s"] = round(time.perf_counter() - locked_at, 1) if locked_at else None
        ok = ok and last.status == 201 and fig["lock_lasted_s"] <= LOCK_SECONDS + 5
    fig["ok"] = bool(ok)
    return fig


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 1000, "wrong-password sign-ins")
    p.add_argument("--addresses", type=int, default=200, help="client addresses (X-Forwarded-For) they come from")
    p.add_argument("--concurrency", type=int, default=20, help="sign-ins in flight at once")
    p.add_argument("--gap", type=float, default=10.0, help="seconds between the two readings of Retry-After")
    p.add_argument("--wait-lock", action="store_true", help="wait the lock out (15 minutes) and sign in")
    args = p.parse_args(argv)
    _kit.conclude("sign_in_flood", args, lambda: run(args.size, args.addresses, args.concurrency, args.gap,
                                                     args.wait_lock, args.seed), lambda fig: (
        f"{fig['size']} wrong passwords from {fig['addresses']} addresses, {fig['concurrency']} at a time, in "
        f"{fig['flood_s']} s: {fig['passwords_checked']} checked (401, median {fig['checked_median_s']} s), "
        f"{fig['answers'].get('429 sign_in_locked', 0)} refused 429 sign_in_locked (median "
        f"{fig['locked_median_s']} s, the first after {fig['first_locked_after']} answers); the right password "
        f"from a new device {fig['right_password_new_device']} (Retry-After {fig['retry_after_1']}), from the "
        f"owner's device {fig['known_device']} in {fig['known_device_s']} s; {fig['seconds_between']} s and "
        f"20 more wrong passwords later still locked, Retry-After {fig['retry_after_2']} (not extended)"
        + (f"; after the lock {fig['after_the_lock']}, {fig['lock_lasted_s']} s after it began"
           if "after_the_lock" in fig else "") + f" ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
