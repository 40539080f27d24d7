"""`skillgrad ui`: a web dashboard over run directories and Sleep staging folders.

It reads only the files a run writes (events.jsonl first), so live runs, finished runs and runs
copied from another machine look the same; it launches, stops and adopts through the CLI and the
Sleep module, never through a second implementation.
"""
