"""web_fetch against a real HTTP server on 127.0.0.1: caps, redirects, timeouts, content types."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.web import MAX_RESPONSE_BYTES, fetch, web_fetch
from tests.support.scripted_server import POLL

SLOW_REPLY_S = 10.0  # /slow answers after this: a 1 s timeout that stopped it is told from one that did not
DRIP_S = 50 * 0.2  # /drip: a byte every 0.2 s, 50 of them

TOOLS = {t.name: t for t in BUILTIN_TOOLS}

ARTICLE = """<html><head><title>Caps</title><script>var tracking = "SCRIPT-TEXT";</script>
<style>body { color: red }</style></head><body><nav>Home | Docs</nav>
<article><h1>Why every tool is capped</h1>
<p>One uncapped cat can fill half a context window, so every tool cuts its output where it is produced.</p>
<p>Every cut leaves a note the model can see; silent truncation makes it act on incomplete data.</p>
</article><footer>Copyright</footer></body></html>"""


def big_page(size: int) -> bytes:
    paragraph = "<p>Paragraph about context budgets and tool caps, repeated to make a big page.</p>\n"
    head = "<html><head><title>Big</title></head><body><article><h1>Big page</h1>\n"
    body = head + paragraph * (size // len(paragraph) + 1)
    return body.encode()[:size]


ROUTES = {
    "/article.html": (200, "text/html; charset=utf-8", ARTICLE.encode()),
    "/big.html": (200, "text/html", big_page(3 * 1024 * 1024)),
    "/exact.txt": (200, "text/plain", b"a" * MAX_RESPONSE_BYTES),
    "/over.txt": (200, "text/plain", b"a" * (MAX_RESPONSE_BYTES + 1)),
    "/data.json": (200, "application/json", json.dumps({"name": "nanohermes", "caps": [200, 500]}).encode()),
    "/zh.txt": (200, "text/plain; charset=utf-8", ("上下文预算" * 10_000).encode()),
    "/latin1.txt": (200, "text/plain; charset=iso-8859-1", "café".encode("latin-1")),
    "/image.png": (200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(5000)),
    "/missing": (404, "text/html", b"<html><body><h1>Not Found</h1><p>No page at this address.</p></body></html>"),
    "/broken": (500, "text/plain", b"Internal error: database is down"),
    "/title-only.html": (200, "text/html", b"<html><head><title>Only a title</title></head><body></body></html>"),
    "/untyped": (200, "", b"plain words without a content type"),
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        path = self.path
        if path in ROUTES:
            return self.reply(*ROUTES[path])
        if path == "/loop-a":
            return self.redirect("/loop-b")
        if path == "/loop-b":
            return self.redirect("/loop-a")
        if path.startswith("/hops/"):  # /hops/N redirects N times, then answers
            n = int(path.rsplit("/", 1)[1])
            return self.redirect(f"/hops/{n - 1}") if n else self.reply(200, "text/plain", b"arrived")
        if path == "/slow":
            time.sleep(SLOW_REPLY_S)
            return self.reply(200, "text/plain", b"too late")
        if path == "/drip":
            return self.drip()
        self.reply(404, "text/plain", b"no route")

    def reply(self, status, content_type, body):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client stopped at its cap
            pass

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def drip(self):
        """Headers at once, then a byte every 0.2 s: never trips a read timeout."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        try:
            for _ in range(50):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture(scope="module")
def base_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def allow(preview: str) -> None:
    """The user says yes: the test server is on 127.0.0.1, which web_fetch asks about."""
    return None


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home, confirm=allow)


def get(ctx, url, **args):
    return web_fetch.func(ctx, url=url, **args)


def test_html_becomes_readable_text_with_a_header_naming_url_and_status(ctx, base_url):
    out = get(ctx, f"{base_url}/article.html")
    header, text = out.split("\n", 1)
    assert header == f"web_fetch {base_url}/article.html → 200 text/html, {len(text)} chars"
    assert "One uncapped cat can fill half a context window" in text
    assert "Why every tool is capped" in text
    assert "SCRIPT-TEXT" not in out and "color: red" not in out and "<p>" not in out


def test_a_3_mb_page_is_cut_at_2_mb_and_still_extracted(ctx, base_url):
    out = get(ctx, f"{base_url}/big.html")
    assert out.startswith(f"web_fetch {base_url}/big.html → 200 text/html, ")
    assert "Paragraph about context budgets" in out
    assert "[response truncated at 2097152 bytes]" in out
    assert len(out.encode()) <= ctx.max_output


def test_a_body_of_exactly_2_mb_is_not_marked_truncated(base_url):
    page = fetch(f"{base_url}/exact.txt")
    assert len(page.body) == MAX_RESPONSE_BYTES and not page.truncated


def test_a_body_one_byte_over_2_mb_is_cut_and_marked(ctx, base_url):
    page = fetch(f"{base_url}/over.txt")
    assert len(page.body) == MAX_RESPONSE_BYTES and page.truncated
    assert "[response truncated at 2097152 bytes]" in get(ctx, f"{base_url}/over.txt")


