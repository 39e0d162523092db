#!/usr/bin/env python3
"""A recording proxy in front of a real OpenAI-compatible server (llama.cpp's llama-server).

    python scripts/record_real_model.py --upstream http://127.0.0.1:8091 --port 8092
    nanohermes --base-url http://127.0.0.1:8092/rec/NAME/v1 --model local-model -p "..."

A request to /rec/NAME/<path> is forwarded to <upstream>/<path>; the request body and the
response are saved to OUT/NAME.json after every exchange (a new proxy process starts each
NAME afresh, and so does DELETE /rec/NAME). Streamed responses are forwarded as they arrive and saved as the raw SSE
chunks, in order, each exactly as the server sent it except for the envelope fields the
chunks of one stream repeat (id, created, model, object, system_fingerprint), stored once
per stream to keep recordings small, and two machine-specific fields: llama.cpp's
`timings` and each chunk's own `created` second (the stream's first one stands for all). Requests are saved as a digest: parameters, tool names, and each message with
long text cut. Other paths (no /rec/NAME prefix) are forwarded without recording.

tests/e2e/recording.py turns a recording back into scripted-server replies.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ENVELOPE = ("id", "created", "model", "object", "system_fingerprint")
# llama.cpp's per-request speeds, and the second each chunk was made (a stream keeps the
# first): they differ on every machine and run, and cost a third of a recording's size.
MACHINE_FIELDS = ("timings",)
PER_CHUNK_CLOCK = "created"
DIGEST_TEXT_CHARS = 80  # a message's text kept in a request digest (head … tail)
_NAME = re.compile(r"^/rec/([A-Za-z0-9_.-]+)(/.*)$")


def digest_request(body: dict | None) -> dict | None:
    """What a request asked, small: parameters, tool names, messages with long text cut."""
    if not isinstance(body, dict):
        return body
    out = {k: v for k, v in body.items() if k not in ("messages", "tools")}
    if "tools" in body:
        out["tools"] = [t.get("function", {}).get("name") for t in body["tools"]]
    if "messages" in body:
        out["messages"] = [_digest_message(m) for m in body["messages"]]
    return out


def _digest_message(message: dict) -> dict:
    out = dict(message)
    content = message.get("content")
    if isinstance(content, str) and len(content) > DIGEST_TEXT_CHARS:
        half = DIGEST_TEXT_CHARS // 2
        out["content"] = f"{content[:half]}…[{len(content) - DIGEST_TEXT_CHARS} chars]…{content[-half:]}"
    return out


def pack_stream(chunks: list[dict]) -> dict:
    """{"envelope": the first chunk's envelope fields, "chunks": each chunk without the
    envelope fields that equal it, without timings and without its own `created`}."""
    envelope = {k: chunks[0][k] for k in ENVELOPE if chunks and k in chunks[0]}
    packed = []
    for chunk in chunks:
        drop = set(MACHINE_FIELDS) | {PER_CHUNK_CLOCK} | {k for k, v in envelope.items() if chunk.get(k) == v}
        packed.append({k: v for k, v in chunk.items() if k not in drop})
    return {"envelope": envelope, "chunks": packed}


def write_recording(path: Path, name: str, exchanges: list[dict]) -> None:
    """One exchange per line, compact: small files whose diffs read line by line."""
    lines = ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in exchanges)
    path.write_text(f'{{"name":{json.dumps(name)},"exchanges":[\n{lines}\n]}}\n', encoding="utf-8")


class Recorder:
    def __init__(self, upstream: str, out: Path):
        self.upstream = urlsplit(upstream)
        self.out = out
        self.recordings: dict[str, list[dict]] = {}
        self.lock = threading.Lock()

    def save(self, name: str, exchange: dict) -> None:
        with self.lock:
            exchanges = self.recordings.setdefault(name, [])
            exchanges.append(exchange)
            self.out.mkdir(parents=True, exist_ok=True)
            write_recording(self.out / f"{name}.json", name, exchanges)

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.upstream.hostname, self.upstream.port or 80, timeout=900)


def make_handler(recorder: Recorder):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the response ends when the connection closes

        def log_message(self, *args):
            pass

        def do_GET(self):
            self._forward(None)

        def do_DELETE(self):
            """DELETE /rec/NAME: start NAME afresh (the next exchange rewrites its file)."""
            match = _NAME.match(self.path + "/")
            if match:
                with recorder.lock:
                    recorder.recordings.pop(match.group(1), None)
            self.send_response(204 if match else 404)
            self.end_headers()

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            self._forward(self.rfile.read(length))

        def _forward(self, data: bytes | None):
            match = _NAME.match(self.path)
            name, path = (match.group(1), match.group(2)) if match else (None, self.path)
            conn = recorder.connection()
            headers = {
                k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization", "accept")
            }
            conn.request(self.command, path, body=data, headers=headers)
            response = conn.getresponse()
            self.send_response(response.status)
            self.send_header("Content-Type", response.getheader("Content-Type", "application/json"))
            self.end_headers()
            body = json.loads(data) if data else None
            exchange = {
                "method": self.command,
                "path": path,
                "request": digest_request(body),
                "status": response.status,
            }
            if "text/event-stream" in (response.getheader("Content-Type") or ""):
                exchange["stream"] = pack_stream(self._relay_stream(response))
            else:
                raw = response.read()
                self.wfile.write(raw)
                exchange["body"] = _strip_machine_fields(json.loads(raw)) if raw.strip() else None
            conn.close()
            if name:
                recorder.save(name, exchange)

        def _relay_stream(self, response) -> list[dict]:
            """Forward the stream and keep its chunks. A client that leaves once it has what it
            needs (the finish_reason and usage, or a reply it cut for looping) does not lose the
            exchange: the rest is read from upstream and recorded, only not forwarded."""
            chunks, client_gone = [], False
            while True:
                line = response.readline()
                if not line:
                    return chunks
                if not client_gone:
                    try:
                        self.wfile.write(line)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        client_gone = True
                text = line.decode("utf-8").strip()
                if text.startswith("data:") and text[5:].strip() != "[DONE]":
                    chunks.append(json.loads(text[5:]))

    return Handler


def _strip_machine_fields(body):
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k not in MACHINE_FIELDS}
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", default="http://127.0.0.1:8091", help="the real server (default %(default)s)")
    parser.add_argument("--port", type=int, default=8092, help="port to listen on, 127.0.0.1 only (0: any free one)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests" / "recordings")
    args = parser.parse_args(argv)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(Recorder(args.upstream, args.out)))
    httpd.daemon_threads = True
    print(
        f"recording proxy on http://127.0.0.1:{httpd.server_address[1]} -> {args.upstream}, saving to {args.out}",
        flush=True,
    )
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
