"""Thin shells that let people use skillgrad from inside their coding agent: the Codex skill installer and the
MCP server. No logic lives here: each request becomes a `skillgrad` CLI call (or a read-only engine call)."""
