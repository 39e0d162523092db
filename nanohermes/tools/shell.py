"""run_command: `bash -c` in the workspace; both pipes drained to the end, head and tail kept.

A child must never block on a full pipe, so both streams are read as they come (one
selector loop, no threads) and bytes past the capture are counted and dropped. Errors are
at the end of a log, so each stream keeps its head and its tail; the note in between says
how much was not shown. The command runs in its own process group, which ends with it: on
the timeout (TERM, then KILL), on Ctrl-C or SIGTERM (KILL), and when the shell exits (what it
put in the background gets TERM, then KILL). Stopped by Ctrl-C, it keeps what it printed: the
model reads it as the call's result (errors.ToolInterrupted), the user sees its last lines.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolError, ToolInterrupted
from nanohermes.sandbox.notes import blocked
from nanohermes.sandbox.policy import Policy
from nanohermes.text import cut_utf8, head_tail_text, split_budget, start_utf8
from nanohermes.tools import ToolContext, ToolOutput, tool
from nanohermes.tools.background_tools import start_background
from nanohermes.tools.processes import KILL_GRACE, POLL_SECONDS, READ_CHUNK, SHELL, end_child, signal_group, start_child

# A test runner that found nothing to run says so in one of these (tools/steering.py no_tests_note).
NO_TESTS_SEEN = ("Ran 0 tests", "collected 0 items", "no tests ran")

CAPTURE_BYTES = 262_144  # per stream: 256 KB of log is far more than a model can use
HEAD_BYTES = CAPTURE_BYTES // 2  # the start says what ran ...
TAIL_BYTES = CAPTURE_BYTES - HEAD_BYTES  # ... the end says how it failed
BACKGROUND_GRACE = 0.5  # after the shell exits, how long background children may keep the pipes open
MAX_MODEL_TIMEOUT_S = 600  # a timeout the model asks for is capped here (or at the configured default, if higher)
COMMAND_ECHO_CHARS = 500  # a heredoc writing a file must not fill the header
NOTE_RESERVE = 80  # bytes for one "… stdout truncated (N bytes not shown)" note and its newlines
LABEL_RESERVE = 2 * NOTE_RESERVE + 40  # both notes, both labels
TAIL_KEEP_BYTES = 4_096  # the end of the output as it arrived: a few screen lines, even long ones
TAIL_LINES = 5  # the last lines a finished command reports for the user (ResultFacts.tail)
PROGRESS_LINES = 2  # what a status line shows of a running command
PROGRESS_INTERVAL_S = 0.25  # a status redrawn four times a second reads as live; more is wasted work


@dataclass
class _Capture:
    """First HEAD_BYTES and last TAIL_BYTES of a stream, and how many bytes it had in all."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - TAIL_BYTES)]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)


@dataclass
class _Outcome:
    code: int
    stdout: _Capture
    stderr: _Capture
    timed_out: bool = False
    background: bool = False  # background children held the pipes open after the shell exited
    interrupted_after: float | None = None  # seconds it ran before Ctrl-C stopped it
    refused_hosts: list[str] = field(default_factory=list)  # what the sandbox's proxy refused (filled as it runs)


def new_outcome() -> _Outcome:
    """An empty outcome for run_shell to fill: what it holds survives a Ctrl-C."""
    return _Outcome(0, _Capture(), _Capture())


@dataclass
class _Tail:
    """stdout and stderr interleaved as they arrived, like a terminal shows them: the last
    TAIL_KEEP_BYTES and the number of lines in all. Tells `report` the latest lines, throttled."""

    report: Callable[[str], None] | None = None
    data: bytearray = field(default_factory=bytearray)
    total: int = 0
    newlines: int = 0
    next_report: float = 0.0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.newlines += data.count(b"\n")
        self.data += data
        del self.data[: max(0, len(self.data) - TAIL_KEEP_BYTES)]
        now = time.monotonic()
        if self.report is not None and now >= self.next_report:
            self.next_report = now + PROGRESS_INTERVAL_S
            self.report("\n".join(self.lines(PROGRESS_LINES)))

    def lines(self, count: int, blank: bool = False) -> list[str]:
        """The last `count` non-empty lines; a carriage return overwrites a line (progress bars).
        `blank`: the empty lines between them kept too, as a terminal shows them."""
        data = bytes(self.data)
        if self.total > len(data):  # the kept bytes start inside a line: drop that part
            data = data[data.find(b"\n") + 1 :] if b"\n" in data else data
        text = data.decode("utf-8", "replace")
        shown = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n")]
        if not blank:
            return [line for line in shown if line.strip()][-count:]
        while shown and not shown[-1].strip():
            shown.pop()
        shown = shown[-count:]
        while shown and not shown[0].strip():
            shown.pop(0)
        return shown

    @property
    def line_count(self) -> int:
        return self.newlines + (1 if self.data and not self.data.endswith(b"\n") else 0)


