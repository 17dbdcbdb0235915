"""Content codings: which the SDK asks for, and how it undoes them, each layer bounded.

Every backend hands the core an answer's body as it travelled (its raw bytes) and the core
alone decodes it, so that a ``Content-Encoding`` means the same on every backend and costs
the same. Each layer is a decompressor fed piece by piece and asked for at most ``STEP`` bytes
at a time (zlib's ``max_length``, brotli's ``output_buffer_limit``); what it yields goes down
to the next layer at once, and the last one's to the size cap, which stops the reading. So no
layer is ever expanded past the cap plus a piece, however deep the stack.

What a ``Content-Encoding`` means here (one answer for each case, on every backend):

- its values are one list, in the order the codings were applied, repeated headers joined in
  their order; names compare case-insensitively, spaces and tabs around them and empty
  elements are ignored, and so is ``identity`` (no coding);
- the body is decoded in reverse order, last coding first;
- ``gzip``: one or more gzip members, decoded one after the other (RFC 1952); anything else
  after a member is corrupt;
- ``deflate``: the zlib format (RFC 9110), or the raw deflate data some servers send instead,
  told apart by the zlib header; anything after its end is corrupt;
- ``br``: only where the ``brotli`` package can bound its output (1.2 and newer); anything
  after its end is corrupt;
- at most ``MAX_CODINGS`` codings, ``br`` at most once (its window may hold 16 MiB): a deeper
  stack, or a coding the SDK did not ask for (``zstd`` among them: its package decodes with no
  bound on the output), is refused unread;
- a body that ends inside its coded data is corrupt; an empty body is empty in any coding.

The size cap (``max_response_bytes``) counts the decoded bytes only; the coded bytes, as they
travelled, have a bound of their own, ``coded_limit``: far above what any real coding adds, it
stops a body that decodes to little or nothing (an endless run of empty gzip members).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = [
    "CODED_MARGIN",
    "MAX_CODINGS",
    "STEP",
    "DecodeError",
    "Decoder",
    "accept_encoding",
    "accepted",
    "coded_limit",
    "codings",
    "refusal",
]

#: The most content codings an answer may stack; a deeper stack is refused unread, and so is
#: one with ``br`` twice. Two covers a proxy that compresses a compressed body again; each
#: layer holds its decompressor's window: 32 KiB for gzip and deflate, up to 16 MiB for br.
MAX_CODINGS = 2
#: The most bytes one layer yields at a time.
STEP = 64 * 1024
#: What a coded body may hold beyond twice the cap, as it travelled (see ``coded_limit``).
CODED_MARGIN = 64 * 1024


def coded_limit(cap: int) -> int:
    """Return the most bytes a coded body may hold as it travelled, for a cap on the decoded ones.

    Twice the cap plus ``CODED_MARGIN`` (64 KiB): gzip or deflate of data that does not
    compress adds 5 bytes per stored block of up to 64 KiB and 18 per gzip member, two stacked
    codings twice that, and even a coder that never falls back to stored blocks adds at most
    an eighth a layer; the margin covers the headers of a small body under a small cap. So a
    body that fits the cap once decoded is never refused for its coding, and one that decodes
    to little or nothing cannot be read forever.

    Args:
        cap: the most bytes the decoded body may hold (``max_response_bytes``).

    Returns:
        The most bytes of the body as it travelled, before decoding.
    """
    return 2 * cap + CODED_MARGIN


class DecodeError(Exception):
    """A body that is not what its ``Content-Encoding`` says; the message says how."""


def _bounded_brotli() -> bool:
    """Whether ``brotli`` is installed and can bound its output (``output_buffer_limit``)."""
    try:
        import brotli
    except ImportError:
        return False
    return hasattr(brotli.Decompressor, "can_accept_more_data")  # 1.2: the bounded API


@functools.cache
def accepted() -> tuple[str, ...]:
    """Return the content codings the SDK decodes, in the order ``Accept-Encoding`` lists them.

    ``gzip`` and ``deflate`` always; ``br`` where a ``brotli`` that bounds its output is
    installed. Looked up once, at the first client: ``brotli`` is imported then, not with the
    package.
    """
    return ("gzip", "deflate", "br") if _bounded_brotli() else ("gzip", "deflate")


def accept_encoding() -> str:
    """Return the ``Accept-Encoding`` value the SDK sends: what it decodes."""
    return ", ".join(accepted())


def codings(values: Sequence[bytes]) -> list[str]:
    """Return the codings of an answer's ``Content-Encoding`` headers, in the order applied.

    Args:
        values: the headers' values as received, in order.

    Returns:
        The codings, lower case, without empty elements and ``identity``.
    """
    names = (name.strip(b" \t").lower() for value in values for name in value.split(b","))
    return [name.decode("latin-1") for name in names if name and name != b"identity"]


def refusal(stack: Sequence[str]) -> str | None:
    """Return why a body in the codings ``stack`` is refused unread, if it is."""
    unknown = [coding for coding in stack if coding not in accepted()]
    if unknown:
        return (
            f"the response body is encoded as {', '.join(stack)!r}, which the SDK did not ask "
            f"for (Accept-Encoding: {accept_encoding()}) and does not decode"
        )
    if len(stack) > MAX_CODINGS or stack.count("br") > 1:
        return (
            f"the response body is encoded {len(stack)} times ({', '.join(stack)}); the SDK "
            f"undoes at most {MAX_CODINGS} content codings, br at most once"
        )
    return None


#: Where a layer hands what it decoded.
Emit = Callable[[bytes], None]


class _Layer(Protocol):
    def feed(self, data: bytes, emit: Emit) -> None:
        """Decode ``data``, handing ``emit`` the output in pieces of at most about ``STEP``."""

    def end(self) -> None:
        """Raise ``DecodeError`` unless the coded data ended where the body did."""


class _Zlib:
    """A gzip or deflate layer: zlib's decompressor, asked for ``STEP`` bytes at a time."""

    __slots__ = ("_head", "_name", "_obj")

    def __init__(self, name: str) -> None:
        self._name = name
        self._head = b""  # the first byte, until a second tells zlib from raw deflate
        self._obj: Any = None  # made at the first bytes: an empty body is empty

    def feed(self, data: bytes, emit: Emit) -> None:
        if self._obj is None:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return
            self._obj = zlib.decompressobj(_wbits(self._name, data))
        try:
            self._inflate(data, emit)
        except zlib.error as exc:
            raise DecodeError(f"the response body is not valid {self._name} ({exc})") from None

    def _inflate(self, data: bytes, emit: Emit) -> None:
        obj = self._obj
        while True:
            if obj.eof:
                if not data:
                    return
                if self._name != "gzip":
                    raise DecodeError(
                        f"the response body has bytes after the end of its {self._name} data"
                    )
                obj = self._obj = zlib.decompressobj(31)  # the next gzip member
            out = obj.decompress(data, STEP)
            if out:
                emit(out)
            data = obj.unused_data if obj.eof else obj.unconsumed_tail
            # A full piece may leave output inside zlib even when the input is all taken.
            if not data and not obj.eof and len(out) < STEP:
                return

    def end(self) -> None:
        if (self._obj is None and self._head) or (self._obj is not None and not self._obj.eof):
            raise DecodeError(f"the response body ends inside its {self._name} data")


