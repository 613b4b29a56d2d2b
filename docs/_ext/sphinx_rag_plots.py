"""``.. sphinx-rag-plot:: FILE.json``: a small SVG chart of measured figures, drawn at build time.

No plotting library: lines (optionally on a log x axis) or grouped bars, written as an
inline SVG whose text takes the theme's colour. The JSON file holds the figures, where
they come from and the command that measured them::

    {"title": ..., "kind": "line" | "bars", "x_label": ..., "y_label": ..., "log_x": bool,
     "series": [{"name": ..., "points": [[x, y], ...]}],          # kind "line"
     "categories": [...], "series": [{"name": ..., "values": [...]}],   # kind "bars"
     "caption": ..., "command": ..., "date": ...}
"""

from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

__all__ = ["render_svg"]

W, H = 680, 340
LEFT, RIGHT, BOTTOM = 64, 16, 62
CHAR = 6.6  # px per character of 12 px sans-serif, to lay out the legend
COLOURS = ("#1f77b4", "#e8710a", "#2ca02c", "#9467bd", "#8c564b")


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    span = high - low or 1.0
    raw = span / count
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * step >= raw:
            step *= m
            break
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def _fmt(v: float) -> str:
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def _frame(spec, y_low, y_high, parts, top):
    y_ticks = _ticks(y_low, y_high)
    plot_h = H - top - BOTTOM

    def y_of(v):
        return top + plot_h * (1 - (v - y_low) / ((y_high - y_low) or 1))

    for t in y_ticks:
        y = y_of(t)
        parts.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="currentColor" '
                     f'stroke-opacity="0.15"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    parts.append(f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{escape(spec["y_label"])}</text>')
    parts.append(f'<text x="{LEFT + (W - LEFT - RIGHT) / 2:.1f}" y="{H - 8}" text-anchor="middle">'
                 f'{escape(spec["x_label"])}</text>')
    return y_of


def _legend(names) -> tuple[list[str], int]:
    """The legend's entries, wrapped into rows that fit the width, and the height it takes."""
    parts, x, y = [], LEFT, 10
    for n, name in enumerate(names):
        width = 24 + CHAR * len(name)
        if x > LEFT and x + width > W - RIGHT:
            x, y = LEFT, y + 18
        parts.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{COLOURS[n % len(COLOURS)]}"/>')
        parts.append(f'<text x="{x + 16}" y="{y + 10}">{escape(name)}</text>')
        x += width
    return parts, y + 24


def render_svg(spec: dict) -> str:
    """The chart as an SVG element (deterministic: the same JSON gives the same bytes)."""
    parts, top = _legend([s["name"] for s in spec["series"]])
    plot_w = W - LEFT - RIGHT
    if spec["kind"] == "line":
        xs = [p[0] for s in spec["series"] for p in s["points"]]
        ys = [p[1] for s in spec["series"] for p in s["points"]]
        log = spec.get("log_x", False)
        fx = (lambda v: math.log10(v)) if log else (lambda v: v)
        x_low, x_high = fx(min(xs)), fx(max(xs))
        pad = (x_high - x_low) * 0.06 or 1
        x_low, x_high = x_low - pad, x_high + pad
        y_low = min(0.0, min(ys))
        y_high = max(ys) * 1.1
        y_of = _frame(spec, y_low, y_high, parts, top)

        def x_of(v):
            return LEFT + plot_w * (fx(v) - x_low) / (x_high - x_low)

        for x in sorted(set(xs)):
            parts.append(f'<text x="{x_of(x):.1f}" y="{H - BOTTOM + 18}" text-anchor="middle">{_fmt(x)}</text>')
        labels = []  # (x, y) of the value labels placed, so that two do not overlap
        for n, series in enumerate(spec["series"]):
            colour = COLOURS[n % len(COLOURS)]
            points = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in series["points"])
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for x, y in series["points"]:
                px, py = x_of(x), y_of(y)
                parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{colour}"/>')
                ly = py - 6
                if any(abs(lx - px) < 40 and abs(other - ly) < 13 for lx, other in labels):
                    ly = py + 16  # below the point instead
                if any(abs(lx - px) < 40 and abs(other - ly) < 13 for lx, other in labels) or (x, y) in [
                        tuple(p) for s in spec["series"][:n] for p in s["points"]]:
                    continue  # the same value is labelled already
                labels.append((px, ly))
                parts.append(f'<text x="{px + 6:.1f}" y="{ly:.1f}" font-size="11">{_fmt(y)}</text>')
    else:
        cats = spec["categories"]
        values = [v for s in spec["series"] for v in s["values"]]
        y_low, y_high = spec.get("y_min", 0.0), spec.get("y_max", max(values) * 1.1)
        y_of = _frame(spec, y_low, y_high, parts, top)
        group = plot_w / len(cats)
        bar = group * 0.8 / len(spec["series"])
        for c, cat in enumerate(cats):
            parts.append(f'<text x="{LEFT + group * (c + 0.5):.1f}" y="{H - BOTTOM + 18}" text-anchor="middle">'
                         f'{escape(cat)}</text>')
        for n, series in enumerate(spec["series"]):
            colour = COLOURS[n % len(COLOURS)]
            for c, v in enumerate(series["values"]):
                x = LEFT + group * c + group * 0.1 + bar * n
                y = y_of(max(v, y_low))
                parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar - 1:.1f}" height="{y_of(y_low) - y:.1f}" '
                             f'fill="{colour}"><title>{escape(series["name"])}, {escape(cats[c])}: {_fmt(v)}</title>'
                             f'</rect>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" '
            f'aria-label="{escape(spec["title"])}" style="max-width:100%;height:auto;font:12px sans-serif;'
            f'fill:currentColor">' + "".join(parts) + "</svg>")


class PlotDirective(SphinxDirective):
    required_arguments = 1
    option_spec = {"name": directives.unchanged}

    def run(self):
        path = Path(self.env.relfn2path(self.arguments[0], self.env.docname)[1])
        self.env.note_dependency(str(path))
        spec = json.loads(path.read_text(encoding="utf-8"))
        figure = nodes.figure()
        figure += nodes.raw("", f'<div class="sphinx-rag-plot">{render_svg(spec)}</div>', format="html")
        caption = f'{spec["title"]}. {spec["caption"]} Measured {spec["date"]}: ``{spec["command"]}``.'
        parsed, _ = self.state.inline_text(caption, self.lineno)
        figure += nodes.caption("", "", *parsed)
        if "name" in self.options:
            self.add_name(figure)
        return [figure]


def setup(app):
    app.add_directive("sphinx-rag-plot", PlotDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
