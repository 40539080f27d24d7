"""A skill folder on disk: read and validated (SKILL.md, evals, trigger queries, linked references), turned into
the one document the optimizer trains, and written back atomically with an undo.

The trained document is the package: the SKILL.md body, then each `references/` file the body links to under a
`<!-- file: references/x.md -->` marker line. One learning-rate budget and one gate therefore cover the body and
its references; scripts and assets are never part of it, so no edit can reach them. The frontmatter stays out
of the body target too (the description has its own target: trigger.py).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import write_bytes
from skillgrad.envs.skillfolder.spec import (
    EvalCase,
    Frontmatter,
    TriggerQuery,
    frontmatter_problems,
    parse_evals,
    parse_queries,
    split_frontmatter,
)
from skillgrad.errors import DataError, UsageError

MARKER = "<!-- file: {} -->"
_MARKER_RE = re.compile(r"^<!-- file: (references/[^\s>]+) -->[ \t]*$", re.MULTILINE)
# A relative link or a bare path to a file under references/ (Markdown link, backticks or plain text).
_REF_LINK = re.compile(r"(?<![\w/.-])(references/[\w./-]+\.(?:md|markdown|txt))\b")
UNDO_DIR = ".skillgrad-undo"


@dataclass
class SkillFolder:
    root: Path
    front: Frontmatter
    cases: list[EvalCase] = field(default_factory=list)
    queries: list[TriggerQuery] = field(default_factory=list)
    references: dict[str, str] = field(default_factory=dict)  # linked references/ files: path -> text

    @property
    def name(self) -> str:
        return str(self.front.meta.get("name", self.root.name))

    @property
    def description(self) -> str:
        return str(self.front.meta.get("description", ""))

    def package(self, *, with_references: bool = True) -> str:
        """The trained document: the body, then each linked reference under its marker."""
        parts = [self.front.body.rstrip("\n")]
        if with_references:
            parts += [f"{MARKER.format(p)}\n{t.rstrip(chr(10))}" for p, t in self.references.items()]
        return "\n\n".join(parts) + "\n"


def split_package(text: str, paths: list[str]) -> tuple[str, dict[str, str]]:
    """(body, {reference path: text}) from a trained package; ValueError naming a marker that was lost, added
    twice or names a file the folder does not link."""
    marks = list(_MARKER_RE.finditer(text))
    found = [m.group(1) for m in marks]
    for p in paths:
        if found.count(p) != 1:
            raise ValueError(f"the package's marker line for {p} is {'missing' if p not in found else 'repeated'}")
    extra = sorted(set(found) - set(paths))
    if extra:
        raise ValueError(f"the package has a marker for {extra[0]}, which SKILL.md does not link")
    body = text[: marks[0].start()] if marks else text
    files = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        files[m.group(1)] = text[m.end():end].strip("\n") + "\n"
    return body.rstrip("\n") + "\n", files


def linked_references(body: str, root: Path) -> list[str]:
    """references/ files the SKILL.md body names that exist in the folder, in order of first mention."""
    out: list[str] = []
    for m in _REF_LINK.finditer(body):
        p = m.group(1).rstrip(".")
        if p not in out and (root / p).is_file() and (root / p).resolve().is_relative_to(root.resolve()):
            out.append(p)
    return out


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None


def queries_path(root: Path) -> Path | None:
    for rel in ("evals/eval_queries.json", "eval_queries.json", "evals/trigger_queries.json"):
        if (root / rel).is_file():
            return root / rel
    return None


def read_skill_folder(path: str | Path, *, need_evals: bool = True, need_queries: bool = False) -> SkillFolder:
    """Read and validate a skill folder; every frontmatter problem is reported at once, one line each
    (DataError, exit code 2)."""
    root = Path(path).expanduser()
    skill_md = root / "SKILL.md"
    if not root.is_dir():
        raise DataError(f"{path}: not a folder; give the skill's folder (the one holding SKILL.md)")
    if not skill_md.is_file():
        raise DataError(f"{path}: no SKILL.md in the folder; a skill folder holds SKILL.md")
    try:
        parsed = split_frontmatter(skill_md.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise DataError(f"{skill_md}: not UTF-8 text") from None
    if isinstance(parsed, str):
        raise DataError(f"{root}/{parsed}")
    problems = frontmatter_problems(parsed.meta, root.resolve().name)
    if problems:
        raise DataError("\n".join(f"{root}/{p}" for p in problems))
    folder = SkillFolder(root=root, front=parsed)
    folder.references = {p: (root / p).read_text(encoding="utf-8") for p in linked_references(parsed.body, root)}
    evals = root / "evals" / "evals.json"
    if evals.is_file():
        try:
            skill_name, folder.cases = parse_evals(_json(evals))
        except ValueError as e:
            raise DataError(f"{evals}: {e}") from None
        if skill_name and skill_name != folder.name:
            raise DataError(f"{evals}: skill_name {skill_name!r} is not the SKILL.md name {folder.name!r}; "
                            "make them equal")
        for c in folder.cases:
            found = [eval_file_path(root, f) for f in c.files]
            for f, rel in zip(c.files, found, strict=True):
                if rel is None:
                    raise DataError(f"{evals}: eval {c.id} names file {f!r}, which is neither in {root} nor in "
                                    f"{root / 'evals'}; fix the path (relative to the skill folder or to evals/)")
            c.files = [rel for rel in found if rel is not None]
    elif need_evals:
        raise DataError(f"{root}: no evals/evals.json; add test cases "
                        '({"skill_name": ..., "evals": [{"id", "prompt", "expected_output", "assertions"}]})')
    qp = queries_path(root)
    if qp is not None:
        try:
            folder.queries = parse_queries(_json(qp))
        except ValueError as e:
            raise DataError(f"{qp}: {e}") from None
    elif need_queries:
        raise DataError(f"{root}: no evals/eval_queries.json; --target description needs trigger queries "
                        '([{"query": ..., "should_trigger": true|false}])')
    return folder


def eval_file_path(root: Path, name: str) -> str | None:
    """An eval's input file as a path relative to the skill folder, or None when it is in neither place authors
    use: relative to the folder (the Agent Skills guide, skill-creator: `evals/files/x.csv`) or to evals/
    (sample-agent-skill-eval's tool stages `files/x.csv` from there). Never a file outside the folder."""
    for base in (Path(), Path("evals")):
        path = root / base / name
        if path.is_file() and path.resolve().is_relative_to(root.resolve()):
            return (base / name).as_posix()
    return None


def eval_files_text(root: Path, files: list[str], *, max_chars: int = 4000) -> str:
    """The eval's input files as the student sees them before the request (text files inline, others named)."""
    parts = []
    for f in files:
        p = root / f
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            parts.append(f"{f}: (a binary file of {p.stat().st_size if p.exists() else 0} bytes)")
            continue
        cut = "\n[... cut]" if len(text) > max_chars else ""
        parts.append(f"{f}:\n```\n{text[:max_chars].rstrip()}{cut}\n```")
    return ("Input files:\n\n" + "\n\n".join(parts)) if parts else ""


# ------------------------------------------------------------------ write back, with undo
def folder_texts(folder: SkillFolder, package: str, *, description: str | None = None) -> dict[str, str]:
    """The files a trained package (and optionally a new description) change: SKILL.md and linked references."""
    body, refs = split_package(package, list(folder.references))
    head = folder.front.head
    if description is not None and description != folder.description:
        head = replace_description(head, description)
    out = {"SKILL.md": head + body}
    out.update({p: t for p, t in refs.items() if t != folder.references[p]})
    return out


def replace_description(head: str, description: str) -> str:
    """The frontmatter block with `description` replaced by a double-quoted one-line value; other keys unchanged."""
    lines = head.splitlines(keepends=True)
    out, skip = [], False
    for line in lines:
        if skip and (line.startswith((" ", "\t")) or not line.strip()):
            continue  # the old value's continuation lines (a folded or literal block)
        skip = False
        if line.startswith("description:"):
            out.append(f"description: {json.dumps(description, ensure_ascii=False)}\n")
            skip = True
            continue
        out.append(line)
    return "".join(out)


def adopt_texts(root: Path, texts: dict[str, str]) -> Path:
    """Write `texts` (path relative to the folder -> new text) into the folder: the old bytes are backed up under
    `.skillgrad-undo/<time>/` first, then each file is replaced by write-temp-then-rename. Returns the backup."""
    if any(Path(rel).parts[0] == "scripts" or ".." in Path(rel).parts for rel in texts):
        raise UsageError("adopt: scripts/ and paths outside the skill folder are never written")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    backup = root / UNDO_DIR / stamp
    backup.mkdir(parents=True)
    manifest = []
    for rel in texts:
        live = root / rel
        if live.is_file():
            (backup / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(live, backup / rel)
        manifest.append({"path": rel, "existed": live.is_file()})
    write_bytes(backup / "manifest.json", json.dumps({"files": manifest}, indent=1).encode())
    for rel, text in texts.items():
        write_bytes(root / rel, text.encode("utf-8"))
    return backup


def undo_last(root: Path) -> Path:
    """Restore the files of the last adoption from its backup, byte for byte, and drop the backup."""
    base = root / UNDO_DIR
    done = sorted(p for p in base.iterdir() if (p / "manifest.json").is_file()) if base.is_dir() else []
    if not done:
        raise UsageError(f"undo: {root} has no adoption to undo ({UNDO_DIR}/ is empty)")
    last = done[-1]
    for entry in json.loads((last / "manifest.json").read_text(encoding="utf-8"))["files"]:
        rel = entry["path"]
        if entry["existed"]:
            write_bytes(root / rel, (last / rel).read_bytes())
        else:
            (root / rel).unlink(missing_ok=True)
    shutil.rmtree(last)
    return last
