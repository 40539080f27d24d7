"""Every user-fixable config problem is ONE line naming the file, the key and the fix (exit code 2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgrad.config.loader import load_config
from skillgrad.errors import ConfigError


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # messages show paths relative to the working directory
    return tmp_path


def error_of(path: str | Path | None, text: str | None = None, overrides: tuple[str, ...] = ()) -> str:
    if text is not None:
        Path(path).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(path, list(overrides))
    msg = str(exc.value)
    assert "\n" not in msg, msg
    assert exc.value.exit_code == 2
    return msg


def test_missing_file(in_tmp):
    assert error_of("nope.yaml") == "config file not found: nope.yaml"


def test_missing_base_names_the_including_file(in_tmp):
    msg = error_of("cfg.yaml", "_base_: gone.yaml\n")
    assert msg == "config file not found: gone.yaml (from _base_ in cfg.yaml)"


def test_malformed_yaml_has_line_and_column(in_tmp):
    msg = error_of("cfg.yaml", "train:\n  batch_size: 4\n   seed: 1\n")
    assert msg == "cfg.yaml:3:8: invalid YAML: mapping values are not allowed here; fix the syntax there"


def test_unclosed_bracket(in_tmp):
    msg = error_of("cfg.yaml", "evaluation:\n  leading_words: [MUST, NEVER\n")
    assert msg.startswith("cfg.yaml:3:1: invalid YAML: ")


def test_duplicate_key_is_an_error(in_tmp):
    msg = error_of("cfg.yaml", "train:\n  seed: 1\n  seed: 2\n")
    assert msg == "cfg.yaml:3:3: invalid YAML: duplicate key 'seed' (keep one of them); fix the syntax there"


def test_top_level_not_a_mapping(in_tmp):
    msg = error_of("cfg.yaml", "- train\n- optimizer\n")
    assert msg.startswith("cfg.yaml: the top level must be a mapping of sections (model, train,")
    assert msg.endswith("got a list")


def test_section_not_a_mapping(in_tmp):
    msg = error_of("cfg.yaml", "optimizer: gpt-4o\n")
    assert msg.startswith("section 'optimizer' in cfg.yaml must be a mapping of keys, got 'gpt-4o'")


def test_unknown_key_did_you_mean(in_tmp):
    msg = error_of("cfg.yaml", "optimizer:\n  learnig_rate: 3\n")
    assert msg == "unknown key 'optimizer.learnig_rate' in cfg.yaml; did you mean 'optimizer.learning_rate'?"


def test_unknown_nested_role_key(in_tmp):
    msg = error_of("cfg.yaml", "model:\n  teacher:\n    modle: gpt-4o\n")
    assert msg == "unknown key 'model.teacher.modle' in cfg.yaml; did you mean 'model.teacher.model'?"


def test_flat_name_inside_its_section_points_to_structured_name(in_tmp):
    msg = error_of("cfg.yaml", "optimizer:\n  edit_budget: 3\n")
    assert msg == "unknown key 'optimizer.edit_budget' in cfg.yaml; did you mean 'optimizer.learning_rate'?"


def test_unknown_key_without_close_match(in_tmp):
    msg = error_of("cfg.yaml", "train:\n  zzzz: 1\n")
    assert msg == ("unknown key 'train.zzzz' in cfg.yaml; run `python -m skillgrad.config.docs` "
                   "for the valid keys")


def test_unknown_top_level_key(in_tmp):
    assert error_of("cfg.yaml", "batchsize: 3\n") == "unknown key 'batchsize' in cfg.yaml; did you mean 'batch_size'?"
    msg = error_of("cfg.yaml", "history_steps: 3\n")  # not a SkillOpt key: SkillOpt's flat env keys are accepted
    assert msg.startswith("unknown key 'history_steps' in cfg.yaml; top-level keys are sections")
    assert msg.endswith("environment options go under env: (env.history_steps)")


def test_unknown_key_names_the_file_that_holds_it(in_tmp):
    Path("base.yaml").write_text("gradient:\n  minibatch_sise: 2\n", encoding="utf-8")
    msg = error_of("child.yaml", "_base_: base.yaml\n")
    assert msg == "unknown key 'gradient.minibatch_sise' in base.yaml; did you mean 'gradient.minibatch_size'?"


def test_wrong_type(in_tmp):
    msg = error_of("cfg.yaml", "optimizer:\n  learning_rate: four\n")
    assert msg.startswith("optimizer.learning_rate in cfg.yaml: Input should be a valid integer")
    assert msg.endswith("(got 'four')")


def test_wrong_type_names_the_layer_that_set_it(in_tmp):
    Path("base.yaml").write_text("train:\n  batch_size: lots\n  seed: 1\n", encoding="utf-8")
    msg = error_of("child.yaml", "_base_: base.yaml\ntrain:\n  seed: 2\n")
    assert msg.startswith("train.batch_size in base.yaml: ")


def test_wrong_literal_value(in_tmp):
    msg = error_of("cfg.yaml", "optimizer:\n  lr_scheduler: exponential\n")
    assert msg.startswith("optimizer.lr_scheduler in cfg.yaml: Input should be 'constant', 'linear'")
    assert msg.endswith("(got 'exponential')")


def test_several_errors_are_counted(in_tmp):
    msg = error_of("cfg.yaml", "train:\n  batch_size: x\n  seed: y\n  num_epochs: z\n")
    assert msg.startswith("train.num_epochs in cfg.yaml: ")
    assert msg.endswith("(got 'z') (and 2 more)")


def test_custom_validator_message(in_tmp):
    msg = error_of("cfg.yaml", "gradient:\n  merge_batch_size: 1\n")
    assert msg == ("gradient.merge_batch_size in cfg.yaml: gradient.merge_batch_size must be >= 2 "
                   "(a merge combines at least two patches) (got 1)")


def test_cross_field_rule_names_each_source(in_tmp):
    msg = error_of("cfg.yaml", "optimizer:\n  min_learning_rate: 3\n", ("edit_budget=2",))
    assert msg == ("invalid config: optimizer.min_learning_rate must not exceed optimizer.learning_rate "
                   "(optimizer.min_learning_rate from cfg.yaml, optimizer.learning_rate from --cfg-options)")


@pytest.mark.parametrize("bad", ["foo", "=3", "a..b=1", ".x=1", "train.=1"])
def test_bad_override_syntax(bad):
    assert error_of(None, overrides=(bad,)) == f"--cfg-options expects key=value, got {bad!r}"


def test_unknown_override_keys():
    assert error_of(None, overrides=("optimizer.learnig_rate=3",)) == (
        "unknown key 'optimizer.learnig_rate' in --cfg-options; did you mean 'optimizer.learning_rate'?")
    assert error_of(None, overrides=("edit_budgt=3",)) == (
        "unknown key 'edit_budgt' in --cfg-options; did you mean 'edit_budget' (optimizer.learning_rate)?")


def test_override_wrong_type():
    msg = error_of(None, overrides=("train.batch_size=many",))
    assert msg.startswith("train.batch_size in --cfg-options: Input should be a valid integer")


def test_bad_json_override():
    msg = error_of(None, overrides=("evaluation.leading_words=[MUST",))
    assert msg.startswith("--cfg-options evaluation.leading_words: value '[MUST' is not valid JSON")


def test_bad_base_type(in_tmp):
    msg = error_of("cfg.yaml", "_base_: {a: 1}\n")
    assert msg == "_base_ in cfg.yaml must be a relative path or a list of them, got {'a': 1}"


def test_not_utf8(in_tmp):
    Path("latin.yaml").write_bytes("env:\n  name: caf\xe9\n".encode("latin-1"))
    msg = error_of("latin.yaml")
    assert msg.startswith("latin.yaml: not UTF-8 text") and msg.endswith("save it as UTF-8")


def test_absolute_path_outside_cwd_is_shown_absolute(tmp_path, monkeypatch):
    sub = tmp_path / "elsewhere"
    sub.mkdir()
    monkeypatch.chdir(sub)
    target = tmp_path / "x.yaml"
    assert error_of(target) == f"config file not found: {os.fspath(target)}"
