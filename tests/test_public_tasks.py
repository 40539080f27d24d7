"""The public task set (benchmarks/public_tasks/banking77): it parses, restating the request or replying one constant
label scores below 0.5, the gold replies pass, the sample follows its drawing rule, and `head_to_head.py --tasks
public:banking77` resolves to it with its splits whole."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from skillgrad.envs.tasks import read_tasks, score_checks
from skillgrad.envs.tasks.checks import CONTENT_OPS
from skillgrad.skill.examples import split_examples

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SET = BENCH / "public_tasks" / "banking77"
sys.path.insert(0, str(BENCH))
# loaded by path: `build` and `build_tasks` are other modules' names too (the report suite's builder, pypa's build)
_spec = importlib.util.spec_from_file_location("public_banking77_build", SET / "build_tasks.py")
assert _spec and _spec.loader
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

from h2h.heldout import load_task_env  # noqa: E402
from h2h.tasks import resolve  # noqa: E402

# the first lines of banking77's test.csv at build.COMMIT (CC-BY-4.0), quoted field included
BANKING77_HEAD = '''text,category
How do I locate my card?,card_arrival
"I still have not received my new card, I ordered over a week ago.",card_arrival
I ordered a card but it has not arrived. Help please!,card_arrival
'''


def _mean(pairs: list[tuple[list, str]]) -> float:
    return sum(score_checks(c, r)[0] for c, r in pairs) / len(pairs)


def test_the_sample_parses_balanced_with_content_checks_and_disjoint_splits():
    tasks = read_tasks(SET / "tasks.jsonl")
    assert Counter(t.split for t in tasks) == {"train": 32, "val": 8, "test": 32}
    labels = {t.judge.reference for t in tasks}
    assert len(labels) == build.N_INTENTS
    for split, n in build.PER_INTENT.items():
        assert Counter(t.judge.reference for t in tasks if t.split == split) == dict.fromkeys(labels, n)
    assert all(any(c.op in CONTENT_OPS for c in t.judge.checks) for t in tasks)
    by_split = {s: {t.task.casefold() for t in tasks if t.split == s} for s in ("train", "val", "test")}
    assert not by_split["test"] & (by_split["train"] | by_split["val"]) and not by_split["train"] & by_split["val"]
    assert all(build.usable(t.task) for t in tasks)
    # the drawing rule: no two intents share a content word
    words = [set(label.split("_")) - build.STOP for label in labels]
    assert all(not a & b for i, a in enumerate(words) for b in words[i + 1:])


@pytest.mark.parametrize("split", ["val", "test"])
def test_restating_the_request_or_one_constant_label_scores_below_half(split: str):
    part = [t for t in read_tasks(SET / "tasks.jsonl") if t.split == split]
    assert _mean([(t.judge.checks, t.judge.reference) for t in part]) == 1.0
    labels = sorted({t.judge.reference for t in part})
    families = {"the request": [t.task for t in part]}
    for label in labels:
        families[f"{label}: request"] = [f"{label}: {t.task}" for t in part]
        families[f"request -> {label}"] = [f"{t.task}\n{label}" for t in part]
        families[f"constant {label}"] = [label] * len(part)
    families["every label"] = [", ".join(labels)] * len(part)
    for name, replies in families.items():
        score = _mean([(t.judge.checks, r) for t, r in zip(part, replies, strict=True)])
        assert score < 0.5, (split, name, score)


def test_the_plain_initial_skill_names_the_intents_and_holds_no_examples():
    skill = (SET / "SKILL.md").read_text(encoding="utf-8")
    assert not split_examples(skill)[1]
    assert all(label in skill for label in {t.judge.reference for t in read_tasks(SET / "tasks.jsonl")})
    assert not any(t.task in skill for t in read_tasks(SET / "tasks.jsonl"))


def test_the_builder_reads_banking77_csv_and_writes_the_environments_records():
    assert build.rows(BANKING77_HEAD)[1] == ("I still have not received my new card, I ordered over a week ago.",
                                            "card_arrival")
    lines = (SET / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert build.render([first]) == lines[0] + "\n"
    assert first["judge"]["checks"] == [{"op": "equals", "arg": first["judge"]["reference"]}]


def test_the_builder_refuses_a_source_without_the_commits_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "banking_data").mkdir()
    for name in ("train.csv", "test.csv"):
        (tmp_path / "banking_data" / name).write_text(BANKING77_HEAD, encoding="utf-8")
    assert build.main([str(tmp_path)]) == 2
    assert "is not the file of commit 57ec275" in capsys.readouterr().err


def test_head_to_head_resolves_public_tasks_with_whole_splits():
    (task,) = resolve(["public:banking77"])
    assert task.name == "public:banking77"
    _, _, splits = load_task_env(task.config, task.sized(False))
    assert (len(splits.train), len(splits.val), len(splits.test)) == (32, 8, 32)
    _, _, tiny = load_task_env(task.config, task.sized(True))
    assert len(tiny.train) == 4
    with pytest.raises(SystemExit, match="public:nope: no tasks file .* choose from banking77"):
        resolve(["public:nope"])


def test_the_builder_names_a_missing_source_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert build.main([str(tmp_path / "none")]) == 2
    assert "no banking_data/train.csv there" in capsys.readouterr().err
