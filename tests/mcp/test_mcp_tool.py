"""The `mcp` tool against real MCP servers (tests/support/mcp_demo_server.py, written with the
SDK's MCPServer) over stdio and streamable HTTP, through the one dispatch every tool uses.
Each server is started once per module; the tests that stop one come last."""

import json
import signal
import sys
import threading
import time

import pytest

from nanohermes.mcp.hub import FAILED, NOT_STARTED, RUNNING, McpHub
from nanohermes.mcp.settings import McpServerSettings
from nanohermes.mcp.tool import make_mcp_tool
from nanohermes.tools import ToolContext, dispatch
from tests.support.mcp_servers import demo_settings, start_http_demo
from tests.support.processes import alive
from tests.support.timing import GETS_GOING_S, HANG_GUARD_S, NEVER_S

pytestmark = pytest.mark.subprocess

CALL_TIMEOUT_S = GETS_GOING_S  # the servers' calls; a quick one answers far within it on a loaded laptop


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("mcp_home")


@pytest.fixture(scope="module")
def hub(home):
    hub = McpHub((demo_settings(timeout=CALL_TIMEOUT_S), demo_settings("other")), home, home)
    yield hub
    hub.close()


@pytest.fixture(scope="module")
def http_hub(home):
    proc, url = start_http_demo()
    hub = McpHub((McpServerSettings("web", url=url, timeout=CALL_TIMEOUT_S),), home, home)
    yield hub, proc
    hub.close()
    proc.kill()
    proc.wait()


def call(hub, name: str, arguments=None, max_output: int = 20_000):
    tool = make_mcp_tool(hub)
    args = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return dispatch(
        ToolContext(workspace=hub.workspace, home=hub.workspace, max_output=max_output),
        {"mcp": tool},
        "mcp",
        json.dumps(args),
    )


def test_a_server_starts_on_first_use_and_a_call_returns_the_tools_text_under_its_name(hub):
    assert hub.status("demo").state == NOT_STARTED
    result = call(hub, "demo.echo", {"text": "hi", "times": 2})
    assert result.ok and result.content == "mcp demo.echo:\nhi hi" and result.facts.found == "demo.echo"
    assert hub.status("demo").state == RUNNING and hub.status("other").state == NOT_STARTED


def test_a_server_name_alone_lists_its_tools_with_their_parameters(hub):
    result = call(hub, "demo")
    assert result.ok and result.content.splitlines()[0].startswith("mcp server demo (stdio: ")
    assert "- echo(text, times?): Echo the text back, times times." in result.content
    assert result.content.splitlines()[-1] == 'Call one with mcp(name="demo.TOOL", arguments={...}).'


def test_arguments_that_do_not_fit_are_not_sent_and_the_result_is_the_tools_parameters(hub):
    result = call(hub, "demo.add", {"a": "one"})
    assert not result.ok
    assert result.content.splitlines() == [
        "error: demo.add was not called: 'b' is a required property; a: 'one' is not of type 'integer'",
        "demo.add: Add two integers.",
        "arguments (a JSON object):",
        "  a (integer, required)",
        "  b (integer, required)",
    ]


def test_numbers_sent_as_strings_are_converted_and_a_tool_name_only_one_server_has_is_found(hub):
    assert call(hub, "demo.add", {"a": "2", "b": 3}).content == "mcp demo.add:\n5"
    assert call(hub, "add", {"a": 1, "b": 1}).content == "mcp demo.add:\n2"


def test_nan_and_infinity_are_not_sent(hub):
    for seconds in (float("nan"), "inf"):  # json.dumps writes NaN, as a model's JSON may
        result = call(hub, "demo.slow", {"seconds": seconds})
        assert not result.ok and "demo.slow was not called: numbers must be finite" in result.content


def test_unknown_servers_and_tools_are_errors_that_name_what_exists(hub):
    assert "no MCP server 'nope'; the servers are demo, other." in call(hub, "nope.x").content
    missing = call(hub, "demo.subtract", {})
    assert not missing.ok and "MCP server demo has no tool 'subtract'; its tools: add, echo, fail" in missing.content


def test_an_error_from_the_tool_is_a_failed_result_with_its_parameters(hub):
    result = call(hub, "demo.fail", {"reason": "disk full"})
    assert not result.ok and result.content.startswith(
        "error: mcp demo.fail:\nError executing tool fail: failed on purpose: disk full"
    )
    assert "  reason (string, required)" in result.content


def test_images_are_named_never_dumped_and_terminal_controls_stay_data(hub):
    assert call(hub, "demo.picture").content == "mcp demo.picture:\n[image image/png, 72 bytes: not shown]"
    tricky = call(hub, "demo.tricky").content  # the model may read it; the UI shows control characters as symbols
    assert tricky == "mcp demo.tricky:\n\x1b[31mred text\x1b[0m from the server"


def test_a_big_result_is_clamped_like_any_tool_result_and_the_whole_is_kept_for_recall(hub):
    result = call(hub, "demo.big", {"size": 5000}, max_output=1000)
    kept = 1000 - len("mcp demo.big:\n")
    assert result.content == f"mcp demo.big:\n{'y' * kept}\n… output truncated ({5000 - kept} bytes omitted)"
    assert result.full == "mcp demo.big:\n" + "y" * 5000 and result.facts.cut_bytes == 5000 - kept


