"""The memory target (CLAUDE.md's learned block) through a whole night: the student is the real embedded model
and scores are the tasks' real rule checks; the teacher is scripted (answered through handoff prompt files).
A memory proposal is staged only when its block wins the held-out gate, and the staged CLAUDE.md keeps every
hand-written byte outside the block; nothing live changes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from handoff_answerer import minimal

from skillgrad.errors import AnswersNeeded
from skillgrad.skill.learned import extract_learned
from skillgrad.sleep.night import run_night
from skillgrad.sleep.settings import SleepSettings

# The skill's block already holds a line, so the skill run's reflect prompt (which shows the trained text) is not the
# memory run's: the scripted teacher answers by phase, and one prompt is answered once for the night (the student
# reads no block markers since 4bee5cc, so the two runs' replies, hence their prompts, can coincide). The embedded
# student's held-out replies move with any system text: with this line, as with none before 4bee5cc, the memory's
# worked example wins and the skill's useless edit does not (other lines tried flipped one or the other).
HAND_SKILL = (b"# Status replies\n\nKeep replies short.\n\n<!-- SKILLGRAD:LEARNED START -->\n"
              b"## Learned preferences and examples\n- Say when it finished.\n<!-- SKILLGRAD:LEARNED END -->\n")
HAND_MEMORY = b"# Project notes\n\nWe deploy on Fridays. caf\xc3\xa9\n\n## Owners\n\n- ops: Dana\n"
USELESS = "Be friendly and polite to the team."
EXAMPLE = "Give me the status of job 7. A: DONE: job 7 finished."  # a worked example (Q: added by the env)


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "p"
    project.mkdir()
    (project / "SKILL.md").write_bytes(HAND_SKILL)
    (project / "CLAUDE.md").write_bytes(HAND_MEMORY)
    tasks = project / "tasks.jsonl"
    splits = ["train"] * 4 + ["val"] * 4
    held_out = ["backup job", "deploy job", "export job"]  # similar work, not paraphrases (similarity 0.5 < 0.7)
    rows = [(f"t{i}", f"Give me the status of job {i}.", s) for i, s in enumerate(splits)]
    rows += [(f"h{i}", f"Give me the status of the {name}.", "test") for i, name in enumerate(held_out)]
    tasks.write_text("".join(json.dumps({
        "task_id": tid, "task": text, "split": s,
        "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^DONE:"}]}}) + "\n"
        for tid, text, s in rows), encoding="utf-8")
    return project, tasks


def _answer(night: Path, memory_edit: str) -> int:
    """The scripted teacher: a useless edit for the skill, `memory_edit` once the memory run is under way."""
    pending = json.loads((night / "handoff" / "pending.json").read_text(encoding="utf-8"))["pending"]
    for item in pending:
        schema = item.get("schema") or {}
        assert item["role"] == "teacher", item  # the student is the embedded model, never handed off
        memory_phase = (night / "memory" / "config.json").exists()
        if "edits" in schema.get("properties", {}):
            text = memory_edit if memory_phase else USELESS
            reply = json.dumps({"edits": [{"op": "append", "content": text}]})
        elif set(schema.get("properties", {})) == {"reply"}:  # a worked example for one failed task
            prompt = Path(item["prompt_file"]).read_text(encoding="utf-8")
            subject = re.findall(r"status of ([^.?\n]+)", prompt)  # the task's, before the student's reply
            good = memory_phase and memory_edit == EXAMPLE
            reply = json.dumps({"reply": f"DONE: {subject[0] if subject else 'it'} finished." if good else "Fine."})
        else:
            reply = json.dumps(minimal(schema, schema.get("$defs", {})))
        answer = Path(item["answer_file"])
        answer.parent.mkdir(parents=True, exist_ok=True)
        answer.write_text(reply + "\n", encoding="utf-8")
    return len(pending)


def _night(tmp_path: Path, gguf: Path, memory_edit: str) -> tuple[Path, dict]:
    project, tasks = _project(tmp_path)
    s = SleepSettings(project=str(project), skill=str(project / "SKILL.md"), memory=str(project / "CLAUDE.md"),
                      student={"provider": "local", "model": str(gguf), "threads": 1},
                      teacher={"provider": "handoff"}, task_max_tokens=10, learning_rate=1, min_heldout=3,
                      epochs=1)  # one pass: the scripted teacher's rounds are counted for it
    for _ in range(12):
        try:
            return project, asyncio.run(run_night(s, tasks_file=tasks))
        except AnswersNeeded:
            nights = list((project / ".skillgrad" / "sleep" / "nights").iterdir())
            assert len(nights) == 1  # every round continues the one night
            assert _answer(nights[0], memory_edit) > 0
    pytest.fail("the night did not finish in 12 rounds")


@pytest.mark.slow
def test_a_winning_memory_edit_is_staged_with_hand_written_text_intact(tmp_path: Path, gguf_path: Path):
    project, r = _night(tmp_path, gguf_path, EXAMPLE)
    skill, memory = r["targets"]["skill"], r["targets"]["memory"]
    assert not skill["accepted"], skill  # the useless skill edit did not win
    assert memory["accepted"] and memory["val_hard_after"] > memory["val_hard_before"], memory
    assert r["status"] == "staged", r
    stage = Path(r["stage_dir"])
    manifest = json.loads((stage / "manifest.json").read_text(encoding="utf-8"))
    assert [Path(f["live"]).name for f in manifest["files"]] == ["CLAUDE.md"]  # only the memory is proposed
    proposed = (stage / manifest["files"][0]["proposed"]).read_bytes()
    start, end = b"<!-- SKILLGRAD:LEARNED START -->", b"<!-- SKILLGRAD:LEARNED END -->"
    assert proposed.startswith(HAND_MEMORY) and start in proposed
    assert proposed[:proposed.index(start)].rstrip(b"\n") == HAND_MEMORY.rstrip(b"\n")
    assert proposed[proposed.index(end) + len(end):].strip() == b""
    assert "A: DONE: job" in extract_learned(proposed.decode("utf-8"))  # the worked example that won
    assert (project / "CLAUDE.md").read_bytes() == HAND_MEMORY and (project / "SKILL.md").read_bytes() == HAND_SKILL


@pytest.mark.slow
def test_a_memory_edit_that_does_not_win_is_not_staged(tmp_path: Path, gguf_path: Path):
    project, r = _night(tmp_path, gguf_path, USELESS)
    memory = r["targets"]["memory"]
    assert memory["status"] == "completed" and not memory["accepted"], memory
    assert r["status"] == "no_improvement" and "stage_dir" not in r, r
    assert not [p for p in (project / ".skillgrad" / "sleep").iterdir() if p.name[0].isdigit()]  # nothing staged
    assert (project / "CLAUDE.md").read_bytes() == HAND_MEMORY and (project / "SKILL.md").read_bytes() == HAND_SKILL
