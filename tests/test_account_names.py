"""Usernames: what is accepted, how it is shown, which names count as one (the key), and
which are kept for the service."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.accounts.names import (
    RESERVED,
    USERNAME_MAX,
    NameRefused,
    check_username,
    display_username,
    username_key,
)
from service.core.bots import BOT_LEVELS

pytestmark = pytest.mark.quick

SHOWN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|[_-](?=[A-Za-z0-9])){2,23}$")
KEY = re.compile(r"^[a-z0-9]+$")


@pytest.mark.parametrize("name", ["alice", "Bob_42", "x-y-z", "abc", "a" * USERNAME_MAX,
                                  "9lives", "Mary-Jane_2"])
def test_accepted_names_are_shown_as_given(name):
    assert display_username(name) == name
    assert check_username(name) == (name, username_key(name))


def test_fullwidth_letters_become_ascii():
    assert display_username("ｖｉｃｔｉｍ") == "victim"
    assert check_username("ｖｉｃｔｉｍ")[1] == username_key("victim")


@pytest.mark.parametrize("raw", [
    "ab", "a" * (USERNAME_MAX + 1), "a" * 500, "", "a b", "bad\u202ename", "zero\u200bwidth",
    "v\u0430lid", "\u0430dmin", "__x", "_xy", "x__y", "x-_y", "x-", "emoji😀", "me@home", "a.b",
    "tab\there", "nul\x00l", "crlf\r\nx", "naïve",
])
def test_invalid_names_are_refused(raw):
    with pytest.raises(NameRefused) as caught:
        check_username(raw)
    assert caught.value.code == "username_invalid"
    assert str(caught.value) == caught.value.message
    assert caught.value.message.startswith("username: 3 to 24 letters")


@pytest.mark.parametrize("raw", [None, 42, b"alice", ["alice"]])
def test_non_text_is_refused(raw):
    with pytest.raises(NameRefused) as caught:
        display_username(raw)
    assert caught.value.code == "username_invalid"


@pytest.mark.parametrize("raw, shown", [("bad\u202ename", "U+202E"), ("zero\u200bwidth", "U+200B"),
                                        ("nul\x00l", "U+0000"), ("v\u0430lid", "U+0430"),
                                        ("emoji😀", "U+1F600")])
def test_messages_name_the_character_by_code_point_never_raw(raw, shown):
    with pytest.raises(NameRefused) as caught:
        display_username(raw)
    message = caught.value.message
    assert shown in message
    assert message.isascii() and message.isprintable()


@pytest.mark.parametrize("name", sorted(BOT_LEVELS))
def test_bot_levels_are_reserved(name):
    with pytest.raises(NameRefused) as caught:
        check_username(name)
    assert caught.value.code == "username_reserved"


@pytest.mark.parametrize("name", ["Admin", "ADMIN", "adm1n", "r00t", "b0t7", "bot1", "Bot_alice",
                                  "bot_alice", "bot-x", "B0T_x", "bots", "rne", "nu11", "Speculation",
                                  "system"])
def test_reserved_and_look_alike_names_are_refused(name):
    with pytest.raises(NameRefused) as caught:
        check_username(name)
    assert caught.value.code == "username_reserved"
    assert caught.value.message.startswith("username: ") and "reserved" in caught.value.message


@pytest.mark.parametrize("name", ["botany", "robot", "abbot7", "helpful", "admiral"])
def test_names_that_only_contain_a_reserved_one_are_free(name):
    assert check_username(name)[0] == name


def test_every_reserved_name_is_refused_whatever_its_case():
    for name in RESERVED:
        for variant in (name, name.upper(), name.capitalize()):
            if len(variant) >= 3:
                with pytest.raises(NameRefused):
                    check_username(variant)


@pytest.mark.parametrize("names", [("victim", "Vict1m", "VICTIM", "v-ictim", "VICTlM", "v_ictim"),
                                   ("money", "rnoney", "MONEY", "rn0ney"),
                                   ("oscar", "0scar", "OSCAR"),
                                   ("wave", "vvave"), ("dad", "clad"),
                                   ("sz8", "5zb", "s2B")])
def test_look_alike_names_share_a_key(names):
    keys = {username_key(display_username(n)) for n in names}
    assert len(keys) == 1, keys


def test_different_names_keep_different_keys():
    assert username_key("alice") != username_key("alicia")
    assert username_key("bob7") != username_key("bob4")


@given(st.text(alphabet="abcilmnorsvwxyzABCILMNORSVW0125789_-", min_size=1, max_size=30))
def test_the_key_is_its_own_key(text):
    try:
        name = display_username(text)
    except NameRefused:
        return
    key = username_key(name)
    assert KEY.match(key)
    assert username_key(key) == key


@settings(max_examples=300)
@given(st.text(max_size=40) | st.text(alphabet="aZ09_-\u202e\u200b\uff56\u0430 ", max_size=30))
def test_any_text_is_refused_or_shown_as_plain_ascii(text):
    try:
        name = display_username(text)
    except NameRefused as refused:
        assert refused.message.isascii() and refused.message.isprintable()
        return
    assert name.isascii() and SHOWN.match(name)
    assert KEY.match(username_key(name))
