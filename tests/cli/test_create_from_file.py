"""``pets create --from-file`` in process: what it refuses before sending, and a whole run.

``create_from_file`` is the command less its argument parsing: these call it as the command
line does, with the store's in-process client, stdout and stderr captured. ``test_bulk.py``
runs the command itself in subprocesses.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from animalstore_client._cli.bulk import create_from_file
from animalstore_client._cli.journal import Entry, Header, Journal
from animalstore_client._cli.records import Record, read_records
from animalstore_client.testing import FakeAnimalStore, Fault
from tests.cli.bulk_harness import KEY, records, records_file


class Command:
    """Runs ``create_from_file`` against one store, as the command line would."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.store = FakeAnimalStore(api_keys=(KEY,))
        self._capsys = capsys
        with self.store.client() as client:
            #: The API's address as the journal's header holds it.
            self.base_url = client.base_url

    def __call__(
        self, source: Path | str, *, journal: Path | None = None, given_format: str | None = None
    ) -> tuple[int, list[dict[str, object]], str]:
        status = create_from_file(
            self.store.async_client(max_retries=0),
            str(source),
            given_format=given_format,
            concurrency=2,
            journal=None if journal is None else str(journal),
        )
        out, err = self._capsys.readouterr()
        return status, [json.loads(line) for line in out.splitlines()], err


@pytest.fixture
def command(capsys: pytest.CaptureFixture[str]) -> Command:
    return Command(capsys)


def test_a_run_creates_each_record_and_a_rerun_sends_none_again(
    command: Command, tmp_path: Path
) -> None:
    source = records_file(tmp_path, 3)
    journal = tmp_path / "pets.journal"

    status, printed, stderr = command(source, journal=journal)

    assert status == 0
    assert sorted(value["line"] for value in printed) == [1, 2, 3]  # type: ignore[type-var]
    assert {value["status"] for value in printed} == {"created"}
    assert stderr.startswith("pets create: 3 created, 0 refused, 0 failed, 0 unknown, 0 invalid;")
    assert stderr.endswith(f"; journal {journal}\n")
    assert (journal.stat().st_mode & 0o777) == 0o600
    header, *entries = [json.loads(line) for line in journal.read_bytes().splitlines()]
    assert header == {
        "journal": "animalstore pets create --from-file",
        "version": 1,
        "base_url": command.base_url,
        "input": str(source),
        "format": "jsonl",
    }
    # Each key journaled started before its send; each outcome as printed, the animal with it.
    keys = {value["line"]: value["idempotency_key"] for value in printed}
    assert sorted((e["line"], e["state"], e["key"]) for e in entries) == sorted(
        [(line, "started", key) for line, key in keys.items()]
        + [(line, "created", key) for line, key in keys.items()]
    )
    created = {e["line"]: e["pet"] for e in entries if e["state"] == "created"}
    assert created == {value["line"]: value["pet"] for value in printed}

    again, printed, stderr = command(source, journal=journal)

    assert again == 0
    assert len(command.store.requests) == 3
    assert {value.get("earlier") for value in printed} == {True}
    assert "3 created and 0 refused by an earlier run (not sent again)" in stderr


@pytest.mark.parametrize(
    ("name", "content", "given", "message"),
    [
        (
            "pets.txt",
            b"",
            None,
            "cannot tell the format of '{source}' from its name (.jsonl, .ndjson or .csv): "
            "give --format jsonl or --format csv",
        ),
        (None, b"", None, "cannot read '{source}': No such file or directory"),
        ("pets.csv", b"name,status\n", None, "line 1: the CSV header has no 'categoryId' column"),
        ("pets.txt", b"name,categoryId\n", "jsonl", None),  # given: the name does not matter
    ],
)
def test_an_input_that_cannot_be_read_as_records_is_refused_before_anything_is_sent(
    command: Command,
    tmp_path: Path,
    name: str | None,
    content: bytes,
    given: str | None,
    message: str | None,
) -> None:
    source = tmp_path / (name or "missing.jsonl")
    if name is not None:
        source.write_bytes(content)

    status, printed, stderr = command(source, given_format=given)

    assert command.store.requests == []
    if message is None:  # read as JSONL: one invalid line
        assert status == 2
        assert [value["status"] for value in printed] == ["invalid"]
        return
    assert (status, printed) == (2, [])
    assert stderr == f"error: {message.format(source=source)}\n"


