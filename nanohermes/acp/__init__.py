"""`nanohermes acp`: NanoHermes inside editors (Zed, JetBrains, Neovim) over the Agent Client
Protocol, on the `agent-client-protocol` package.

main.py wires the process (the protocol's streams on a background asyncio thread, turns on
the main thread); runner.py runs the turns and turns a cancel into Ctrl-C; agent.py answers
the protocol's requests; session.py is one editor session (its runtime, updates, approvals);
updates.py maps the loop's events and a saved history onto session updates.
"""