def test_json_and_plain_text_pass_through(ctx, base_url):
    out = get(ctx, f"{base_url}/data.json")
    assert (
        out
        == f'web_fetch {base_url}/data.json → 200 application/json, 42 chars\n{{"name": "nanohermes", "caps": [200, 500]}}'
    )
    assert get(ctx, f"{base_url}/latin1.txt").endswith("\ncafé")
    assert get(ctx, f"{base_url}/untyped").endswith("no content type, 34 chars\nplain words without a content type")


def test_max_chars_cuts_the_text_with_a_note(ctx, base_url):
    out = get(ctx, f"{base_url}/zh.txt", max_chars=10)
    assert (
        out
        == f"web_fetch {base_url}/zh.txt → 200 text/plain, 50000 chars\n上下文预算上下文预算\n… text cut at 10 chars (total 50000)"
    )


def test_chinese_text_is_cut_to_max_output_bytes_on_a_character_boundary(ctx, base_url):
    result = dispatch(ctx, TOOLS, "web_fetch", {"url": f"{base_url}/zh.txt"})
    assert result.ok and "\ufffd" not in result.content
    assert "output truncated" not in result.content  # the tool fitted itself; the note survives
    assert len(result.content.encode()) <= ctx.max_output
    assert result.content.endswith(" chars (total 50000)")


def test_binary_content_is_named_with_its_type_and_size(ctx, base_url):
    assert (
        get(ctx, f"{base_url}/image.png")
        == f"web_fetch {base_url}/image.png → 200 image/png, 5008 bytes: binary content, not shown"
    )


def test_page_with_no_main_content_falls_back_to_the_whole_page_text(ctx, base_url):
    assert get(ctx, f"{base_url}/title-only.html").endswith("\nOnly a title")


def test_http_errors_name_the_status_and_show_an_excerpt(ctx, base_url):
    with pytest.raises(ToolError) as err:
        get(ctx, f"{base_url}/missing")
    assert str(err.value).startswith(f"web_fetch {base_url}/missing → 404 Not Found\n")
    assert "No page at this address." in str(err.value)
    result = dispatch(ctx, TOOLS, "web_fetch", {"url": f"{base_url}/broken"})
    assert not result.ok
    assert (
        result.content
        == f"error: web_fetch {base_url}/broken → 500 Internal Server Error\nInternal error: database is down"
    )


def test_five_redirects_are_followed_and_the_final_url_named(ctx, base_url):
    out = get(ctx, f"{base_url}/hops/5")
    assert out == f"web_fetch {base_url}/hops/5 (redirected to {base_url}/hops/0) → 200 text/plain, 7 chars\narrived"


def test_a_sixth_redirect_is_refused(ctx, base_url):
    with pytest.raises(ToolError, match=r"more than 5 redirects"):
        get(ctx, f"{base_url}/hops/6")


def test_a_redirect_loop_is_named_as_a_loop(ctx, base_url):
    with pytest.raises(ToolError) as err:
        get(ctx, f"{base_url}/loop-a")
    assert str(err.value) == (
        f"web_fetch {base_url}/loop-a: redirect loop ({base_url}/loop-a → {base_url}/loop-b → {base_url}/loop-a)"
    )


def test_a_slow_server_hits_the_timeout(base_url):
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"^web_fetch .*/slow: timed out after 1 s$"):
        fetch(f"{base_url}/slow", total_timeout=1)
    assert time.monotonic() - started < SLOW_REPLY_S  # not the reply's wait


def test_a_dripping_server_hits_the_total_timeout(base_url):
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 1 s"):
        fetch(f"{base_url}/drip", total_timeout=1)
    assert time.monotonic() - started < DRIP_S  # not the whole drip


def test_dns_failure_is_a_clear_error(ctx):
    with pytest.raises(
        ToolError, match=r"^web_fetch http://no-such-host\.invalid/: DNS lookup failed for no-such-host\.invalid"
    ):
        get(ctx, "http://no-such-host.invalid/")


def test_connection_refused_is_a_clear_error(ctx):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: nothing answers there
        with pytest.raises(ToolError, match=rf"^web_fetch http://127.0.0.1:{port}/: could not connect to 127.0.0.1"):
            get(ctx, f"http://127.0.0.1:{port}/")


def test_only_http_and_https_are_fetched(ctx):
    with pytest.raises(ToolError, match=r"http and https URLs only, got 'file:///etc/passwd'$"):
        get(ctx, "file:///etc/passwd")
    with pytest.raises(ToolError, match=r"did you mean https://example.com\?"):
        get(ctx, "example.com")


def test_web_fetch_needs_no_approval_and_max_chars_is_optional():
    tool_ = TOOLS["web_fetch"]
    assert not tool_.needs_approval and tool_.parameters["required"] == ["url"]
