"""The generated config reference, and the docs page's copy of it (docs/configuration.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from skillgrad.config.docs import (
    END_MARKER,
    START_MARKER,
    check_readme_reference,
    config_reference_markdown,
    embed_reference,
    main,
)
from skillgrad.config.schema import Config

PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def test_one_table_per_section_with_every_key():
    md = config_reference_markdown()
    for section, info in Config.model_fields.items():
        assert f"## `{section}`" in md
        for key in info.annotation.model_fields:
            assert f"| `{key}` |" in md, f"{section}.{key} missing"
    assert "## `model.teacher` / `model.student`" in md


def test_rows_show_type_default_description_and_flat_name():
    md = config_reference_markdown()
    row = next(line for line in md.splitlines() if line.startswith("| `learning_rate` |"))
    assert row == "| `learning_rate` | int (≥ 0) | `4` | Edit budget (max edits applied per step). | `edit_budget` |"
    sched = next(line for line in md.splitlines() if line.startswith("| `lr_scheduler` |"))
    assert '"constant" \\| "linear" \\| "cosine" \\| "autonomous"' in sched
    assert "| `name` | str | `\"\"` |" in md and "| `env` |" in md  # env.name's flat name is `env`


def test_table_rows_have_constant_column_count():
    for block in config_reference_markdown().split("\n## ")[1:]:
        rows = [line for line in block.splitlines() if line.startswith("|")]
        counts = {line.replace("\\|", "").count("|") for line in rows}
        assert len(counts) == 1, block.splitlines()[0]


def test_module_entry_prints_reference():
    out = subprocess.run([sys.executable, "-m", "skillgrad.config.docs"], capture_output=True, text=True,
                         check=True).stdout
    assert out == config_reference_markdown()


def test_check_and_embed(tmp_path):
    stale = f"# x\n\n{START_MARKER}\nold table\n{END_MARKER}\n\nmore\n"
    assert not check_readme_reference(stale)
    assert not check_readme_reference("no markers here")
    fresh = embed_reference(stale)
    assert check_readme_reference(fresh)
    assert fresh.startswith("# x\n\n") and fresh.endswith(f"{END_MARKER}\n\nmore\n")
    path = tmp_path / "README.md"
    path.write_text(stale, encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert main(["--write", str(path)]) == 0
    assert main(["--check", str(path)]) == 0


def test_docs_page_embeds_current_reference():
    assert PAGE.is_file() and START_MARKER in PAGE.read_text(encoding="utf-8"), "docs/configuration.md lost its markers"
    assert check_readme_reference(PAGE.read_text(encoding="utf-8")), (
        "config reference is stale: run `python -m skillgrad.config.docs --write docs/configuration.md`")


def test_out_root_default_is_what_the_code_does(tmp_path):
    """The reference states the default run directory; it must be the one default_run_dir picks."""
    from skillgrad.engine.session import config_fingerprint, default_run_dir

    cfg = Config.model_validate({"env": {"name": "facts"}})
    assert default_run_dir(cfg, tmp_path / "my.yaml") == Path("runs") / f"my-{config_fingerprint(cfg)}"
    assert default_run_dir(cfg, None) == Path("runs") / f"facts-{config_fingerprint(cfg)}"
    row = next(line for line in config_reference_markdown().splitlines() if line.startswith("| `out_root` |"))
    assert "runs/&lt;config file stem, else env name&gt;-&lt;config fingerprint&gt;" in row
