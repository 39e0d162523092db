"""A server's `sampling/createMessage`: the session's model answers it, once the user said yes.
Pure: the hub asks and calls the model; this module shapes the question, the request and the
outcome.

The server's text is untrusted: its messages and its system prompt go into a request of their
own (never the session's system prompt or history), with no tools, and its token budget is
capped. Only text is sent; an image or audio block becomes a note saying it was left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.mcp.asking import ACCEPT, Asker, Field, Question, Reply
from nanohermes.mcp.listing import one_line

MAX_SAMPLING_TOKENS = 1024  # a server asks for a short answer; it never spends the session's budget
PREVIEW_CHARS = 300  # the start of the server's request, as the user sees it before saying yes
APPROVE = "answer"  # the question's one yes/no field
USER_REJECTED = -1  # the spec's code for "the user rejected the sampling request"
INTERNAL_ERROR = -32603
DECLINED = "the user declined the sampling request"
NO_MODEL = "this session has no model to answer a sampling request"

# The session's model, tools off: (messages, max_tokens) -> (text, model name, stop reason).
Sampler = Callable[[list[dict], int], tuple[str, str, str]]


@dataclass(frozen=True)
class SamplingRequest:
    question: Question  # what the user is asked first
    messages: list[dict]  # the request the model gets (OpenAI-shaped)
    max_tokens: int


@dataclass(frozen=True)
class Outcome:
    text: str = ""
    model: str = ""
    stop_reason: str = "endTurn"
    error: str = ""  # set: the server gets an error with this message and `code`
    code: int = 0


def request_for(server: str, params) -> SamplingRequest:
    """The question and the model's request for a server's CreateMessageRequestParams."""
    messages = []
    if system := (getattr(params, "system_prompt", None) or "").strip():
        messages.append({"role": "system", "content": system})
    for message in params.messages or []:
        role = "assistant" if getattr(message, "role", "") == "assistant" else "user"
        blocks = message.content if isinstance(message.content, list) else [message.content]
        messages.append({"role": role, "content": "\n".join(block_text(b) for b in blocks)})
    max_tokens = max(1, min(int(params.max_tokens or MAX_SAMPLING_TOKENS), MAX_SAMPLING_TOKENS))
    text = " · ".join(m["content"] for m in messages if m["role"] != "assistant")
    start = one_line(text, PREVIEW_CHARS)
    question = Question(
        one_line(server, 64),
        f"may this session's model answer its request (tools off, at most {max_tokens} tokens)? It asks: {start}",
        (Field(APPROVE, "boolean", description="let the model answer it", required=True),),
    )
    return SamplingRequest(question, messages, max_tokens)


def block_text(block) -> str:
    """A content block's text; anything else is a note (only text is sent to the model)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(getattr(block, "text", ""))
    return f"[{kind or 'unknown'} content left out: this client sends the model text only]"


def approved(reply: Reply) -> bool:
    return reply.action == ACCEPT and (reply.content or {}).get(APPROVE) is True


def answer(request: SamplingRequest, asker: Asker, sample: Sampler) -> Outcome:
    """Ask the user, then the model (on the thread that may ask and call the model). A failed
    model call is an error for the server, never a crash; Ctrl-C goes up."""
    if not approved(asker(request.question)):
        return Outcome(error=DECLINED, code=USER_REJECTED)
    try:
        text, model, stop = sample(request.messages, request.max_tokens)
    except Exception as exc:  # the provider's failure, in words, for the server
        return Outcome(error=f"the model call failed: {one_line(str(exc), 300)}", code=INTERNAL_ERROR)
    return Outcome(text, model, "maxTokens" if stop == "length" else "endTurn")
