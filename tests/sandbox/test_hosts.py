"""Host names compared in one canonical spelling, or not at all (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nanohermes.errors import ConfigError
from nanohermes.sandbox import parse_sandbox_table
from nanohermes.sandbox.hosts import allowed, canonical_host, pattern_of


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("PyPI.org", "pypi.org"),
        ("pypi.org.", "pypi.org"),
        ("127.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("[::1]", "::1"),
        ("0:0::1", "::1"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("cafe.be", "cafe.be"),
    ],
)
def test_one_host_has_one_spelling(text, canonical):
    assert canonical_host(text) == canonical


@pytest.mark.parametrize(
    "text",
    ["", "a b", "pypi.org\x00.evil", "pypi.org..", ".", "user@pypi.org", "pypi.org/x", "fe80::1%eth0", "1.2.3.256"],
)
def test_what_cannot_be_compared_is_no_host(text):
    assert canonical_host(text) is None
    assert not allowed(canonical_host(text), ["pypi.org", "*.org", "1.2.3.4"])


def test_a_wildcard_names_what_is_under_a_domain_never_the_domain_or_a_look_alike():
    patterns = [pattern_of("*.GitHub.com"), pattern_of("pypi.org")]
    assert allowed("raw.github.com", patterns) and allowed("a.b.github.com", patterns)
    assert not allowed("github.com", patterns) and not allowed("evilgithub.com", patterns)
    assert not allowed("pypi.org.evil.test", patterns) and not allowed("files.pypi.org", patterns)


def test_an_address_matches_only_a_listed_address():
    assert allowed(canonical_host("127.1"), [pattern_of("127.0.0.1")])
    assert not allowed("127.0.0.1", [pattern_of("localhost")])
    with pytest.raises(ValueError, match="a wildcard applies to names"):
        pattern_of("*.127.0.0.1")


@given(st.text(max_size=40))
def test_canonical_spelling_is_stable_and_never_holds_a_separator(text):
    host = canonical_host(text)
    if host is not None:
        assert canonical_host(host) == host
        assert not any(c in host for c in "\x00 /@%?#\\")


@pytest.mark.parametrize("entry", ["https://pypi.org", "pypi.org:443", "pypi.org/simple", "*", 5])
def test_a_bad_allow_domains_entry_is_a_config_error(entry):
    with pytest.raises(ConfigError, match="allow_domains"):
        parse_sandbox_table({"allow_domains": [entry]}, Path("/h/config.toml"))


def test_allow_domains_and_sockets_are_read_from_the_table():
    settings = parse_sandbox_table(
        {"allow_domains": ["PyPI.org", "*.pythonhosted.org"], "allow_unix_sockets": ["~/.docker/run/docker.sock"]},
        Path("/h/config.toml"),
    )
    assert settings.allow_domains == ("pypi.org", "*.pythonhosted.org")
    assert settings.allow_unix_sockets == ("~/.docker/run/docker.sock",)