def _preview(ctx: ToolContext, command: str, timeout: float | None = None) -> str:
    return f"$ {command}" + (f"\n(timeout {timeout:g} s)" if timeout else "")


def _preview_call(ctx: ToolContext, command: str, timeout: float | None = None, **how) -> str:
    """The command as it will run; `how`: run_command's other arguments (background, unsandboxed, reason)."""
    shown = _preview(ctx, command, timeout) + ("\n(in the background)" if how.get("background") else "")
    if how.get("unsandboxed"):
        shown += f"\n(outside the sandbox: {str(how.get('reason') or '').strip() or 'no reason given'})"
    return shown


@tool(
    params={
        "command": "",
        "timeout": "seconds",
        "background": "return a task id at once",
        "unsandboxed": "to write outside the workspace or use the network (asks)",
        "reason": "",
    },
    approval=True,
    preview=_preview_call,
    lean_drops=frozenset({"background"}),
)  # lean: no task tools to read it
def run_command(
    ctx: ToolContext,
    command: str,
    timeout: float | None = None,
    background: bool = False,
    unsandboxed: bool = False,
    reason: str = "",
) -> ToolOutput:
    """Run a bash command in the sandbox."""
    if not command.strip():
        raise ToolError("command is empty")
    sandbox = None if unsandboxed else ctx.sandbox  # outside it only as the user approved (loop/approvals.py)
    if background:  # tools/background_tools.py; no timeout unless one is asked for (a server runs on)
        return ToolOutput(start_background(ctx, command, timeout, sandbox))
    limit = ctx.command_timeout if timeout is None else timeout
    if limit <= 0:
        raise ToolError("timeout must be a positive number of seconds")
    limit = min(limit, max(ctx.command_timeout, MAX_MODEL_TIMEOUT_S))  # the model may not hang the session
    return run_foreground(ctx, command, limit, sandbox)


# Plan mode runs it when it stays in the sandbox (loop/approvals.py checks the sandbox is on; the
# Agent makes it read-only there: sandbox/actors.py).
run_command = replace(run_command, plan_allowed=lambda args: not args.get("unsandboxed"))


def run_foreground(
    ctx: ToolContext, command: str, limit: float, sandbox: Policy | None, tail_lines: int = TAIL_LINES
) -> ToolOutput:
    """run_command's run to the end, and the REPL's `!command` (the user's own, asking nothing):
    the output within ctx.max_output with what the sandbox blocked or where an error was raised,
    and the facts, its last `tail_lines` lines among them (more than TAIL_LINES: with the blank
    lines between them, as on a terminal). ToolInterrupted on Ctrl-C, with what it had printed."""
    blank = tail_lines > TAIL_LINES
    tail = _Tail(ctx.report)
    outcome = new_outcome()
    started = time.monotonic()
    try:
        lent = sandbox is None and ctx.editor is not None  # unconfined anyway: an editor's terminal may run it
        if not (lent and ctx.editor.run_shell(command, ctx.workspace, limit, tail.add, outcome)):
            run_shell(command, ctx.workspace, limit, on_output=tail.add, sandbox=sandbox, outcome=outcome)
    except KeyboardInterrupt:  # keep what it printed: the model and the user see it
        outcome.interrupted_after = time.monotonic() - started
        text = format_outcome(command, outcome, limit, ctx.max_output)
        shown = tail.lines(tail_lines, blank)
        facts = ResultFacts(interrupted=True, tail="\n".join(shown), output_lines=tail.line_count)
        raise ToolInterrupted(text, facts=facts) from None
    shown = tail.lines(tail_lines, blank)
    found = (
        None
        if sandbox is None
        else blocked(outcome.code, _captured(outcome), sandbox, ctx.workspace, outcome.refused_hosts)
    )
    facts = ResultFacts(
        exit_code=outcome.code,
        timed_out=outcome.timed_out,
        tail="\n".join(shown),
        output_lines=tail.line_count,
        blocked=found.shown if found else "",
    )
    text = format_outcome(command, outcome, limit, ctx.max_output)
    if found is not None:
        text += "\n" + found.note  # what the sandbox blocked: ask, don't retry
    elif outcome.code > 0 and not outcome.timed_out:
        from nanohermes.tools.steering import raised_in_note, silent_command_note_for  # only when needed

        if not (outcome.stdout.total or outcome.stderr.total):
            text += "\n" + silent_command_note_for(ctx, command)
        elif note := raised_in_note(text, ctx.workspace):
            text += "\n" + note
    if not outcome.timed_out and any(seen in text for seen in NO_TESTS_SEEN):
        from nanohermes.tools.steering import no_tests_note

        if note := no_tests_note(text):
            text += "\n" + note
    return ToolOutput(text, facts, _streams(outcome, ctx.max_output))


