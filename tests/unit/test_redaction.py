"""The key in a message from elsewhere is redacted, however the message quotes it, and a short key
never garbles the words around it; and what ``Retry-After`` may say never makes a wait below the
floor or above the cap.

Properties over generated cases; ``ANIMALSTORE_SOAK=1`` runs each with 50 times the examples
(``ANIMALSTORE_SOAK=1 .venv/bin/python -m pytest -q tests/unit/test_redaction.py``).
"""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Callable
from email.utils import parsedate_to_datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from animalstore_client._core import retries
from animalstore_client._core.wire import REDACTED, WHOLE_WORDS_BELOW, redacted

EXAMPLES = 200 * (50 if os.environ.get("ANIMALSTORE_SOAK") else 1)

#: Keys as the SDK accepts them (printable ASCII, no whitespace), but for "[" and "]": a key
#: that begins after a "]" or ends before a "[" could run into the marker itself.
KEY_CHARACTERS = [c for c in string.printable if not c.isspace() and c not in "[]"]
#: Keys short enough to be redacted only where they stand as words of their own.
short_keys = st.text(alphabet=KEY_CHARACTERS, min_size=1, max_size=WHOLE_WORDS_BELOW - 1).filter(
    lambda key: key not in REDACTED
)
#: Keys long enough to be redacted wherever they occur, as real keys are.
long_keys = st.text(alphabet=KEY_CHARACTERS, min_size=WHOLE_WORDS_BELOW, max_size=40)


def quotations(key: str) -> list[str]:
    """The ways a message may quote the key: as it is, as a header value, with ``repr`` (of the
    str, of the bytes), inside JSON."""
    return [
        key,
        f"Bearer {key}",
        repr(key),
        repr(f"Bearer {key}".encode()),
        json.dumps({"authorization": f"Bearer {key}"}),
        repr([("authorization", key)]),
    ]


def forms(key: str) -> set[str]:
    return {key, repr(key)[1:-1], json.dumps(key)[1:-1]}


def leaks(text: str, key: str) -> bool:
    return any(form in text for form in forms(key))


