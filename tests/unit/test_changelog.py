"""CHANGELOG.md keeps the Keep a Changelog form, with its Unreleased section first."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from packaging.version import Version

import animalstore_client

CHANGELOG = (Path(__file__).resolve().parents[2] / "CHANGELOG.md").read_text(encoding="utf-8")
#: A released version's heading: ``## [1.0.0] - 2026-11-22``.
_RELEASE = re.compile(r"## \[(?P<version>\d+\.\d+\.\d+)\] - (?P<date>\d{4}-\d{2}-\d{2})")
#: The kinds of change Keep a Changelog groups a version's entries by.
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def versions() -> list[tuple[str, list[str]]]:
    """Each ``## `` heading and the lines of its section, in order."""
    found: list[tuple[str, list[str]]] = []
    for line in CHANGELOG.splitlines():
        if line.startswith("## "):
            found.append((line, []))
        elif found:
            found[-1][1].append(line)
    return found


def releases() -> list[tuple[Version, date]]:
    """Each released version and its date, as the headings after Unreleased give them."""
    found = [_RELEASE.fullmatch(heading) for heading, _ in versions()[1:]]
    return [
        (Version(match["version"]), date.fromisoformat(match["date"]))
        for match in found
        if match is not None
    ]


def test_it_says_which_format_it_follows() -> None:
    introduction = CHANGELOG.split("\n## ", 1)[0]

    assert introduction.startswith("# Changelog\n")
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in introduction


def test_the_unreleased_section_comes_first() -> None:
    assert versions()[0][0] == "## [Unreleased]"


def test_every_other_section_is_a_release_with_its_date_newest_first() -> None:
    headings = [heading for heading, _ in versions()[1:]]
    listed = releases()

    assert len(listed) == len(headings) >= 1, headings
    assert [version for version, _ in listed] == sorted(
        {version for version, _ in listed}, reverse=True
    )
    assert [day for _, day in listed] == sorted((day for _, day in listed), reverse=True)


def test_each_section_groups_its_changes_by_kind() -> None:
    for heading, lines in versions():
        kinds = [line.removeprefix("### ") for line in lines if line.startswith("### ")]
        assert set(kinds) <= KINDS, heading
        assert len(kinds) == len(set(kinds)), heading
        before = lines[: next((i for i, line in enumerate(lines) if line.startswith("### ")), 0)]
        assert not "".join(before).strip(), f"{heading}: text before its first kind"


def test_the_latest_release_is_the_package_version() -> None:
    assert str(releases()[0][0]) == animalstore_client.__version__
