"""Parts of benchmarks/head_to_head.py: the served model and its request log, the peers' venv, one runner per
system, held-out scoring and the table."""
