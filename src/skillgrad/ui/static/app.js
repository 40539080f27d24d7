// skillgrad dashboard: follow a live run through server-sent events (no polling), filter tables.
"use strict";

function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

function followRun(live) {
  const run = live.dataset.run;
  const stages = document.getElementById("stages");
  const progress = document.getElementById("progress");
  const status = document.getElementById("run-status");
  const src = new EventSource(`/events?r=${encodeURIComponent(run)}&offset=${live.dataset.offset}`);
  let refreshing = null;

  // Curves, budget and the gate table are server-rendered; re-fetch them once per batch of events.
  function refreshParts() {
    if (refreshing) return;
    refreshing = setTimeout(async () => {
      refreshing = null;
      const resp = await fetch(`/run/parts?r=${encodeURIComponent(run)}`);
      if (resp.ok) document.getElementById("parts").innerHTML = await resp.text();
    }, 300);
  }

  src.addEventListener("run", msg => {
    const ev = JSON.parse(msg.data);
    live.dataset.offset = msg.lastEventId;
    switch (ev.event) {
      case "stage_start": {
        const li = document.createElement("li");
        li.className = "stage running";
        li.dataset.key = `${ev.stage}:${ev.step}`;
        li.innerHTML = `<span class="st">${esc(ev.stage)}</span> <span class="muted">step ${esc(ev.step)}` +
          (ev.epoch ? ` · epoch ${esc(ev.epoch)}` : "") + `</span> <span class="sec">running…</span>`;
        stages.appendChild(li);
        progress.innerHTML = `<span id="progress-stage">${esc(ev.stage)}</span>: starting`;
        if (status) { status.textContent = "running"; status.className = "badge running"; }
        break;
      }
      case "stage_end": {
        const items = stages.querySelectorAll(`li[data-key="${CSS.escape(`${ev.stage}:${ev.step}`)}"]`);
        const li = items[items.length - 1];
        if (li) {
          li.className = "stage done";
          li.querySelector(".sec").textContent = `${Number(ev.seconds || 0).toFixed(1)} s`;
        }
        refreshParts();
        break;
      }
      case "task_done":
        progress.innerHTML = `<span id="progress-stage">${esc(ev.stage)}</span>: ` +
          `<span id="progress-count">${esc(ev.done)}/${esc(ev.total)}</span> ` +
          `<progress id="progress-bar" max="${Number(ev.total) || 1}" value="${Number(ev.done) || 0}"></progress>`;
        break;
      case "run_start": case "gate": case "eval": case "step_skipped": case "budget_warning":
        refreshParts();
        break;
      case "run_end":
        if (status) { status.textContent = ev.status + (ev.stopped ? ` (${ev.stopped})` : ""); status.className = `badge ${esc(ev.status)}`; }
        progress.innerHTML = `<span class="muted">run ended: ${esc(ev.status)}</span>`;
        stages.querySelectorAll("li.stage.running").forEach(li => {  // stages the run never finished
          li.className = "stage interrupted";
          li.querySelector(".sec").textContent = "interrupted";
        });
        refreshParts();
        break;
    }
  });
  src.addEventListener("end", () => src.close());
}

// Client-side filter of table rows as you type (the server-side ?q= search still works without JS).
function filterRows(input) {
  const rows = document.querySelectorAll(input.dataset.filter);
  input.addEventListener("input", () => {
    const q = input.value.trim().toLowerCase();
    rows.forEach(r => { r.hidden = q !== "" && !r.textContent.toLowerCase().includes(q); });
  });
}

// The runs table follows the root: the server sends `changed` when a run appears, moves on or ends, and the
// page re-fetches itself (same filters and sort) and swaps the table in.
function watchRuns(box) {
  const src = new EventSource(box.dataset.watch);
  let pending = null;
  src.addEventListener("changed", () => {
    if (pending) return;
    pending = setTimeout(async () => {
      pending = null;
      const resp = await fetch(location.href);
      if (!resp.ok) return;
      const fresh = new DOMParser().parseFromString(await resp.text(), "text/html").getElementById("runs-live");
      if (fresh) { box.innerHTML = fresh.innerHTML; box.dataset.updated = String(Date.now()); }
      const count = document.querySelector("h1 .muted");
      const freshCount = fresh && fresh.ownerDocument.querySelector("h1 .muted");
      if (count && freshCount) count.textContent = freshCount.textContent;
    }, 300);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const live = document.getElementById("live");
  if (live && live.dataset.follow === "1") followRun(live);
  const runs = document.getElementById("runs-live");
  if (runs) watchRuns(runs);
  document.querySelectorAll("input[data-filter]").forEach(filterRows);
});
