"""Reliability drills: each is `python -m ops.drills.NAME [--size N]` and prints its figure.

  races         50 writers on one expected version; a soak of many clients and games
  tampering     random edits, deletions, reorderings, insertions of stored events vs verify
  redis_crash   kill -9 of a durable Redis during a flood of actions
  worker_crash  kill -9 of an RQ worker in the middle of a bot turn
  api_crash     the API process killed mid-request, the client retries with its key
  turn_timeout  seats that never act: their turns are played by the random bot
  fuzz          schemathesis against /openapi.json
  snooping      every payload each seat receives vs worlds with its secrets relabelled
  auth_limits   401 / 403 / seat binding / hashed tokens / 429 with Retry-After

The tests in tests/ run each drill in a short form; docs/reliability.md has the figures
measured at full size.
"""
