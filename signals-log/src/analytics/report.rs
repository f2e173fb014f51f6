//! A self-contained HTML report: `ahp signals report`.
//!
//! Inline CSS and inline SVG charts, no script, no external resource: the
//! page opens offline and can be mailed as one file.

use super::breakdown::OriginRow;
use super::stats::{IntensityMix, Stats};
use super::tune::Finding;
use std::fmt::Write;

const COLORS: [(&str, &str); 4] = [
    ("aid", "#4e9a06"),
    ("prompt", "#c4a000"),
    ("control", "#3465a4"),
    ("block", "#cc0000"),
];

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn mix_values(m: &IntensityMix) -> [u64; 4] {
    [m.aid, m.prompt, m.control, m.block]
}

/// Stacked bars of signals per time bucket, by intensity.
fn timeline_svg(timeline: &[(String, IntensityMix)]) -> String {
    let (w, h, pad) = (900.0_f64, 260.0_f64, 40.0_f64);
    let max = timeline
        .iter()
        .map(|(_, m)| m.total())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let n = timeline.len().max(1) as f64;
    let slot = (w - 2.0 * pad) / n;
    let bar = (slot * 0.8).max(1.0);
    let mut s = format!(
        r#"<svg class="chart" role="img" aria-label="signals over time" viewBox="0 0 {w} {h}" width="{w}" height="{h}">"#
    );
    let _ = write!(
        s,
        r##"<line x1="{pad}" y1="{y}" x2="{x2}" y2="{y}" stroke="#888"/><text x="4" y="{pad}" class="axis">{max}</text>"##,
        y = h - pad,
        x2 = w - pad
    );
    for (i, (label, mix)) in timeline.iter().enumerate() {
        let x = pad + i as f64 * slot + (slot - bar) / 2.0;
        let mut y = h - pad;
        for (v, (name, color)) in mix_values(mix).iter().zip(COLORS) {
            if *v == 0 {
                continue;
            }
            let bh = *v as f64 / max * (h - 2.0 * pad);
            y -= bh;
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{bar:.1}" height="{bh:.1}" fill="{color}"><title>{} {name}: {v}</title></rect>"#,
                escape(label)
            );
        }
        // A date label is about 66 px wide: one that would run off the
        // right edge is left out rather than clipped.
        let fits = x + 66.0 <= w;
        if fits && (timeline.len() <= 16 || i % (timeline.len() / 8).max(1) == 0) {
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{ty}" class="axis">{}</text>"#,
                escape(label),
                ty = h - pad + 14.0
            );
        }
    }
    for (k, (name, color)) in COLORS.iter().enumerate() {
        let x = pad + k as f64 * 90.0;
        let _ = write!(
            s,
            r#"<rect x="{x}" y="6" width="12" height="12" fill="{color}"/><text x="{tx}" y="16" class="axis">{name}</text>"#,
            tx = x + 16.0
        );
    }
    s.push_str("</svg>");
    s
}

/// A duration for people: seconds, minutes, hours or days.
fn duration(secs: f64) -> String {
    match secs {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.1} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} d", s / 86_400.0),
    }
}

/// Horizontal bars, one per label; `fmt` prints the value. With `full`
/// (rates: 1.0) a bar's length is its share of `full`, drawn inside an
/// outlined track, so an 8% rate looks like 8%; without it the largest
/// value spans the width.
fn bars_svg(
    title: &str,
    items: &[(String, f64)],
    fmt: impl Fn(f64) -> String,
    color: &str,
    full: Option<f64>,
) -> String {
    let (w, row, label_w) = (900.0_f64, 22.0_f64, 320.0_f64);
    let h = row * items.len().max(1) as f64 + 10.0;
    let span = w - label_w - 80.0;
    let max = full
        .unwrap_or_else(|| items.iter().map(|(_, v)| *v).fold(0.0, f64::max))
        .max(f64::MIN_POSITIVE);
    let mut s = format!(
        r#"<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {w} {h}" width="{w}" height="{h}">"#,
        escape(title)
    );
    for (i, (label, v)) in items.iter().enumerate() {
        let y = 5.0 + i as f64 * row;
        let bw = (v / max).min(1.0) * span;
        if full.is_some() {
            let _ = write!(
                s,
                r##"<rect x="{label_w}" y="{y}" width="{span}" height="{bh}" fill="none" stroke="#ccc"/>"##,
                bh = row - 6.0
            );
        }
        let _ = write!(
            s,
            r#"<text x="{lx}" y="{ty}" text-anchor="end" class="axis">{}</text><rect x="{label_w}" y="{y}" width="{bw:.1}" height="{bh}" fill="{color}"/><text x="{vx:.1}" y="{ty}" class="axis">{}</text>"#,
            escape(label),
            fmt(*v),
            lx = label_w - 6.0,
            ty = y + 14.0,
            bh = row - 6.0,
            vx = label_w + full.map_or(bw, |_| span) + 4.0
        );
    }
    s.push_str("</svg>");
    s
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |r| format!("{:.0}%", r * 100.0))
}

/// The report page for `stats` and `findings`; `title` heads it.
///
/// ```
/// use ahp_signals_log::analytics::{report, stats::Stats};
/// let html = report::render("signals", &Stats::default(), &[]);
/// assert!(html.starts_with("<!DOCTYPE html>"));
/// assert!(!html.contains("http"));
/// ```
pub fn render(title: &str, stats: &Stats, findings: &[Finding]) -> String {
    render_with(title, stats, findings, &[])
}

