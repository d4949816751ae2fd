"""A `Report` as one self-contained HTML page: the summary, then three charts over one virtual
time axis (Plotly, with plotly.js inlined so the file opens without a network):

1. the workload's own row: user operations (diamonds) and decisions about the workload and its
   revisions;
2. the timeline: one row per pod slot (node for a DaemonSet, pod for a StatefulSet or
   Deployment), bars coloured by revision, shaded by phase (Pending, Running, Ready, hatched
   Terminating), and each controller decision about a pod as a point on its row;
3. unavailable and surge counts as steps against the maxUnavailable / maxSurge budget.

Hovering a point shows its reason, message and trigger; clicking it copies them to the panel
under the charts. User operations are also drawn as vertical lines through all three.
"""

from __future__ import annotations

import html
import textwrap
from datetime import datetime
from typing import Any

from replay.report.facts import Decision, Report
from replay.report.text import seconds, summary_lines, title, took, when

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")
PHASE_STYLE = {  # opacity, pattern
    "Pending": (0.3, ""),
    "Running": (0.6, ""),
    "Ready": (1.0, ""),
    "Terminating": (0.55, "/"),
    "Succeeded": (0.3, "."),
    "Failed": (0.9, "x"),
}
ACTOR_SYMBOLS = {"kubelet": "circle", "default-scheduler": "square"}
PLOT_ID = "kreplay-report"


def _t(at: datetime) -> str:
    """Plotly reads naive times as they are: every time here is UTC."""
    return at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _wrap(text: str, width: int = 90) -> str:
    return "<br>".join(html.escape(line) for line in textwrap.wrap(text, width)) or ""


def decision_text(d: Decision) -> str:
    """What hovering or clicking a decision shows: reason, message and trigger, as `why` says."""
    parts = [
        f"<b>{html.escape(d.reason)}</b> by {html.escape(d.by or '-')} at {when(d.at)} (#{d.position})",
        html.escape(d.subject),
        _wrap(d.message),
    ]
    if d.trigger:
        parts.append("because: " + _wrap(d.trigger))
    return "<br>".join(p for p in parts if p)


def figure(report: Report) -> Any:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows = report.rows
    index = {row: i for i, row in enumerate(rows)}
    colours = {h: PALETTE[i % len(PALETTE)] for i, h in enumerate(report.revisions)}
    # 46 px a row for a few rows; many rows get thinner (down to 10 px) so the page stays usable
    per_row = 46 if len(rows) <= 30 else max(10, 46 * 30 // len(rows))
    pod_height = max(260, per_row * len(rows) + 60)
    total = 90 + pod_height + 230 + 160
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=min(0.08, 60 / total),  # about 60 px between the charts, whatever the height
        row_heights=[90, pod_height, 230],
        subplot_titles=("operations and decisions about the workload", "pods (one row per " + ("node" if report.kind == "DaemonSet" else "pod") + ")", "unavailable and surge pods against the budget"),
    )
    workload_label = f"{report.kind.lower()}/{report.name}"

    # 1. the workload's row
    ops = report.operations
    fig.add_trace(
        go.Scatter(
            x=[_t(o.at) for o in ops],
            y=[workload_label] * len(ops),
            mode="markers+text",
            text=[o.op for o in ops],
            textposition="top center",
            marker={"symbol": "diamond", "size": 13, "color": "#111"},
            name="user operation",
            hovertemplate="%{customdata}<extra></extra>",
            customdata=[f"<b>{html.escape(o.op)}</b> (history line {o.line}) at {when(o.at)} (#{o.position})<br>{_wrap(o.change)}<br>{_wrap(o.message)}" for o in ops],
        ),
        row=1,
        col=1,
    )
    about_workload = [d for d in report.decisions if not d.row]
    fig.add_trace(
        go.Scatter(
            x=[_t(d.at) for d in about_workload],
            y=[workload_label] * len(about_workload),
            mode="markers",
            marker={"symbol": "triangle-up", "size": 10, "color": "#555"},
            name="decision about the workload",
            hovertemplate="%{customdata}<extra></extra>",
            customdata=[decision_text(d) for d in about_workload],
        ),
        row=1,
        col=1,
    )

    # 2. the pods' timeline: a trace per (revision, phase), so the legend explains the colours
    for revision, label in report.revisions.items():
        for phase, (opacity, pattern) in PHASE_STYLE.items():
            segs = [s for s in report.segments if s.revision == revision and s.phase == phase]
            if not segs:
                continue
            fig.add_trace(
                go.Bar(
                    orientation="h",
                    base=[_t(s.start) for s in segs],
                    x=[max((s.end - s.start).total_seconds() * 1000, 0) for s in segs],
                    y=[index[s.row] for s in segs],
                    width=0.6,
                    marker={"color": colours[revision], "opacity": opacity, "pattern": {"shape": pattern}, "line": {"width": 0}},
                    name=f"{label} ({revision}): {phase}",
                    legendgroup=revision,
                    customdata=[f"{html.escape(s.pod)} on {html.escape(s.row)}: <b>{phase}</b> from {when(s.start)} to {when(s.end)} ({seconds((s.end - s.start).total_seconds())})<br>{label} ({revision})" for s in segs],
                    hovertemplate="%{customdata}<extra></extra>",
                ),
                row=2,
                col=1,
            )
    about_pods = [d for d in report.decisions if d.row in index]
    offsets: dict[tuple[datetime, str], int] = {}
    ys = []
    for d in about_pods:  # several decisions at one instant on one row: spread them up the row
        k = offsets.get((d.at, d.row), 0)
        offsets[(d.at, d.row)] = k + 1
        ys.append(index[d.row] - 0.25 + 0.17 * min(k, 3))
    fig.add_trace(
        go.Scatter(
            x=[_t(d.at) for d in about_pods],
            y=ys,
            mode="markers",
            marker={
                "symbol": [ACTOR_SYMBOLS.get(d.by, "triangle-up") for d in about_pods],
                "size": 9,
                "color": "#000",
                "line": {"color": "#fff", "width": 1},
            },
            name="controller decision (hover or click)",
            customdata=[decision_text(d) for d in about_pods],
            hovertemplate="%{customdata}<extra></extra>",
        ),
        row=2,
        col=1,
    )

    # 3. counts against the budget
    samples = report.samples
    if samples:
        xs = [_t(s.at) for s in samples] + [_t(report.end)]

        def steps(values: list[int]) -> list[int]:
            return values + values[-1:]

        for name, values, style in (
            ("unavailable", [s.unavailable for s in samples], {"color": "#d62728", "width": 2}),
            ("surge", [s.surge for s in samples], {"color": "#1f77b4", "width": 2}),
            ("maxUnavailable", [s.max_unavailable for s in samples], {"color": "#d62728", "dash": "dash", "width": 1}),
            ("maxSurge", [s.max_surge for s in samples], {"color": "#1f77b4", "dash": "dash", "width": 1}),
            ("ready", [s.ready for s in samples], {"color": "#2ca02c", "dash": "dot", "width": 1}),
        ):
            fig.add_trace(
                go.Scatter(x=xs, y=steps(values), mode="lines", line={**style, "shape": "hv"}, name=name, legendgroup="counts"),
                row=3,
                col=1,
            )

    for o in ops:
        fig.add_vline(x=_t(o.at), line={"color": "#999", "dash": "dot", "width": 1})

    fig.update_yaxes(
        row=2,
        col=1,
        tickmode="array",
        tickvals=list(range(len(rows))),
        ticktext=rows,
        tickfont={"size": min(12, max(7, per_row - 3))},
        range=[len(rows) - 0.5, -0.5],
        title_text=None,
    )
    fig.update_yaxes(row=3, col=1, rangemode="tozero", dtick=1, title_text="pods")
    fig.update_xaxes(type="date", showgrid=True)
    fig.update_xaxes(row=3, col=1, title_text="virtual time (UTC)")
    fig.update_layout(
        barmode="overlay",
        height=total,
        margin={"l": 140, "r": 30, "t": 40, "b": 50},
        hovermode="closest",
        hoverlabel={"align": "left"},
        legend={"orientation": "h", "y": -0.12, "font": {"size": 11}},
        template="plotly_white",
    )
    return fig


