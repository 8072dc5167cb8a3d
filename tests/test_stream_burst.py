"""ops/drills/stream_burst.py in its short form: a burst of event streams opening at once on
the shipped gunicorn configuration, and a new client's plain request answered meanwhile."""

import pytest

pytestmark = [pytest.mark.timing, pytest.mark.slow]


def test_a_new_client_is_answered_while_a_burst_of_streams_opens():
    from ops.drills import stream_burst

    figures = stream_burst.run(size=400, seed=3, settle=0.5, games_played=4, history=100)
    assert figures["opened"] == 400 and figures["refused"] == 0, figures
    assert figures["probes"] > 0 and figures["probe_max_s"] <= stream_burst.MAX_PROBE_S, figures