def test_a_journal_that_cannot_be_opened_is_refused_before_anything_is_sent(
    command: Command, tmp_path: Path
) -> None:
    source = records_file(tmp_path, 1)

    status, printed, stderr = command(source, journal=tmp_path)  # a folder

    assert (status, printed, command.store.requests) == (2, [], [])
    assert stderr == f"error: cannot use the journal '{tmp_path}': Is a directory\n"


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="Linux's /proc")
def test_an_input_whose_csv_header_cannot_be_read_is_named_in_the_refusal(
    command: Command,
) -> None:
    # A regular file whose first read fails (offset 0 of the process's memory is unmapped):
    # the CSV header is read before the run, and the refusal names the input, not a journal.
    status, printed, stderr = command("/proc/self/mem", given_format="csv")

    assert (status, printed, command.store.requests) == (2, [], [])
    assert stderr == "error: cannot use '/proc/self/mem': Input/output error\n"


def test_a_journal_for_a_longer_input_is_refused_before_anything_is_sent(
    command: Command, tmp_path: Path
) -> None:
    source = records_file(tmp_path, 3)
    journal = tmp_path / "pets.journal"
    assert command(source, journal=journal)[0] == 0
    source.write_bytes(records(2))

    status, printed, stderr = command(source, journal=journal)

    assert (status, printed, len(command.store.requests)) == (2, [], 3)
    assert stderr == (
        f"error: the journal '{journal}' has an entry for line 3, which '{source}' does not "
        "have: it was written for another input; give another --journal\n"
    )


def test_a_journal_others_can_read_is_used_with_a_notice(command: Command, tmp_path: Path) -> None:
    source = records_file(tmp_path, 1)
    journal = tmp_path / "pets.journal"
    journal.touch(mode=0o644)
    journal.chmod(0o644)

    status, _, stderr = command(source, journal=journal)

    assert status == 0
    assert stderr.startswith(
        f"notice: the journal '{journal}' can be read by other users (mode 0644) and holds "
        f"names, keys and error messages: chmod 600 '{journal}'\n"
    )


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o600], ids=lambda mode: f"{mode:04o}")
def test_a_journal_its_group_can_read_gets_the_notice_too(
    command: Command, tmp_path: Path, mode: int
) -> None:
    # Any bit for the group or others: the group may hold users other than the owner.
    source = records_file(tmp_path, 1)
    journal = tmp_path / "pets.journal"
    journal.touch(mode=0o600)
    journal.chmod(mode)

    status, _, stderr = command(source, journal=journal)

    assert status == 0
    notice = (
        f"notice: the journal '{journal}' can be read by other users (mode {mode:04o}) and "
        f"holds names, keys and error messages: chmod 600 '{journal}'\n"
    )
    if mode & 0o077:
        assert stderr.startswith(notice)
    else:
        assert stderr.startswith("pets create: 1 created,")
        assert "notice:" not in stderr
    assert journal.stat().st_mode & 0o777 == mode  # told, not changed


def test_with_stdout_closed_nothing_is_sent(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = records_file(tmp_path, 1)
    monkeypatch.setattr("sys.stdout", None)

    status, _, stderr = command(source)

    assert (status, command.store.requests) == (4, [])
    assert stderr == "error: stdout is closed: no record's outcome could be shown; none was sent\n"


def test_the_signal_handlers_are_the_callers_again_after_the_run(
    command: Command, tmp_path: Path
) -> None:
    source = records_file(tmp_path, 1)
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    assert command(source)[0] == 0

    assert {signum: signal.getsignal(signum) for signum in before} == before


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP")
def test_an_ignored_signal_stays_ignored(command: Command, tmp_path: Path) -> None:
    # nohup: SIGHUP ignored. The run must not take it back, during or after.
    source = records_file(tmp_path, 1)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert command(source)[0] == 0
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_the_input_is_closed_after_the_run(command: Command, tmp_path: Path) -> None:
    source = records_file(tmp_path, 2)
    before = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None

    assert command(source)[0] == 0

    if before is not None:
        assert set(os.listdir("/proc/self/fd")) <= before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="Linux's /proc")