_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1300px; color: #222; }
h1 { font-size: 1.4em; margin-bottom: .3em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .92em; }
th, td { border: 1px solid #ddd; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
#details { border: 1px solid #ccc; background: #fafafa; padding: .6em .8em; min-height: 2.5em; font-size: .92em; }
.stuck { color: #b00020; font-weight: bold; }
.fine { color: #2e7d32; font-weight: bold; }
"""

_CLICK = """
(function () {
  var gd = document.getElementById('%s');
  gd.on('plotly_click', function (data) {
    var p = data.points[0];
    if (p && typeof p.customdata === 'string') {
      document.getElementById('details').innerHTML = p.customdata;
    }
  });
})();
"""


def page(report: Report) -> str:
    """The whole HTML document."""
    fig = figure(report)
    chart = fig.to_html(
        full_html=False,
        include_plotlyjs=True,
        include_mathjax=False,
        div_id=PLOT_ID,
        config={"displaylogo": False, "responsive": True},
        post_script=_CLICK % PLOT_ID,
    )
    def css(label: str) -> str:
        if label != "Stuck":
            return ""
        return ' class="stuck"' if report.summary.stuck else ' class="fine"'

    summary = "".join(
        f"<tr><th>{html.escape(label)}</th><td{css(label)}>{html.escape(value)}</td></tr>"
        for label, value in summary_lines(report)
    )
    rollouts = "".join(
        f"<tr><td>{when(r.started)}</td><td>{html.escape(r.operation)}</td>"
        f"<td>{html.escape(report.revisions.get(r.to_revision, '-'))} {html.escape(f'({r.to_revision})' if r.to_revision else '')}</td>"
        f"<td>{took(r)}</td><td>{r.most_unavailable}</td><td>{html.escape(r.outcome)}</td></tr>"
        for r in report.rollouts
    )
    rollout_table = (
        "<table><tr><th>Started</th><th>Change</th><th>To revision</th><th>Took</th><th>Most unavailable</th><th>Outcome</th></tr>" + rollouts + "</table>"
        if rollouts
        else "<p>No change to the pod template was recorded.</p>"
    )
    name = html.escape(title(report))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>Rollout report: {name}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>Rollout report: {name}</h1>\n<table id=\"summary\">{summary}</table>\n"
        f"<h2>Rollouts</h2>\n{rollout_table}\n"
        f"{chart}\n"
        "<h2>Selected decision</h2>\n<div id=\"details\">Click a point to see its reason, message and trigger here.</div>\n"
        "<p><small>Written by <code>kreplay report</code> from the event log; times are the history's virtual time.</small></p>\n"
        "</body>\n</html>\n"
    )
