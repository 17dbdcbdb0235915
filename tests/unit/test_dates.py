"""``http_date``: an HTTP-date, read as RFC 9110 says, as a timezone-aware ``datetime`` in UTC."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from animalstore_client._core.dates import http_date


@pytest.mark.parametrize(
    ("value", "year"),
    [
        ("Sun, 11 Nov 0018 23:59:59 GMT", 18),  # email.utils alone reads 2018
        ("Sat, 11 Nov 0099 23:59:59 GMT", 99),  # email.utils alone reads 1999
        ("Fri, 11 Nov 0005 23:59:59 GMT", 5),
    ],
)
def test_a_year_written_in_four_digits_below_100_is_that_year(value: str, year: int) -> None:
    date = http_date(value)

    assert date == datetime(year, 11, 11, 23, 59, 59, tzinfo=timezone.utc)
    assert date.year == year
    assert date.tzinfo is timezone.utc


def test_a_four_digit_year_email_utils_reads_right_is_kept() -> None:
    assert http_date("Sun, 11 Nov 2018 23:59:59 GMT") == datetime(
        2018, 11, 11, 23, 59, 59, tzinfo=timezone.utc
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Sun, 11 Nov 2018 23:59:59 +0200", datetime(2018, 11, 11, 21, 59, 59)),
        ("Sun, 11 Nov 2018 23:59:59 -0530", datetime(2018, 11, 12, 5, 29, 59)),
    ],
)
def test_a_date_given_in_another_zone_is_moved_to_utc_itself(
    value: str, expected: datetime
) -> None:
    date = http_date(value)

    # The very timezone.utc, not the machine's local zone (which may be at +00:00 too).
    assert date.tzinfo is timezone.utc
    assert date.replace(tzinfo=None) == expected


def test_a_date_without_a_zone_is_read_in_gmt() -> None:
    date = http_date("Sun, 11 Nov 2018 23:59:59 -0000")

    assert date.tzinfo is timezone.utc
    assert date.replace(tzinfo=None) == datetime(2018, 11, 11, 23, 59, 59)
