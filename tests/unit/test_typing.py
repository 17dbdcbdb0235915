"""What type checkers see: the package's own typing, as a user's code meets it."""

from __future__ import annotations

from tests.unit.typecheck import mypy_run


def test_type_checkers_flag_get_pet_and_type_every_result() -> None:
    """A user's code (``SNIPPETS["typing_user"]`` in ``tests/unit/typecheck.py``)."""
    run = mypy_run()  # --strict --enable-error-code deprecated --python-version 3.10
    stdout, status = run.output("typing_user"), run.status

    errors = [line.split(": error: ", 1) for line in stdout.splitlines() if ": error: " in line]
    located = [(where.rsplit(":", 1)[-1], message) for where, message in errors]
    assert status == 1
    assert [line for line, _ in located] == ["5", "6", "10"], stdout
    for _, message in located[:2]:
        assert "is deprecated: get_pet() calls GET /pets/{petId}" in message
        assert "5 December 2030; use list_pets() with a status filter instead" in message
    assert 'Argument "limit"' in located[2][1]
