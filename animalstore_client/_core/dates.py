"""HTTP dates (``Retry-After``, ``Sunset``, the drafts' ``Deprecation``), read as RFC 9110 says.

Every form section 5.6.7 lists (IMF-fixdate, the obsolete RFC 850 form, asctime's) is in GMT,
whatever the zone a parser would otherwise assume.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["http_date"]

#: The year of an HTTP-date, which its preferred form writes in four digits.
_FOUR_DIGIT_YEAR = r"(?:^|\s)([0-9]{4})(?=\s|$)"


def http_date(value: str) -> datetime:
    """Return an HTTP-date as a timezone-aware ``datetime`` in UTC.

    Args:
        value: a header's value.

    Returns:
        The date, in UTC; a year written in four digits is that year, even below 100.

    Raises:
        TypeError, ValueError, OverflowError, IndexError: it is not one, or is one past the
            years ``datetime`` holds.
    """
    from datetime import timezone
    from email.utils import parsedate_to_datetime

    date = parsedate_to_datetime(value)
    year = re.search(_FOUR_DIGIT_YEAR, value)
    if year is not None and date.year != int(year[1]):
        # email.utils reads a year below 100 as 19xx or 20xx, even written in 4 digits.
        date = date.replace(year=int(year[1]))
    if date.tzinfo is None:  # "-0000", no zone given: an HTTP-date is in GMT anyway
        return date.replace(tzinfo=timezone.utc)
    # Past the years datetime holds once moved to UTC (31 Dec 9999, west of GMT).
    return date.astimezone(timezone.utc)
