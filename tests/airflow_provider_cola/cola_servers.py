"""Small servers on 127.0.0.1 that receive what the alert tests' tasks send: mail and webhooks.

Both run in a thread of the test process, on a free port, and keep what they received, so a
test asserts the exact message a real notifier sent over a real socket.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Mail:
    """One message an SMTP client delivered: the envelope and the raw text of the message."""

    mail_from: str
    rcpt_to: list[str]
    data: str


@dataclass
class Received:
    """What a server received, in order."""

    mails: list[Mail] = field(default_factory=list)
    posts: list[tuple[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _SmtpHandler(socketserver.StreamRequestHandler):
    """The part of SMTP (RFC 5321) that smtplib uses to send one message: no TLS, no AUTH."""

    received: Received

    def _reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())
        self.wfile.flush()

    def handle(self) -> None:
        self._reply("220 cola-test ESMTP")
        mail_from, rcpt_to = "", []
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            command = raw.decode().rstrip("\r\n")
            verb = command.split(" ", 1)[0].upper()
            if verb in ("EHLO", "HELO"):
                self._reply("250 cola-test")
            elif verb == "MAIL":
                mail_from, rcpt_to = command.split(":", 1)[1].strip().strip("<>"), []
                self._reply("250 OK")
            elif verb == "RCPT":
                rcpt_to.append(command.split(":", 1)[1].strip().strip("<>"))
                self._reply("250 OK")
            elif verb == "DATA":
                self._reply("354 End data with <CR><LF>.<CR><LF>")
                lines = []
                while (line := self.rfile.readline().decode()) not in (".\r\n", ""):
                    # Dot-stuffing: a line the client began with "." was sent as "..".
                    lines.append(line[1:] if line.startswith("..") else line)
                with self.received.lock:
                    self.received.mails.append(Mail(mail_from, rcpt_to, "".join(lines).replace("\r\n", "\n")))
                self._reply("250 OK queued")
            elif verb in ("RSET", "NOOP"):
                self._reply("250 OK")
            elif verb == "QUIT":
                self._reply("221 Bye")
                return
            else:
                self._reply("502 Command not implemented")


class _WebhookHandler(BaseHTTPRequestHandler):
    """Takes a JSON POST on any path, answers 200, and keeps the path and the parsed body."""

    received: Received

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.received.lock:
            self.received.posts.append((self.path, json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads what was received, not an access log."""


@contextmanager
def smtp_server() -> Iterator[tuple[int, Received]]:
    """An SMTP server on 127.0.0.1; yields its port and what it receives."""
    received = Received()
    handler = type("Handler", (_SmtpHandler,), {"received": received})
    with _serving(socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)) as port:
        yield port, received


@contextmanager
def webhook_server() -> Iterator[tuple[str, Received]]:
    """An HTTP server on 127.0.0.1; yields its URL (``http://127.0.0.1:PORT``) and what it receives."""
    received = Received()
    handler = type("Handler", (_WebhookHandler,), {"received": received})
    with _serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as port:
        yield f"http://127.0.0.1:{port}", received


@contextmanager
def _serving(server: socketserver.TCPServer) -> Iterator[int]:
    server.daemon_threads = True  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
