"""Finding a game: challenges and rematches (invitations.py), quick pairing (seeks.py)."""
