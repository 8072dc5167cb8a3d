"""ops/speculate_sim.py: the speculate economy table (a few games, checked by hand-countable facts)."""

from __future__ import annotations

from ops import speculate_sim as sim
from projections import speculate as g


def test_a_short_measurement_counts_what_the_games_did():
    m = sim.measure(5, 4, 2, seed="test")
    assert m["games"] == 4 and m["rules_version"] == 2
    assert m["economy"]["targets"]["4"] == [500, 375, 250] == list(g.economy(5, 2).targets[4])
    assert 0 < m["objectives_per_player"]["mean"] <= g.LEVELS
    for key in ("bank_full", "bankrupt", "early_finish"):
        low, high = m[key]["wilson95"]
        assert 0 <= low <= m[key]["rate"] <= high <= 1
    assert m["meets_targets"] == sim.meets_targets(m)
    assert "| 5 | 8 |" in sim.markdown([m])


def test_a_candidate_is_measured_in_place_of_the_data_and_unknown_keys_are_refused():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ops.speculate_sim", "--players", "6", "--games", "2",
                          "--try", '{"rounds": 2, "reward_from_bank": 100}'], capture_output=True, text=True,
                         timeout=300)
    # 0 or 1 (a candidate measured on two games does not meet the targets), never a crash
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "| 6 | 2 |" in out.stdout and "| 100 |" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "ops.speculate_sim", "--games", "1", "--try", '{"fee": 1}'],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "unknown keys" in bad.stderr


def test_wilson_bounds():
    assert sim.wilson(0, 1000)[1] < 0.004 and sim.wilson(1000, 1000)[0] > 0.996
    low, high = sim.wilson(10, 1000)
    assert low < 0.01 < high < 0.02
