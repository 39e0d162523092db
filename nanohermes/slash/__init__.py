"""Slash commands, one table for the REPL and an editor (table.py); what a command gives back is
plain data (outcome.py) each front end renders its own way. The commands both run: conversation.py
(/reset, /session, /compact, /context), status.py (/cost, /tasks, /memory; held.py: /tasks' helpers' changes),
changes.py (/diff, /undo)."""
