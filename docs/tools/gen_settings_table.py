"""Write the settings table of docs/operations.md from service/settings.py:
`python -m docs.tools.gen_settings_table` (tests/test_docs.py fails when it is stale)."""

from __future__ import annotations

import os
import re

from service.settings import markdown_table

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "operations.md")
START, END = "<!-- settings table: generated from service/settings.py -->", "<!-- end of settings table -->"


def render(page: str) -> str:
    return re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: f"{START}\n{markdown_table()}{END}",
                  page, flags=re.S)


def main() -> None:
    with open(PAGE, encoding="utf-8") as f:
        page = f.read()
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write(render(page))


if __name__ == "__main__":
    main()
