"""Handoff mode: a training run with no model of its own, completed in rounds by a scripted answerer
through the real CLI (exit 3 = answers needed), plus the prompt-file contract."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from handoff_answerer import RULE, answer_all
from pydantic import BaseModel
from test_sleep_night import HAND_SKILL, _setup

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import AnswersNeeded, OrphanedAnswers
from skillgrad.models.factory import build_llm
from skillgrad.models.providers.handoff import INDEX, Board, HandoffProvider

SKILL = "# Job reports\n\nWrite a short report about the job.\n"


def _tasks(path: Path) -> Path:
    rows = []
    for i, split in enumerate(["train"] * 4 + ["val"] * 3 + ["test"] * 2):
        rows.append({"task_id": f"job{i}", "task": f"Report on job {i}.", "split": split,
                     "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^DONE:"}]}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _config(tmp: Path) -> Path:
    (tmp / "SKILL.md").write_text(SKILL, encoding="utf-8")
    cfg = {
        "model": {"teacher": {"provider": "handoff"}, "student": {"provider": "handoff"}},
        "train": {"num_epochs": 1, "batch_size": 4, "seed": 1},
        "gradient": {"minibatch_size": 2, "analyst_workers": 4, "failure_only": True},
        # the round sizes below are the initial start's (the few-shot start adds its own rounds before step 1)
        "optimizer": {"learning_rate": 1, "min_learning_rate": 1, "use_slow_update": False, "use_meta_skill": False,
                      "start_from": "initial"},
        "evaluation": {"eval_test": True},
        "env": {"name": "tasks", "tasks_file": str(_tasks(tmp / "tasks.jsonl")), "skill_init": str(tmp / "SKILL.md"),
                "workers": 16, "max_tokens": 32},
    }
    path = tmp / "handoff.yaml"
    path.write_text(json.dumps(cfg), encoding="utf-8")  # JSON is YAML
    return path


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "skillgrad.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_training_run_completes_in_rounds_answered_by_the_users_agent(tmp_path: Path) -> None:
    cfg, run_dir = _config(tmp_path), tmp_path / "run"
    handoff = run_dir / "handoff"
    rounds: list[int] = []
    for _ in range(12):
        r = _cli("train", "-c", str(cfg), "--out", str(run_dir), "-q", cwd=tmp_path)
        if r.returncode == 0:
            break
        assert r.returncode == 3, r.stderr
        assert "answers needed" in r.stderr and "PROMPTS.md" in r.stderr
        ends = [json.loads(ln) for ln in (run_dir / "events.jsonl").read_text().splitlines() if '"run_end"' in ln]
        assert ends[-1]["status"] == "answers_needed"  # waiting, not failed
        pending = json.loads((handoff / "pending.json").read_text())
        assert pending["round"] == len(rounds) + 1
        prompts_md = (handoff / "PROMPTS.md").read_text()
        for item in pending["pending"]:  # every pending prompt is in PROMPTS.md and in its own file
            assert item["id"] in prompts_md and Path(item["prompt_file"]).is_file()
            assert not Path(item["answer_file"]).exists()
        rounds.append(answer_all(handoff))
    else:
        pytest.fail(f"no finish after {len(rounds)} rounds: {rounds}")
    # The student probe's 6 questions, the 3 held-out and the 4 train tasks are each asked in one round, not one
    # per round; the step's demonstrate and reflect calls (both read the replays) share one: 7 rounds in all.
    assert rounds[:4] == [6, 3, 4, 4] and len(rounds) <= 7, rounds
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed"
    # A question that stopped the run is no call (neither failed nor a provider request): each answer is one.
    total = summary["token_summary"]["total"]
    assert (total["calls"], total["failed"], total["provider_calls"]) == (sum(rounds), 0, sum(rounds)), total
    # The answered edit passed the gate: the teacher's rule, or (the probe found this student copies examples)
    # the verified worked example built from the corrected reply, which the edit budget of 1 takes first.
    best = (run_dir / "best_skill.md").read_text()
    assert RULE in best or "A: DONE:" in best, best
    assert summary["test_hard"] == 1.0 and summary["baseline_test_hard"] == 0.0
    assert not (handoff / "PROMPTS.md").exists()  # no stale prompt list after the finished run
    # Rerunning the finished command asks nothing and changes nothing: every call replays from the cache.
    again = _cli("train", "-c", str(cfg), "--out", str(run_dir), "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


class Verdict(BaseModel):
    score: float
    reason: str


def test_prompt_ids_are_deterministic_and_a_bad_structured_answer_is_asked_again(tmp_path: Path) -> None:
    llm = build_llm(RoleConfig(provider="handoff"), "teacher")
    assert isinstance(llm.provider, HandoffProvider)
    llm.provider.use_board(Board(tmp_path / "handoff"))
    msgs = [{"role": "user", "content": "Rate it."}]

    async def ask() -> AnswersNeeded:
        with pytest.raises(AnswersNeeded) as e:
            await llm.complete(msgs, schema=Verdict, max_tokens=40, stage="judge")
        return e.value

    first, second = asyncio.run(ask()), asyncio.run(ask())
    assert first.pending == second.pending and len(first.pending) == 1
    call_id = first.pending[0]
    prompt = (tmp_path / "handoff" / "prompts" / f"{call_id}.md").read_text()
    assert '"score"' in prompt and "JSON schema" in prompt and "Rate it." in prompt
    answer = tmp_path / "handoff" / "answers" / f"{call_id}.md"
    answer.parent.mkdir(parents=True, exist_ok=True)
    answer.write_text("I think it is fine.")  # not JSON: rejected, kept aside, asked again with the reason
    again = asyncio.run(ask())
    assert again.pending == [call_id] and (answer.parent / f"{call_id}.rejected.md").exists()
    assert "previous answer was rejected" in (tmp_path / "handoff" / "prompts" / f"{call_id}.md").read_text()
    answer.write_text('```json\n{"score": 0.9, "reason": "clear"}\n```\n')
    c = asyncio.run(llm.complete(msgs, schema=Verdict, max_tokens=40, stage="judge"))
    assert isinstance(c.parsed, Verdict) and c.parsed.score == 0.9


def test_one_board_per_run_shared_by_both_roles(tmp_path: Path) -> None:
    """build_models makes one board for the run and gives it to every handoff role; a second run (another
    build) gets its own: no board outlives its run in a process-wide registry."""
    from skillgrad.config.loader import config_from_mapping
    from skillgrad.models.factory import build_models

    cfg = config_from_mapping({"model": {"teacher": {"provider": "handoff"}, "student": {"provider": "handoff"}}},
                              [], source="test")
    first = build_models(cfg, cache_path=tmp_path / "a" / "llm_cache.sqlite")
    second = build_models(cfg, cache_path=tmp_path / "a" / "llm_cache.sqlite")
    boards = [m.provider.board for m in (first.teacher, first.student, second.teacher)]  # type: ignore[attr-defined]
    assert boards[0] is boards[1] and boards[0] is not boards[2]
    assert boards[0].root == (tmp_path / "a" / "handoff").resolve()
    for models in (first, second):
        asyncio.run(models.aclose())


def test_handoff_without_a_run_directory_is_a_usage_error() -> None:
    from skillgrad.errors import UsageError

    llm = build_llm(RoleConfig(provider="handoff"), "student")
    with pytest.raises(UsageError, match="needs a run directory"):
        asyncio.run(llm.complete([{"role": "user", "content": "hi"}]))


def test_a_handoff_night_is_completed_by_the_users_agent_in_a_few_rounds(tmp_path: Path) -> None:
    """`sleep run` with no model of its own: every round exits 3 with the prompts of all calls that can be
    asked together; the scripted agent answers them; the night stages a proposal that won on held-out tasks."""
    project, home, _ = _setup(tmp_path, Path("unused.gguf"))
    config = tmp_path / "handoff-sleep.yaml"
    config.write_text(json.dumps({
        "skill": str(project / ".claude" / "skills" / "status" / "SKILL.md"), "evolve_memory": False,
        "max_tasks": 8, "batch_size": 4, "min_heldout": 1, "epochs": 1,  # the round count below is one pass's
        "claude_home": str(home), "codex_home": str(tmp_path / "no-codex"),
        "source": "claude_code", "lookback_hours": 1_000_000}))
    cmd = ["sleep", "run", "--project", str(project), "--config", str(config), "--student", "handoff",
           "--teacher", "handoff", "--json"]
    rounds: list[dict[tuple[str, str], int]] = []
    for _ in range(10):
        r = _cli(*cmd, cwd=tmp_path)
        if r.returncode == 0:
            break
        assert r.returncode == 3, r.stderr
        (night,) = (project / ".skillgrad" / "sleep" / "nights").iterdir()  # every round continues one night
        pending = json.loads((night / "handoff" / "pending.json").read_text())["pending"]
        count: dict[tuple[str, str], int] = {}
        for p in pending:
            count[(p["role"], p["stage"])] = count.get((p["role"], p["stage"]), 0) + 1
        rounds.append(count)
        answer_all(night / "handoff")
    else:
        pytest.fail(f"the night did not finish: {rounds}")
    result = json.loads(r.stdout)
    assert result["status"] == "staged" and result["targets"]["skill"]["accepted"], result
    assert result["targets"]["skill"]["val_hard_after"] > result["targets"]["skill"]["val_hard_before"]
    # The teacher mines all 10 sessions in one round (the LLM miner, as the user's agent is the teacher);
    # the student probe's 6 calls are one round, the training replays one, the step's demonstrate corrections and
    # reflect calls one (they read the same replays); the held-out before and after are a round each: 8 in all.
    assert rounds[0] == {("teacher", "mine"): 10}, rounds
    assert {("student", "rollout"): 4} in rounds
    assert any(set(r) == {("teacher", "demonstrate"), ("teacher", "reflect")} for r in rounds), rounds
    assert rounds[1] == {("student", "student_probe"): 6}, rounds
    assert len(rounds) <= 8, rounds
    tasks = (next((project / ".skillgrad" / "sleep" / "nights").iterdir()) / "tasks.jsonl").read_text()
    assert '"miner":"llm"' in tasks.replace(" ", "")
    stage = Path(result["stage_dir"])
    assert RULE in (stage / "report.md").read_text()
    live = project / ".claude" / "skills" / "status" / "SKILL.md"
    assert live.read_bytes() == HAND_SKILL  # staged, not adopted


def test_a_handoff_teacher_sees_the_evidence_at_the_trainers_reply_length(tmp_path: Path) -> None:
    """The agent's window comes from the model table (200k), not the 4,096-token local default: at the trainer's
    4,096-token teacher reply there was no room left, and every demonstrate prompt showed the task as '(none)'."""
    from skillgrad.engine.prompts import PromptLibrary
    from skillgrad.engine.schemas import demonstration_model
    from skillgrad.engine.teacher import TeacherCall

    llm = build_llm(RoleConfig(provider="handoff"), "teacher")
    llm.provider.use_board(Board(tmp_path / "handoff"))
    assert llm.context_window >= 100_000
    teacher = TeacherCall(llm, PromptLibrary([]), max_tokens=4096)
    task = "### Task push-1\n[user] Write a push notification: boots are in stock.\n[assistant] Hey everyone, ..."
    with pytest.raises(AnswersNeeded) as e:
        asyncio.run(teacher.ask("demonstrate", demonstration_model(1200), stage="demonstrate", values={"skill": "# S"},
                                evidence_key="task", evidence=[task]))
    prompt = (tmp_path / "handoff" / "prompts" / f"{e.value.pending[0]}.md").read_text()
    assert "boots are in stock" in prompt and "(none)" not in prompt


def test_prompts_md_indexes_the_round_and_shows_a_repeated_schema_once(tmp_path: Path) -> None:
    llm = build_llm(RoleConfig(provider="handoff"), "teacher")
    llm.provider.use_board(Board(tmp_path / "handoff"))

    async def both() -> list[BaseException]:
        return await asyncio.gather(*(llm.complete([{"role": "user", "content": f"Rate {x}."}], schema=Verdict,
                                                   max_tokens=40, stage="judge") for x in ("a", "b")),
                                    return_exceptions=True)

    errors = asyncio.run(both())
    assert all(isinstance(e, AnswersNeeded) for e in errors)
    ids = sorted(errors[0].pending)
    assert len(ids) == 2
    md = (tmp_path / "handoff" / "PROMPTS.md").read_text()
    for i in ids:  # the index: one line per prompt with its answer file
        assert f"- `{i}` teacher/judge (structured): {tmp_path / 'handoff' / 'answers' / i}.md".replace(
            str(tmp_path), str(tmp_path.resolve())) in md
    assert md.count("```json") == 1 and f"the same as for prompt {ids[0]} above" in md
    assert (tmp_path / "handoff" / "answers").is_dir()  # the agent writes its answers there without a mkdir first
    for i in ids:  # each prompt file keeps its schema and the escaping note
        prompt = (tmp_path / "handoff" / "prompts" / f"{i}.md").read_text()
        assert '"score"' in prompt and "JSON-escaped" in prompt


def test_an_answer_follows_its_prompt_content_and_an_unused_one_is_named(tmp_path: Path) -> None:
    """Between reruns a call's id can change while its conversation does not (a new reply length): the answer
    written for the old id is used. An answer whose prompt changed (an earlier reply it quotes) is named on one
    line, in the warning and in pending.json, and kept on disk."""
    root = tmp_path / "handoff"

    def run(content: str, max_tokens: int) -> tuple[list[str], list[warnings.WarningMessage], str | None]:
        llm = build_llm(RoleConfig(provider="handoff"), "teacher")
        llm.provider.use_board(Board(root))  # a new board per invocation, as each rerun is a new process
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                text = asyncio.run(llm.complete([{"role": "user", "content": content}], max_tokens=max_tokens,
                                                stage="reflect")).text
            except AnswersNeeded as e:
                return e.pending, list(seen), None
            finally:
                asyncio.run(llm.aclose())
        return [], list(seen), text

    (old_id,), _, _ = run("Say hi.", 40)
    (root / "answers").mkdir(exist_ok=True)
    (root / "answers" / f"{old_id}.md").write_text("hi\n")
    pending, seen, text = run("Say hi.", 64)  # a new id (another reply length), the same prompt content
    assert (pending, text) == ([], "hi") and not seen
    assert old_id in json.loads((root / INDEX).read_text())["used"]
    (root / "answers" / "0123456789abcdef.md").write_text("an answer to a prompt no call asks any more\n")
    pending, seen, _ = run("Say hello.", 64)  # a changed prompt: asked again, under its own id
    assert len(pending) == 1 and pending[0] != old_id
    (notice,) = [w for w in seen if issubclass(w.category, OrphanedAnswers)]
    assert "1 answer(s)" in str(notice.message) and "0123456789abcdef" in str(notice.message)
    assert "\n" not in str(notice.message) and old_id not in str(notice.message)  # the used one is no orphan
    assert json.loads((root / "pending.json").read_text())["orphaned"] == ["0123456789abcdef"]
    assert (root / "answers" / "0123456789abcdef.md").is_file()


def test_runs_sharing_a_board_folder_do_not_call_each_others_answers_orphans(tmp_path: Path) -> None:
    """A Sleep night runs its targets one after another on one handoff folder. The first target's run, finishing,
    must not name the answers written for the second target's calls (asked in the round before) as orphans: they
    are used when the second run reaches them. An answer of its own that no call takes is still named."""
    root = tmp_path / "handoff"

    def run(scope: str, content: str) -> tuple[list[str], list[warnings.WarningMessage]]:
        llm = build_llm(RoleConfig(provider="handoff"), "teacher")
        llm.provider.use_board(Board(root, scope=scope))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                asyncio.run(llm.complete([{"role": "user", "content": content}], max_tokens=40, stage="reflect"))
            except AnswersNeeded as e:
                return e.pending, list(seen)
            finally:
                asyncio.run(llm.aclose())
        return [], list(seen)

    (first,), _ = run("night/target-1", "Say hi.")
    (root / "answers" / f"{first}.md").write_text("hi\n")
    assert run("night/target-1", "Say hi.") == ([], [])
    (second,), _ = run("night/target-2", "Say bye.")  # the next target asks; its answer is written
    (root / "answers" / f"{second}.md").write_text("bye\n")
    pending, seen = run("night/target-1", "Say hi.")  # the rerun: target 1 again first, finishing
    assert pending == [] and not [w for w in seen if issubclass(w.category, OrphanedAnswers)]
    pending, seen = run("night/target-2", "Say bye.")
    assert pending == [] and not seen
    assert {first, second} <= set(json.loads((root / INDEX).read_text())["used"])
    # an answer no run asked for is still named, by whichever run closes next
    (root / "answers" / "0123456789abcdef.md").write_text("stray\n")
    _, seen = run("night/target-1", "Say hi.")
    (notice,) = [w for w in seen if issubclass(w.category, OrphanedAnswers)]
    assert "0123456789abcdef" in str(notice.message)
