"""A scripted answerer for handoff mode, standing in for the user's agent in tests.

It reads `pending.json` as an agent would and writes `answers/<id>.md`: the student replies `DONE: ...`
once its skill says so or a worked example shows it (else a plain reply that fails the task's check); the teacher proposes that rule as
an edit; a mining prompt yields the session's request with that check; any other structured prompt gets the smallest object its JSON schema accepts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

RULE = "Start every reply with DONE: and then the report."


def minimal(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return minimal(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return minimal(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {k: minimal(v, defs) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])}
    if kind == "array":
        return [minimal(schema.get("items", {}), defs) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


def reply(item: dict[str, Any], prompt: str) -> str:
    schema = item.get("schema")
    if schema is None:
        # Like an agent, the student follows the convention once its skill states it or an earlier turn (a
        # worked example sent as chat turns) shows it.
        return "DONE: all jobs finished." if "DONE:" in prompt.rsplit("<user>", 1)[0] else "The job went fine."
    if "edits" in schema.get("properties", {}):
        return json.dumps({"edits": [{"op": "append", "content": RULE}]})
    if "tasks" in schema.get("properties", {}):  # mining: the session's request, checked as its replies were
        request = re.search(r"^User 1: (.+)$", prompt, re.MULTILINE)
        tasks = [{"intent": request.group(1).strip(), "checks": [{"op": "regex", "arg": "^DONE:"}],
                  "rubric": "A status reply that starts with DONE:."}] if request else []
        return json.dumps({"tasks": tasks})
    return json.dumps(minimal(schema, schema.get("$defs", {})))


def answer_all(handoff_dir: Path) -> int:
    """Answer every pending prompt; returns how many were answered."""
    pending = json.loads((handoff_dir / "pending.json").read_text(encoding="utf-8"))["pending"]
    for item in pending:
        prompt = Path(item["prompt_file"]).read_text(encoding="utf-8")
        answer = Path(item["answer_file"])
        answer.parent.mkdir(parents=True, exist_ok=True)
        answer.write_text(reply(item, prompt) + "\n", encoding="utf-8")
    return len(pending)
