"""Coaching: what the loop does about a model's replies beyond running them, as a strategy a turn holds.

The loop (loop/agent.py, loop/execute.py, loop/ending.py) calls its turn's coach at fixed points
(protocol.py): the note for a request, before a request, the request's options, after a reply,
before a call, after a reply's results, and a stopped run's last request. Each strategy owns its
per-turn state and its prompt texts, as aider has one coder per edit format:

- plain.py — every model: a reply cut mid call or cut for repeating itself sent back, a call written
  as text run or sent back, going round in circles answered, the Stop hook, the final answer.
- small.py — a small model (Qwen2.5-Coder-1.5B measured): on top of plain, the file asked for whole in
  a code block (wholefile.py), a change shown but not made, the user's check answered, resampling.
- spec.py — both: a task that says to make the tests pass has its tests as the spec.
- choice.py — which strategy a turn gets: the `coach` setting, and for `auto` what the model did.

The package imports nothing of the loop but turn.py and nudges.py; the loop imports choice.py.
"""
