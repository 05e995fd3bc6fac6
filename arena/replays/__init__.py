"""Replays: the audit, the terminal and HTML viewers and the model they share (typed records
from referee.replays)."""