def word_character(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def standing(text: str, key: str) -> bool:
    """Whether a form of the key stands as a word of its own somewhere in ``text``: a run of its
    occurrences (overlapping or touching) with no letter, digit or underscore on either side."""
    for form in forms(key):
        covered = [False] * len(text)
        for at in range(len(text)):
            if text.startswith(form, at):
                covered[at : at + len(form)] = [True] * len(form)
        at = 0
        while at < len(text):
            if not covered[at]:
                at += 1
                continue
            end = at
            while end < len(text) and covered[end]:
                end += 1
            if not word_character(text, at - 1) and not word_character(text, end):
                return True
            at = end
    return False


def messages(key: str) -> st.SearchStrategy[str]:
    """Messages made of any text and of the ways to quote the key, in any order."""
    pieces = st.lists(st.one_of(st.text(max_size=20), st.sampled_from(quotations(key))), max_size=8)
    return pieces.map("".join)


def holds_redacted(message: str, key: str, found: Callable[[str, str], bool]) -> None:
    """Check that ``redacted(message, key)`` holds no form of the key ``found`` finds, is its
    own redaction, and is ``message`` itself where ``found`` finds none in it (a message
    without the key, or with it inside other words only, is left as it is)."""
    shown = redacted(message, key)

    assert not found(shown, key)
    assert redacted(shown, key) == shown
    if found(message, key):
        assert REDACTED in shown
    else:
        assert shown == message


# Half the examples each: the short and the long keys share what one test of any key had.
@settings(max_examples=EXAMPLES // 2, deadline=None, database=None)
@given(key=long_keys, data=st.data())
def test_no_quotation_of_a_long_key_survives_anywhere(key: str, data: st.DataObject) -> None:
    holds_redacted(data.draw(messages(key)), key, leaks)


@settings(max_examples=EXAMPLES // 2, deadline=None, database=None)
@given(key=short_keys, data=st.data())
def test_a_short_key_is_redacted_wherever_it_stands_as_a_word_and_nowhere_else(
    key: str, data: st.DataObject
) -> None:
    holds_redacted(data.draw(messages(key)), key, standing)


def test_a_short_key_never_garbles_the_words_that_contain_it() -> None:
    message = "missing 1 required keyword-only argument: 'k' (k=, Bearer k)"

    assert redacted(message, "k") == (
        f"missing 1 required keyword-only argument: '{REDACTED}' ({REDACTED}=, Bearer {REDACTED})"
    )
    assert redacted("tests and test_2 hold test", "test") == (f"tests and test_2 hold {REDACTED}")
    assert redacted("an api_key_ or api-key", "api") == f"an api_key_ or {REDACTED}-key"
    # Ending a word: a letter or an underscore before it keeps it too.
    assert redacted("a book, a_k and k", "k") == f"a book, a_k and {REDACTED}"


def test_a_bearer_value_is_redacted_whole_and_other_text_kept() -> None:
    key = "sk-1-0123456789ab"  # long enough to be redacted anywhere: "Bearer <key>" goes whole
    assert redacted(f"refused Bearer {key} for {key}, not sk-2", key) == (
        f"refused {REDACTED} for {REDACTED}, not sk-2"
    )
    assert redacted(f"{key}{key} and x{key}", key) == f"{REDACTED} and x{REDACTED}"
    # A short key goes alone: taking "Bearer" too could leave an occurrence glued to it
    # ("k!Bearer k!") standing alone, shown where it was not a word of its own before.
    assert redacted("refused Bearer sk-1 for sk-1, not sk-2", "sk-1") == (
        f"refused Bearer {REDACTED} for {REDACTED}, not sk-2"
    )
    assert redacted("sk-1sk-1 and sk-1", "sk-1") == f"{REDACTED} and {REDACTED}"
    assert redacted("k!Bearer k!", "k!") == f"k!Bearer {REDACTED}"


def test_occurrences_of_a_key_that_overlaps_itself_are_each_found() -> None:
    # A key long enough to be redacted inside words: at 0 and at 2 in "ab" * 9, a search
    # resuming after the first match would leave "ab" shown.
    long_key = "ab" * (WHOLE_WORDS_BELOW // 2)
    assert redacted("ab" * (WHOLE_WORDS_BELOW // 2 + 1) + "X", long_key) == f"{REDACTED}X"
    # A short one where it stands as a word: the run of overlapping occurrences goes whole.
    assert redacted("ababab X", "abab") == f"{REDACTED} X"
    assert redacted("aaaa-aaa", "aaa") == f"{REDACTED}-{REDACTED}"
    assert redacted("Bearer ababab.", "abab") == f"Bearer {REDACTED}."
    # Inside a longer word ("abababX"), a short key is another word's letters: left as it is,
    # whole, never in part.
    assert redacted("abababX", "abab") == "abababX"


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(
    value=st.one_of(
        st.text(max_size=12),
        st.from_regex(r"[0-9]{1,12}(\.[0-9]{1,8})?", fullmatch=True),
        st.floats(min_value=0.0, max_value=1.0).map(lambda seconds: f"{seconds:.6f}"),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
    )
)
def test_a_retry_after_waits_within_the_floor_and_the_cap_or_not_at_all(value: str) -> None:
    wait = retries.retry_after({"retry-after": value}, now=1_000_000.0)

    assert wait is None or retries.MIN_RETRY_WAIT <= wait <= retries.MAX_RETRY_AFTER
    stripped = value.strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", stripped):
        seconds = float(stripped)
        expected = min(max(seconds, retries.MIN_RETRY_WAIT), retries.MAX_RETRY_AFTER)
        assert wait == (expected if seconds > 0 else None)
    elif wait is not None:  # anything else is read as an HTTP date, or not at all
        assert parsedate_to_datetime(stripped).timestamp() > 1_000_000.0
