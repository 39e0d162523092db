"""Host names as the sandbox's network allowlist compares them (pure).

A host is compared in one canonical spelling, or not at all: lower case, one trailing dot dropped,
internationalised names in their ASCII (IDNA) form, IPv4 addresses in dotted decimal whatever way
they were written (`127.1`, `0x7f.0.0.1` and `2130706433` are all 127.0.0.1 to a resolver), IPv6
in its compressed form. Anything that cannot be compared safely — a NUL, a space or control
character, a `%` zone, `@` userinfo, a slash, an empty label, a label of digits at the end (an
address in disguise) — is no host at all, and so never allowed.

Patterns (`[sandbox] allow_domains`): a host name (`pypi.org`: that host only), `*.` before one
(`*.githubusercontent.com`: every name under it, not the name itself), or an IP literal (listed
addresses only: a name never matches an address, nor an address a name).
"""

from __future__ import annotations

import ipaddress
import re
import socket

MAX_NAME = 253  # DNS: a name of at most 253 characters, labels of at most 63
LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
FORBIDDEN = set("\0 \t\r\n/\\@%?#")
WILDCARD = "*."


def canonical_host(text: str) -> str | None:
    """`text` as the allowlist compares it, or None when it is no host that can be compared."""
    if not isinstance(text, str) or not text or any(c in FORBIDDEN or ord(c) < 32 or ord(c) == 127 for c in text):
        return None
    if text.startswith("[") and text.endswith("]"):
        return _ipv6(text[1:-1])
    if ":" in text:
        return _ipv6(text)
    name = text[:-1] if text.endswith(".") else text
    if not name or name.endswith("."):
        return None
    try:  # an address in any spelling a resolver reads as one
        return socket.inet_ntoa(socket.inet_aton(name))
    except OSError:
        pass
    try:
        ascii_name = name.lower().encode("idna").decode("ascii")
    except UnicodeError:
        return None
    labels = ascii_name.split(".")
    if len(ascii_name) > MAX_NAME or not all(LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        return None
    return ascii_name


def _ipv6(text: str) -> str | None:
    try:
        return ipaddress.IPv6Address(text).compressed
    except ValueError:
        return None


def pattern_of(text: str) -> str:
    """An allow_domains entry in canonical form, or ValueError saying how to write it."""
    wildcard = text.startswith(WILDCARD)
    host = canonical_host(text[len(WILDCARD) :] if wildcard else text)
    if host is None:
        raise ValueError(
            f"{text!r} is not a host name: write one as `pypi.org`, `*.example.com` or `127.0.0.1` "
            "(no scheme, port, path or spaces)"
        )
    if wildcard and is_address(host):
        raise ValueError(f"{text!r}: a wildcard applies to names, not addresses")
    return WILDCARD + host if wildcard else host


def is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def allowed(host: str | None, patterns) -> bool:
    """Whether a canonical `host` is one the patterns name."""
    if not host:
        return False
    for pattern in patterns:
        if pattern.startswith(WILDCARD):
            if not is_address(host) and host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False
