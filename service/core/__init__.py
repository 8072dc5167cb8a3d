"""The application core: commands, queries, credentials and streams, with its own domain
errors. It imports neither Flask, werkzeug nor RQ; the HTTP layer (service/app.py,
service/routes/) and the workers (workers/) call it, and the bootstrap builds it.

    game_service.py  GameService, the one object (built from the modules below)
    unit_of_work.py  the one unit of work every command runs through, over any aggregate
    game_repository.py  the games' repository for it: load, append, follow-up jobs
    loading.py       the session cache, JSON snapshots, the fold of the stream's tail
    commands.py      create, claim, act, score over the unit of work; the turn-timeout decision
    queries.py       view, events, replay, ledger, verify, export, lobby, leaderboards
    tokens.py        seat tokens and stream tickets
    streams.py       live event streams and the wait for a new version (the store's notifier)
    errors.py        the domain errors (no HTTP status: service/errors.py maps them)
    jobs.py          the follow-up jobs the core asks for (RQ implements them in workers/)
    bots.py          the bot levels a seat may name
    archiving.py     moving scored games to the archive and back (events/archive.py)
"""
