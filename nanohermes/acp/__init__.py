"""`nanohermes acp`: NanoHermes inside editors (Zed, JetBrains, Neovim) over the Agent Client
Protocol, on the `agent-client-protocol` package.

relay.py is `nanohermes acp` itself: each editor session in a process of its own (forked.py
forks them warm), the protocol's messages routed between the editor and them, so two sessions'
turns run at once. In each, main.py wires the process (the protocol's streams on a background
asyncio thread, turns on the main thread); runner.py runs the turns and turns a cancel into
Ctrl-C; agent.py answers the protocol's requests; session.py is one editor session (its runtime,
updates, approvals); updates.py maps the loop's events and a saved history onto session updates;
commands.py the slash commands an editor offers; editor_files.py the editor's fs for the tools.
"""
