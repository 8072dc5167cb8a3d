"""Every setting of the service: its name, default, kind and meaning, in one table.

Each comes from the environment as `SPECULATION_<NAME>` (`REDIS_URL`, `RQ_REDIS_URL` and
`REDIS_CLUSTER_NODES` are also read unprefixed, as Redis tools name them), is checked when the process
starts (a bad value stops the start with a message naming the variable), and is listed in
docs/operations.md (generated from this table; a test fails when the page is stale).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

PREFIX = "SPECULATION_"
UNPREFIXED = ("REDIS_URL", "RQ_REDIS_URL", "REDIS_CLUSTER_NODES")


class SettingsError(ValueError):
    """A setting's value is not usable; the message names the variable."""


def _integer(low: int, high: Optional[int] = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        text = text.strip()
        if not (text.isascii() and text.lstrip("-").isdigit()) or len(text) > 18:
            raise ValueError("an integer")
        value = int(text)
        if value < low or (high is not None and value > high):
            raise ValueError(f"an integer from {low}" + (f" to {high}" if high is not None else " up"))
        return value
    parse.kind = "integer"
    return parse


def _number(low: float, high: Optional[float] = None) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError("a number") from None
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise ValueError(f"a number from {low:g}" + (f" to {high:g}" if high is not None else " up"))
        return value
    parse.kind = "number"
    return parse


def _flag(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("a flag (1/0, true/false, yes/no, on/off)")


_flag.kind = "flag"


def _redis_url(text: str) -> str:
    if not text.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("a redis://, rediss:// or unix:// URL")
    return text


_redis_url.kind = "URL"


def _seed_nodes(text: str) -> str:
    """host:port pairs separated by commas, as one normalised string ("10.0.0.5:7000,10.0.0.6:7000")."""
    out = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, _, port = item.rpartition(":")
        if not host or not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
            raise ValueError(f"host:port pairs separated by commas (not {item[:40]!r})")
        out.append(f"{host}:{int(port)}")
    if not out:
        raise ValueError("at least one host:port")
    return ",".join(out)


_seed_nodes.kind = "host:port list"


def _text(text: str) -> str:
    return text


_text.kind = "text"


def _rate(text: str) -> str:
    count, _, seconds = text.partition("/")
    if not (count.isascii() and count.isdigit() and seconds.isascii() and seconds.isdigit()
            and int(count) > 0 and int(seconds) > 0):
        raise ValueError("REQUESTS/SECONDS, e.g. 120/60")
    return text


_rate.kind = "rate"


def _level(text: str) -> str:
    upper = text.strip().upper()
    if upper not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ValueError("one of DEBUG, INFO, WARNING, ERROR")
    return upper


_level.kind = "log level"


def _addresses(text: str) -> Optional[str]:
    """IP addresses separated by commas, as one normalised string ("10.0.0.2,::1")."""
    import ipaddress

    out = []
    for item in (part.strip() for part in text.split(",")):
        if item:
            try:
                out.append(str(ipaddress.ip_address(item)))
            except ValueError:
                raise ValueError(f"IP addresses separated by commas (not {item[:40]!r})") from None
    return ",".join(out) or None


_addresses.kind = "addresses"


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    parse: Callable[[str], Any]
    meaning: str

    @property
    def variable(self) -> str:
        return self.name if self.name in UNPREFIXED else PREFIX + self.name


SETTINGS: tuple[Setting, ...] = (
    Setting("REDIS_URL", None, _redis_url,
            "The game store's Redis. Unset under `make serve`: the stack starts its own embedded one."),
    Setting("RQ_REDIS_URL", None, _redis_url, "The job queue's Redis (RQ cannot use Redis Cluster). Default: REDIS_URL; required with REDIS_CLUSTER_NODES."),
    Setting("REDIS_CLUSTER_NODES", None, _seed_nodes, "The game store on a Redis (valkey) Cluster: seed nodes `host:port,host:port` (any few; the client learns the rest). Set instead of REDIS_URL; RQ_REDIS_URL must then name a plain Redis for the job queue (docs/operations.md, \"Running on a Redis Cluster\")."),
    Setting("REDIS_ACK_REPLICAS", 0, _integer(0, 16), "Replicas that must confirm an append before it is acknowledged (WAIT: in the replicas' memory; 0: acknowledged once the primary has it). Past REDIS_ACK_TIMEOUT_MS: 503 `unavailable`, the action stays appended and a retry with the same Idempotency-Key waits again."),
    Setting("REDIS_ACK_TIMEOUT_MS", 1000, _integer(1, 60_000), "Milliseconds an append waits for REDIS_ACK_REPLICAS replicas before the 503."),
    Setting("PORT", 5000, _integer(1, 65535), "The API's port (`make serve PORT=8080`)."),
    Setting("HOST", "127.0.0.1", _text, "The API's address; 0.0.0.0 to listen on every interface."),
    Setting("DATA_DIR", "var", _text, "The stack's data folder (the embedded Redis's AOF), `make serve DATA=...`."),
    Setting("REDIS_PORT", 6390, _integer(1, 65535), "The embedded Redis's port (never 6379)."),
    Setting("WORKERS", 1, _integer(1, 64), "RQ worker processes the stack starts."),
    Setting("ALLOW_SEED", False, _flag, "Accept a chosen seed in `POST /v1/games` (test configuration only)."),
    Setting("MAX_CONTENT_LENGTH", 64 * 1024, _integer(1024, 16 * 1024 * 1024), "Largest request body, bytes (413 above)."),
    Setting("SNAPSHOT_EVERY", 200, _integer(0), "Versions between snapshots of a game's state (0: none)."),
    Setting("STREAM_KEEPALIVE", 15.0, _number(0.01, 3600), "Seconds between keep-alives on an event stream (jittered)."),
    Setting("STREAM_MAX_SECONDS", 300.0, _number(1, 86400), "Longest an event stream stays open."),
    Setting("STREAMS_PER_TOKEN", 8, _integer(0), "Open event streams + long-polls per token or ticket, per API process (0: no cap; 429 past it)."),
    Setting("STREAMS_PER_ADDRESS", 256, _integer(0), "Open event streams + long-polls per client address, per API process (0: no cap)."),
    Setting("AUDITS_PER_ADDRESS", 2, _integer(0, 10_000), "Verify, export and replay requests run at once per client address, per API process (0: no bound); under the gevent worker a few more wait their turn, past them 429 `too_many_audits` with Retry-After."),
    Setting("REDIS_MAX_CONNECTIONS", 64, _integer(1, 10_000), "The store client's connection pool, per process (requests wait for a free one)."),
    Setting("REDIS_SOCKET_TIMEOUT", 1.5, _number(0.1, 30), "Seconds a Redis command may take before it fails (503 to the client)."),
    Setting("TICKET_TTL", 60, _integer(1, 3600), "Seconds a stream ticket stays valid."),
    Setting("RATE_LIMIT", None, _rate, "Requests per window, per token and per address, e.g. 120/60 (unset: none)."),
    Setting("TRUSTED_PROXIES", None, _addresses, "Addresses of the reverse proxies in front of the API, by commas (e.g. `10.0.0.2,::1`): from them the client's address is read from X-Forwarded-For (and the scheme from X-Forwarded-Proto, by gunicorn), so per-address limits count clients, not the proxy. Unset: none is trusted, forwarded headers are ignored."),
    Setting("CREATE_LIMIT", "30/60", _rate, "Games created per window, per address (429 `too_many_games` past it)."),
    Setting("BOT_GAMES_PER_ADDRESS", 4, _integer(0), "Live games only bots play, per creating address (429 `too_many_bot_games` past it; 0: no cap)."),
    Setting("BOT_JOBS_PER_GAME", 1, _integer(0, 16), "Bot turns of one all-bot game queued at once (0: every seat to act)."),
    Setting("BOT_TURNS_PER_CREATOR", 2, _integer(0, 64), "Bot turns of one creator's games queued or running at once; the rest wait their turn in the creator's list (0: no bound)."),
    Setting("BOT_MS_PER_CREATOR", 10_000, _integer(0), "Bot time per minute, milliseconds, past which a creator's bot turns queue behind every other creator's (0: never)."),
    Setting("SEARCH_MAX_TIME_MS", 200, _number(1, 60_000), "The most time a `search` bot may think per move, milliseconds: a seat's `budget.time_ms` above it is a 422, and a stored budget is clamped to it."),
    Setting("SEARCH_MAX_ITERATIONS", 20_000, _integer(1, 10_000_000), "The most iterations a `search` bot may run per move: a seat's `budget.iterations` above it is a 422, and a stored budget is clamped to it."),
    Setting("LOBBY_EXPIRY", 86400, _integer(0), "Seconds an open game nobody fills stays in the lobby (its log is kept; 0: forever)."),
    Setting("ABANDON_AFTER", 3 * 86400, _integer(0), "Seconds an active game without a clock may wait on a person before the workers end it as `abandoned` (unscored, unrated, its log kept; 0: never). A game with a clock is never abandoned: its timeouts play it."),
    Setting("LIVE_WITHIN", 3600, _integer(0), "Seconds since its last move during which an active game is listed among the lobby's live games (`GET /v1/games?live=true`; 0: every active game)."),
    Setting("ARCHIVE_URL", None, _text, "Where finished games move out of Redis: an fsspec URL (a folder, `file://...`, `s3://...` with s3fs installed). Unset: `make serve` uses DATA_DIR/archive; elsewhere games stay in Redis."),
    Setting("ARCHIVE_AFTER", 7 * 86400, _integer(0), "Seconds a scored game stays in Redis before the workers move it to the archive (0: at their next pass)."),
    Setting("SIGNUP_LIMIT", "5/3600", _rate, "Accounts signed up per window, per address (429 `too_many_signups` past it)."),
    Setting("SIGNIN_LIMIT", "30/300", _rate, "Sign-in and recovery attempts per window, per address (429 `too_many_signins` past it)."),
    Setting("SIGNIN_LOCK_AFTER", 10, _integer(1, 1000), "Wrong passwords for one username within 15 minutes that lock its sign-in for 15 minutes (not extended by attempts during the lock; a device that signed in to the account before passes it)."),
    Setting("SESSION_DAYS", 30, _number(0.01, 3650), "Days a sign-in's session lasts."),
    Setting("USERNAME_TOMBSTONE_DAYS", 365, _number(0, 36500), "Days a closed account's username stays unavailable to others."),
    Setting("ARGON2_TIME_COST", 3, _integer(1, 100), "Argon2id passes per password hash (RFC 9106's second recommended option: 3)."),
    Setting("ARGON2_MEMORY_KIB", 65536, _integer(256, 4 * 1024 * 1024), "Argon2id memory per password hash, KiB (RFC 9106: 64 MiB)."),
    Setting("PASSWORD_THREADS", 2, _integer(1, 64), "Threads that hash and check passwords, per process, off the event loop; past 32 waiting per thread, 429 `busy`."),
    Setting("CHAT_MAX_LENGTH", 280, _integer(1, 2000), "Characters of one table-chat message, after Unicode NFC (422 `invalid_text` past it)."),
    Setting("CHAT_RATE", "5/10", _rate, "Table-chat messages (and mutes) per window, per author and game: a seat in the players' channel, an account in the spectators' (429 `chat_rate_limited` with Retry-After past it)."),
    Setting("CHAT_MAX_ENTRIES", 2000, _integer(1, 1_000_000), "Table-chat entries a game keeps at most (messages and mutes; the operator's removals go past it): then 409 `chat_full`, so a flood cannot grow a game's memory without bound."),
    Setting("CHALLENGE_LIMIT", "20/3600", _rate, "Challenges per window, per challenging account (429 `too_many_challenges` past it)."),
    Setting("AUDIT_KEY_FILE", None, _text, "The service's Ed25519 signing keys (docs/operations.md, \"The signing key\"): a JSON file, mode 0600, created on first start, that every API and worker process loads and reads again when it changes (`speculation keys rotate`). `make serve` uses DATA_DIR/audit-keys.json. Unset: a key drawn in memory per process, for tests only (its receipts verify against no other process's GET /v1/keys)."),
    Setting("AUDIT_INCLUDE_WITHIN", 10_000, _integer(1, 86_400_000), "Milliseconds within which a checkpoint of a game is promised in the transparency log after a command: each signed receipt's `include_by` is its `time` plus this (docs/audit.md)."),
    Setting("AUDIT_SEQUENCE_EVERY", 0.5, _number(0.05, 1.0), "Seconds between passes of the transparency log's sequencer in each worker process (workers/sequencer.py; its lease makes one process sequence at a time): each pass adds a checkpoint of every game that moved and publishes one signed tree head (none when nothing moved)."),
    Setting("LOG_LEVEL", "INFO", _level, "Log level of the JSON log lines."),
)

BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}


def load(environ: Optional[Mapping[str, str]] = None, overrides: Optional[Mapping[str, Any]] = None) -> dict:
    """Every setting: its default, replaced by the environment's value, then by `overrides`
    (an app factory's config). Raises SettingsError naming the first bad variable."""
    environ = os.environ if environ is None else environ
    config = {s.name: s.default for s in SETTINGS}
    for setting in SETTINGS:
        names = [setting.variable] + ([PREFIX + setting.name] if setting.name in UNPREFIXED else [])
        for variable in names:
            raw = environ.get(variable)
            if raw is None or raw == "":
                continue
            try:
                config[setting.name] = setting.parse(raw)
            except ValueError as why:
                raise SettingsError(f"{variable}={raw[:40]!r}: expected {why}") from None
    config.update(overrides or {})
    return config


def unknown_variables(environ: Optional[Mapping[str, str]] = None) -> list[str]:
    """Prefixed variables that name no setting (a typo, most likely): warned about at start."""
    environ = os.environ if environ is None else environ
    return sorted(k for k in environ if k.startswith(PREFIX) and k[len(PREFIX):] not in BY_NAME
                  and k not in CLIENT_VARIABLES)


CLIENT_VARIABLES = ("SPECULATION_API", "SPECULATION_TOKEN")  # the CLI's


def markdown_table() -> str:
    rows = ["| variable | default | kind | meaning |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = "unset" if s.default is None else f"`{s.default}`"
        rows.append(f"| `{s.variable}` | {default} | {s.parse.kind} | {s.meaning} |")
    return "\n".join(rows) + "\n"
