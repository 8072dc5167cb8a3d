"""The bot tournament (`python -m ops.tournament`, `make tournament`): every bot level, and a
few simple outside strategies, one seat against three, seeded and resumable, with Wilson
intervals and time per move. See runner.py and docs/bots.md."""
