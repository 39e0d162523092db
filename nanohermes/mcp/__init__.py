"""MCP: the tools of the Model Context Protocol servers configured in config.toml.

settings.py parses `[mcp.servers.NAME]`; hub.py connects to the servers (lazily, on the SDK's
asyncio client, in one background thread) and calls their tools with timeouts; toolcache.py
keeps each server's tool list between sessions, so the prompt can list the tools without
starting anything; tools.py is what the model sees: one line per tool (or per server) in the
prompt and one `mcp` tool that shows a tool's schema or calls it. Nothing here is imported
unless a server is configured (the SDK takes ~0.5 s to import).
"""
