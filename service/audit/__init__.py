"""Audit without trusting the operator (docs/audit.md): the service's signing keys
(keys.py) and the signed receipts of every command that appends to a game (receipts.py)."""
