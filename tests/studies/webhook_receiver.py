"""A local receiver for webhook tests: an HTTP server in a thread that records what it is
sent and answers as told."""

import ssl
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes


@dataclass
class Answer:
    status: int = 200
    body: bytes = b"ok"
    delay: float = 0.0
    headers: dict = field(default_factory=dict)


class Receiver:
    def __init__(self, tls_dir=None):
        self.received: list[Received] = []
        # Answers in turn; once used up, the last one again (200 when none was given).
        self.answers: list[Answer] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                receiver.received.append(Received(self.path, dict(self.headers), body))
                answer = receiver.next_answer()
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except OSError:
                    pass  # the sender gave up (a timeout test)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if tls_dir is not None:
            # A certificate of its own, signed by no one the sender trusts.
            cert, key = tls_dir / "cert.pem", tls_dir / "key.pem"
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                 "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                check=True, capture_output=True,
            )  # fmt: skip
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def next_answer(self) -> Answer:
        if len(self.answers) > 1:
            return self.answers.pop(0)
        return self.answers[0] if self.answers else Answer()

    def url(self, path: str = "/hook") -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def receiver_running(settings):
    """A receiver on 127.0.0.1, which webhooks may call only with private addresses allowed
    (a fixture's body: ``yield from receiver_running(settings)``)."""
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2.0
    server = Receiver()
    yield server
    server.close()
