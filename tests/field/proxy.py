"""A real forwarding HTTP proxy on 127.0.0.1, as a corporate egress proxy would be.

It takes requests in absolute form (``GET http://host:port/path HTTP/1.1``), the way a client
that is configured to use a proxy sends plain-HTTP requests, forwards them and relays the answer.
An https:// request's ``CONNECT host:443`` is recorded and refused (502): nothing behind it
speaks TLS.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

#: Connection-level headers, which a proxy does not forward (RFC 9110, section 7.6.1).
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade"}


class ForwardingProxy(ThreadingHTTPServer):
    """The proxy server; ``forwarded`` lists ``(method, absolute URL)`` of every request."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.forwarded: list[tuple[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ForwardingProxy

    def do_CONNECT(self) -> None:
        # An https:// request asks for a tunnel. There is no TLS service behind this proxy
        # to tunnel to, so it records the request and refuses, as a proxy does when the
        # destination cannot be reached.
        self.server.forwarded.append((self.command, self.path))
        self.send_error(502, "no route to the destination")

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def _forward(self) -> None:
        target = urlsplit(self.path)
        if target.scheme != "http" or not target.hostname:
            self.send_error(400, "expected an absolute http:// URL")
            return
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.forwarded.append((self.command, self.path))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
        try:
            path = target.path + (f"?{target.query}" if target.query else "")
            upstream.request(self.command, path, body=body, headers=headers)
            answer = upstream.getresponse()
            content = answer.read()
        finally:
            upstream.close()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.send_header("Via", "1.1 test-proxy")
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def forwarding_proxy() -> Iterator[ForwardingProxy]:
    """Run a ``ForwardingProxy`` in a background thread for a ``with`` block."""
    proxy = ForwardingProxy()
    thread = threading.Thread(target=proxy.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join()
