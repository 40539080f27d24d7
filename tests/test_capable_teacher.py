"""Issue 31, findings 1-5: what a capable teacher (and student) is told and held to.

The tasks environment and its rule checks are the real ones; the teacher is scripted (what is under test is what the
prompt says and which rule refuses what, not what a model writes). Each test fails on the code before the issue:
a 48-token limit no prompt stated and logged as a failed check, `<the current skill>` in the demonstrate prompt, no
skill syntax in the reflect prompt and silent cuts of unindented examples, refused steps without their reason,
byte-identical re-asks, a meta-skill prompt after the last epoch, and a 64-token cap for every student.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_demonstrations import ScriptedTeacher, _traj
from test_engine_plumbing import Scripted, run

from skillgrad.config.loader import load_config
from skillgrad.config.schema import EnvSection, RoleConfig
from skillgrad.engine.buffer import BufferEntry, StepBuffer
from skillgrad.engine.demo_limits import earlier_refusals, settled_by_tie
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.proposers.sources import SMALL_STUDENT, propose_examples
from skillgrad.engine.refusals import candidate_replies, gate_reason, refused_edits
from skillgrad.engine.teacher import SMALL_WINDOW, TeacherCall
from skillgrad.envs.registry import create_env
from skillgrad.envs.tasks.checks import stated_reply_tokens
from skillgrad.errors import AnswersNeeded
from skillgrad.models.base import Request
from skillgrad.models.factory import build_llm
from skillgrad.models.providers.handoff import Board, HandoffProvider
from skillgrad.runs.store import RunStore
from skillgrad.skill.edits import apply_edits
from skillgrad.skill.examples import find_examples

SKILL = "# Status replies\n\nAnswer status questions. Do NOT search.\n"
# a correction a capable teacher writes: passes the task's checks, 60-odd words
LONG = ("OK: the build passed on main. Details: all 412 unit tests and 38 integration tests are green, the lint step "
        "reported no warnings, the container image was pushed to the registry as build 1841, and the staging "
        "deploy finished in four minutes with no failed health checks. Next: the release branch is cut tonight.")


class Student:
    """A student as the environment sees one: its tokenizer (a token per word) and, when given, its stated limit."""

    def __init__(self, max_tokens: int = 0, window: int = 4096) -> None:
        self.role_cfg = RoleConfig(provider="local", max_tokens=max_tokens)
        self.context_window = window
        self.name = "scripted:student"

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _env(tmp_path: Path) -> Any:
    rows = [{"task_id": f"t{i}", "task": task, "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^OK:"}]}}
            for i, task in enumerate(["Give me the status of the build.", "Give me the status of the deploy."])]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0"}))


def _demonstrate(tmp_path: Path, student: Student, replies: list[str], *, compact: bool = False,
                 earlier: dict[str, tuple[int, str, str]] | None = None,
                 settled: set[str] | None = None) -> tuple[Any, ScriptedTeacher]:
    env = _env(tmp_path)
    items = env.load_splits().train
    trajs = [_traj(items[0], "The build passed.", 0.0, "check failed: the reply must start with the status word")]
    teacher_llm = ScriptedTeacher(replies)
    res = asyncio.run(propose_examples(trajs, {i.id: i for i in items}, SKILL,
                                       TeacherCall(teacher_llm, PromptLibrary([])), env, student, strategy=SMALL_STUDENT,
                                       limit=1, max_chars=1200, seed=0, compact=compact, earlier=earlier,
                                       settled=settled))
    return res, teacher_llm


# ---------------------------------------------------------------- finding 1: the limit, stated and named
def test_a_too_long_correction_is_refused_as_too_long_not_as_a_failed_check(tmp_path: Path) -> None:
    res, teacher = _demonstrate(tmp_path, Student(), [LONG])
    (entry,) = [d for d in res.log if d["source"] == "teacher_correction"]
    assert entry["verified"] is False
    n = len(LONG.split())
    assert entry["why"].startswith(f"too long ({n} > 48 tokens)"), entry["why"]
    assert "failed" not in entry["why"].split(":")[0]
    # the prompt stated that limit before the teacher wrote its reply
    assert "at most 48 tokens" in teacher.prompts[0]


def test_the_reply_cap_and_example_room_come_from_the_students_stated_limit(tmp_path: Path) -> None:
    env = _env(tmp_path)
    item = env.load_splits().train[0]
    assert env.reply_tokens(item, Student()) == 64  # the embedded model's 4096-token window: its small room
    assert env.reply_tokens(item, Student(max_tokens=400)) == 400  # model.student.max_tokens
    assert env.reply_tokens(item, Student(window=200_000)) == 1024  # a capable model's window
    res, teacher = _demonstrate(tmp_path, Student(max_tokens=400), [LONG])
    assert [it["content"] for it in res.items] == [LONG]  # 60-odd tokens fit a 400-token student's room
    assert "at most 300 tokens" in teacher.prompts[0]


def test_a_student_without_a_stated_limit_gets_room_from_its_context_window() -> None:
    assert stated_reply_tokens(object()) == 64
    assert stated_reply_tokens(Student(window=4096)) == 64
    assert stated_reply_tokens(Student(window=32_768)) == 512
    assert stated_reply_tokens(Student(max_tokens=700, window=4096)) == 700


def test_sleep_replays_tasks_with_the_same_cap_source() -> None:
    from skillgrad.sleep.settings import SleepSettings

    assert SleepSettings.model_fields["task_max_tokens"].default == 0  # 0 = the env sizes it from the student


# ---------------------------------------------------------------- finding 2: the skill in the demonstrate prompt
def test_the_demonstrate_prompt_shows_the_current_skill(tmp_path: Path) -> None:
    _, teacher = _demonstrate(tmp_path, Student(), ["OK: the build passed."])
    assert "## Current skill\n# Status replies" in teacher.prompts[0] and "Do NOT search." in teacher.prompts[0]
    assert "<the current skill>" not in teacher.prompts[0]


def test_the_short_demonstrate_prompt_keeps_the_skill_and_the_limit(tmp_path: Path) -> None:
    """A teacher with a 4,096-token window gets the short prompt, still with the skill it writes into and the limit
    it is held to; the expected answer stays last (the 135M teacher copies the last line it reads)."""
    _, teacher = _demonstrate(tmp_path, Student(), ["OK: the build passed."], compact=True)
    prompt = teacher.prompts[0]
    assert prompt.startswith("Skill the assistant reads:\n# Status replies") and "Do NOT search." in prompt
    assert "Limit: the reply is held to at most 48 tokens" in prompt and "<the current skill>" not in prompt
    assert prompt.index("Task: Give me the status of the build.") < prompt.index("Limit:") < \
        prompt.index("Expected answer:")
    assert "## Current skill" not in prompt  # still the short template, not the capable teacher's


def test_a_handoff_teacher_under_the_packaged_skill_folder_config_has_its_own_window() -> None:
    """The packaged skill-folder config sized no window for the teacher it does not name: a handoff (or API) teacher
    set on top of it reads the full prompts, not the 135M teacher's short ones."""
    cfg = load_config("skillgrad:skill-folder.yaml", ["model.teacher.provider=handoff"])
    teacher = build_llm(cfg.model.teacher, "teacher")
    assert teacher.context_window > SMALL_WINDOW and not TeacherCall(teacher, PromptLibrary([])).small
    # the embedded teacher (a `local` model's window is its n_ctx) keeps its 4,096 tokens and the short prompts
    assert load_config("skillgrad:skill-folder.yaml", []).model.teacher.n_ctx == SMALL_WINDOW


