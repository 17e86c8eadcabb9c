"""A minimal OTLP/HTTP receiver for the recording: every POST /v1/traces
(an ExportTraceServiceRequest in protobuf, as the Python SDK's
OTLPSpanExporter sends it, or in JSON) is appended to OUT as one line of
plain OTLP JSON ({"resourceSpans":[...]}); GET /health answers the number of
batches so far. The recording script merges the lines with jq.

Run with the virtualenv's python (it needs opentelemetry-proto); not traced.
Environment: PORT, OUT.
"""
import base64
import gzip
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

ID_KEYS = {"traceId", "spanId", "parentSpanId"}
lock = threading.Lock()
out = open(os.environ["OUT"], "a", encoding="utf-8")
batches = 0


def hex_ids(node):
    """Protobuf's JSON mapping writes bytes as base64; OTLP JSON wants the
    trace and span ids as hex."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ID_KEYS and isinstance(v, str):
                node[k] = base64.b64decode(v).hex()
            else:
                hex_ids(v)
    elif isinstance(node, list):
        for v in node:
            hex_ids(v)
    return node


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path != "/health":
            self.send_error(404)
            return
        body = str(batches).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        global batches
        if self.path != "/v1/traces":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            doc = json.loads(body)
        else:
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            doc = hex_ids(MessageToDict(req, use_integers_for_enums=True))
        line = json.dumps({"resourceSpans": doc.get("resourceSpans", [])}, separators=(",", ":"))
        with lock:
            out.write(line + "\n")
            out.flush()
            batches += 1
        resp = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(resp)))
        self.end_headers()
        self.wfile.write(resp)


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler)
print(f"collector on {os.environ['PORT']}", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
finally:
    out.close()
