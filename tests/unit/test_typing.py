"""What type checkers see: the package's own typing, as a user's code meets it."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]

USER_CODE = """\
from animalstore_client import APIResponse, AsyncClient, Client, Pet


async def main(client: Client, aclient: AsyncClient) -> None:
    client.get_pet(1)
    await aclient.get_pet(1)
    pets: list[Pet] = client.list_pets(limit=5)
    raw: APIResponse[list[Pet]] = client.with_raw_response.list_pets(limit=5)
    created: Pet = await aclient.create_pet(name="Rex", category_id=3)
    client.list_pets(limit="5")
"""


def test_type_checkers_flag_get_pet_and_type_every_result(tmp_path: Path) -> None:
    user_file = tmp_path / "user.py"
    user_file.write_text(USER_CODE)

    stdout, _, status = api.run(
        [
            "--strict",
            "--enable-error-code",
            "deprecated",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--python-version",
            "3.10",
            str(user_file),
        ]
    )

    errors = [line.split(": error: ", 1) for line in stdout.splitlines() if ": error: " in line]
    located = [(where.rsplit(":", 1)[-1], message) for where, message in errors]
    assert status == 1
    assert [line for line, _ in located] == ["5", "6", "10"], stdout
    for _, message in located[:2]:
        assert "is deprecated: get_pet() calls GET /pets/{petId}" in message
        assert "5 December 2030; use list_pets() with a status filter instead" in message
    assert 'Argument "limit"' in located[2][1]
