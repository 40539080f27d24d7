"""The project's memory file as the agent sees it: `@path` imports followed, the learned block's home, a fit.

Claude Code reads `CLAUDE.md` with its imports: `@path` (relative to the importing file, `~/` for home,
absolute allowed), recursively up to 5 hops, never inside code spans or fenced blocks, each file once. A
238-byte `CLAUDE.md` that only says `@AGENTS.md` is a pointer: the instructions, and so the learned block,
live in `AGENTS.md`. A small student cannot read a 15 KB memory file in a 4k context; `fit_memory` keeps
the sections most relevant to the night's tasks (and always the learned block) within a token budget, and
says what it left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillgrad.skill.learned import LEARNED_END as END
from skillgrad.skill.learned import LEARNED_START as BEGIN

MAX_IMPORT_HOPS = 5
_IMPORT = re.compile(r"(?<![\w`@/])@([^\s`'\"<>()\[\]{}]+)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_HEADING = re.compile(r"^#{1,6}\s")
_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}")
_STOP = frozenset("the and for with that this from are was were not but you your use can how what which when "
                  "into have has all any each only its our their then than them they".split())


@dataclass
class MemoryDoc:
    entry: Path                 # the file the agent loads (CLAUDE.md / AGENTS.md)
    home: Path                  # the file that holds (or will hold) the learned block
    files: list[Path] = field(default_factory=list)  # every file read, in import order



def _imports(text: str) -> list[str]:
    """`@path` references outside fenced blocks and code spans, in order."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out += _IMPORT.findall(_CODE_SPAN.sub("", line))
    return out


def _resolve(ref: str, base: Path) -> Path | None:
    ref = ref.rstrip(".,;:!?")  # "see @docs/style.md." ends a sentence, not the name
    path = Path(ref).expanduser() if ref.startswith("~/") else (base.parent / ref)
    try:
        path = path.resolve()
    except (OSError, RuntimeError):
        return None
    return path if path.is_file() else None  # `@someone` in prose is not a file: left as text


