"""The bot levels a seat may name, and the budget a `search` seat may carry. The policies
themselves live in workers/bots/ (the one place the levels and the budget's rules are
defined); the core validates seats against them and the HTTP layer reads them from here."""

from workers.bots import LEVELS as BOT_LEVELS
from workers.bots.search.budget import (DEFAULT_TIME_MS, BudgetError, SearchLimits,
                                        check_budget)

# The one level whose seat may carry a budget ({"iterations", "time_ms"}, within SearchLimits).
BUDGETED_LEVEL = "search"

__all__ = ["BOT_LEVELS", "BUDGETED_LEVEL", "BudgetError", "DEFAULT_TIME_MS", "SearchLimits",
           "check_budget"]
