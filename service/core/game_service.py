"""The GameService: the application core's one object, built by the bootstrap.

It is composed of the game repository (game_repository.py: loading through the session
cache of loading.py, appends, follow-up jobs) and the unit of work over it (unit_of_work.py);
its methods come from commands.py, queries.py, tokens.py (seat tokens, stream tickets),
streams.py (live streams, waiting) and archiving.py.
"""

from __future__ import annotations

import secrets as _secrets
from functools import partial
from typing import Callable, Optional

from events.index import GameIndex
from events.store import EventStore

from ..audit.keys import ServiceKeys
from ..audit.receipts import DEFAULT_INCLUDE_WITHIN_MS, Receipts
from .archiving import Archiving
from .bots import SearchLimits
from .chat import TableChat
from .commands import Commands
from .jobs import Jobs
from .game_repository import CommandMetrics, GameRepository, NoMetrics
from .loading import GameSessions
from .queries import Queries
from .streams import SharedBatches, Streams, Wait, poll_for_version
from .tokens import TokenAuth
from .unit_of_work import UnitOfWork


class GameService(Commands, Queries, TokenAuth, Streams, Archiving):
    def __init__(self, store: EventStore, index: GameIndex, jobs: Jobs, *, allow_seed: bool = False,
                 snapshot_every: int = 200, cache_size: int = 2048, wait: Optional[Wait] = None,
                 stream_keepalive: float = 15.0, stream_max_seconds: float = 300.0, ticket_ttl: int = 60,
                 secrets: Optional[Callable[[], dict]] = None, search_limits: SearchLimits = SearchLimits(),
                 metrics: CommandMetrics = NoMetrics(), keys: Optional[ServiceKeys] = None,
                 include_within_ms: int = DEFAULT_INCLUDE_WITHIN_MS):
        self.store = store
        self.index = index
        self.jobs = jobs
        self.allow_seed = allow_seed
        # The most a `search` seat's budget may ask (SEARCH_MAX_*): checked at creation, and
        # the bot turn clamps a stored budget to it (workers/jobs.py).
        self.search_limits = search_limits
        # How a waiting request learns of a new version: the store's notifier (one
        # subscription per process), else polling the store's head.
        notifier = getattr(store, "notifier", None)
        self.wait: Wait = wait or (notifier.wait if notifier is not None else partial(poll_for_version, store))
        self.shared_batches = SharedBatches()
        self.stream_keepalive = stream_keepalive
        self.stream_max_seconds = stream_max_seconds
        self.ticket_ttl = ticket_ttl
        self._load_secrets = secrets
        self._secrets: Optional[dict] = None
        self.sessions = GameSessions(store, snapshot_every, cache_size)
        self.games = GameRepository(store, index, jobs, self.sessions, metrics)
        self.unit_of_work = UnitOfWork(self.games)
        # Told of each scored game (idempotent; once more on every repair): the ratings.
        self.result_observers: list = []
        # The service's signing keys (a bare core built by hand: a key of its own, in memory)
        # and the receipts signed with them.
        self.keys = keys if keys is not None else ServiceKeys.ephemeral()
        self.receipts = Receipts(self.keys, include_within_ms)
        # The table chat, beside each game's log and outside its hash chain (its limits: the
        # bootstrap sets its policy from the settings).
        self.chat = TableChat(self)
        self._init_tokens()

    def load(self, game_id: str, at: Optional[tuple[int, str]] = None):
        """The game's session at the store's head (`at`: the head when just read)."""
        return self.sessions.load(game_id, at)

    @property
    def bot_jobs_per_game(self) -> int:
        """At most this many bot turns of an all-bot game queued at once (0: no limit)."""
        return self.games.bot_jobs_per_game

    @bot_jobs_per_game.setter
    def bot_jobs_per_game(self, value: int) -> None:
        self.games.bot_jobs_per_game = value

    def _secret(self, name: str) -> bytes:
        if self._secrets is None:
            self._secrets = self._load_secrets() if self._load_secrets else {}
        return self._secrets.get(name, b"")

    @property
    def bot_key(self) -> bytes:
        """The server-held key the bots draw their randomness from (b"": none configured,
        as in a bare core built by hand)."""
        return self._secret("bot_key")

    @property
    def idem_key(self) -> bytes:
        """The server-held key the games and tokens of keyed creates and claims are derived
        from. A bare core built by hand (no secrets configured) draws one for its process:
        never a key anyone could guess."""
        key = self._secret("idem_key")
        if not key:
            key = self._secrets["idem_key"] = _secrets.token_bytes(32)
        return key