@pytest.mark.parametrize("refused_by", ["the records", "the journal's opening", "the journal"])
def test_a_refused_run_leaves_the_input_and_the_journal_closed(
    command: Command, tmp_path: Path, refused_by: str
) -> None:
    source = tmp_path / "pets.csv"
    source.write_bytes(b"name,categoryId\npet-1,1\npet-2,2\n")
    journal: Path | None = tmp_path / "pets.journal"
    if refused_by == "the records":
        source.write_bytes(b"name,status\n")
        journal = None
    elif refused_by == "the journal's opening":
        journal = tmp_path  # a folder
    else:  # one for a longer input
        assert command(source, journal=journal)[0] == 0
        source.write_bytes(b"name,categoryId\npet-1,1\n")
    before = set(os.listdir("/proc/self/fd"))

    status, printed, _ = command(source, journal=journal)

    assert (status, printed) == (2, [])
    assert set(os.listdir("/proc/self/fd")) <= before
    if journal is not None and journal.is_file():  # unlocked: a run of its own input takes it
        source.write_bytes(b"name,categoryId\npet-1,1\npet-2,2\n")
        assert command(source, journal=journal)[0] == 0


PET_1 = {"id": 41, "name": "pet-1", "categoryId": 1}
REFUSAL = {"code": "invalid_field", "message": "no", "status": 422}


def server_error(status: int) -> dict[str, object]:
    return {"code": "server_error", "message": "oops", "status": status}


@pytest.mark.parametrize(
    ("earlier", "sent", "printed", "resent_in_journal"),
    [
        # Seen through: not sent again, printed as the earlier run wrote it.
        (
            {"state": "created", "pet": PET_1},
            False,
            {"status": "created", "pet": PET_1, "earlier": True},
            None,
        ),
        (
            {"state": "refused", "error": REFUSAL},
            False,
            {"status": "refused", "error": REFUSAL, "earlier": True},
            None,
        ),
        (
            {"state": "created", "pet": PET_1, "resent": True},
            False,
            {"status": "created", "pet": PET_1, "earlier": True, "resent": True},
            None,
        ),
        # Not seen through: sent again with its key; marked when it may exist already.
        ({"state": "unsent"}, True, {"status": "created"}, None),
        ({"state": "unsent", "resent": True}, True, {"status": "created", "resent": True}, True),
        ({"state": "failed", "error": server_error(503)}, True, {"status": "created"}, None),
        ({"state": "failed", "error": server_error(429)}, True, {"status": "created"}, None),
        (
            {"state": "failed", "error": server_error(500)},
            True,
            {"status": "created", "resent": True},
            True,
        ),
        ({"state": "unknown"}, True, {"status": "created", "resent": True}, True),
        ({"state": "started"}, True, {"status": "created", "resent": True}, True),
    ],
)
def test_a_rerun_goes_by_what_the_journal_holds_for_each_record(
    command: Command,
    tmp_path: Path,
    earlier: dict[str, object],
    sent: bool,
    printed: dict[str, object],
    resent_in_journal: bool | None,
) -> None:
    source = tmp_path / "pets.jsonl"
    source.write_bytes(b'{"name": "pet-1", "categoryId": 1, "status": "sold"}\n')
    journal = tmp_path / "pets.journal"
    header = Header(command.base_url, str(source), "jsonl")
    with open(source, "rb") as stream:
        [record] = read_records(stream, "jsonl")
    assert isinstance(record, Record)
    opened = Journal.open(str(journal), header)
    opened.append(Entry(1, "key-1", record.digest, **earlier))  # type: ignore[arg-type]
    opened.close()

    status, [line], stderr = command(source, journal=journal)

    # Refused, then or now: 1; else created, with 5 when it may exist twice.
    assert status == (1 if earlier["state"] == "refused" else 5 if printed.get("resent") else 0)
    assert {name: value for name, value in line.items() if name in printed} == printed
    assert line["line"] == 1
    assert line["idempotency_key"] == "key-1"
    assert set(line) == {"line", "idempotency_key", *printed} | ({"pet"} if sent else set())
    requests = command.store.requests
    assert len(requests) == int(sent)
    if sent:
        assert requests[0].headers["idempotency-key"] == "key-1"
        assert [(pet.name, pet.status) for pet in command.store.pets] == [("pet-1", "sold")]
        entries = [json.loads(raw) for raw in journal.read_bytes().splitlines()[2:]]
        # Its key is on disk already: journaled started again only if it was not sent before.
        states = [entry["state"] for entry in entries]
        in_doubt = resent_in_journal and earlier["state"] != "unsent"
        assert states == (["created"] if in_doubt else ["started", "created"])
        assert {entry.get("resent") for entry in entries} == {resent_in_journal}
    if sent:
        counts = "1 created, 0 refused, 0 failed, 0 unknown, 0 invalid;"
    else:
        done = (1, 0) if earlier["state"] == "created" else (0, 1)
        counts = (
            "0 created, 0 refused, 0 failed, 0 unknown, 0 invalid, {} created and {} refused "
            "by an earlier run (not sent again);".format(*done)
        )
    assert stderr.startswith(f"pets create: {counts}")
    may_twice = "resent 1 record(s) that an earlier run may have created"
    assert (may_twice in stderr) is bool(sent and resent_in_journal)
    assert ("1 record(s) seen through by an earlier run were resent then" in stderr) is (
        not sent and earlier.get("resent") is True
    )