def test_a_slow_call_is_a_timeout_error_and_the_server_keeps_answering(hub):
    slow = call(hub, "demo.slow", {"seconds": NEVER_S})
    assert (
        not slow.ok
        and slow.content == f"error: demo.slow: no answer within {CALL_TIMEOUT_S:g} s (the call was cancelled)"
    )
    assert call(hub, "demo.add", {"a": 1, "b": 2}).ok


def test_ctrl_c_while_a_call_waits_stops_the_wait_at_once_and_the_server_keeps_answering(hub):
    sent_at = []

    def press_ctrl_c():
        sent_at.append(time.monotonic())
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Timer(0.3, press_ctrl_c).start()
    with pytest.raises(KeyboardInterrupt):
        hub.call("demo", "slow", {"seconds": NEVER_S})
    assert time.monotonic() - sent_at[0] < CALL_TIMEOUT_S  # neither the call nor its timeout was waited for
    assert call(hub, "demo.echo", {"text": "still"}).content == "mcp demo.echo:\nstill"


# The first start writes its pid and never answers (until its stdin closes); the next runs the demo server.
HANG_ONCE = """import os, runpy, sys
marker, server = sys.argv[1:3]
if not os.path.exists(marker):
    open(marker, "w").write(str(os.getpid()))
    sys.stdin.read()
    sys.exit(0)
sys.argv = [server]
runpy.run_path(server, run_name="__main__")
"""


def test_ctrl_c_while_a_server_starts_stops_that_start_and_the_next_use_starts_it_again(home, tmp_path):
    from tests.support.mcp_servers import DEMO_SERVER

    marker = tmp_path / "first.pid"
    settings = McpServerSettings("late", command=sys.executable, args=("-c", HANG_ONCE, str(marker), DEMO_SERVER))
    hub = McpHub((settings,), home, home)
    try:

        def press_ctrl_c_once_it_hangs():
            while not marker.exists() or not marker.read_text():
                time.sleep(0.02)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

        threading.Thread(target=press_ctrl_c_once_it_hangs, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            hub.tools("late")
        first = int(marker.read_text())
        deadline = time.monotonic() + HANG_GUARD_S
        while alive(first):  # the half-started server is stopped, not left behind
            assert time.monotonic() < deadline, "the interrupted server kept running"
            time.sleep(0.05)
        assert call(hub, "late.add", {"a": 1, "b": 2}).content == "mcp late.add:\n3"  # not "failed, retry in 30 s"
    finally:
        hub.close()


def test_a_call_over_streamable_http_works_like_one_over_stdio(http_hub):
    hub, _ = http_hub
    assert call(hub, "web.add", {"a": 20, "b": 22}).content == "mcp web.add:\n42"
    assert not call(hub, "web.slow", {"seconds": NEVER_S}).ok and call(hub, "web.echo", {"text": "still here"}).ok


def test_an_http_server_that_went_away_is_a_clear_error(http_hub):
    hub, proc = http_hub
    proc.kill()
    proc.wait()
    first, second = call(hub, "web.echo", {"text": "x"}), call(hub, "web.echo", {"text": "x"})
    assert not first.ok and first.content.startswith("error: MCP server web is not available: ")
    assert second.content.endswith(f"could not connect to {hub.servers['web'].url}")


def test_a_server_that_dies_mid_call_is_a_clear_error_and_is_restarted_at_its_next_use(hub):
    died = call(hub, "demo.die")
    assert not died.ok and died.content.startswith("error: MCP server demo is not available: it closed the connection")
    assert "demo server: dying on purpose" in died.content  # the last lines of its stderr say why
    assert hub.status("demo").state == FAILED
    assert call(hub, "demo.add", {"a": 1, "b": 2}).content == "mcp demo.add:\n3"


@pytest.mark.parametrize(
    "settings, says",
    [
        (McpServerSettings("gone", command="no-such-mcp-server-x"), "its command 'no-such-mcp-server-x' was not found"),
        (
            McpServerSettings(
                "mute", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"), startup_timeout=0.5
            ),
            "it did not start and list its tools within 0.5 s",
        ),
        (
            McpServerSettings("crash", command=sys.executable, args=("-c", "import sys; sys.exit('no config file')")),
            "it exited or closed the connection before answering; its stderr ended with: no config file",
        ),
        (
            McpServerSettings(
                "tok", url="http://127.0.0.1:9/mcp", headers=(("Authorization", "Bearer ${NH_TEST_UNSET_TOKEN}"),)
            ),
            "${NH_TEST_UNSET_TOKEN} in its headers is not set in the environment",
        ),
    ],
)
def test_a_server_that_cannot_start_is_a_clear_error_and_is_not_retried_at_once(settings, says, home):
    hub = McpHub((settings,), home, home)
    try:
        first, again = call(hub, f"{settings.name}.x", {}), call(hub, f"{settings.name}.x", {})
    finally:
        hub.close()
    assert not first.ok and first.content.startswith(f"error: MCP server {settings.name} is not available: ")
    assert says in first.content and again.content == first.content
