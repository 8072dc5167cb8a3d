"""Soak drill: many clients play many games at once with retries (see ops/drills/races.py).

    python -m ops.drills.soak --size 40      # games, every registered type in turn
"""

from __future__ import annotations

from . import _kit
from .races import soak


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 40, "games played at once")
    p.add_argument("--lose", type=float, default=0.1, help="share of responses lost and retried")
    args = p.parse_args(argv)
    with _kit.private_redis() as server:
        with _kit.Timer() as t:
            fig = soak(_kit.redis_client(server.url), args.size, args.seed, args.lose)
    fig["seconds"] = round(t.seconds, 1)
    _kit.report("soak", f"{fig['games']} games, {fig['clients']} clients: {fig['acknowledged']} actions "
                f"acknowledged, {fig['present']} present, {fig['lost']} lost, {fig['duplicated']} duplicated, "
                f"{fig['out_of_order']} out of order; {fig['verified']}/{fig['games']} chains verify "
                f"({fig['responses'].get('retried', 0)} lost responses retried; {fig['seconds']} s)",
                fig["ok"], fig, args.json or not fig["ok"])
    raise SystemExit(0 if fig["ok"] else 1)


if __name__ == "__main__":
    main()
