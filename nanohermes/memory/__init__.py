"""Long-term memory, one concern in one folder: a few hundred short facts, preferences and
decisions kept across sessions.

- entry.py: what one memory is (Entry, its kinds, its size limit). Pure.
- ranking.py: tokens, stemming, BM25, near-duplicates. Pure.
- block.py: the prompt block that travels with a user message. Pure.
- candidates.py: the summary request's ask for memories and the parsing of its answer. Pure;
  the context engine uses it and nothing else of this package.
- store.py: memory.json (format, lock, atomic writes) and MemoryStore, the only I/O.
- entry_points.py: the two calls the rest of the agent makes, one line each on its side
  (block_for: a user message's block; save_candidates: a compaction's memories).

Nothing here imports the loop, the runtime, the UI or the tools; this file imports nothing, so
importing the pure modules never loads the store.
"""
