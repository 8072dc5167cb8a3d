"""Usernames: what a name may be, how it is shown, and the key that keeps two look-alike names
from both existing. Pure: no I/O.

A name is 3 to 24 characters of [A-Za-z0-9_-] after Unicode NFKC (so fullwidth "ｖｉｃｔｉｍ" is
"victim"), starting and ending with a letter or digit, with no two of `_`/`-` in a row. Everything
else (spaces, other scripts, bidi and zero-width characters, emoji) is refused rather than
mapped: ASCII leaves no room for homoglyphs beyond the few the key folds together."""

from __future__ import annotations

import re
import string
import unicodedata

from service.core.bots import BOT_LEVELS

USERNAME_MIN = 3
USERNAME_MAX = 24

RULE = (f"username: {USERNAME_MIN} to {USERNAME_MAX} letters a-z, digits, _ or -, "
        "starting with a letter or digit")
_ALLOWED = frozenset(string.ascii_letters + string.digits + "_-")
_SEPARATORS = "_-"

# The key's confusables (see username_key): one character each first, then the pairs.
_LOOKALIKE = str.maketrans({"0": "o", "1": "l", "i": "l", "5": "s", "2": "z", "8": "b"})
_LOOKALIKE_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))

RESERVED = frozenset(BOT_LEVELS) | frozenset((
    "admin", "administrator", "root", "system", "operator", "moderator", "support", "help",
    "guest", "anonymous", "bot", "bots", "server", "service", "speculation", "account",
    "accounts", "api", "web", "me", "you", "null", "none", "undefined", "everyone", "all",
    "nobody", "deleted", "closed"))


class NameRefused(ValueError):
    """A username the service will not take; `code` is username_invalid or username_reserved."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message


def _invalid(reason: str) -> NameRefused:
    return NameRefused("username_invalid", f"{RULE} ({reason})")


def _describe(char: str) -> str:
    """A character by its code point and name: the raw character could be a bidi override or
    an invisible one, which would garble or hide the message it is echoed in."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}".rstrip()


def display_username(raw: str) -> str:
    """The username as it will be shown (NFKC of the input), or NameRefused."""
    if not isinstance(raw, str) or not raw:
        raise _invalid("it is empty" if raw == "" else "it is not text")
    if len(raw) > 4 * USERNAME_MAX:     # bounds NFKC's work before doing it
        raise _invalid(f"it is longer than {USERNAME_MAX} characters")
    name = unicodedata.normalize("NFKC", raw)
    bad = next((c for c in name if c not in _ALLOWED), None)
    if bad is not None:
        raise _invalid(f"{_describe(bad)} is not allowed")
    if not USERNAME_MIN <= len(name) <= USERNAME_MAX:
        raise _invalid(f"it has {len(name)} characters")
    if name[0] in _SEPARATORS or name[-1] in _SEPARATORS:
        raise _invalid("it starts or ends with _ or -")
    if re.search(r"[_-]{2}", name):
        raise _invalid("it has two of _ or - in a row")
    return name


def _fold(name: str) -> str:
    """Casefolded with the one-character confusables mapped; separators still in place."""
    return name.casefold().translate(_LOOKALIKE)


def username_key(name: str) -> str:
    """The name's uniqueness key, [a-z0-9] only for a name display_username accepted: a
    skeleton in the spirit of Unicode UTS #39, restricted to ASCII. Steps, in this order:

    1. casefold ("Victim" -> "victim");
    2. drop `_` and `-` ("v_ictim" -> "victim");
    3. one character to its representative:
         0 -> o    1 -> l    i -> l    5 -> s    2 -> z    8 -> b
       (`|`, which looks like l, cannot occur in a name);
    4. pairs to the letter they pass for, left to right, each in turn:
         rn -> m   vv -> w   cl -> d

    Step 4's outputs (m, w, d) start or end no pair, so one pass leaves none behind and the key
    is its own key. "victim", "Vict1m", "VICTlM" and "v-ictim" share "vlctlm"; "rnoney" and
    "money" share "money"."""
    key = _fold(name)
    for sep in _SEPARATORS:
        key = key.replace(sep, "")
    for pair, letter in _LOOKALIKE_PAIRS:
        key = key.replace(pair, letter)
    return key


_RESERVED_KEYS = frozenset(username_key(n) for n in RESERVED)
_BOT_KEY = username_key("bot")


def _bot_like(name: str, key: str) -> bool:
    """bot7, B0T_x, bot-anything: names that would pass for one of the service's bots."""
    if _fold(name).startswith((_BOT_KEY + "_", _BOT_KEY + "-")):
        return True
    # The key's first three letters come one for one from the name's (no pair yields b, o
    # or t), so the name's next character is the one after them, read before folding.
    plain = name.replace("_", "").replace("-", "")
    return key.startswith(_BOT_KEY) and len(plain) > len(_BOT_KEY) and plain[len(_BOT_KEY)].isdigit()


def check_username(raw: str) -> tuple[str, str]:
    """(display, key) for a name a new account may take, or NameRefused: invalid, or reserved
    (a reserved name, a name whose key is one's, or a bot-like name)."""
    display = display_username(raw)
    key = username_key(display)
    if key in _RESERVED_KEYS or _bot_like(display, key):
        raise NameRefused("username_reserved",
                          f"username: {display} is reserved (it is, or looks like, a name the "
                          "service keeps for itself or its bots)")
    return display, key
