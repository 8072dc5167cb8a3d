"""Input limits: what a request may contain before any of it reaches the core.

- JSON bodies are parsed strictly: NaN, Infinity and -Infinity are refused (they are not
  JSON), integers have at most MAX_INT_DIGITS digits and must lie in JavaScript's safe range
  (|n| <= 2**53 - 1, what every client can represent), numbers are finite, nesting is at most
  MAX_DEPTH levels, and no string (keys included) holds a lone surrogate (it cannot be stored
  as UTF-8). Each refusal is a JsonRefused naming what is wrong and where.
- Names are printable text of bounded length: no control characters (NUL, ANSI escapes),
  no bidirectional overrides or isolates, no other format characters, no lone surrogates.
- Integers in paths and headers are ASCII digits only (`²` and `１` are digits to Python's
  str.isdigit and int(); they are not to this service), at most MAX_INT_DIGITS long.
"""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any, Optional

MAX_DEPTH = 32
MAX_INT_DIGITS = 16
SAFE_INTEGER = 2 ** 53 - 1
MAX_NUMBER_CHARS = 64
NAME_MAX = 40


class JsonRefused(ValueError):
    """A JSON body the service does not accept; `where` is a path like body.action.amount."""

    def __init__(self, message: str, where: str = "body"):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.reason = message


def _constant(name: str):
    raise JsonRefused(f"{name} is not a JSON number (numbers must be finite)")


def _integer(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise JsonRefused(f"an integer of {len(digits)} digits (at most {MAX_INT_DIGITS})")
    value = int(text)
    if abs(value) > SAFE_INTEGER:
        raise JsonRefused(f"integer {text} is outside -(2^53-1)..2^53-1")
    return value


ECHO_INT_DIGITS = 20   # what the service itself may send (a 64-bit "no limit"), echoed back


def _echoed_integer(text: str) -> int:
    """For a body that carries the service's own answers back (the web pages' words endpoint):
    as long as any integer the service writes, no more."""
    digits = text.lstrip("-")
    if len(digits) > ECHO_INT_DIGITS:
        raise JsonRefused(f"an integer of {len(digits)} digits (at most {ECHO_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise JsonRefused(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(f"number {text} is out of range (numbers must be finite)")
    return value


def has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check(value: Any) -> None:
    """Depth and strings, without recursion (the parser's own recursion is bounded by the
    interpreter's limit: deeper documents raise RecursionError, turned into a refusal)."""
    stack = [(value, "body", 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise JsonRefused(f"nested deeper than {MAX_DEPTH} levels", where)
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str) and has_lone_surrogate(key):
                    raise JsonRefused("a key holds a lone surrogate (not valid Unicode text)", where)
                if isinstance(child, (dict, list, str)):
                    stack.append((child, f"{where}.{key}" if len(where) < 200 else where, depth + 1))
        elif isinstance(item, str) and has_lone_surrogate(item):
            raise JsonRefused("a string holds a lone surrogate (not valid Unicode text)", where)


def strict_loads(data: bytes | str, echoed: bool = False) -> Any:
    """The JSON document in `data`, or JsonRefused. Bytes must be UTF-8. `echoed`: the body
    carries the service's own answers back, whose integers may be past JavaScript's safe
    range (speculation's uncapped bid limit, 2^60)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise JsonRefused(f"not UTF-8 (byte {err.start})") from None
    try:
        value = json.loads(data, parse_constant=_constant, parse_int=_echoed_integer if echoed else _integer,
                           parse_float=_float)
    except RecursionError:
        raise JsonRefused(f"nested deeper than {MAX_DEPTH} levels") from None
    except JsonRefused:
        raise
    except ValueError as err:   # json.JSONDecodeError included
        raise JsonRefused(f"not valid JSON ({err})") from None
    _check(value)
    return value


# --- names ------------------------------------------------------------------------------
def text_problem(text: str, max_length: int = NAME_MAX) -> Optional[str]:
    """Why `text` is not printable text of at most `max_length` characters, or None."""
    if has_lone_surrogate(text):
        return "must be valid Unicode text (a lone surrogate)"
    if not text.strip():
        return "must not be empty or only spaces"
    if len(text) > max_length:
        return f"at most {max_length} characters"
    for i, char in enumerate(text):
        category = unicodedata.category(char)
        # Cc: control (NUL, ESC of ANSI sequences, newlines); Cf: format (bidi overrides and
        # isolates, zero-width joiners); Co/Cn: private use and unassigned; Zl/Zp: line and
        # paragraph separators. A plain space is the only separator allowed.
        if category in ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp") or (category == "Zs" and char != " "):
            return f"character {i + 1} (U+{ord(char):04X}) is not printable text"
    return None


# --- integers in paths and headers ------------------------------------------------------
def ascii_int(text: str) -> Optional[int]:
    """`text` as a non-negative integer when it is 1..MAX_INT_DIGITS ASCII digits, else None."""
    if text and len(text) <= MAX_INT_DIGITS and text.isascii() and text.isdigit():
        return int(text)
    return None