def import_tree(entry: Path) -> list[tuple[Path, list[Path]]]:
    """(file, the files it imports) for the entry and everything it imports, depth-first, each file once."""
    seen: set[Path] = set()
    out: list[tuple[Path, list[Path]]] = []

    def walk(path: Path, hops: int) -> None:
        path = path.resolve()
        if path in seen:
            return
        seen.add(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return
        children = [p for p in (_resolve(r, path) for r in _imports(text)) if p is not None] \
            if hops < MAX_IMPORT_HOPS else []
        out.append((path, children))
        for child in children:
            walk(child, hops + 1)

    walk(entry, 0)
    return out


def _is_pointer(text: str) -> bool:
    """Only imports, headings and blank lines: the file points elsewhere for its instructions."""
    body = [ln for ln in text.splitlines() if ln.strip() and not _HEADING.match(ln)]
    return bool(body) and all(_IMPORT.sub("", ln).strip(" -*\t") == "" for ln in body)


def memory_doc(entry: Path) -> MemoryDoc:
    """Where the learned block lives: the file that already has one; else follow pointer files (a CLAUDE.md
    that only imports AGENTS.md) to the first file with instructions of its own; else the entry."""
    tree = import_tree(entry)
    files = [p for p, _ in tree]
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    home = next((p for p in files if BEGIN in texts[p]), None)
    if home is None:
        home = files[0] if files else entry.resolve()
        children = dict(tree)
        while home in texts and _is_pointer(texts[home]) and children.get(home):
            home = children[home][0]
    return MemoryDoc(entry=entry.resolve(), home=home, files=files)


def expanded_text(doc: MemoryDoc, home_text: str) -> str:
    """The memory as the agent reads it: the entry with each imported file's text after its importer (an
    import line alone is replaced by the file). `home_text` stands in for the home file (the block ensured)."""
    tree = dict(import_tree(doc.entry))
    done: set[Path] = set()

    def text_of(path: Path) -> str:
        done.add(path)
        text = home_text if path == doc.home else path.read_text(encoding="utf-8")
        tail: list[str] = []
        lines = []
        for line in text.splitlines():
            found = [_resolve(r, path) for r in _IMPORT.findall(line)]
            refs = [r for r in found if r is not None and r in tree.get(path, []) and r not in done]
            if refs and _IMPORT.sub("", line).strip(" -*\t") == "":
                lines += [text_of(r).rstrip() for r in refs]  # the import line becomes the file
            else:
                lines.append(line)
                tail += [text_of(r).rstrip() for r in refs]
        return "\n".join([*lines, *tail]) + "\n"

    return text_of(doc.entry)


# ---------------------------------------------------------------- fitting a small context

def sections(text: str) -> list[str]:
    """Markdown sections (a heading and its body; the text before the first heading is one too), with the
    learned block a part of its own, kept whole: the section it was appended to is ranked like any other (the
    block sits at the end of the file's last section, which need not be relevant to anything)."""
    out: list[str] = []
    cur: list[str] = []
    in_block = fenced = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        if BEGIN in line and not in_block:
            if cur:
                out.append("".join(cur))
            cur, in_block = [], True
        elif _HEADING.match(line) and cur and not in_block and not fenced:
            out.append("".join(cur))
            cur = []
        cur.append(line)
        if END in line and in_block:
            out.append("".join(cur))
            cur, in_block = [], False
    if cur:
        out.append("".join(cur))
    merged: list[str] = []  # blank lines between the block and the next heading go with that heading
    for part in out:
        if merged and not merged[-1].strip():
            merged[-1] += part
        else:
            merged.append(part)
    return merged


def _words(text: str) -> set[str]:
    return {w[:-1] if w.endswith("s") and len(w) > 4 else w for w in _WORD.findall(text.lower())} - _STOP


def relevance(parts: Sequence[str], tasks: Sequence[str]) -> list[float]:
    """Per section: the rarity-weighted words it shares with the tasks (idf), per square root of its length,
    so a short section about the task's subject outranks a long one that shares common words; a word of the
    section's heading (its subject) counts twice."""
    wanted = _words(" ".join(tasks))
    bags = [_words(p) for p in parts]
    heads = [_words(p.lstrip().splitlines()[0]) if p.strip() and _HEADING.match(p.lstrip()) else set() for p in parts]
    df = {w: sum(w in b for b in bags) for w in wanted}
    n = len(parts)
    return [sum(math.log((n + 1) / (df[w] + 0.5)) * (2 if w in h else 1) for w in wanted & b)
            / math.sqrt(max(len(b), 1)) for b, h in zip(bags, heads, strict=True)]


def _with_bodies(parts: list[str]) -> list[str]:
    """A heading with no body of its own ("## Architecture" right before "### Storage") joins the section after
    it: kept alone it is an empty heading, and its words are the subject of what follows."""
    out: list[str] = []
    carry = ""
    for p in parts:
        lines = [x for x in p.splitlines() if x.strip()]
        if BEGIN not in p and len(lines) == 1 and _HEADING.match(lines[0]):
            carry += p
            continue
        if BEGIN in p and carry:  # the learned block is kept whole: a bare heading before it stays on its own
            out.append(carry)
        out.append(p if BEGIN in p else carry + p)
        carry = ""
    if carry:
        out.append(carry)
    return out


def _trim(part: str, tasks: Sequence[str], room: int, count: Callable[[str], int]) -> str:
    """A relevant section too long to keep whole: its heading and the paragraphs that share words with the
    tasks, in order, while they fit `room` tokens ("" when not even one does)."""
    wanted = _words(" ".join(tasks))
    paras = re.split(r"(?<=\n)\s*\n", part)
    head = paras[0] if paras and _HEADING.match(paras[0].lstrip()) else ""
    kept, used = ([head], count(head)) if head else ([], 0)
    for para in paras[1 if head else 0:]:
        if wanted & _words(para) and used + count(para) <= room:
            kept.append(para)
            used += count(para)
    return "".join(kept) if len(kept) > (1 if head else 0) else ""


@dataclass
class Fit:
    text: str
    tokens_before: int
    tokens_after: int
    dropped: list[str] = field(default_factory=list)  # first lines of the sections left out

    @property
    def reduced(self) -> bool:
        return bool(self.dropped)


def fit_memory(text: str, budget: int, tasks: Sequence[str], count: Callable[[str], int]) -> Fit | None:
    """`text` within `budget` tokens: unchanged when it fits; else the learned block's section, then the
    sections sharing the most words with the tasks (in their original order), while they fit. None when
    even the learned block's section does not fit."""
    total = count(text)
    if total <= budget:
        return Fit(text, total, total)
    parts = _with_bodies(sections(text))
    sizes = [count(p) for p in parts]
    must = [i for i, p in enumerate(parts) if BEGIN in p]
    if sum(sizes[i] for i in must) > budget:
        return None
    score = relevance(parts, tasks)
    ranked = sorted((i for i in range(len(parts)) if i not in must), key=lambda i: (-score[i], i))
    keep, used = set(must), sum(sizes[i] for i in must)
    chosen = {i: parts[i] for i in must}
    for i in ranked:
        if used + sizes[i] <= budget:
            keep.add(i)
            chosen[i] = parts[i]
            used += sizes[i]
        elif score[i] > 0:  # about the tasks' subject but too long: its relevant paragraphs
            cut = _trim(parts[i], tasks, budget - used, count)
            if cut:
                keep.add(i)
                chosen[i] = cut
                used += count(cut)
    out = "".join(chosen[i] for i in sorted(keep))
    dropped = [parts[i].strip().splitlines()[0][:80] for i in range(len(parts)) if i not in keep and parts[i].strip()]
    return Fit(out, total, count(out), dropped)
