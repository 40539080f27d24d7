"""The memory file as Claude Code reads it (`@path` imports, where the learned block lives) and fitting a
real-size CLAUDE.md (14.7 KB, about 4,000 SmolLM2 tokens) into the embedded student's context (issue 21)."""

from __future__ import annotations

from pathlib import Path

from skillgrad.skill.learned import LEARNED_END, LEARNED_START, ensure_learned
from skillgrad.sleep.context_window import local_window
from skillgrad.sleep.memory import expanded_text, fit_memory, import_tree, memory_doc, sections

REAL = Path(__file__).parent / "fixtures" / "memory" / "CLAUDE_real_size.md"


def _pointer_project(tmp_path: Path) -> Path:
    (tmp_path / "CLAUDE.md").write_text("# Claude\n\n@AGENTS.md\n")  # a pointer file, as many repos have
    (tmp_path / "AGENTS.md").write_text("# Agents\n\nUse pnpm, not npm.\nStyle: see @docs/style.md.\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "style.md").write_text("## Style\n\nTabs. Back to @../AGENTS.md (a cycle).\n"
                                                 "`@not/an/import.md` and ```@fenced``` are text.\n")
    return tmp_path / "CLAUDE.md"


def test_imports_are_followed_relative_to_the_importing_file(tmp_path: Path) -> None:
    doc = memory_doc(_pointer_project(tmp_path))
    assert [p.name for p in doc.files] == ["CLAUDE.md", "AGENTS.md", "style.md"]
    assert doc.home == (tmp_path / "AGENTS.md").resolve()  # the block goes where the instructions live
    text = expanded_text(doc, ensure_learned((tmp_path / "AGENTS.md").read_text()))
    assert "@AGENTS.md" not in text and "Use pnpm, not npm." in text and "Tabs." in text
    assert text.count(LEARNED_START) == 1 and text.count("Use pnpm") == 1  # each file once, cycles cut


def test_a_file_with_its_own_instructions_or_a_block_is_the_home(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Claude\n\nRun tests first.\n@AGENTS.md\n")
    (tmp_path / "AGENTS.md").write_text("# Agents\n")
    assert memory_doc(tmp_path / "CLAUDE.md").home.name == "CLAUDE.md"
    (tmp_path / "AGENTS.md").write_text(ensure_learned("# Agents\n"))
    assert memory_doc(tmp_path / "CLAUDE.md").home.name == "AGENTS.md"


def test_import_depth_is_limited_to_five_hops(tmp_path: Path) -> None:
    for i in range(8):
        (tmp_path / f"f{i}.md").write_text(f"level {i}\n@f{i + 1}.md\n")
    assert [p.name for p, _ in import_tree(tmp_path / "f0.md")] == [f"f{i}.md" for i in range(6)]


def test_real_size_memory_fits_the_embedded_students_context_by_relevant_sections() -> None:
    n_ctx, count = local_window("", "student")
    assert n_ctx == 8192  # SmolLM2-135M's trained context, read from the GGUF (the night used a fixed 4096)
    text = ensure_learned(REAL.read_text())
    assert count(text) > 4000 - 100  # over the old fixed window once the skill and task are added
    fit = fit_memory(text, 600, ["Which command installs the dependencies? Use pnpm, not npm."], count)
    assert fit is not None and fit.reduced and fit.tokens_after <= 600 < fit.tokens_before
    assert LEARNED_START in fit.text and "## Commands" in fit.text  # the block always, the relevant section
    assert "## Glossary" in fit.dropped
    assert fit_memory(text, 10_000, [], count).text == text  # what fits is never cut
    assert fit_memory(ensure_learned("x\n", heading="## " + "long words here " * 200), 50, [], count) is None


def test_sections_keep_the_learned_block_whole_and_apart() -> None:
    text = ensure_learned("# A\n\na\n", heading="## Learned\n\n# not a split inside the block")
    parts = sections(text + "\n# B\n\nb\n")
    # the block is one part of its own: the section it was appended to is kept or cut by its own relevance
    assert len(parts) == 3 and parts[0].strip() == "# A\n\na" and parts[1].startswith(LEARNED_START)
    assert "# not a split" in parts[1] and parts[1].rstrip().endswith(LEARNED_END) and parts[2].strip() == "# B\n\nb"
    assert "".join(parts) == text + "\n# B\n\nb\n"


def test_the_memory_cut_keeps_the_tasks_subject_not_empty_headings():
    """Issue 32 finding 8: a long memory file cut for a small student keeps what concerns the tasks (the
    subject's section, trimmed to its relevant paragraphs when it is too long), never a bare heading."""
    from skillgrad.sleep.memory import fit_memory

    text = ("# Project\n\n## Architecture\n\n### Session hooks\n\n"
            + "The clear hook fires when a session is cleared with /clear; it rotates the session log.\n\n"
            + "".join(f"Hook detail {i}: the hook payload carries the session id and transcript path.\n\n"
                      for i in range(12))
            + "### Storage\n\nRows live in SQLite.\n\n## Commit rules\n\nUse conventional commits.\n\n"
            + "## Empty\n\n## Also empty\n\n<!-- SKILLGRAD:LEARNED START -->\n<!-- SKILLGRAD:LEARNED END -->\n")
    words = lambda s: len(s.split())  # noqa: E731
    fit = fit_memory(text, 90, ["Design how the session hook can detect a /clear and rotate the log"], words)
    assert fit is not None and fit.reduced
    assert "The clear hook fires when a session is cleared" in fit.text  # the subject, though too long whole
    assert "## Empty\n\n## Also empty" not in fit.text and "### Session hooks" in fit.text
    assert words(fit.text) <= 90
