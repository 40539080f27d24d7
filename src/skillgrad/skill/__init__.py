"""The skill document: protected regions, edits and their apply report, diffs, hashes, appendix notes.

Pure code: no I/O and no LLM calls.
"""

from skillgrad.skill.appendix import add_appendix_notes, appendix_notes, replace_appendix_notes
from skillgrad.skill.density import semantic_density
from skillgrad.skill.diff import diff_stats, unified_diff
from skillgrad.skill.edits import OPS, ApplyReport, Edit, EditOutcome, apply_edits
from skillgrad.skill.hashing import skill_hash
from skillgrad.skill.learned import (
    LEARNED_END,
    LEARNED_START,
    apply_learned_edits,
    ensure_learned,
    extract_learned,
    find_learned,
    outside_learned,
    replace_learned,
)
from skillgrad.skill.regions import (
    REGION_NAMES,
    Region,
    body,
    ensure_appendix,
    find_regions,
    get_region,
    hide_empty_regions,
    in_protected,
    restore_regions,
    set_region,
    split_body_regions,
    strip_markers,
)

__all__ = [
    "LEARNED_END",
    "LEARNED_START",
    "apply_learned_edits",
    "ensure_learned",
    "extract_learned",
    "find_learned",
    "outside_learned",
    "replace_learned",
    "OPS",
    "REGION_NAMES",
    "ApplyReport",
    "Edit",
    "EditOutcome",
    "Region",
    "add_appendix_notes",
    "appendix_notes",
    "apply_edits",
    "body",
    "diff_stats",
    "ensure_appendix",
    "find_regions",
    "get_region",
    "hide_empty_regions",
    "in_protected",
    "replace_appendix_notes",
    "restore_regions",
    "semantic_density",
    "set_region",
    "skill_hash",
    "split_body_regions",
    "strip_markers",
    "unified_diff",
]