/// As [`render`], with a table per developer and project when `origins`
/// names more than one (records shipped from several machines say where
/// they were produced).
///
/// ```
/// use ahp_signals_log::analytics::breakdown::OriginRow;
/// use ahp_signals_log::analytics::{report, stats::Stats};
/// let rows = [
///     OriginRow { user: "alice".into(), project: "api".into(), runs: 4, blocks: 1, ..OriginRow::default() },
///     OriginRow { user: "bob".into(), project: "web".into(), runs: 2, ..OriginRow::default() },
/// ];
/// let html = report::render_with("team", &Stats::default(), &[], &rows);
/// assert!(html.contains("By developer and project"));
/// assert!(html.contains("<td>alice</td><td>api</td>"));
/// ```
pub fn render_with(
    title: &str,
    stats: &Stats,
    findings: &[Finding],
    origins: &[OriginRow],
) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style></head><body>",
        escape(title),
        CSS
    );
    let _ = write!(
        h,
        "<h1>{}</h1><p>{} records: {} signals, {} responses, {} runs.</p>",
        escape(title),
        stats.records,
        stats.signals,
        stats.responses,
        stats.runs
    );
    h.push_str("<h2>Signals over time by intensity</h2>");
    h.push_str(&timeline_svg(&stats.timeline));
    let label = |r: &super::stats::SourceStats| format!("{} @ {}", r.source, r.event);
    let enforced = || stats.rows.iter().filter(|r| !r.shadow);
    let rates: Vec<(String, f64)> = enforced()
        .filter_map(|r| r.block_rate.map(|v| (label(r), v)))
        .collect();
    h.push_str("<h2>Block rate per source</h2>");
    h.push_str(&bars_svg(
        "block rate",
        &rates,
        |v| format!("{:.0}%", v * 100.0),
        "#cc0000",
        Some(1.0),
    ));
    let dismiss: Vec<(String, f64)> = enforced()
        .filter_map(|r| r.dismissal_rate.map(|v| (label(r), v)))
        .collect();
    h.push_str("<h2>Prompt dismissal rate per source</h2>");
    h.push_str(&bars_svg(
        "dismissal rate",
        &dismiss,
        |v| format!("{:.0}%", v * 100.0),
        "#c4a000",
        Some(1.0),
    ));
    let mttr: Vec<(String, f64)> = enforced()
        .filter_map(|r| r.mttr_secs.map(|v| (label(r), v)))
        .collect();
    h.push_str("<h2>Mean time to recover from a block</h2>");
    h.push_str(&bars_svg("MTTR", &mttr, duration, "#3465a4", None));
    h.push_str("<h2>Statistics</h2><table><tr><th>source</th><th>event</th><th>firings</th><th>aid</th><th>prompt</th><th>control</th><th>block</th><th>runs</th><th>block rate</th><th>MTTR</th><th>dismissed</th><th>proceed w/ risk</th></tr>");
    for r in enforced() {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.source),
            escape(&r.event),
            r.firings,
            r.intensity.aid,
            r.intensity.prompt,
            r.intensity.control,
            r.intensity.block,
            r.runs_selected,
            opt_pct(r.block_rate),
            r.mttr_secs.map_or_else(|| "–".into(), duration),
            opt_pct(r.dismissal_rate),
            opt_pct(r.proceed_with_risk_rate)
        );
    }
    h.push_str("</table>");
    if stats.rows.iter().any(|r| r.shadow) {
        h.push_str("<h2>Shadow entries</h2><p>What entries in <code>mode: shadow</code> would have done; none of it reached an agent.</p><table><tr><th>source</th><th>event</th><th>runs</th><th>would block</th><th>would ask</th><th>sessions</th></tr>");
        for r in stats.rows.iter().filter(|r| r.shadow) {
            let share = |n: u64| {
                if r.runs_selected == 0 {
                    n.to_string()
                } else {
                    format!("{n} ({:.1}%)", n as f64 * 100.0 / r.runs_selected as f64)
                }
            };
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.source),
                escape(&r.event),
                r.runs_selected,
                share(r.blocks),
                share(r.prompts),
                r.sessions
            );
        }
        h.push_str("</table>");
    }
    if origins.len() > 1 {
        h.push_str("<h2>By developer and project</h2><table><tr><th>developer</th><th>project</th><th>runs</th><th>blocked runs</th><th>signals</th><th>blocks</th><th>prompts</th><th>dismissed</th><th>proceed w/ risk</th></tr>");
        for o in origins {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&o.user),
                escape(&o.project),
                o.runs,
                o.blocked_runs,
                opt_pct(o.block_rate()),
                o.signals,
                o.blocks,
                o.prompts,
                o.dismissals,
                o.proceed_with_risk
            );
        }
        h.push_str("</table>");
    }
    h.push_str("<h2>Suggestions</h2><ul>");
    if findings.is_empty() {
        h.push_str("<li>none</li>");
    }
    for f in findings {
        let _ = write!(h, "<li>{}</li>", escape(&f.suggestion));
    }
    h.push_str("</ul></body></html>\n");
    h
}

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
td:first-child,td:nth-child(2),th{text-align:left}tr:nth-child(even){background:#f6f6f6}\
.chart{display:block;max-width:100%;height:auto}.axis{font-size:11px;fill:#444}";
