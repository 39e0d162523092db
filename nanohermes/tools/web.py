"""web_fetch: one URL, streamed under a byte cap, HTML turned into readable text.

HTTP goes through httpx2 (the httpx fork the openai client depends on; plain httpx when
that is what is installed), so no extra dependency. HTML goes through trafilatura, with a
whole-page lxml text extraction when it finds no main content.

A GET can act: `http://127.0.0.1:8080/admin/delete?all=1` on the user's machine, a cloud
metadata service at 169.254.169.254. So every hop (the URL, then each redirect) is resolved
first, and one that reaches an address that is not public (loopback, private, link-local,
metadata) asks the user as run_command does (ToolContext.confirm): refused in plan mode and in
a -p run without --yes. An origin allowed once is not asked again within the same call.
"""

from __future__ import annotations

import codecs
import functools
import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.errors import ToolError
from nanohermes.text import fit_utf8
from nanohermes.tools import ToolContext, tool


@functools.cache
def _httpx():
    """httpx2 (what current openai releases ship) or httpx (older ones); imported on first
    fetch, not at start-up (~25 ms)."""
    try:
        import httpx2 as httpx
    except ImportError:
        import httpx
    return httpx


MAX_RESPONSE_BYTES = 2_097_152  # a page past 2 MB is an archive or a dump, not something to read
DEFAULT_MAX_CHARS = 20_000  # the same budget as one tool result
MAX_REDIRECTS = 5  # real sites use one or two; more is a loop or a tracker chain
CONNECT_TIMEOUT = 10.0  # seconds to reach the host
TOTAL_TIMEOUT = 30.0  # seconds for the whole exchange, redirects included
ERROR_EXCERPT_CHARS = 500  # enough of an error page to see what it says
NOTE_RESERVE = 200  # bytes of max_output kept for the notes
USER_AGENT = "NanoHermes/0.1 (terminal coding agent; web_fetch)"
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-yaml", "application/toml"}
)
BLOCK_TAGS = ("p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section", "article", "table")


@dataclass
class Fetched:
    url: str  # after redirects
    status: int
    reason: str
    content_type: str  # media type only, lower case ("" when the server sent none)
    charset: str | None
    body: bytes
    truncated: bool  # the body went past MAX_RESPONSE_BYTES and was cut
    declared_size: int | None  # Content-Length, when sent


Guard = Callable[[str], None]  # called with each hop's URL before it is fetched; raises ToolError to refuse


@tool(params={"url": "", "max_chars": ""}, read_only=True)
def web_fetch(ctx: ToolContext, url: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Fetch a URL as text."""
    if max_chars < 1:
        raise ToolError("max_chars must be at least 1")
    return render(url, fetch(url, guard=local_address_guard(ctx)), max_chars, ctx.max_output)


def local_address_guard(ctx: ToolContext) -> Guard:
    """A hop to an address that is not public asks through ctx.confirm (once per origin)."""
    allowed: set[tuple[str, int]] = set()

    def check(url: str) -> None:
        parsed = _httpx().URL(url)
        origin = (parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))
        found = None if origin in allowed else local_address(*origin)
        if found is None:
            return
        address, what = found
        preview = (
            f"web_fetch GET {url}\n{parsed.host} is {address}, {what}: a request there reaches services that "
            "trust this machine or its network"
        )
        refusal = (
            ctx.confirm(preview) if ctx.confirm else "refused: nothing can approve a request to a local address here"
        )
        if refusal:
            raise ToolError(f"web_fetch {url}: {parsed.host} is {address}, {what}. {refusal}")
        allowed.add(origin)

    return check


def local_address(host: str, port: int) -> tuple[str, str] | None:
    """(address, what it is) when `host` is, or resolves to, an address that is not public; None
    for a public one, or a name that does not resolve (the fetch then says so)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    for *_, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])  # an IPv6 zone (%eth0) is no part of the address
        ip = getattr(ip, "ipv4_mapped", None) or ip  # ::ffff:127.0.0.1 is 127.0.0.1
        if not ip.is_global:
            return str(ip), _address_kind(ip)
    return None


def _address_kind(ip) -> str:
    if ip.is_loopback:
        return "a loopback address (this machine)"
    if ip.is_unspecified:
        return "the unspecified address (this machine)"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_private:
        return "a private network address"
    return "not a public address"


def fetch(
    url: str,
    *,
    connect_timeout: float = CONNECT_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    max_bytes: int = MAX_RESPONSE_BYTES,
    guard: Guard | None = None,
) -> Fetched:
    """GET url, following at most MAX_REDIRECTS redirects, each hop checked by `guard` first;
    every failure is a ToolError naming the URL."""
    _check_scheme(url)
    deadline = time.monotonic() + total_timeout
    try:
        with _httpx().Client(headers={"User-Agent": USER_AGENT}, follow_redirects=False) as client:
            return _follow(
                client, url, deadline, connect_timeout, total_timeout, max_bytes, guard or (lambda hop: None)
            )
    except _httpx().TimeoutException:
        raise ToolError(f"web_fetch {url}: timed out after {total_timeout:g} s") from None
    except _httpx().ConnectError as exc:
        raise ToolError(_connect_error(url, exc)) from None
    except _httpx().HTTPError as exc:  # protocol errors, bad URLs, dropped connections
        raise ToolError(f"web_fetch {url}: {type(exc).__name__}: {exc}") from None


def _check_scheme(url: str) -> None:
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("http", "https"):
        hint = f"; did you mean https://{url}?" if not scheme else ""
        raise ToolError(f"web_fetch fetches http and https URLs only, got {url!r}{hint}")