def _wbits(name: str, data: bytes) -> int:
    """Return zlib's ``wbits`` for a layer whose coded data starts with ``data``.

    gzip's header; for deflate, the zlib format when ``data`` starts with a zlib header (RFC
    1950), else raw deflate data.
    """
    if name == "gzip":
        return 31
    zlib_header = data[0] & 0x0F == 8 and data[0] >> 4 <= 7 and (data[0] << 8 | data[1]) % 31 == 0
    return zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS


class _Brotli:
    """A ``br`` layer: brotli's decompressor with its output buffer limited to ``STEP``."""

    __slots__ = ("_error", "_fed", "_obj")

    def __init__(self) -> None:
        import brotli

        self._obj = brotli.Decompressor()
        self._error: type[Exception] = brotli.error
        self._fed = False

    def feed(self, data: bytes, emit: Emit) -> None:
        obj = self._obj
        if obj.is_finished():
            raise DecodeError("the response body has bytes after the end of its br data")
        self._fed = True
        try:
            out = obj.process(data, output_buffer_limit=STEP)
            # Output may wait inside even once it takes input again: drained until none comes.
            while out or not obj.can_accept_more_data():
                if out:
                    emit(out)
                out = obj.process(b"", output_buffer_limit=STEP)
        except self._error as exc:
            raise DecodeError(f"the response body is not valid br ({exc})") from None

    def end(self) -> None:
        if self._fed and not self._obj.is_finished():
            raise DecodeError("the response body ends inside its br data")


def _layer(coding: str) -> _Layer:
    return _Brotli() if coding == "br" else _Zlib(coding)


class Decoder:
    """Undoes a stack of content codings, fed the body's raw bytes piece by piece.

    Args:
        stack: the codings in the order they were applied (see ``codings``); none refused.
        emit: takes each decoded piece, of at most about ``STEP`` bytes; whatever it raises
            (the size cap's stop) stops the decoding and is raised by ``feed``.
    """

    __slots__ = ("_feed", "_layers")

    def __init__(self, stack: Sequence[str], emit: Emit) -> None:
        self._layers = [_layer(coding) for coding in reversed(stack)]
        # Each layer hands its output to the next one, the last one's to ``emit``.
        self._feed = emit
        for layer in reversed(self._layers):
            self._feed = functools.partial(layer.feed, emit=self._feed)

    def feed(self, data: bytes) -> None:
        """Decode the next piece of the raw body.

        Raises:
            DecodeError: the body is not what its codings say.
        """
        if data:
            self._feed(data)

    def end(self) -> None:
        """Check that every layer's coded data ended with the body.

        Raises:
            DecodeError: the body ends inside a layer's coded data.
        """
        for layer in self._layers:
            layer.end()
