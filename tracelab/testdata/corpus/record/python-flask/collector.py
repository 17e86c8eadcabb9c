"""A minimal OTLP/HTTP JSON receiver for the recording (standard library only).

Every POST /v1/traces body (an ExportTraceServiceRequest as OTLP JSON,
{"resourceSpans":[...]}) is appended to the file OUT as one line; GET /health
answers the number of batches so far. The recording script merges the lines
with jq. Usage: PORT=... OUT=... python collector.py
"""
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
out = open(os.environ["OUT"], "a", encoding="utf-8")
batches = 0


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body=b"", ctype="text/plain"):
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path != "/health":
            return self.reply(404)
        self.reply(200, str(batches).encode())

    def do_POST(self):
        global batches
        if self.path != "/v1/traces":
            return self.reply(404)
        if "json" not in self.headers.get("content-type", ""):
            return self.reply(415)
        if self.headers.get("content-encoding", "identity") != "identity":
            return self.reply(415)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            doc = json.loads(body)
        except ValueError:
            return self.reply(400)
        with lock:
            out.write(json.dumps(doc, separators=(",", ":")) + "\n")
            out.flush()
            batches += 1
        self.reply(200, b"{}", "application/json")


ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
