#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that records every request.

    http_recorder.py --free-port
        prints a port that is free now on 127.0.0.1 and exits
    http_recorder.py --port N --log FILE [--lifetime SECONDS] [--reply TEXT]

Each request is appended to FILE as one JSON object per line: method, path,
headers (names lower-cased), body (text, undecodable bytes replaced).  A GET
is answered with TEXT (default "203.0.113.7\\n", an address for external-IP
lookups); everything else with "ok".  It exits after SECONDS (default 60),
so a test that dies cannot leave it behind for long.
"""
import argparse
import http.server
import json
import socket
import threading


class Recorder(http.server.BaseHTTPRequestHandler):
    log_path = ""
    reply = b""

    def _record(self):
        length = min(int(self.headers.get("Content-Length") or 0), 1 << 20)
        body = self.rfile.read(length) if length else b""
        entry = {
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body.decode("utf-8", "replace"),
        }
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    def _answer(self, text):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def do_GET(self):  # noqa: N802 (the name http.server calls)
        self._record()
        self._answer(self.reply)

    def do_POST(self):  # noqa: N802
        self._record()
        self._answer(b"ok\n")

    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--free-port", action="store_true")
    ap.add_argument("--port", type=int)
    ap.add_argument("--log")
    ap.add_argument("--lifetime", type=float, default=60)
    ap.add_argument("--reply", default="203.0.113.7\n")
    a = ap.parse_args()
    if a.free_port:
        print(free_port())
        return
    if a.port is None or not a.log:
        ap.error("--port and --log are needed")
    Recorder.log_path = a.log
    Recorder.reply = a.reply.encode()
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Recorder)
    threading.Timer(a.lifetime, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
