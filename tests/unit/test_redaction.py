"""The key in a message from elsewhere is redacted, however the message quotes it; and what
``Retry-After`` may say never makes a wait below the floor or above the cap.

Properties over generated cases; ``ANIMALSTORE_SOAK=1`` runs each with 50 times the examples
(``ANIMALSTORE_SOAK=1 .venv/bin/python -m pytest -q tests/unit/test_redaction.py``).
"""

from __future__ import annotations

import json
import os
import re
import string
from email.utils import parsedate_to_datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from animalstore_client._core import retries
from animalstore_client._core.wire import REDACTED, redacted

EXAMPLES = 200 * (50 if os.environ.get("ANIMALSTORE_SOAK") else 1)

#: Keys as the SDK accepts them (printable ASCII, no whitespace), but for "[" and "]": a key
#: that begins after a "]" or ends before a "[" could run into the marker itself.
keys = st.text(
    alphabet=[c for c in string.printable if not c.isspace() and c not in "[]"], min_size=1
).filter(lambda key: key not in REDACTED)


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


def leaks(text: str, key: str) -> bool:
    return any(form in text for form in (key, repr(key)[1:-1], json.dumps(key)[1:-1]))


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(key=keys, data=st.data())
def test_no_quotation_of_the_key_survives(key: str, data: st.DataObject) -> None:
    pieces = data.draw(
        st.lists(st.one_of(st.text(max_size=20), st.sampled_from(quotations(key))), max_size=8)
    )
    message = "".join(pieces)

    shown = redacted(message, key)

    assert not leaks(shown, key)
    assert redacted(shown, key) == shown
    if leaks(message, key):
        assert REDACTED in shown
    else:
        assert shown == message  # a message without the key is left as it is


def test_a_bearer_value_is_redacted_whole_and_other_text_kept() -> None:
    assert redacted("refused Bearer sk-1 for sk-1, not sk-2", "sk-1") == (
        f"refused {REDACTED} for {REDACTED}, not sk-2"
    )
    assert redacted("sk-1sk-1 and sk-1", "sk-1") == f"{REDACTED} and {REDACTED}"


def test_occurrences_of_a_key_that_overlaps_itself_are_each_found() -> None:
    # "abab" at 0 and at 2: a search resuming after the first match would leave "ab" shown.
    assert redacted("abababX", "abab") == f"{REDACTED}X"
    assert redacted("aaaa-aaa", "aaa") == f"{REDACTED}-{REDACTED}"
    assert redacted("Bearer ababab.", "abab") == f"{REDACTED}."


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