def _follow(client, url: str, deadline: float, connect: float, total: float, max_bytes: int, guard: Guard) -> Fetched:
    chain = [url]
    while True:
        guard(chain[-1])  # after DNS, and again after every redirect
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _httpx().ReadTimeout("deadline")
        timeout = _httpx().Timeout(remaining, connect=min(connect, remaining))
        with client.stream("GET", chain[-1], timeout=timeout) as response:
            if not (response.is_redirect and "location" in response.headers):
                return _read(response, deadline, max_bytes)
            target = str(response.url.join(response.headers["location"]))
        if target in chain:
            raise ToolError(f"web_fetch {url}: redirect loop ({' → '.join([*chain, target])})")
        if len(chain) > MAX_REDIRECTS:
            raise ToolError(f"web_fetch {url}: more than {MAX_REDIRECTS} redirects (last: {target})")
        _check_scheme(target)
        chain.append(target)


def _read(response, deadline: float, max_bytes: int) -> Fetched:
    body, truncated = bytearray(), False
    for chunk in response.iter_bytes():  # decoded (gzip) bytes: the cap also stops decompression bombs
        room = max_bytes - len(body)
        body += chunk[:room]
        if len(chunk) > room:
            truncated = True
            break
        if time.monotonic() > deadline:  # a server dripping bytes never trips the read timeout
            raise _httpx().ReadTimeout("deadline")
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    length = response.headers.get("content-length", "")
    return Fetched(
        str(response.url),
        response.status_code,
        response.reason_phrase,
        content_type,
        response.charset_encoding,
        bytes(body),
        truncated,
        int(length) if length.isdigit() else None,
    )


def _connect_error(url: str, exc: Exception) -> str:
    host = _httpx().URL(url).host
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return f"web_fetch {url}: DNS lookup failed for {host} ({cause.strerror or cause})"
        cause = cause.__cause__ or cause.__context__
    return f"web_fetch {url}: could not connect to {host}: {exc}"


# ---------------------------------------------------------------- what the model sees


def render(url: str, page: Fetched, max_chars: int, max_output: int) -> str:
    """Header (URL, status, type, size), notes, then the text cut to max_chars and max_output."""
    kind = _kind(page)
    where = f"web_fetch {url}" + (f" (redirected to {page.url})" if page.url != url else "")
    status = f"{page.status} {page.content_type or 'no content type'}"
    if page.status >= 400:
        text = "" if kind == "binary" else _to_text(page, kind)
        excerpt = text[:ERROR_EXCERPT_CHARS] + ("…" if len(text) > ERROR_EXCERPT_CHARS else "")
        raise ToolError(f"{where} → {page.status} {page.reason}\n{excerpt}".rstrip())
    if kind == "binary":
        size = page.declared_size or len(page.body)
        more = "at least " if page.truncated and page.declared_size is None else ""
        return f"{where} → {status}, {more}{size} bytes: binary content, not shown"
    text = _to_text(page, kind)
    head = f"{where} → {status}, {len(text)} chars"
    notes = [f"[response truncated at {MAX_RESPONSE_BYTES} bytes]"] if page.truncated else []
    budget = max_output - len(head.encode("utf-8")) - NOTE_RESERVE
    shown = fit_utf8(text[:max_chars], budget)
    if len(shown) < len(text):
        notes.append(f"… text cut at {len(shown)} chars (total {len(text)})")
    return "\n".join([head, shown, *notes])


def _kind(page: Fetched) -> str:
    media = page.content_type
    if media in HTML_TYPES:
        return "html"
    if media.startswith("text/") or media in TEXT_TYPES or media.endswith(("+json", "+xml")):
        return "text"
    if media and media != "application/octet-stream":
        return "binary"
    start = page.body[:1024].lstrip().lower()  # no type (or a generic one): look at the bytes
    if b"\0" in page.body[:8192]:
        return "binary"
    return "html" if start.startswith((b"<!doctype html", b"<html")) else "text"


def _to_text(page: Fetched, kind: str) -> str:
    text = page.body.decode(_codec(page.charset), "replace")
    return html_to_text(text, page.url) if kind == "html" else text


def _codec(charset: str | None) -> str:
    try:
        return codecs.lookup(charset).name if charset else "utf-8"
    except LookupError:
        return "utf-8"


def html_to_text(html: str, url: str | None = None) -> str:
    """Main content as Markdown via trafilatura; the whole page's text when it finds none."""
    try:
        import trafilatura  # slow to import; only web_fetch needs it

        text = trafilatura.extract(
            html,
            url=url,
            output_format="markdown",
            include_tables=True,
            include_links=False,
            include_comments=False,
            favor_recall=True,
        )
    except Exception:  # ImportError, or a parser failure on odd markup: fall back below
        text = None
    return text.strip() if text and text.strip() else _whole_page_text(html)


def _whole_page_text(html: str) -> str:
    import lxml.etree
    import lxml.html

    try:
        doc = lxml.html.document_fromstring(html.encode("utf-8"), parser=lxml.html.HTMLParser(encoding="utf-8"))
    except (lxml.etree.ParserError, ValueError):
        return ""
    title = (doc.findtext(".//title") or "").strip()
    for node in doc.xpath("//script|//style|//noscript|//template|//head"):
        node.drop_tree()
    for node in doc.iter(*BLOCK_TAGS):  # block elements end a line; text_content() would glue them
        node.tail = "\n" + (node.tail or "")
    lines = (" ".join(line.split()) for line in doc.text_content().splitlines())
    body = "\n".join(line for line in lines if line)
    return f"# {title}\n\n{body}" if title and body else body or title
