"""Language servers that misbehave, and files a server should not choke on: whatever comes back on
the server's stdout is read within bounds (lsp/frames.py), and the change is made and succeeds."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nanohermes.lsp import Diagnostics
from nanohermes.lsp.frames import MAX_HEADER_LINE, MAX_HEADERS, FrameError, encode, read_message
from nanohermes.lsp.problems import MAX_SHOWN
from nanohermes.lsp.settings import parse_lsp_table
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.diagnosed import MADE
from nanohermes.tools.edit import edit_file
from tests.support.lsp_servers import LOUD_COUNT, fake_command, lsp_table, pylsp_command
from tests.support.timing import HANG_GUARD_S


def frame(body: bytes) -> io.BytesIO:
    return io.BytesIO(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def test_frames_round_trip_and_end_cleanly_between_messages():
    stream = io.BytesIO(encode({"id": 1, "result": "ä"}) + encode({"method": "x"}))
    assert read_message(stream) == {"id": 1, "result": "ä"}
    assert read_message(stream) == {"method": "x"}
    assert read_message(stream) is None


words = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)  # lsp/ sends valid Unicode only
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | words,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3),
    max_leaves=8,
)


@given(st.lists(st.dictionaries(words, json_values, max_size=4), max_size=4))
def test_any_messages_framed_in_a_row_read_back_as_sent(messages):
    stream = io.BytesIO(b"".join(encode(m) for m in messages))
    assert [read_message(stream) for _ in messages] == messages and read_message(stream) is None


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"X" * (MAX_HEADER_LINE + 10) + b"\r\n\r\n", "header past the protocol's size"),
        (b"X-Header: 1\r\n" * (MAX_HEADERS + 1) + b"\r\n", "header past the protocol's size"),
        (b"hello from print()\n", "where a header belongs"),
        (b"Traceback (most recent call last): oops\n", "where a header belongs"),
        (b"Content-Type: json\r\n\r\n{}", "without Content-Length"),
        (b"Content-Length: -5\r\n\r\n", "not a size"),
        (b"Content-Length: 99999999999999999999\r\n\r\n", "not a size"),
        (b"Content-Length: 1000000000000\r\n\r\n{", "over the"),
        (b"Content-Length: 10\r\n\r\n{}", "ended inside a message"),
        (b"Content-Length: 10\r\n", "ended inside a header"),
    ],
)
def test_a_broken_frame_is_a_frame_error_never_a_hang_or_a_huge_read(data, says):
    with pytest.raises(FrameError, match=says):
        read_message(io.BytesIO(data))


@pytest.mark.parametrize("body", [b"[" * 100_000 + b"]" * 100_000, b"not json", b"[1, 2]", b"\xff\xfe"])
def test_a_body_that_is_not_a_json_object_within_the_nesting_bound_is_a_frame_error(body):
    with pytest.raises(FrameError):
        read_message(frame(body))


def checked_edit(workspace, isolated_home, command, old="x = 1", new="x = 2", **keys):
    keys = {"timeout": HANG_GUARD_S, "startup_timeout": HANG_GUARD_S, **keys}
    checker = Diagnostics(parse_lsp_table(lsp_table(command, **keys), workspace / "c.toml"), workspace, None)
    ctx = ToolContext(workspace=workspace, home=isolated_home, diagnostics=checker)
    try:
        return dispatch(
            ctx, {"edit_file": edit_file}, "edit_file", {"path": "app.py", "old_text": old, "new_text": new}
        )
    finally:
        checker.close()


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("garbage", "it broke the protocol: it sent 'Traceback (most recent call last): not a header\\r\\n' where"),
        ("huge", "it broke the protocol: it sent a message of 1,000,000,000,000 bytes"),
        ("dies", "it exited (code 1): fake server: crashed on didOpen"),
    ],
)
def test_a_server_that_breaks_mid_check_is_one_notice_and_the_edit_stands(workspace, isolated_home, mode, says):
    (workspace / "app.py").write_text("x = 1\n")
    result = checked_edit(workspace, isolated_home, fake_command(mode))
    assert result.ok and (workspace / "app.py").read_text() == "x = 2\n"
    assert f"{MADE}; no diagnostics: python stopped: {says}" in result.content
    assert result.content.endswith("they are off for python files this session")


@pytest.mark.subprocess
def test_a_file_with_bytes_that_are_not_utf8_is_checked_all_the_same(workspace, isolated_home):
    (workspace / "app.py").write_bytes(b"# caf\xe9 in latin-1\nx = 1\n")
    result = checked_edit(workspace, isolated_home, pylsp_command())
    assert result.ok and (workspace / "app.py").read_bytes() == b"# caf\xe9 in latin-1\nx = 2\n"
    assert MADE not in result.content  # nothing new, and no failed check either


@pytest.mark.subprocess
def test_a_servers_flood_of_messages_with_terminal_controls_is_capped_and_shown_not_executed(workspace):
    table = parse_lsp_table(lsp_table(fake_command("loud"), timeout=HANG_GUARD_S), workspace / "c.toml")
    checker = Diagnostics(table, workspace, None)
    try:
        said = checker.after_change(workspace / "app.py", "app.py", "x = 1\n", "x = 2\n")
    finally:
        checker.close()
    assert said.startswith(
        f"\n{MADE}; new problems in app.py (python):\n  1:1 ␛]0;pwned␇bad <U+202E>name second line [␛[2J]"
    )
    assert said.endswith(f"… and {LOUD_COUNT - MAX_SHOWN} more (the first {MAX_SHOWN} are shown)")
    assert not any(c in said for c in "\x1b\x07\u202e")