def test_a_journal_whose_entry_is_for_another_record_stops_the_run_at_that_line(
    command: Command, tmp_path: Path
) -> None:
    source = records_file(tmp_path, 3)
    journal = tmp_path / "pets.journal"
    opened = Journal.open(str(journal), Header(command.base_url, str(source), "jsonl"))
    opened.append(Entry(2, "key-2", "not-this-records-digest", "unsent"))
    opened.close()

    status, printed, stderr = command(source, journal=journal)

    assert status == 2
    assert "pet-2" not in [pet.name for pet in command.store.pets]
    assert all(value["line"] != 2 for value in printed)
    assert (
        f"stopped early: line 2 of the input is not the record that the journal '{journal}' "
        "holds for line 2: the journal was written for another input, or the input changed "
        "since; nothing more is sent\n"
    ) in stderr


def test_stdin_is_read_through_the_runs_own_file_object(command: Command, tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, records(2))
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        status, printed, _ = command("-")
    finally:
        os.dup2(saved, 0)
        os.close(saved)

    assert status == 0
    assert sorted(pet.name for pet in command.store.pets) == ["pet-1", "pet-2"]
    assert len(printed) == 2


def test_a_signal_during_the_run_stops_it_as_ctrl_c_does(command: Command, tmp_path: Path) -> None:
    # A real SIGTERM to this process while a call is in flight. The test's own handler stands
    # by: the run must put its own in place (and give this one back after).
    source = records_file(tmp_path, 5)
    command.store.inject(Fault.delay(0.5, operation="create", times=None))
    caught: list[int] = []

    def mine(signum: int, frame: object) -> None:
        caught.append(signum)

    previous = signal.signal(signal.SIGTERM, mine)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    try:
        timer.start()
        status, printed, stderr = command(source)
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        timer.cancel()
        signal.signal(signal.SIGTERM, previous)

    assert caught == []
    assert status == 143
    assert 1 <= len(printed) < 5
    assert "stopped early: terminated (SIGTERM)" in stderr


@pytest.mark.parametrize("when", ["built", "closed"])
def test_a_signal_while_the_runs_loop_is_built_or_closed_interrupts_neither(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    # A signal inside the loop's constructor or its close left it half done, and its __del__
    # printed a traceback. One while it is built stops the run before anything is sent; one
    # while it closes comes after the run, which keeps its status. Either way the caller's
    # handler is not called, and is back at the end.
    source = records_file(tmp_path, 3)
    loops: list[asyncio.AbstractEventLoop] = []
    real_new_event_loop = asyncio.new_event_loop

    def new_event_loop() -> asyncio.AbstractEventLoop:
        if when == "built":
            signal.raise_signal(signal.SIGTERM)
        loop = real_new_event_loop()
        real_close = loop.close

        def close() -> None:
            if when == "closed":
                signal.raise_signal(signal.SIGTERM)
            real_close()

        monkeypatch.setattr(loop, "close", close)
        loops.append(loop)
        return loop

    monkeypatch.setattr(asyncio, "new_event_loop", new_event_loop)
    caught: list[int] = []

    def mine(signum: int, frame: object) -> None:
        caught.append(signum)

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        status, printed, stderr = command(source)
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)

    assert caught == []
    assert [loop.is_closed() for loop in loops] == [True]
    if when == "built":
        assert status == 143
        assert printed == []
        assert command.store.requests == []
        assert "stopped early: terminated (SIGTERM)" in stderr
    else:
        assert status == 0
        assert len(printed) == 3
        assert "stopped early" not in stderr


