"""/cost, /tasks and /memory: what the session has spent (and the prices it came from: config.toml's
`[prices."MODEL"]`, else the genai-prices database; provider/prices.py), the background tasks the
model started (tools/background.py) and the helpers' changes held (slash/held.py), and long-term
memory (its words are memory/commands.py's)."""

from __future__ import annotations

from nanohermes import events as ev
from nanohermes.calls import one_line
from nanohermes.cost import cost_text, dollars
from nanohermes.errors import ToolError
from nanohermes.slash.held import VERBS, held_outcome, held_rows
from nanohermes.slash.outcome import Outcome, Text, said

TASKS_USAGE = "usage: /tasks | /tasks stop ID | /tasks diff|apply|drop NAME"
NO_TASKS = "background tasks are not available in this session"
COMMAND_CHARS = 60  # one row per task on an 80-column screen


def cost(runtime, arg: str = "") -> Outcome:
    from nanohermes.provider.prices import Prices

    config, status = runtime.config, runtime.agent.context_status()
    lines = [spent_line(status.spent), last_line(status.last_usage)]
    lines.append(price_line(config.model, Prices(config.prices).price(config.model)))
    return said(Text("\n".join(line for line in lines if line)))


def _cached(cached: int | None, prompt: int) -> str:
    return f" ({100 * cached / prompt:.0f}% cached)" if cached is not None and prompt else ""


def spent_line(spent: ev.Usage | None) -> str:
    """`this session: 3 requests · 12,400 in (80% cached) · 1,020 out · $0.0021`."""
    if spent is None or not spent.requests:
        return "this session: no requests yet"
    if not spent.reported:
        return f"this session: {spent.requests} requests; the server reported no token usage, so no cost"
    written = f" · {spent.cache_write_tokens:,} written to the cache" if spent.cache_write_tokens else ""
    return (
        f"this session: {spent.requests} request{'s' if spent.requests != 1 else ''} · {spent.prompt_tokens:,} in"
        f"{_cached(spent.cached_tokens, spent.prompt_tokens)}{written} · {spent.completion_tokens:,} out · "
        f"{cost_text(spent)}"
    )


def last_line(last: dict) -> str | None:
    """`last request (gpt-4o-mini): 2,000 in (75% cached) · 50 out · $0.000195`."""
    if not last or last.get("prompt_tokens") is None:
        return None
    prompt = last["prompt_tokens"]
    cost = "unknown" if last.get("cost_usd") is None else dollars(last["cost_usd"])
    return (
        f"last request ({last.get('model', '?')}): {prompt:,} in{_cached(last.get('cached_tokens'), prompt)} · "
        f"{last.get('completion_tokens') or 0:,} out · {cost}"
    )


def price_line(model: str, price) -> str:
    """The model's prices per million tokens (a provider/prices.py Price) and where they come from,
    or how to give one."""
    if price is None:
        return (
            f'{model}: no price known (not in the genai-prices database); set [prices."{model}"] '
            "input and output (dollars per million tokens) in config.toml to see dollars"
        )
    figures = [f"${price.input:g} input"]
    if price.cached_input is not None:
        figures.append(f"${price.cached_input:g} cached input")
    if price.cache_write is not None:
        figures.append(f"${price.cache_write:g} cache write")
    figures.append(f"${price.output:g} output")
    return f"{model}: {' · '.join(figures)} per million tokens ({price.source})"


def tasks(runtime, arg: str) -> Outcome:
    agent = runtime.agent
    verb, _, name = arg.strip().partition(" ")
    if verb in VERBS:
        return held_outcome(agent.helpers, verb, name.strip(), TASKS_USAGE)
    return said(Text(tasks_command(agent.tasks, arg, agent.helpers)))


def task_rows(tasks) -> list[str]:
    """One line per task: id, state, size of what it printed, the command."""
    from nanohermes.tools.background_tools import state_line

    rows = []
    for task in tasks.all():
        printed = f"out {task.stdout.total:,} B, err {task.stderr.total:,} B"
        rows.append(f"{task.id:<5} {state_line(task)} · {printed} · $ {one_line(task.command, COMMAND_CHARS)}")
    return rows or ["no background tasks (the model starts them with run_command background=true)"]


def tasks_command(tasks, arg: str, helpers=None) -> str:
    """Handle `/tasks ARG` for background tasks (the list also names the helpers' changes held); errors
    come back as text."""
    from nanohermes.tools.background_tools import state_line

    name, _, rest = arg.strip().partition(" ")
    if not name:
        return "\n".join([*(task_rows(tasks) if tasks is not None else [NO_TASKS]), *held_rows(helpers)])
    if tasks is None:
        return NO_TASKS
    if name != "stop" or not rest.strip():
        return TASKS_USAGE
    try:
        task = tasks.get(rest.strip())
    except ToolError as exc:
        return f"error: {exc}"
    if task.stop():
        return f"{task.id}: {state_line(task)}"
    return f"{task.id} had already finished: {state_line(task)}"


def memory(runtime, arg: str) -> Outcome:
    from nanohermes.memory.commands import memory_command

    return said(Text(memory_command(runtime.memory, arg)))
