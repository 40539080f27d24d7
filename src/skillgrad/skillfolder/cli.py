"""`skillgrad skill check|adopt|undo` and the body of `skillgrad train --skill DIR`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from skillgrad.envs.skillfolder.folder import adopt_texts, folder_texts, read_skill_folder, undo_last
from skillgrad.errors import UsageError

skill_app = typer.Typer(no_args_is_help=True, help="Agent Skills folders: validate, adopt a trained run, undo.\n\n"
                        "Example: skillgrad skill check my-skill")


def train_folder(skill_dir: Path, config: Path | None, overrides: list[str], out_dir: Path | None, fresh: bool,
                 target: str, workspace: Path | None, listeners: list[Any]) -> dict[str, Any]:
    """What `skillgrad train --skill DIR` runs; returns the result as JSON for the CLI to print."""
    from skillgrad.skillfolder.train import train_skill

    result = train_skill(skill_dir, config=config, overrides=overrides, out=out_dir, fresh=fresh, target=target,
                         workspace=workspace, listeners=listeners)
    return result.to_json()


def describe_result(result: dict[str, Any]) -> list[str]:
    """The lines the CLI prints after a skill-folder run."""
    lines = []
    held = result.get("held_out") or {}
    if held:
        lines.append(f"held-out pass rate (assertions): no skill {_pct(held.get('no_skill'))}, before "
                     f"{_pct(held.get('before'))}, after {_pct(held.get('after'))}; evals passed whole: no skill "
                     f"{_pct(held.get('no_skill_evals_passed'))}, before {_pct(held.get('before_evals_passed'))}, "
                     f"after {_pct(held.get('after_evals_passed'))}")
    if result.get("recorded_baseline"):
        rec = ", ".join(f"{k} {_pct(v)}" for k, v in result["recorded_baseline"].items())
        lines.append(f"recorded baseline (the workspace's last benchmark.json): {rec}")
    trig = result.get("trigger")
    if trig:
        b, a = trig["validation_before"], trig["validation_after"]
        lines.append(f"trigger F1 on {trig['validation_queries']} validation queries: {b['f1']:.2f} -> {a['f1']:.2f} "
                     f"(precision {b['precision']:.2f} -> {a['precision']:.2f}, recall {b['recall']:.2f} -> "
                     f"{a['recall']:.2f})")
    if result.get("iterations"):
        lines.append(f"workspace: {result['workspace']} (iterations {', '.join(map(str, result['iterations']))})")
    lines.append(f"adopt it: skillgrad skill adopt {result.get('run') or '<run dir>'} {result['folder']}")
    return lines


def _pct(v: Any) -> str:
    return f"{100 * v:.0f}%" if isinstance(v, int | float) else "-"


@skill_app.command("check")
def check(skill_dir: Annotated[Path, typer.Argument(help="The skill folder (holding SKILL.md).")]) -> None:
    """Validate a skill folder: frontmatter by the Agent Skills specification, evals.json, eval_queries.json.

    Example: skillgrad skill check my-skill
    """
    f = read_skill_folder(skill_dir, need_evals=False)
    rules = sum(1 for c in f.cases for a in c.assertions if a.check is not None)
    words = sum(1 for c in f.cases for a in c.assertions if a.check is None)
    typer.echo(f"{f.name}: valid; {len(f.cases)} evals ({rules} rule assertions, {words} judged in words), "
               f"{len(f.queries)} trigger queries, references trained with the body: {', '.join(f.references) or '-'}")


def _run_outputs(run_dir: Path, folder: Any) -> tuple[str | None, str | None]:
    """(trained package, trained description) of a run, after checking the folder is still what the run started
    from: an adoption never overwrites edits made since (the run would not have seen them)."""
    best, start = run_dir / "best_skill.md", run_dir / "skills" / "skill_v0000.md"
    trig = run_dir / "trigger.json"
    package = best.read_text(encoding="utf-8") if best.is_file() else None
    report = json.loads(trig.read_text(encoding="utf-8")) if trig.is_file() else {}
    if package is None and not report:
        raise UsageError(f"adopt: {run_dir} has neither best_skill.md nor trigger.json; give a skill-folder run")
    changed = (package is not None and start.is_file() and start.read_text(encoding="utf-8") != folder.package()) \
        or (report and report.get("description_before") != folder.description)
    if changed:
        raise UsageError(f"adopt: {folder.root} changed since the run {run_dir} started; train again on the "
                         "folder as it is now")
    return package, report.get("description_after")


@skill_app.command("adopt")
def adopt(run_dir: Annotated[Path, typer.Argument(help="A `train --skill` run directory.")],
          skill_dir: Annotated[Path, typer.Argument(help="The skill folder to write into.")]) -> None:
    """Write a run's best skill (SKILL.md body and the references it trained) and/or description back into the
    folder, atomically, after backing the old files up; `skillgrad skill undo` restores them.

    Example: skillgrad skill adopt runs/my-skill-run my-skill
    """
    folder = read_skill_folder(skill_dir, need_evals=False)
    package, desc = _run_outputs(run_dir, folder)
    try:
        texts = folder_texts(folder, package if package is not None else folder.package(), description=desc)
    except ValueError as e:
        raise UsageError(f"adopt: {run_dir}/best_skill.md: {e}; the run's skill cannot be split into files") from None
    live = {rel: (folder.root / rel).read_text(encoding="utf-8") for rel in texts}
    changed = {rel: t for rel, t in texts.items() if live[rel] != t}
    if not changed:
        typer.echo(f"{skill_dir}: already the run's skill; nothing to adopt")
        return
    backup = adopt_texts(folder.root, changed)
    typer.echo(f"adopted {', '.join(sorted(changed))} into {skill_dir} (backup {backup}; undo: skillgrad skill undo "
               f"{skill_dir})")


@skill_app.command("undo")
def undo(skill_dir: Annotated[Path, typer.Argument(help="The skill folder.")]) -> None:
    """Restore the files of the folder's last adoption, byte for byte.

    Example: skillgrad skill undo my-skill
    """
    restored = undo_last(skill_dir)
    typer.echo(f"restored {skill_dir} from {restored}")