def test_two_signals_while_the_runs_loop_is_built_stop_it_as_one_does(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second would cut the calls in flight short: there is none yet, nor any worker.
    source = tmp_path / "pets.jsonl"
    source.write_bytes(records(3))
    real_new_event_loop = asyncio.new_event_loop

    def new_event_loop() -> asyncio.AbstractEventLoop:
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)
        return real_new_event_loop()

    monkeypatch.setattr(asyncio, "new_event_loop", new_event_loop)
    caught: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: caught.append(signum))
    try:
        status, printed, stderr = command(source)
    finally:
        signal.signal(signal.SIGTERM, previous)

    assert (status, printed, command.store.requests, caught) == (143, [], [], [])
    assert "stopped early: terminated (SIGTERM)" in stderr


def test_a_run_that_resent_what_may_exist_exits_5_and_so_does_every_later_one(
    command: Command, tmp_path: Path
) -> None:
    # A store that does not deduplicate: the first answer is lost after its animal was stored,
    # and the re-run's resend of that record stores it again.
    source = records_file(tmp_path, 3)
    journal = tmp_path / "pets.journal"
    command.store.inject(Fault.drop(processed=True, operation="create"))

    first, outcomes, _ = command(source, journal=journal)
    second, printed, stderr = command(source, journal=journal)
    third, _, later = command(source, journal=journal)

    assert (first, second, third) == (3, 5, 5)
    [line] = [value["line"] for value in outcomes if value["status"] == "unknown"]
    names = sorted(pet.name for pet in command.store.pets)
    assert names == sorted(["pet-1", "pet-2", "pet-3", f"pet-{line}"])
    assert sorted(
        (value["line"], value.get("earlier"), value.get("resent")) for value in printed
    ) == [(n, None, True) if n == line else (n, True, None) for n in (1, 2, 3)]
    assert stderr.splitlines()[-1] == (
        "resent 1 record(s) that an earlier run may have created (its answer lost, or a server "
        "error), with their first keys: a service that does not deduplicate by Idempotency-Key "
        f"may have created them twice: line(s) {line}"
    )
    assert later.splitlines()[-1] == (
        "1 record(s) seen through by an earlier run were resent then, and may exist twice too: "
        f"line(s) {line}"
    )


@pytest.mark.parametrize(
    ("fault", "status", "exit_code"),
    [
        (Fault.error(500, operation="create"), "failed", 1),
        (Fault.error(422, operation="create"), "refused", 1),
        (Fault.drop(processed=False, operation="create"), "unknown", 3),
    ],
)
def test_a_resent_record_keeps_its_mark_whatever_the_resend_gets(
    command: Command, tmp_path: Path, fault: Fault, status: str, exit_code: int
) -> None:
    source = records_file(tmp_path, 1)
    journal = tmp_path / "pets.journal"
    with open(source, "rb") as stream:
        [record] = read_records(stream, "jsonl")
    assert isinstance(record, Record)
    opened = Journal.open(str(journal), Header(command.base_url, str(source), "jsonl"))
    opened.append(Entry(1, "key-1", record.digest, "unknown"))
    opened.close()
    command.store.inject(fault)

    code, [line], _ = command(source, journal=journal)

    assert (code, line["status"], line["resent"]) == (exit_code, status, True)
    last = json.loads(journal.read_bytes().splitlines()[-1])
    assert (last["state"], last["resent"]) == (status, True)


def test_records_refused_by_earlier_runs_are_each_counted(command: Command, tmp_path: Path) -> None:
    source = records_file(tmp_path, 2)
    journal = tmp_path / "pets.journal"
    with open(source, "rb") as stream:
        read_back = list(read_records(stream, "jsonl"))
    opened = Journal.open(str(journal), Header(command.base_url, str(source), "jsonl"))
    for record in read_back:
        assert isinstance(record, Record)
        error = {"code": "invalid_field", "message": "no", "status": 422}
        opened.append(
            Entry(record.line, f"key-{record.line}", record.digest, "refused", error=error)
        )
    opened.close()

    code, printed, stderr = command(source, journal=journal)

    assert (code, command.store.requests) == (1, [])
    assert [line["error"] for line in printed] == [error, error]
    assert "0 created and 2 refused by an earlier run (not sent again)" in stderr
