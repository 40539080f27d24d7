"""Protected regions of a skill document (SkillOpt-compatible HTML-comment markers).

A region is `<!-- NAME_START --> ... <!-- NAME_END -->`. Edits never touch a region; the trainer writes
them through `set_region`. Canonical layout: the body first, then the blocks at the end in the order
SLOW_UPDATE, APPENDIX, separated by blank lines.
"""

from __future__ import annotations

import re
from typing import NamedTuple

REGION_NAMES = ("SLOW_UPDATE", "APPENDIX")


def start_marker(name: str) -> str:
    return f"<!-- {name}_START -->"


def end_marker(name: str) -> str:
    return f"<!-- {name}_END -->"


_ALL_MARKERS = tuple(m for n in REGION_NAMES for m in (start_marker(n), end_marker(n)))
_MARKER_RE = re.compile("|".join(re.escape(m) for m in _ALL_MARKERS))


class Region(NamedTuple):
    """A protected block: `text[start:end]` includes both markers."""

    name: str
    start: int
    end: int


def find_regions(text: str) -> list[Region]:
    """All protected blocks in document order.

    Scanning is sequential: markers inside a block belong to it; a start marker with no end marker
    makes a block that runs to the end of the text; a stray end marker is ordinary text.
    """
    regions: list[Region] = []
    pos = 0
    while True:
        best: tuple[int, str] | None = None
        for name in REGION_NAMES:
            i = text.find(start_marker(name), pos)
            if i != -1 and (best is None or i < best[0]):
                best = (i, name)
        if best is None:
            return regions
        s, name = best
        j = text.find(end_marker(name), s + len(start_marker(name)))
        e = len(text) if j == -1 else j + len(end_marker(name))
        regions.append(Region(name, s, e))
        pos = e


def in_protected(text: str, start: int, end: int) -> bool:
    """True if the span [start, end) overlaps a protected block (an empty span: lies strictly inside one)."""
    for r in find_regions(text):
        if start == end:
            if r.start < start < r.end:
                return True
        elif start < r.end and end > r.start:
            return True
    return False


def strip_markers(s: str) -> str:
    """Remove every marker string, so edit content can never open or close a region.

    Repeats until none is left: removing one marker can join its neighbours into another.
    """
    while True:
        out = _MARKER_RE.sub("", s)
        if out == s:
            return out
        s = out


def _inner(text: str, r: Region) -> str:
    inner = text[r.start + len(start_marker(r.name)) : r.end]
    if inner.endswith(end_marker(r.name)):
        inner = inner[: -len(end_marker(r.name))]
    return inner.strip("\n")


def region_contents(text: str, name: str) -> list[str]:
    """Inner content of every block called `name`, in document order."""
    return [_inner(text, r) for r in find_regions(text) if r.name == name]


def get_region(text: str, name: str) -> str | None:
    """Inner content (without markers) of the first block called `name`, or None if there is none."""
    contents = region_contents(text, name)
    return contents[0] if contents else None


def _is_canonical(text: str, regions: list[Region]) -> bool:
    """Blocks form the tail: only whitespace between and after them."""
    for a, b in zip(regions, regions[1:], strict=False):
        if text[a.end : b.start].strip():
            return False
    return not text[regions[-1].end :].strip()


def body(text: str) -> str:
    """The document without its protected blocks."""
    regions = find_regions(text)
    if not regions:
        return text
    if _is_canonical(text, regions):
        return text[: regions[0].start]
    parts: list[str] = []
    pos = 0
    for r in regions:
        parts.append(text[pos : r.start])
        pos = r.end
    parts.append(text[pos:])
    out = parts[0]
    for p in parts[1:]:
        if not p.strip():
            continue
        # Removing a block from the middle leaves one blank line where it stood.
        out = (out.rstrip("\n") + "\n\n" if out.strip() else "") + p.lstrip("\n")
    return out


def _closed_block(text: str, r: Region) -> str:
    """The block's text, with its end marker added if it was unterminated (so it cannot swallow
    a block placed after it)."""
    block = text[r.start : r.end]
    if not block.endswith(end_marker(r.name)):
        block = block.rstrip("\n") + "\n" + end_marker(r.name)
    return block


def _ordered_blocks(text: str) -> list[str]:
    regions = find_regions(text)
    ordered = sorted(regions, key=lambda r: REGION_NAMES.index(r.name))  # stable within a name
    return [_closed_block(text, r) for r in ordered]


def _assemble(body_text: str, blocks: list[str]) -> str:
    if not blocks:
        return body_text
    tail = "\n\n".join(blocks) + "\n"
    # A stray end marker left in the body would confuse readers of the document; drop it.
    head = strip_markers(body_text).rstrip()
    return head + "\n\n" + tail if head else tail


def split_body_regions(text: str) -> tuple[str, str]:
    """(body, tail). For a canonical document `body + tail == text`; otherwise the tail is the blocks
    joined by blank lines in canonical order."""
    regions = find_regions(text)
    if not regions:
        return text, ""
    if _is_canonical(text, regions):
        return text[: regions[0].start], text[regions[0].start :]
    return body(text), "\n\n".join(_ordered_blocks(text)) + "\n"


def hide_empty_regions(text: str) -> str:
    """What the student reads: the document without blocks that hold nothing (the epoch-1 SLOW_UPDATE
    placeholder's bare markers cost a 135M student 2 of 30 answers). The file on disk keeps them."""
    regions = find_regions(text)
    kept = [r for r in regions if _inner(text, r).strip()]
    if len(kept) == len(regions):
        return text
    kept.sort(key=lambda r: REGION_NAMES.index(r.name))
    return _assemble(body(text).rstrip() + "\n", [_closed_block(text, r) for r in kept])


def make_block(name: str, content: str, heading: str | None = None) -> str:
    inner = strip_markers(content).strip("\n")
    if heading:
        head = f"## {strip_markers(heading).strip()}"
        inner = f"{head}\n\n{inner}" if inner else head
    middle = f"{inner}\n" if inner else ""
    return f"{start_marker(name)}\n{middle}{end_marker(name)}"


def set_region(text: str, name: str, content: str, heading: str | None = None) -> str:
    """Replace every block called `name` by exactly one, placed at the end in canonical order."""
    if name not in REGION_NAMES:
        raise ValueError(f"unknown region {name!r}; use one of {REGION_NAMES}")
    regions = find_regions(text)
    blocks = [(r.name, _closed_block(text, r)) for r in regions if r.name != name]
    blocks.append((name, make_block(name, content, heading)))
    blocks.sort(key=lambda b: REGION_NAMES.index(b[0]))  # stable: document order within a name
    return _assemble(body(text), [b for _, b in blocks])


def restore_regions(original: str, rewritten: str) -> str:
    """After a full rewrite: drop the rewrite's protected blocks and re-attach the original's, exactly."""
    orig_blocks = _ordered_blocks(original)
    new_regions = find_regions(rewritten)
    if (
        new_regions
        and _is_canonical(rewritten, new_regions)
        and [rewritten[r.start : r.end] for r in new_regions] == orig_blocks
    ):
        return rewritten
    if not new_regions and not orig_blocks:
        return rewritten
    return _assemble(body(rewritten), orig_blocks)


def ensure_appendix(text: str, heading: str = "Execution Notes Appendix") -> str:
    """Add an empty APPENDIX block (with its heading) if the document has none."""
    if get_region(text, "APPENDIX") is not None:
        return text
    return set_region(text, "APPENDIX", "", heading=heading)
