"""A packaged config's caps sized for the embedded model (`_embedded_only_`) apply only while that role is a `local`
model: swapping in a capable teacher or student with -o gives the limits docs/guide/capable-models.md states, and a
value the user sets (an -o, their own config on top) always holds. Each test of a capable role fails on the code
before: `skill-folder.yaml` capped every teacher call at 128 tokens and every student reply at 96."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from skillgrad.config.loader import load_config, load_config_with_info, packaged_config_path
from skillgrad.config.schema import Config, RoleConfig
from skillgrad.envs.registry import create_env
from skillgrad.envs.skillfolder.env import REPLY_FLOOR, SkillFolderEnv
from skillgrad.errors import ConfigError

SKILL_FOLDER = "skillgrad:skill-folder.yaml"
PR_NAMING = Path(__file__).parents[1] / "benchmarks" / "public_skills" / "pr-naming"  # a real public folder (MIT-0)


class Student:
    """What the environment reads of a student: its role block and its context window."""

    def __init__(self, window: int, max_tokens: int = 0) -> None:
        self.role_cfg = RoleConfig(provider="openai", max_tokens=max_tokens)
        self.context_window = window


def _quiet(name: str, overrides: list[str]) -> tuple[Config, list[str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg, info = load_config_with_info(name, overrides)
    return cfg, info["warnings"]


def _env(cfg: Config) -> SkillFolderEnv:
    env = create_env(cfg.env.model_copy(update={"skill_dir": str(PR_NAMING)}))
    assert isinstance(env, SkillFolderEnv)
    return env


def test_a_handoff_teacher_gets_no_128_token_cap_and_is_told_how_to_keep_it() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing printed: an error the run then reports stays one line
        cfg, info = load_config_with_info(SKILL_FOLDER, ["model.teacher.provider=handoff"])
    assert info["warnings"] == ["skillgrad:skill-folder.yaml: not applied, sized for the embedded model: "
                                "model.teacher.max_tokens: 128 (the teacher is handoff; keep it with "
                                "-o model.teacher.max_tokens=128)"]  # the run record's warnings (dashboard, runs)
    assert cfg.model.teacher.max_tokens == 0  # 0: each stage's own cap
    assert cfg.env.model_dump()["max_tokens"] == 96  # the student is still the embedded model: its cap holds


@pytest.mark.parametrize("student", [["model.student.provider=handoff"], ["model.student.provider=openai",
                                                                          "model.student.model=gpt-4o-mini"]])
def test_a_capable_student_gets_the_reply_room_of_the_guides_table(student: list[str]) -> None:
    cfg, warned = _quiet(SKILL_FOLDER, ["model.teacher.provider=handoff", *student])
    assert "max_tokens" not in cfg.env.model_dump()
    assert "env.max_tokens: 96 (the student is" in warned[0]
    env = _env(cfg)
    assert env.reply_tokens(Student(window=200_000)) == 1024  # an API model or a handoff agent
    assert env.reply_tokens(Student(window=32_768)) == 512
    assert env.reply_tokens(Student(window=4096)) == REPLY_FLOOR  # never under the folder's floor
    assert env.reply_tokens(Student(window=200_000, max_tokens=300)) == 300  # model.student.max_tokens


def test_skillopt_backend_keys_name_the_role_too() -> None:
    cfg, _ = _quiet(SKILL_FOLDER, ["model.backend=openai_chat"])  # SkillOpt's spelling, both roles
    assert cfg.model.teacher.max_tokens == 0 and "max_tokens" not in cfg.env.model_dump()
    cfg, _ = _quiet(SKILL_FOLDER, ["model.optimizer_backend=claude_code"])  # the teacher only
    assert cfg.model.teacher.max_tokens == 0 and cfg.env.model_dump()["max_tokens"] == 96


@pytest.mark.parametrize("value", [200, 128])
def test_an_explicit_cap_is_kept(value: int) -> None:
    cfg, warned = _quiet(SKILL_FOLDER, ["model.teacher.provider=handoff", "model.student.provider=handoff",
                                        f"model.teacher.max_tokens={value}", "env.max_tokens=96"])
    assert cfg.model.teacher.max_tokens == value and cfg.env.model_dump()["max_tokens"] == 96
    assert _env(cfg).reply_tokens(Student(window=200_000)) == 96
    assert warned == []


def test_a_users_config_on_top_keeps_its_own_values(tmp_path: Path) -> None:
    swapped = tmp_path / "swapped.yaml"
    swapped.write_text("_base_: skillgrad:skill-folder.yaml\nmodel:\n  teacher: {provider: openai, model: gpt-4o}\n",
                       encoding="utf-8")
    assert _quiet(str(swapped), [])[0].model.teacher.max_tokens == 0
    kept = tmp_path / "kept.yaml"
    kept.write_text("_base_: skillgrad:skill-folder.yaml\nmodel:\n  teacher: {provider: openai, max_tokens: 128}\n",
                    encoding="utf-8")
    cfg, warned = _quiet(str(kept), [])
    assert cfg.model.teacher.max_tokens == 128 and warned == []


@pytest.mark.parametrize("name", ["skill-folder.yaml", "demo.yaml", "demo-fewshot.yaml"])
def test_the_embedded_path_is_unchanged(name: str, tmp_path: Path) -> None:
    """With the embedded model in every role the packaged file loads as the same file without its marker would."""
    text = packaged_config_path(name).read_text(encoding="utf-8")
    unmarked = "\n".join(line for line in text.splitlines() if not line.startswith("_embedded_only_"))
    base = text.split("_base_: ")[1].split("\n")[0] if "_base_: " in text else ""
    if base:  # demo-fewshot.yaml inherits demo.yaml: the unmarked copy inherits the packaged file by name
        unmarked = unmarked.replace(f"_base_: {base}", f"_base_: skillgrad:{base}")
    copy = tmp_path / name
    copy.write_text(unmarked + "\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and says nothing
        packaged = load_config(f"skillgrad:{name}", [])
    assert packaged == _quiet(str(copy), [])[0]


def test_demo_caps_only_the_embedded_teacher() -> None:
    """demo.yaml's teacher cap is the 135M's; env.max_tokens is the facts task's own (a fact), for any student."""
    cfg, warned = _quiet("skillgrad:demo-fewshot.yaml", ["model.backend=openai"])
    assert cfg.model.teacher.max_tokens == 0 and cfg.env.model_dump()["max_tokens"] == 16
    assert warned[0].startswith("skillgrad:demo.yaml: not applied") and "env.max_tokens" not in warned[0]
    assert load_config("skillgrad:demo.yaml", []).model.teacher.max_tokens == 96


@pytest.mark.parametrize(("marker", "error"), [
    ("[env.max_tokens]", "names env.max_tokens, which"),
    ("[train.seed]", "'train.seed' is no model.teacher.*"),
    ("{model: x}", "must be a list of dotted keys"),
])
def test_a_bad_marker_is_one_line_naming_the_file(tmp_path: Path, marker: str, error: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(f"_embedded_only_: {marker}\ntrain: {{seed: 1}}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="mine.yaml") as e:
        load_config(path)
    assert error in str(e.value) and "\n" not in str(e.value)


def test_a_marker_in_a_mapping_works_like_one_in_a_file() -> None:
    from skillgrad.config.loader import load_mapping_with_info

    data: dict[str, Any] = {"_embedded_only_": ["model.teacher.max_tokens"], "model": {"teacher": {"max_tokens": 64}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert load_mapping_with_info(data, ["model.teacher.provider=anthropic"])[0].model.teacher.max_tokens == 0
    assert load_mapping_with_info(data)[0].model.teacher.max_tokens == 64
