"""A fake search service on 127.0.0.1 that answers like SearXNG, Brave and Tavily do.

    GET  /search?q=…&format=json          SearXNG's JSON API (403 without format=json)
    GET  /res/v1/web/search?q=…&count=N   Brave (401 unless X-Subscription-Token is BRAVE_KEY)
    POST /tavily/search                   Tavily (401 unless the bearer token is TAVILY_KEY)
    GET  /failing/search                  SearXNG with no results because its engines failed
    GET  /slow/search                     answers after SLOW_S seconds
    GET  /page/search                     an HTML page where JSON should be
    GET  /huge/search                     3 MB of JSON
    GET  /trickle/search                  one byte every TRICKLE_S seconds, for a minute

Every request is recorded (path, query, headers, body) for the assertions.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.support.scripted_server import POLL

BRAVE_KEY = "brave-secret-key-123"
TAVILY_KEY = "tvly-secret-key-456"
SLOW_S = 3.0
TRICKLE_S = 0.1
TRICKLE_LASTS_S = 60  # long past any timeout a test gives the search
LONG_SNIPPET = "Context windows fill up fast. " * 40  # 1,200 chars: cut by the tool


def results(query: str, n: int = 7) -> list[dict]:
    hits = [
        {"title": f"Result {i} for {query}", "url": f"https://example.com/{i}", "content": f"Snippet {i}."}
        for i in range(1, n + 1)
    ]
    hits[1]["content"] = LONG_SNIPPET
    hits[2]["title"] = "<b>Bold</b> &amp; \x1b]0;owned\x07 title"
    hits[2]["content"] = "Matches <strong>budget</strong> and\x1b[2J more"
    return hits


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _record(self, body: bytes = b"") -> dict:
        parts = urlsplit(self.path)
        entry = {
            "method": self.command,
            "path": parts.path,
            "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
            "headers": dict(self.headers),
            "body": body.decode("utf-8", "replace"),
        }
        self.server.requests.append(entry)
        return entry

    def _json(self, status: int, data) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        try:
            self.wfile.write(raw)
        except BrokenPipeError:  # the client gave up first (the timeout test)
            pass

    def do_GET(self):
        entry = self._record()
        query = entry["query"]
        if entry["path"] == "/search":
            if query.get("format") != "json":
                return self._json(403, {"error": "format not allowed"})
            return self._json(200, {"query": query.get("q"), "results": results(query.get("q", ""))})
        if entry["path"] == "/res/v1/web/search":
            if entry["headers"].get("X-Subscription-Token") != BRAVE_KEY:
                return self._json(401, {"error": {"detail": "invalid subscription token"}})
            hits = [
                {"title": h["title"], "url": h["url"], "description": h["content"]} for h in results(query.get("q", ""))
            ]
            return self._json(200, {"web": {"results": hits[: int(query.get("count", 20))]}})
        if entry["path"] == "/failing/search":  # SearXNG when its engines time out or are suspended
            engines = [["google", "timeout"], ["duckduckgo", "Suspended: CAPTCHA \x1b[2J"]]
            return self._json(200, {"query": query.get("q"), "results": [], "unresponsive_engines": engines})
        if entry["path"] == "/slow/search":
            time.sleep(SLOW_S)
            return self._json(200, {"results": []})
        if entry["path"] in ("/huge/search", "/trickle/search"):
            return self._stream(entry["path"] == "/trickle/search")
        if entry["path"] == "/page/search":
            raw = b"<html><body>Welcome</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            return self.wfile.write(raw)
        self._json(404, {"error": "not found"})

    def _stream(self, trickle: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        try:
            if trickle:
                for _ in range(int(TRICKLE_LASTS_S / TRICKLE_S)):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(TRICKLE_S)
            else:
                self.wfile.write(
                    b'{"results": [' + b'{"title": "x", "url": "https://example.com", "content": "y"},' * 50_000
                )
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading, as it should
            pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        entry = self._record(body)
        if entry["path"] != "/tavily/search":
            return self._json(404, {"error": "not found"})
        if entry["headers"].get("Authorization") != f"Bearer {TAVILY_KEY}":
            return self._json(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
        request = json.loads(body or b"{}")
        return self._json(
            200,
            {
                "query": request.get("query"),
                "results": results(request.get("query", ""))[: request.get("max_results", 5)],
            },
        )


class SearchServer:
    def __init__(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads, self.httpd.block_on_close = True, False  # a slow answer never holds up close()
        self.httpd.requests = []
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(POLL,), daemon=True)
        self.thread.start()

    @property
    def requests(self) -> list[dict]:
        return self.httpd.requests

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
