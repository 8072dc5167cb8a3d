"""The reconciler: every write that follows an append is a projection, re-derived here.

A command marks its game *touched* in the index before it appends (`Commands._append`), and
the append writes the game's status and what it waits on into the game's own meta, atomically
with the batch. What follows the append — the lobby entry, the token directory, the
leaderboard, the follow-up jobs — may be lost (a crash, a lost reply, a queue down); each pass
re-derives them from the game's own keys (`GameService.repair`), incrementally:

- the games touched since the last pass, from the watermark minus `LOOKBACK` (a command in
  flight when a pass ran is looked at again by the next ones; the touch came before its
  append, so a pass never misses an append, only sees it early) up to now — a pass reads
  what changed, never the whole lobby;
- the games that wait on a worker's job (a bot's turn, scoring, a turn timeout), a set kept
  here: each is looked at on every pass until it waits on nothing, its job enqueued again if
  none is pending (jobs are unique by id and idempotent, so a pending one is left alone).

A game is *stuck* when it has waited on a job with none pending for longer than two periods;
with a pass every `period` seconds (10 by default) none stays so. `touched` is trimmed to the
last `KEEP` seconds.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

log = logging.getLogger(__name__)

LOOKBACK = 30.0     # seconds before the watermark each pass looks at again
KEEP = 3600.0       # seconds of touches kept
BATCH = 2000        # touched games per pass at most (the rest on the next pass)


@dataclass
class Pass:
    touched: int = 0
    waiting: int = 0
    repaired: int = 0      # games that wait on a job, checked and (re-)enqueued where missing

    def as_dict(self) -> dict:
        return {"touched": self.touched, "waiting": self.waiting, "repaired": self.repaired}


def _settle(service, game_id: str, now: float) -> bool:
    """Repair one game; keep it in the waiting set while it waits on a job."""
    session = service.repair(game_id)
    if session is not None and service.waits(session):
        service.index.mark_waiting(game_id, now)
        return True
    service.index.clear_waiting(game_id)
    return False


def reconcile_pass(service, now: float | None = None, batch: int = BATCH) -> Pass:
    """One pass (safe to run from several worker processes at once: every step is idempotent)."""
    index = service.index
    now = time.time() if now is None else now
    done = Pass()
    mark = index.watermark()
    touched = index.touched(max(0.0, mark - LOOKBACK), now, batch)
    seen = set()
    for game_id, _ in touched:
        seen.add(game_id)
        done.touched += 1
        try:
            done.repaired += _settle(service, game_id, now)
        except Exception as err:   # one game's trouble must not stop the pass
            log.warning("reconciling %s failed: %s", game_id, err)
    # Where the next pass starts: LOOKBACK before now after a pass that read everything, or
    # right at the last game read when the batch was full (with the look-back there, a burst of
    # more than a batch of touches within LOOKBACK would be read from its start for good).
    index.set_watermark(touched[-1][1] + LOOKBACK if len(touched) == batch else now)
    index.forget_touched(now - KEEP)
    for game_id, _ in index.waiting_on_jobs():
        if game_id in seen:
            continue
        done.waiting += 1
        try:
            done.repaired += _settle(service, game_id, now)
        except Exception as err:
            log.warning("reconciling %s failed: %s", game_id, err)
    return done
