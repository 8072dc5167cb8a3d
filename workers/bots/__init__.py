"""Bot policies. A policy is a pure function `(view, legal_actions, seat, rng) -> action`.

It sees only its seat's view and the seat's legal actions (never the full state), and draws
its randomness from `rng`, a `random.Random` seeded from (game, seat, version).
"""