def _streams(outcome: _Outcome, max_output: int) -> tuple[str, str]:
    """stdout and stderr apart, each within max_output bytes (cut as the result's are, the cut said)."""
    return tuple(
        _render(capture, name, max_output) if capture.total else ""
        for name, capture in (
            ("stdout", outcome.stdout),
            ("stderr", outcome.stderr),
        )
    )


def run_shell(
    command: str,
    cwd,
    timeout: float,
    on_output: Callable[[bytes], None] | None = None,
    sandbox: Policy | None = None,
    outcome: _Outcome | None = None,
) -> _Outcome:
    """Run to the end or the timeout, inside `sandbox` (None: unconfined); `on_output` sees every
    chunk of stdout and stderr as it arrives. `outcome` (new_outcome()): filled as the output comes,
    so a caller keeps what was captured when Ctrl-C stops the command."""
    outcome = outcome if outcome is not None else new_outcome()
    deadline = time.monotonic() + timeout
    proc = None
    try:
        proc = start_child([*SHELL, command], cwd, sandbox)
        proxy = getattr(proc.launch, "proxy", None)
        if proxy is not None:
            outcome.refused_hosts = proxy.refused  # the proxy's own list: what it refuses later is seen
        term_sent = _drain(proc, outcome, deadline, on_output)
        if term_sent is None:
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:  # it closed its pipes but kept running
                term_sent = _terminate(proc, outcome)
        if term_sent is not None:
            _kill_after_grace(proc, term_sent)
    except BaseException:  # Ctrl-C or SIGTERM mid-run: what it wrote before it was stopped is kept too
        if proc is not None and proc.stdout is not None:
            if proc.poll() is None:
                signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
            _take_the_rest(proc, outcome, on_output)  # before end_child closes the pipes
        raise
    finally:
        if proc is not None:  # None: it never started (start_child ended it, or Popen failed)
            end_child(proc)  # what the shell put in the background ends with it
    outcome.code = proc.returncode
    return outcome


def _take_the_rest(proc: subprocess.Popen, outcome: _Outcome, on_output: Callable[[bytes], None] | None) -> None:
    """What is left in the pipes of a stopped command, read without waiting (a process that left
    the group may still hold them open); `on_output` sees it too, so the user's tail ends where the
    model's output does."""
    for pipe, capture in ((proc.stdout, outcome.stdout), (proc.stderr, outcome.stderr)):
        try:
            os.set_blocking(pipe.fileno(), False)
            while data := os.read(pipe.fileno(), READ_CHUNK):
                capture.add(data)
                if on_output is not None:
                    on_output(data)
        except (OSError, ValueError):  # nothing more now (EAGAIN), or the pipe is closed
            continue


