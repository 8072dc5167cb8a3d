"""The table chat in the terminal (docs/api.md "Chat"): the lines said since the last look,
printed as plain text, and the preset messages sent by number. `speculation play --api` shows
new lines before each prompt and takes `C` at a move prompt; `speculation view --follow` and
`speculation chat show --follow` print them as they come; `speculation chat say` sends one.

A line is printed as text: the service refuses control and format characters in a message,
and whatever else a server might send is shown escaped here, never as a terminal sequence."""

from __future__ import annotations

from typing import Callable, Optional

PRESETS = ("good-luck", "well-played", "thanks", "oops", "your-move")   # GET /v1/chat/presets's order


def printable(text: str) -> str:
    """`text` safe for a terminal: any control, format or separator character escaped."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(text))


def line(item: dict) -> str:
    """One chat item as a line: `[players] ann: good luck` (a removal as what it removed)."""
    where = f"[{item.get('channel')}]"
    if item.get("kind") == "removal":
        reason = f": {printable(item['reason'])}" if item.get("reason") else ""
        return f"  {where} (message {item.get('message')} was removed by the operator{reason})"
    author = item.get("author") or {}
    name = printable(author.get("name") or "someone") + (" (guest)" if author.get("guest") else "")
    said = "(removed)" if item.get("removed") else printable(item.get("text") or "")
    return f"  {where} {name}: {said}"


class ChatLines:
    """A game's chat as one reader follows it: `get(path, params) -> JSON` reads the API as
    that reader (its token, or none: a spectator), `post(path, body, headers) -> (status,
    JSON)` writes. `params`: the reader's `seat`, when an account holds several."""

    def __init__(self, get: Callable, game_id: str, post: Optional[Callable] = None, params: Optional[dict] = None,
                 out: Callable = print):
        self.get, self.post, self.game_id = get, post, game_id
        self.params = dict(params or {})
        self.after = 0
        self.out = out

    def fresh(self) -> list[dict]:
        """The items said since the last look (every page)."""
        items = []
        while True:
            answer = self.get(f"/v1/games/{self.game_id}/chat", {**self.params, "after": self.after})
            items += answer.get("items", [])
            self.after = max(self.after, answer.get("last", self.after))
            if not answer.get("more"):
                return items

    def show(self) -> int:
        """Print the new lines; how many."""
        try:
            items = self.fresh()
        except (Exception, SystemExit):    # the chat is a courtesy: a failed read never stops the game
            return 0
        for item in items:
            self.out(line(item))
        return len(items)

    def say(self, preset: Optional[str] = None, text: Optional[str] = None, channel: str = "players") -> tuple[int, dict]:
        import uuid

        body = {"channel": channel, **({"preset": preset} if preset else {"text": text}),
                **({"seat": self.params["seat"]} if "seat" in self.params else {})}
        return self.post(f"/v1/games/{self.game_id}/chat", body, {"Idempotency-Key": f"cli-chat-{uuid.uuid4().hex}"})

    def menu(self, read) -> None:
        """At a move prompt, `C`: the new lines, then a preset to send by number (Enter: none)."""
        self.show()
        print("  Say (players' channel): " + "  ".join(f"{n}. {p}" for n, p in enumerate(PRESETS, 1)))
        answer = read(f"  Send 1-{len(PRESETS)} (Enter: nothing): ").strip()
        if not answer:
            return
        if not answer.isdigit() or not 1 <= int(answer) <= len(PRESETS):
            print("  nothing sent (type the number of a preset)")
            return
        status, said = self.say(PRESETS[int(answer) - 1])
        if status == 201:
            self.show()
        else:
            error = (said or {}).get("error") or {}
            print(f"  not sent: {printable(error.get('message') or status)}")
