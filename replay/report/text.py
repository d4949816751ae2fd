"""A `Report` as JSON (every fact, for scripts) and as Markdown (the summary, the rollouts, the
operations and the decisions, for a pull request or an issue)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from replay.report.facts import Report, Rollout

_ENCODER = msgspec.json.Encoder(order="deterministic")


def as_json(report: Report) -> str:
    return msgspec.json.format(_ENCODER.encode(report), indent=2).decode() + "\n"


def when(at: datetime | None) -> str:
    return at.isoformat().replace("+00:00", "Z") if at else "-"


def seconds(value: float | None) -> str:
    if value is None:
        return "unfinished"
    minutes, secs = divmod(int(round(value)), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def took(r: Rollout) -> str:
    return seconds(r.seconds) + ("" if r.done else " unfinished")


def title(report: Report) -> str:
    where = f"{report.namespace}/" if report.namespace else ""
    return f"{report.kind} {where}{report.name}"


def summary_lines(report: Report) -> list[tuple[str, str]]:
    """(label, value) pairs the Markdown and HTML summaries share."""
    s = report.summary
    budget = ""
    if report.samples:
        at = next((x for x in report.samples if x.at == s.most_unavailable_at), report.samples[-1])
        budget = f" (maxUnavailable {at.max_unavailable}" + (f", maxSurge {at.max_surge}" if at.max_surge else "") + (f", partition {at.partition}" if at.partition else "") + ")"
    outcome = f"stuck: {s.why}" if s.stuck else "not stuck"
    return [
        ("Recorded", f"{when(report.start)} to {when(report.end)} (virtual time)"),
        ("Rollouts", str(len(report.rollouts))),
        ("Duration of the rollouts", seconds(s.duration_seconds) + (" (" + ", ".join(took(r) for r in report.rollouts) + ")" if len(report.rollouts) > 1 else "")),
        ("Revisions involved", ", ".join(s.revisions) or "-"),
        ("Most pods unavailable at once", f"{s.most_unavailable} at {when(s.most_unavailable_at)}{budget}"),
        ("Status at the end", s.status),
        ("Stuck", outcome),
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def as_markdown(report: Report) -> str:
    out = [f"# Rollout report: {title(report)}", ""]
    out += ["| | |", "|---|---|"]
    out += [f"| {label} | {_cell(value)} |" for label, value in summary_lines(report)]
    out += ["", "## Rollouts", ""]
    if report.rollouts:
        out += ["| Started | Change | To revision | Took | Most unavailable | Outcome |", "|---|---|---|---|---|---|"]
        for r in report.rollouts:
            target = report.revisions.get(r.to_revision, "?") + f" ({r.to_revision})" if r.to_revision else "-"
            out.append(f"| {when(r.started)} | {_cell(r.operation)} | {_cell(target)} | {took(r)} | {r.most_unavailable} | {_cell(r.outcome)} |")
    else:
        out.append("No change to the pod template was recorded.")
    out += ["", "## Operations", "", "| At | Line | Op | Change |", "|---|---|---|---|"]
    out += [f"| {when(o.at)} | {o.line} | {o.op} | {_cell(o.change)} |" for o in report.operations]
    out += ["", "## Pods", "", "| Row | Pod | Revision | Phases |", "|---|---|---|---|"]
    by_pod: dict[str, list[str]] = {}
    first: dict[str, tuple[str, str]] = {}
    for seg in report.segments:
        by_pod.setdefault(seg.pod, []).append(f"{seg.phase} {when(seg.start)[11:19]}")
        first.setdefault(seg.pod, (seg.row, report.revisions.get(seg.revision, "?")))
    for pod, phases in by_pod.items():
        row, revision = first[pod]
        out.append(f"| {row} | {pod} | {revision} | {', '.join(phases)} |")
    out += ["", "## Decisions", "", "| # | At | Subject | By | Reason | Why | Because |", "|---|---|---|---|---|---|---|"]
    for d in report.decisions:
        out.append(f"| {d.position} | {when(d.at)} | {_cell(d.subject)} | {d.by} | {d.reason} | {_cell(d.message)} | {_cell(d.trigger)} |")
    return "\n".join(out) + "\n"
