"""NanoHermes: a terminal coding agent that keeps the model's context small, valid and high-signal."""

__version__ = "0.1.0"
