"""Sleep: nightly consolidation of a coding agent's own sessions into gated skill and memory edits.

harvest/ (one parser per agent -> SessionDigest) -> mine -> night (replay + consolidate through the engine)
-> stage -> adopt / undo. A night is a run directory like any other.
"""
