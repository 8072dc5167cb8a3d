"""The bot levels a seat may name. The policies themselves live in workers/bots/ (the one
place the levels are defined); the core validates seats against them and the HTTP layer
reads them from here."""

from workers.bots import LEVELS as BOT_LEVELS

__all__ = ["BOT_LEVELS"]
