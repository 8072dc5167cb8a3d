"""`speculation worker` whose every bot or timeout turn waits SECONDS after choosing its move
and before appending it, so the worker crash drill can kill a worker in the middle of a turn.
A drill's tool: the product's worker has no such hook.

    python -m ops.drills.slow_worker SECONDS worker [speculation worker's options]
"""

from __future__ import annotations

import sys
import time

from workers import jobs


def slow_turns(seconds: float) -> None:
    """Every policy the worker's jobs ask for (workers/jobs.py) chooses, then waits."""
    original = jobs.policy

    def slowed_policy(*args, **kwargs):
        choose = original(*args, **kwargs)

        def choose_then_wait(*call_args, **call_kwargs):
            action = choose(*call_args, **call_kwargs)
            time.sleep(seconds)
            return action
        return choose_then_wait

    jobs.policy = slowed_policy


if __name__ == "__main__":
    from service.cli import main

    slow_turns(float(sys.argv[1]))
    main(sys.argv[2:])
