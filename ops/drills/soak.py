"""Soak drill: many clients play many games at once with retries (see ops/drills/races.py).

    python -m ops.drills.soak --size 40      # games, every registered type in turn
"""

from __future__ import annotations

from . import _kit
from .races import soak


def _on_private_redis(args) -> dict:
    with _kit.private_redis() as server:   # stopped before the report is printed
        return soak(_kit.redis_client(server.url), args.size, args.seed, args.lose)


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 40, "games played at once")
    p.add_argument("--lose", type=float, default=0.1, help="share of responses lost and retried")
    args = p.parse_args(argv)
    _kit.conclude("soak", args, lambda: _on_private_redis(args), lambda fig: (
        f"{fig['games']} games, {fig['clients']} clients: {fig['acknowledged']} actions "
        f"acknowledged, {fig['present']} present, {fig['lost']} lost, {fig['duplicated']} duplicated, "
        f"{fig['out_of_order']} out of order; {fig['verified']}/{fig['games']} chains verify "
        f"({fig['responses'].get('retried', 0)} lost responses retried; {fig['seconds']} s)"))


if __name__ == "__main__":
    main()
