"""The operator-attack drill's short form (ops/drills/audit_attacks.py; the full form, 1,000
attempts a kind, is `make audit-attacks`): every rewritten or deleted game, forked head and
dropped checkpoint is caught by a monitor or by the player's bundle, and honest runs give no
finding at all."""

from __future__ import annotations

import pytest

from ops.drills import audit_attacks

pytestmark = pytest.mark.slow


ATTEMPTS = 12   # of each kind (`make audit-attacks`: 1,000)


def test_every_attack_is_caught_and_honest_runs_find_nothing():
    fig = audit_attacks.run(attempts=ATTEMPTS, seed=3, redis="fake")
    for kind in audit_attacks.KINDS:
        figures = fig["kinds"][kind]
        assert figures["attempts"] == ATTEMPTS, (kind, figures)
        assert figures["caught"] == ATTEMPTS and figures["rate"] == 1.0, (kind, figures)
        assert figures["false_findings"] == 0, (kind, figures["false_examples"])
    assert fig["ok"] and fig["false_findings"] == 0
    by = {kind: fig["kinds"][kind]["caught_by"] for kind in audit_attacks.KINDS}
    # Which checks caught them: the ones the threat model names.
    assert any("fresh/monitor:rewritten:logged_game" == c for c in by["rewritten"])
    assert any(c.startswith("settled/") and "receipt" in c for c in by["rewritten"])
    assert any("deleted" in c for c in by["deleted"])
    # A fork of a leaf A had seen fails A's own run (and A keeps its head); any other is caught
    # both when B compares A's head and when A next reads the real log.
    seen = by["forked_head"].get("A's own run on the fork", 0)
    assert by["forked_head"]["B compares A's head"] == by["forked_head"]["A's next run on the real log"] == ATTEMPTS - seen
    assert any("missed_promise" in c for c in by["dropped_checkpoint"])
    assert any("monitor:fork" in c for c in by["dropped_checkpoint"])
    if fig["bundles"]:          # the players' bundles, checked offline, catch what they hold
        for kind in ("rewritten", "dropped_checkpoint", "control"):
            assert fig["kinds"][kind]["bundles_checked"] >= ATTEMPTS, kind
        assert sum(n for c, n in by["rewritten"].items() if "bundle:receipt_not_in_log" in c) == ATTEMPTS
        assert sum(n for c, n in by["dropped_checkpoint"].items() if "bundle:inclusion_promise_broken" in c) == ATTEMPTS
