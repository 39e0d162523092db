"""The REPL's advice when the endpoint is misconfigured or misbehaves, in a real pty played into
a terminal emulator (pyte): the start-up check names a wrong model and a web site where the
API should be (a message sent to it gets the same sentence, not retried); a reply cut mid-way
and retried is on screen once, under one retry line."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from nanohermes.config import Config
from nanohermes.ui.endpoint import EndpointCheck
from tests.support import raw_servers as raw
from tests.support.scripted_server import Error, serving, text, without_v1
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

SERVED = ["llama3.2:3b", "qwen2.5-coder:7b"]
CHECK_WAIT_S = 15  # the check's own requests time out after 5 s each


def checked(url: str, model: str, workspace) -> EndpointCheck:
    check = EndpointCheck(replace(Config(workspace=workspace), base_url=url, model=model))
    assert check.wait(CHECK_WAIT_S)
    return check


def test_the_start_check_names_a_model_the_server_does_not_list_with_the_served_ones_and_the_nearest(server, workspace):
    serving(server, SERVED)
    term = Terminal(server, workspace, "--model", "qwen2.5-coder")
    term.wait_screen("endpoint check:")
    term.wait_screen("/model NAME")
    screen = " ".join(line.strip() for line in term.display())
    assert (
        f"· endpoint check: The server at {server.url} does not list model 'qwen2.5-coder'. It serves: "
        "llama3.2:3b, qwen2.5-coder:7b. Did you mean 'qwen2.5-coder:7b'? Pick one with --model or "
        "NANOHERMES_MODEL (in the REPL: /model NAME)."
    ) in screen
    assert server.chat_requests() == []  # judged from the list: no request was spent on it
    assert term.exit() == 0


def test_a_server_listing_one_model_is_not_said_to_refuse_another_name(server, workspace):
    check = checked(server.url, "local", workspace)  # llama.cpp serves its one model under any name
    assert check.problem is None and check.models == ["test-model"]


def test_a_listed_model_and_an_ollama_name_without_its_latest_tag_pass_the_start_check(server, workspace):
    serving(server, ["qwen2.5-coder:latest", "llama3.2:3b"])
    assert checked(server.url, "qwen2.5-coder", workspace).problem is None
    assert checked(server.url, "llama3.2:3b", workspace).problem is None


def test_the_start_check_calls_a_web_site_a_web_page_and_names_the_v1_url(workspace):
    site = raw.RawServer(raw.http_server_page("404 File not found", "File not found"))
    url = site.url.removesuffix("/v1")
    try:
        problem = checked(url, "m", workspace).problem
    finally:
        site.close()
    assert problem == (
        f"The server at {url} answered HTTP 404 with an HTML page (text/html): 'Error response': this looks like "
        f"a web page, not an OpenAI-compatible API — did you mean --base-url {url}/v1?"
    )


def test_a_web_site_as_base_url_is_named_at_start_and_a_message_gets_the_same_sentence_without_retries(
    workspace, keep_screen
):
    # python3 -m http.server where the API should be: 404 to GET /models, 501 to the POST
    site = raw.RawServer(
        raw.http_server_page("501 Unsupported method", "Unsupported method ('POST')"),
        models=raw.http_server_page("404 File not found", "File not found"),
    )
    url = site.url.removesuffix("/v1")
    advice = f"this looks like a web page, not an OpenAI-compatible API — did you mean --base-url {url}/v1?"
    try:
        term = Terminal(SimpleNamespace(url=url), workspace)
        term.wait_screen("endpoint check:")
        term.wait_screen("/v1?")
        term.send("hi\r")
        term.expect("error: ")
        term.ready()
        term.settle()
        keep_screen("the /v1 advice", term)
        posts = site.posts()
    finally:
        site.close()
    screen = " ".join(line.strip() for line in term.display())
    assert f"· endpoint check: The server at {url} answered HTTP 404 with an HTML page" in screen
    assert f"error: The server at {url} answered HTTP 501 with an HTML page" in screen
    assert screen.count(advice) == 2 and "retry" not in screen and "<html" not in screen.lower()
    assert posts == ["POST /chat/completions HTTP/1.1"]  # one request, not retried
    assert term.exit() == 0


# A question's answer (an answer that shows a change would be nudged to make it: another request).
ANSWER = "The parser splits on spaces, like this:\n\n```python\ndef parse(text):\n    return text.split()\n```\n\nThat is all."


def test_a_reply_cut_mid_way_and_retried_is_on_screen_once_under_one_retry_line(workspace):
    cut_in_code = ANSWER.index("return") // 6  # pieces of 6 chars: the cut falls inside the code block
    site = raw.RawServer(
        [raw.chunked_reply(ANSWER, cut_after=cut_in_code), raw.chunked_reply(ANSWER)], models=raw.models_listing("m")
    )
    try:
        term = Terminal(site, workspace, "--model", "m", rows=40, cols=140)  # the retry line fits one row
        term.send("how does the parser work?\r")
        term.expect("session ")  # the status line after the turn
        term.ready()
        lines = term.scrollback()
    finally:
        site.close()
    said = "\n".join(lines)
    assert said.count("The parser splits on spaces") == 1 and said.count("That is all.") == 1
    assert said.count("text.split()") == 1 and said.count("def parse(text):") == 1
    retry = [line for line in lines if "retry" in line]
    assert len(retry) == 1 and "the connection dropped mid-reply" in retry[0]
    assert "starts again" not in said and "differs" not in said
    code = next(line for line in lines if "text.split()" in line)  # still code, its indent kept: not a paragraph
    assert code.index("return") == next(line for line in lines if "def parse" in line).index("def") + 4


def test_a_retry_before_any_text_is_one_line(server, workspace):
    server.add(Error(500, {"error": {"message": "loading model"}}), text("ready now"))
    term = Terminal(server, workspace)
    term.send("hi\r")
    term.expect("session ")
    term.ready()
    lines = [line for line in term.scrollback() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "hi" in line and "›" in line)
    between = lines[start + 1 : next(i for i, line in enumerate(lines) if "ready now" in line)]
    assert len(between) == 1 and "server error (500); retry 1/4" in between[0], between
    assert term.exit() == 0


def test_the_start_check_says_add_v1_for_a_json_404_and_a_message_gets_the_same_sentence(server, workspace):
    base = without_v1(server)
    term = Terminal(SimpleNamespace(url=base), workspace)
    term.wait_screen("add /v1")
    screen = " ".join(line.strip() for line in term.display())
    assert (
        f"· endpoint check: The server at {base} answered HTTP 404 (Not Found), but its API is at {base}/v1" in screen
    )
    term.send("hi\r")
    term.wait_screen("error:")
    assert "is not served" not in " ".join(term.display()) and server.chat_requests() == []
    assert term.exit() == 0
