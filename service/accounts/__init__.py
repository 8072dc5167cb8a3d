"""Player accounts: usernames, passwords, sessions and personal tokens, the account's games and its stream."""
