"""A minimal OpenAI-compatible server for the benchmarks: waits ``delay`` seconds, then answers.

A real HTTP server on 127.0.0.1 in its own process (one thread per connection), so the benchmarks
measure the real openai client and the real job runner, and the server does not share their Python
interpreter; only the model is missing (llama_cpp.server answers one request at a time, which would
measure llama.cpp rather than Palimpsest's concurrency). It counts the completion requests it gets;
``GET /stats`` reports the count.

    python -m benchmarks.openai_stub_server --delay 0.2     # prints "PORT <n>" once it listens
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODEL = "stub"


def make_server(delay: float) -> ThreadingHTTPServer:
    lock = threading.Lock()
    counter = {"calls": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else headers and body wait on delayed ACKs (~40 ms a request)

        def log_message(self, *args):
            pass

        def _send(self, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.endswith("/stats"):
                with lock:
                    self._send({"calls": counter["calls"]})
                return
            self._send({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "stub"}]})

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            with lock:
                counter["calls"] += 1
                number = counter["calls"]
            time.sleep(delay)
            text = f"answer {number}"
            usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
            base = {"created": 0, "model": request.get("model", MODEL), "usage": usage}
            if self.path.endswith("/chat/completions"):
                self._send({**base, "id": f"chatcmpl-{number}", "object": "chat.completion",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": text}}]})
            else:
                self._send({**base, "id": f"cmpl-{number}", "object": "text_completion",
                            "choices": [{"index": 0, "finish_reason": "stop", "text": text, "logprobs": None}]})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 128
    return server


class StubServer:
    """The stub server in a child process: ``with StubServer(0.2) as s: ... s.base_url ... s.calls()``."""

    def __init__(self, delay: float = 0.0):
        self.delay = delay
        self.process: subprocess.Popen | None = None
        self.base_url = ""

    def __enter__(self) -> "StubServer":
        root = Path(__file__).resolve().parents[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.openai_stub_server", "--delay", str(self.delay)],
            cwd=root, stdout=subprocess.PIPE, text=True,
        )
        first = self.process.stdout.readline().split()
        if len(first) != 2 or first[0] != "PORT":
            self.__exit__()
            raise RuntimeError("the benchmark's stub server did not start")
        self.base_url = f"http://127.0.0.1:{first[1]}/v1"
        return self

    def calls(self) -> int:
        with urllib.request.urlopen(f"{self.base_url}/stats", timeout=10) as answer:
            return int(json.load(answer)["calls"])

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A minimal OpenAI-compatible server that sleeps, then answers.")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each answer")
    args = parser.parse_args(argv)
    server = make_server(args.delay)
    print(f"PORT {server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