def _drain(
    proc: subprocess.Popen, outcome: _Outcome, deadline: float, on_output: Callable[[bytes], None] | None
) -> float | None:
    """Read both pipes to EOF; on the deadline TERM the group. Returns when TERM was sent."""
    captures = {proc.stdout.fileno(): outcome.stdout, proc.stderr.fileno(): outcome.stderr}
    term_sent: float | None = None
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        for pipe in (proc.stdout, proc.stderr):
            selector.register(pipe, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > BACKGROUND_GRACE:
                outcome.background = term_sent is None
                break
            if term_sent is None and now >= deadline:
                term_sent = _terminate(proc, outcome)
            elif term_sent is not None and now - term_sent >= KILL_GRACE:
                signal_group(proc.pid, signal.SIGKILL)  # something ignores TERM
            for key, _ in selector.select(timeout=max(min(POLL_SECONDS, deadline - now), 0.01)):
                data = os.read(key.fd, READ_CHUNK)
                if data:
                    try:
                        captures[key.fd].add(data)
                    finally:  # a Ctrl-C between the two: the user's tail still gets what the model's result has
                        if on_output is not None:
                            on_output(data)
                else:
                    selector.unregister(key.fileobj)
    return term_sent


def _terminate(proc: subprocess.Popen, outcome: _Outcome) -> float:
    outcome.timed_out = True
    signal_group(proc.pid, signal.SIGTERM)
    return time.monotonic()


def _kill_after_grace(proc: subprocess.Popen, term_sent: float) -> None:
    """Whatever survived SIGTERM for KILL_GRACE seconds gets SIGKILL, the whole group."""
    try:
        proc.wait(timeout=max(term_sent + KILL_GRACE - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        pass
    signal_group(proc.pid, signal.SIGKILL)  # also children still alive after the shell died
    proc.wait()


# ---------------------------------------------------------------- what the model sees


def format_outcome(command: str, outcome: _Outcome, timeout: float, max_output: int) -> str:
    """Header, then each stream's head and tail, all within max_output bytes."""
    parts = [_header(command, outcome, timeout)]
    fixed = len(parts[0].encode("utf-8")) + LABEL_RESERVE
    budget_out, budget_err = split_budget(max(max_output - fixed, 0), outcome.stdout.total, outcome.stderr.total)
    for name, capture, budget in (("stdout", outcome.stdout, budget_out), ("stderr", outcome.stderr, budget_err)):
        if capture.total:
            parts += [f"[{name}]", _render(capture, name, budget)]
    if not outcome.stdout.total and not outcome.stderr.total:
        parts.append("(no output)")
    if outcome.background:
        parts.append(
            "note: background processes still held the output open when the command ended; they were ended "
            "with it (a command's processes do not outlive it), and their later output was not captured"
        )
    return "\n".join(parts)


def _header(command: str, outcome: _Outcome, timeout: float) -> str:
    if outcome.interrupted_after is not None:
        return (
            f"$ {head_tail_text(command, COMMAND_ECHO_CHARS)}\ninterrupted by the user after "
            f"{outcome.interrupted_after:.1f} s, process group killed; what it printed until then:"
        )
    status = f"exit code {outcome.code}"
    if outcome.code < 0:
        try:
            status += f" ({signal.Signals(-outcome.code).name})"
        except ValueError:
            pass
    if outcome.timed_out:
        status += f"; timed out after {timeout:g} s, process group killed"
    return f"$ {head_tail_text(command, COMMAND_ECHO_CHARS)}\n{status}"


def _render(capture: _Capture, name: str, budget: int) -> str:
    """The stream within budget bytes: head and tail cut on UTF-8 boundaries, the note between."""
    if capture.dropped == 0 and capture.total <= budget:
        return _decode(capture.head + capture.tail).removesuffix("\n")  # the join adds it back
    if capture.dropped == 0:
        head_src = tail_src = bytes(capture.head + capture.tail)  # contiguous: cut one buffer
    else:
        head_src, tail_src = bytes(capture.head), bytes(capture.tail)
    keep = max(budget, 0)  # the note's bytes are in LABEL_RESERVE already
    tail_n = min(len(tail_src), keep - keep * 2 // 5)  # the tail gets more: errors are at the end
    head_n = min(len(head_src), keep - tail_n)
    head = head_src[: cut_utf8(head_src, head_n)]
    tail = tail_src[start_utf8(tail_src, len(tail_src) - tail_n) :]
    omitted = capture.total - len(head) - len(tail)
    head_text, tail_text = _decode(head), _decode(tail)
    gap = "" if head_text.endswith("\n") else "\n"
    return f"{head_text}{gap}… {name} truncated ({omitted} bytes not shown)\n{tail_text}".removesuffix("\n")


def _captured(outcome: _Outcome) -> str:
    """Both streams as far as they were kept, for what they say went wrong."""
    return "\n".join(_decode(c.head + c.tail) for c in (outcome.stderr, outcome.stdout))


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")