@pytest.mark.slow
def test_the_handoff_teacher_prompt_under_the_packaged_config_holds_the_skill_and_the_limit(tmp_path: Path) -> None:
    # the real public pr-naming v1 folder (MIT-0), the embedded student, the packaged config, the teacher through
    # handoff: the run stops for the teacher's answers (exit 3) with the demonstrate prompts written
    root = tmp_path / "pr-naming"
    shutil.copytree(Path(__file__).parents[1] / "benchmarks" / "public_skills" / "pr-naming", root)
    p = subprocess.run([sys.executable, "-m", "skillgrad.cli", "train", "--skill", str(root), "--out",
                        str(tmp_path / "run"), "-o", "model.teacher.provider=handoff", "-o", "model.student.n_threads=1",
                        # a step's demonstrate prompts: the few-shot start can reach the validation ceiling first
                        "-o", "optimizer.start_from=initial"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 3, p.stderr[-2000:]
    prompts = [f.read_text(encoding="utf-8") for f in sorted((tmp_path / "run/handoff/prompts").glob("*.md"))]
    demos = [t for t in prompts if "stage: demonstrate" in t]
    assert demos
    for text in demos:
        assert "## Current skill\n# PR Name Checker" in text and "- Titles should have a ticket number" in text
        assert "Limit: the reply is held to at most" in text
    # the packaged 128-token cap is the embedded teacher's: the handoff teacher's calls carry the stages' own caps
    # (a structured reply cut at 128 tokens failed to parse), and the run says what it did not apply
    pending = json.loads((tmp_path / "run/handoff/pending.json").read_text(encoding="utf-8"))["pending"]
    caps = {p["max_tokens"] for p in pending if p["role"] == "teacher"}
    assert caps and min(caps) > 128, caps
    recorded = json.loads((tmp_path / "run/config.json").read_text(encoding="utf-8"))["sources"]["warnings"]
    assert any("model.teacher.max_tokens: 128 (the teacher is handoff" in w for w in recorded)
    assert "not applied" not in p.stderr  # recorded, not printed: an error would stay one line


def test_a_handoff_student_under_the_packaged_config_gets_its_own_reply_room(tmp_path: Path) -> None:
    # both roles through handoff on the real public folder: the first rollout is asked with the capable student's room
    # (1,024 tokens, capable-models.md), not the packaged 96 sized for the embedded student
    root = tmp_path / "pr-naming"
    shutil.copytree(Path(__file__).parents[1] / "benchmarks" / "public_skills" / "pr-naming", root)
    p = subprocess.run([sys.executable, "-m", "skillgrad.cli", "train", "--skill", str(root), "--out",
                        str(tmp_path / "run"), "-o", "model.teacher.provider=handoff", "-o",
                        "model.student.provider=handoff", "-o", "optimizer.student_probe=off"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 3, p.stderr[-2000:]
    pending = json.loads((tmp_path / "run/handoff/pending.json").read_text(encoding="utf-8"))["pending"]
    assert [(c["role"], c["stage"], c["max_tokens"]) for c in pending] == [("student", "rollout", 1024)]
    recorded = json.loads((tmp_path / "run/config.json").read_text(encoding="utf-8"))["sources"]["warnings"]
    assert any("env.max_tokens: 96 (the student is handoff; keep it with -o env.max_tokens=96)" in w for w in recorded)


# ---------------------------------------------------------------- finding 3: syntax told, parse-back preview
class Recorder:
    """A teacher that records the system text it is sent and replies with no edits."""

    name, supports_vision, is_agent = "scripted:teacher", False, False

    def __init__(self, window: int) -> None:
        self.context_window, self.systems = window, []  # type: ignore[var-annotated]

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **_: Any) -> Any:
        from skillgrad.models.base import Completion, Usage

        self.systems.append(messages[0]["content"])
        return Completion(text="{}", parsed=None, usage=Usage(1, 1))


@pytest.mark.parametrize("template", ["analyst_error", "analyst_success", "analyst_error_full_rewrite"])
def test_the_reflect_prompts_tell_a_capable_teacher_the_example_syntax_and_protected_regions(template: str) -> None:
    from skillgrad.engine.schemas import demonstration_model

    values = {"skill": SKILL, "budget": 2, "buffer": "", "meta": "", "n": 1, "trajectories": "(none)"}
    sent = {}
    for window in (100_000, 4096):  # a capable teacher, and the embedded one (its prompt stays as measured)
        llm = Recorder(window)
        asyncio.run(TeacherCall(llm, PromptLibrary([])).ask(template, demonstration_model(100), stage="reflect",
                                                            values=values))
        sent[window] = llm.systems[0]
    assert '"Q:"' in sent[100_000] and "indented by 3 spaces" in sent[100_000]
    assert "SLOW_UPDATE" in sent[100_000] and "SKILLGRAD:LEARNED" in sent[100_000]
    assert "indented by 3 spaces" not in sent[4096]
    demonstrate_system = PromptLibrary([]).get("demonstrate").system
    assert "indented by 3 spaces" in demonstrate_system and "SKILLGRAD:LEARNED" in demonstrate_system


def test_an_unindented_multi_line_example_is_repaired_not_cut() -> None:
    skill = "# Review\n\nReview the PR.\n\n## Examples\nQ: Review PR 1\nA: Summary: fine.\n"
    edit = {"op": "append", "content": "Q: Review PR 2\nA: Summary: adds a cache.\nRisks: stale reads.\n"
                                       "## Key Risks\nNone beyond that."}
    new, report = apply_edits(skill, [edit])
    assert report.outcomes[0].status == "applied_append"
    assert report.outcomes[0].detail.startswith("repaired: indented 3 line(s)")
    reply = {e.question: e.reply for e in find_examples(new)}["Review PR 2"]
    assert reply == "Summary: adds a cache.\nRisks: stale reads.\n## Key Risks\nNone beyond that."


def test_an_example_a_heading_cuts_off_from_its_section_is_refused_with_the_reason() -> None:
    skill = "# Review\n\n## Examples\nQ: Review PR 1\nA: Summary: fine.\n\n## Rules\nBe brief.\n"
    new, report = apply_edits(skill, [{"op": "append", "content": "Q: Review PR 2\nA: Summary: adds a cache."}])
    assert new == skill
    assert report.outcomes[0].status == "skipped_misparsed"
    assert "outside any Examples section" in report.outcomes[0].detail


def test_a_skills_own_layout_is_not_the_edits_problem() -> None:
    skill = "# R\n\n## Examples\nQ: a\nA: b\nunindented tail the skill already had\n"
    new, report = apply_edits(skill, [{"op": "append", "content": "- Be brief."}])
    assert report.outcomes[0].status == "applied_append" and new.endswith("- Be brief.\n")


# ---------------------------------------------------------------- finding 4: learning from refusals
def test_the_history_shows_a_refused_candidates_reason_replies_and_refused_edits(tmp_path: Path) -> None:
    from skillgrad.envs.base import Trajectory

    store = RunStore(tmp_path / "run")
    log = store.results("steps/step_0001/selection_eval")
    log.append(Trajectory(item_id="v1", question="Review PR 7", answer="This PR adds a cache.", hard=0.0, soft=0.5,
                          fail_reason="check failed: the reply must have a section named 'Risks'"))
    log.flush()
    rule = {"decided_by": "degenerate", "reason": "replies became degenerate: 6 of 6 near-duplicates"}
    report = {"outcomes": [{"op": "append", "status": "skipped_misparsed", "content": "Q: x\nA: y",
                            "detail": "misparsed: the worked example 'Q: x' is outside any Examples section"}]}
    entry = BufferEntry(step=1, action="blocked", n_total=4, n_fail=2, reason=gate_reason("blocked", rule),
                        replies=candidate_replies(store, "steps/step_0001"), refused_edits=refused_edits(report),
                        rejected_edits=["append: Do NOT search."])
    buf = StepBuffer()
    buf.add(entry)
    text = buf.render(max_chars=4000)
    assert "Why refused: blocked (degenerate): replies became degenerate" in text
    assert "Student replies under the refused candidate:" in text and "This PR adds a cache." in text
    assert "section named 'Risks'" in text
    assert "outside any Examples section" in text


def test_a_task_asked_again_says_why_with_the_earlier_reply_and_its_refusal(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.write_json("steps/step_0001/patches/demonstrations.json", {"items": [], "log": [
        {"item_id": "t0", "source": "teacher_correction", "reply": LONG, "verified": False,
         "why": "too long (61 > 48 tokens)"}]})
    earlier = earlier_refusals(store, [{"step": 1, "action": "skip_no_patches"}], before=2)
    assert earlier["t0"][2] == "too long (61 > 48 tokens)"
    _, teacher = _demonstrate(tmp_path, Student(), ["OK: the build passed."], earlier=earlier)
    assert "Asked again: your reply to this task in step 1 was refused (too long (61 > 48 tokens))" in \
        teacher.prompts[0]


# the gate's record of a push-length step (agent teacher, 2026-11-27): validation at full marks, and the tie-break
# found the incumbent passing every training task it could score (each example's own task is left out of it)
TIE_AT_CEILING = {"step": 3, "action": "reject", "score_before": 1.0, "gate_rule": {
    "decided_by": "train_tiebreak", "n_items": 14, "incumbent_passed": 14, "candidate_passed": None,
    "candidate_passed_at_most": 14, "n_scored": 0, "early_stop": True,
    "reason": "a tie on validation; stopped after 0 of 14 training tasks: the candidate can pass at most 14, not more "
              "than the incumbent's 14"}}


def test_a_passing_correction_the_gate_could_not_credit_is_not_asked_again(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.write_json("steps/step_0003/patches/demonstrations.json", {"items": [], "log": [
        {"item_id": "t0", "source": "teacher_correction", "reply": "OK: the build passed.", "verified": True}]})
    assert settled_by_tie(store, [TIE_AT_CEILING], before=4) == {"t0"}
    res, teacher = _demonstrate(tmp_path, Student(), [], settled=settled_by_tie(store, [TIE_AT_CEILING], before=4))
    assert teacher.prompts == [] and not [d for d in res.log if d["source"] == "teacher_correction"]
    # a tie below full marks, or one with failing training tasks left to decide it, is worth another correction
    below = {**TIE_AT_CEILING, "score_before": 0.83}
    open_tasks = {**TIE_AT_CEILING, "gate_rule": {**TIE_AT_CEILING["gate_rule"], "incumbent_passed": 12}}
    assert settled_by_tie(store, [below], before=4) == settled_by_tie(store, [open_tasks], before=4) == set()
    # a later accepted step is a new incumbent: the earlier tie says nothing about it
    assert settled_by_tie(store, [TIE_AT_CEILING, {"step": 4, "action": "accept_new_best"}], before=5) == set()


@pytest.mark.filterwarnings("ignore::skillgrad.errors.OrphanedAnswers")  # the first answer is taken by no call
def test_handoff_never_re_asks_a_prompt_byte_for_byte(tmp_path: Path) -> None:
    board = Board(tmp_path / "handoff")
    provider = HandoffProvider(RoleConfig(provider="handoff"), "teacher")
    provider.use_board(board)
    msgs = [{"role": "user", "content": "Correct the reply to task t0."}]

    def ask(sample: int) -> str:
        with pytest.raises(AnswersNeeded) as e:
            asyncio.run(provider(Request(messages=msgs, sample=sample, stage="demonstrate", role="teacher")))
        (call_id,) = e.value.pending
        board.answer_file(call_id).write_text("OK: done.\n")
        return (tmp_path / "handoff" / "prompts" / f"{call_id}.md").read_text()

    first, second = ask(0), ask(1)
    assert "Asked again:" not in first
    assert "Asked again: this prompt was answered before as" in second  # says why it asks again


def test_no_meta_skill_prompt_after_the_last_epoch(tmp_path: Path) -> None:
    run_dir, _, teacher = run(tmp_path / "two", "train.num_epochs=2", "optimizer.use_meta_skill=true",
                              "train.stop_at_ceiling=false", teacher=Scripted("teacher"))
    assert not [p for p in teacher.prompts if p[0] == "MetaSkill"]
    assert json.loads((run_dir / "meta_skill/epoch_02/meta_skill_result.json").read_text())["action"] == \
        "skip_last_epoch"
    _, _, teacher3 = run(tmp_path / "three", "train.num_epochs=3", "optimizer.use_meta_skill=true",
                         "train.stop_at_ceiling=false", teacher=Scripted("teacher"))
    assert len([p for p in teacher3.prompts if p[0] == "MetaSkill"]) == 1  # epoch 2's: epoch 3 uses it


def test_a_full_rewrite_is_read_back_too() -> None:
    from skillgrad.engine.modes import MODES
    from skillgrad.engine.stages.update import update

    skill = "# Review\n\n## Examples\nQ: Review PR 1\nA: Summary: fine.\n"
    mode = MODES["full_rewrite_minibatch"]
    cut = skill + "Risks: none.\n"  # a reply's second line, unindented: cut from the example unless repaired
    res = asyncio.run(update(skill, [{"new_skill": cut}], None, mode=mode))  # type: ignore[arg-type]
    assert res.candidate is not None and res.rewrite is not None and res.rewrite["parse_back"].startswith("repaired")
    assert find_examples(res.candidate)[0].reply == "Summary: fine.\nRisks: none."
    stray = "# Review\n\n## Rules\nBe brief.\nQ: Review PR 2\nA: Summary: fine.\n"
    res = asyncio.run(update(skill, [{"new_skill": stray}], None, mode=mode))  # type: ignore[arg-type]
    assert res.candidate is None and res.rewrite is not None and res.rewrite["status"] == "skipped_misparsed"
