"""A self-contained HTML report: Elo tables with error bars (inline SVG), crosstables,
and a game viewer that replays any game (no external assets, a little inline JS).

What each game shows comes from its RecordFormat (engine/games/*/records.py): chess sends
the board once (python-chess's SVG, its `board_assets`) and a FEN board per ply, which the
viewer fills with the piece glyphs; gomoku boards are our own SVG grid in the protocol's coordinates: x is the column (0 at the
left), y the row (0 at the top), labelled on the board the way the move list writes
them (`x,y`, as Gomocup and the result database do).
"""
from __future__ import annotations

import html
import json
import math
import re
from typing import Any, Sequence

from arena.records import GameRecord
from arena.report import Section, cross_rows, first_move_line, rating_rows
from engine.games import game_profile

__all__ = ["html_report", "elo_chart_svg", "game_data"]

_BAR, _DOT, _ANCHOR = "#3b6ea5", "#c0392b", "#333"


def _fmt_elo(x: float) -> str:
    return f"{x:+.0f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def elo_chart_svg(section: Section, width: int = 720) -> str:
    """Horizontal error bars, one row per player (best first): a dot at each Elo, a bar over
    its 95 % interval, the value written at the right; the anchor is a diamond on a dashed line."""
    r = section.ratings
    players = r.players
    finite = [p for p in players if math.isfinite(p.elo)]
    if not finite:
        return ""
    by_name = r.by_name()
    anchor_elo = by_name[r.anchor].elo if r.anchor in by_name and math.isfinite(by_name[r.anchor].elo) else 0.0
    ends = [p.elo + s * p.error for p in finite for s in (-1, 1) if math.isfinite(p.error)] + [anchor_elo]
    lo, hi = min(ends), max(ends)
    if hi - lo < 40:
        mid = (lo + hi) / 2
        lo, hi = mid - 20, mid + 20
    pad = 0.04 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    left = max(80, 18 + int(7.2 * max(len(p.name) for p in players)))
    right, top, row, bottom = 120, 10, 28, 46
    plot_w = width - left - right
    height = top + row * len(players) + bottom
    axis_y = top + row * len(players) + 6

    def x_of(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_w

    parts = [f'<svg class="elo-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13" role="img" '
             f'aria-label="Elo ratings with 95% intervals">']
    for i in range(len(players)):                       # zebra rows: easier to follow a row across
        if i % 2 == 0:
            parts.append(f'<rect x="0" y="{top + i * row}" width="{width}" height="{row}" fill="#f4f6f9"/>')
    for tick in _ticks(lo, hi):
        x = x_of(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{axis_y}" stroke="#ddd"/>'
                     f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 5}" stroke="#666"/>'
                     f'<text x="{x:.1f}" y="{axis_y + 18}" text-anchor="middle" fill="#444">{tick:g}</text>')
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#666"/>')
    ax = x_of(anchor_elo)
    parts.append(f'<line class="elo-anchor" x1="{ax:.1f}" y1="{top}" x2="{ax:.1f}" y2="{axis_y}" '
                 f'stroke="#888" stroke-dasharray="4,3"/>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle" fill="#444">'
                 f'Elo, 95 % interval (anchor {html.escape(r.anchor)} = {anchor_elo:g})</text>')
    for i, p in enumerate(players):
        y = top + i * row + row / 2
        is_anchor = p.name == r.anchor
        value = "anchor" if is_anchor else (
            f"{_fmt_elo(p.elo)} ± {p.error:.0f}" if math.isfinite(p.error) else _fmt_elo(p.elo))
        tip = f"{p.name}: {p.elo:+.1f}" + ("" if is_anchor else f" ± {p.error:.1f}") + " Elo"
        parts.append(f'<g class="elo-row" data-player="{html.escape(p.name)}"><title>{html.escape(tip)}</title>')
        parts.append(f'<text x="{left - 10}" y="{y + 4.5:.1f}" text-anchor="end" fill="#222">{html.escape(p.name)}</text>')
        parts.append(f'<text x="{width - 8}" y="{y + 4.5:.1f}" text-anchor="end" fill="#444">{value}</text>')
        if math.isfinite(p.elo):
            x = x_of(p.elo)
            if not is_anchor and p.error > 0:
                x0, x1 = x_of(p.elo - p.error), x_of(p.elo + p.error)
                parts.append(f'<line class="elo-bar" x1="{x0:.1f}" y1="{y:.1f}" x2="{x1:.1f}" y2="{y:.1f}" '
                             f'stroke="{_BAR}" stroke-width="3"/>')
                for xe in (x0, x1):
                    parts.append(f'<line x1="{xe:.1f}" y1="{y - 6:.1f}" x2="{xe:.1f}" y2="{y + 6:.1f}" '
                                 f'stroke="{_BAR}" stroke-width="2"/>')
            if is_anchor:
                parts.append(f'<path class="elo-dot" d="M{x:.1f} {y - 7:.1f}l7 7l-7 7l-7 -7z" fill="{_ANCHOR}"/>')
            else:
                parts.append(f'<circle class="elo-dot" cx="{x:.1f}" cy="{y:.1f}" r="5.5" fill="{_DOT}"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _ticks(lo: float, hi: float) -> list[float]:
    span = hi - lo
    step = 10 ** math.floor(math.log10(span / 4)) if span > 0 else 1
    for mult in (1, 2, 5, 10):
        if span / (step * mult) <= 6:
            step *= mult
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 9) for i in range(int((hi - first) / step) + 1)]


def _table(head: list[str], rows: list[list[str]], *, cls: str = "", left: Sequence[int] = (),
           row_header: bool = False) -> str:
    """left: columns aligned left (names); row_header: the first column is a <th> (crosstables)."""
    def cell(tag: str, text: str, j: int, extra: str = "") -> str:
        classes = " ".join(c for c in ("l" if j in left else "", extra) if c)
        attr = f' class="{classes}"' if classes else ""
        return f"<{tag}{attr}>{html.escape(text)}</{tag}>"
    cells = "".join(cell("th", h, j) for j, h in enumerate(head))
    body = []
    for i, r in enumerate(rows):
        tds = []
        for j, c in enumerate(r):
            if row_header and j == 0:
                tds.append(cell("th", c, j))
            else:
                tds.append(cell("td", c, j, "self" if row_header and j == i + 1 else ""))
        body.append("<tr>" + "".join(tds) + "</tr>")
    attr = f' class="{cls}"' if cls else ""
    return f"<div class='tw'><table{attr}><thead><tr>{cells}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


def _note(record: GameRecord, ply: int) -> str:
    """What the engine said about move `ply`: score, depth, time ('' for opening moves)."""
    i = ply - record.opening_plies
    if i < 0:
        return "opening"
    if i >= len(record.times):
        return ""
    info: dict[str, Any] = record.infos[i] if i < len(record.infos) else {}
    parts = []
    if "mate" in info:
        parts.append(f"mate {info['mate']}")
    elif "cp" in info:
        parts.append(f"{info['cp'] / 100:+.2f}")
    elif "value" in info:
        parts.append(f"value {info['value']:+.2f}")
    if "depth" in info:
        parts.append(f"depth {info['depth']}")
    parts.append(f"{record.times[i]:.3f} s")
    return ", ".join(parts)


def game_data(r: GameRecord) -> dict:
    """What the viewer needs for one game: the game's RecordFormat.viewer (per ply k: labels[k]
    the number written before the move, texts[k] the move; `draw` the board drawing: "chessboard",
    "grid" or none) plus the result, the engines' notes and a caption."""
    data: dict[str, Any] = {
        "title": f"#{r.seq + 1} {r.first} vs {r.second} {r.result_text}", "seq": r.seq + 1, "game": r.game,
        "board": r.board, "reason": r.reason, "opening": r.opening_plies, "times": list(r.times),
        "result": r.result_text, "first": r.first, "second": r.second, "opening_name": r.opening_name,
        "caption": " ".join(filter(None, (r.game.capitalize(), r.board)))}
    data.update(game_profile(r.game).records().viewer(r))
    data["notes"] = [_note(r, k) for k in range(len(data["moves"]))]
    return data


_SCRIPT = r"""
const games = JSON.parse(document.getElementById('games-data').textContent);
const SVG = 'http://www.w3.org/2000/svg';
let cur = null, curIndex = -1, ply = 0;
const names = {P:'white-pawn',N:'white-knight',B:'white-bishop',R:'white-rook',Q:'white-queen',K:'white-king',
               p:'black-pawn',n:'black-knight',b:'black-bishop',r:'black-rook',q:'black-queen',k:'black-king'};
const $ = id => document.getElementById(id);
function svgEl(tag, attrs) { const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]); return e; }
function drawNone() { $('chessboard').style.display = 'none'; $('gomokuboard').style.display = 'none'; }
function drawChess(g) {
  const holder = $('chessboard'); holder.style.display = 'block'; $('gomokuboard').style.display = 'none';
  const layer = holder.querySelector('#pieces'), hl = holder.querySelector('#lastmove');
  layer.innerHTML = ''; hl.innerHTML = '';
  if (ply > 0) { const m = g.moves[ply - 1];
    for (const sq of [m.slice(0, 2), m.slice(2, 4)]) {
      const f = sq.charCodeAt(0) - 97, r = 8 - +sq[1];
      hl.appendChild(svgEl('rect', {x: 15 + 45 * f, y: 15 + 45 * r, width: 45, height: 45,
                                    fill: '#f7e463', 'fill-opacity': 0.55, 'class': 'hl ' + sq})); } }
  g.frames[ply].split('/').forEach((row, r) => { let f = 0;
    for (const ch of row) { if (/\d/.test(ch)) { f += +ch; continue; }
      const u = svgEl('use', {href: '#' + names[ch], transform: `translate(${15 + 45 * f}, ${15 + 45 * r})`,
                              'data-square': 'abcdefgh'[f] + (8 - r), 'data-piece': ch});
      layer.appendChild(u); f++; } });
}
function drawGomoku(g) {
  $('chessboard').style.display = 'none';
  const el = $('gomokuboard'); el.style.display = 'block';
  const W = g.width, H = g.height, n = Math.max(W, H);
  const c = Math.max(18, Math.min(30, Math.floor(500 / (n - 1)))), m = 34, r = c * 0.45, e = Math.ceil(r + 10);
  const X = x => m + c * x, Y = y => m + c * y;
  const sw = m + e + c * (W - 1), sh = m + e + c * (H - 1);
  let s = `<svg xmlns="${SVG}" width="${sw}" height="${sh}" viewBox="0 0 ${sw} ${sh}" font-family="sans-serif">` +
          `<rect width="100%" height="100%" rx="4" fill="#e3c16f"/>`;
  for (let i = 0; i < W; i++) s += `<line x1="${X(i)}" y1="${Y(0)}" x2="${X(i)}" y2="${Y(H-1)}" stroke="#5a4a2a"/>` +
    `<text class="cx" x="${X(i)}" y="${m - r - 8}" font-size="11" text-anchor="middle" fill="#5a4a2a">${i}</text>`;
  for (let j = 0; j < H; j++) s += `<line x1="${X(0)}" y1="${Y(j)}" x2="${X(W-1)}" y2="${Y(j)}" stroke="#5a4a2a"/>` +
    `<text class="cy" x="${m - r - 6}" y="${Y(j) + 4}" font-size="11" text-anchor="end" fill="#5a4a2a">${j}</text>`;
  if (W % 2 && H % 2) s += `<circle cx="${X((W-1)/2)}" cy="${Y((H-1)/2)}" r="3" fill="#5a4a2a"/>`;
  for (let k = 0; k < ply; k++) { const [x, y] = g.moves[k].split(',').map(Number);
    const black = k % 2 === 0, last = k === ply - 1, label = String(k + 1);
    const fs = label.length > 2 ? r * 0.8 : r * 0.95;
    s += `<circle class="stone" data-xy="${x},${y}" cx="${X(x)}" cy="${Y(y)}" r="${r}" fill="${black?'#111':'#fafafa'}" ` +
         `stroke="${last?'#d62d20':'#111'}" stroke-width="${last?2.5:1}"/>`;
    s += `<text x="${X(x)}" y="${Y(y) + fs * 0.36}" font-size="${fs.toFixed(1)}" text-anchor="middle" ` +
         `fill="${k < g.opening ? '#999' : black ? '#fff' : '#111'}">${label}</text>`; }
  el.innerHTML = s + '</svg>';
}
function show(i) {
  curIndex = +i; cur = games[curIndex]; ply = cur.moves.length;
  $('gsel').value = String(curIndex);
  document.querySelectorAll('table.games tbody tr').forEach((tr, k) => tr.classList.toggle('sel', k === curIndex));
  $('moves').className = cur.draw || ''; render();
}
function pick(i) { show(i); const v = $('viewer').getBoundingClientRect();
  if (v.top < 0 || v.bottom > window.innerHeight) $('viewer').scrollIntoView({block: 'start', behavior: 'smooth'}); }
function step(d) { if (!cur) return;
  const n = cur.moves.length;
  ply = Math.max(0, Math.min(n, d === 'end' ? n : d === 'start' ? 0 : ply + d)); render(); }
function render() {
  const g = cur; if (g.draw === 'chessboard') drawChess(g); else if (g.draw === 'grid') drawGomoku(g); else drawNone();
  $('vtitle').textContent = `#${g.seq}: ${g.first} (${g.colors[0]}) vs ${g.second} (${g.colors[1]}), ${g.result} (${g.reason})`;
  $('vsub').textContent = g.caption +
    (g.opening_name ? `, opening ${g.opening_name}` : '');
  const k = ply - 1, mv = k >= 0 ? `${g.labels[k]}${g.draw === 'chessboard' ? '' : ' '}${g.texts[k]}` : 'start position';
  $('vply').textContent = `Ply ${ply}/${g.moves.length}: ${mv}` + (k >= 0 && g.notes[k] ? ` (${g.notes[k]})` : '');
  const list = g.texts.map((m, j) => `<span class="mv${j === k ? ' cur' : ''}${j < g.opening ? ' op' : ''}" data-ply="${j + 1}">` +
    (g.labels[j] ? `<span class="n">${g.labels[j]}</span>` : '') + `${m}</span>`);
  const box = $('moves'); box.innerHTML = list.join(' ') || '<i>no moves</i>';
  const c = box.querySelector('.cur');
  if (c && (c.offsetTop < box.scrollTop || c.offsetTop + c.offsetHeight > box.scrollTop + box.clientHeight))
    box.scrollTop = c.offsetTop - box.clientHeight / 2;
  $('pgn').textContent = g.pgn || '';
  $('pgnbox').style.display = g.pgn ? '' : 'none';
  $('vprev').disabled = $('vfirst').disabled = ply === 0;
  $('vnext').disabled = $('vlast').disabled = ply === g.moves.length;
}
$('moves').addEventListener('click', e => { const t = e.target.closest('.mv'); if (t) { ply = +t.dataset.ply; render(); } });
$('gsel').addEventListener('change', e => show(e.target.value));
document.querySelectorAll('table.games tbody tr').forEach((tr, k) => tr.addEventListener('click', () => pick(k)));
document.addEventListener('keydown', e => {
  if (e.target.tagName === 'SELECT' || e.target.tagName === 'INPUT' || e.altKey || e.ctrlKey || e.metaKey) return;
  const act = {ArrowLeft: -1, ArrowRight: 1}[e.key];
  if (act !== undefined) { e.preventDefault(); step(act); } });
if (games.length) show(0);
"""

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em;color:#222;max-width:1200px}
h2{margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em} h3{margin:1em 0 .3em}
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums}
td,th{border:1px solid #ccc;padding:3px 10px;text-align:right} th{background:#f1f3f6}
td.l,th.l{text-align:left} table.cross td.self{background:#e4e4e4} tbody tr:nth-child(even) td{background:#fafbfc}
pre.match{font-size:13px;margin:.4em 0} .note{color:#555}
.chart{margin:.6em 0} .chart svg{max-width:100%;height:auto}
.tw{overflow-x:auto} .gameslist{max-height:26em;max-width:100%;overflow:auto;display:inline-block;border:1px solid #ddd}
.gameslist table{margin:0} .gameslist th{position:sticky;top:0}
table.games tbody tr{cursor:pointer} table.games tbody tr:hover td{background:#e8eefa}
table.games tbody tr.sel td{background:#fdf0b0}
#viewer{display:flex;gap:2em;align-items:flex-start;flex-wrap:wrap;margin:.6em 0 1em}
#vtitle{font-weight:bold} #vsub,#vply{color:#555;margin:.2em 0} #vply{min-height:1.3em;font-variant-numeric:tabular-nums}
#controls{display:flex;gap:4px;align-items:center;margin-top:6px}
#controls button{width:40px;height:30px;display:inline-flex;align-items:center;justify-content:center;cursor:pointer}
#controls button:disabled{cursor:default} #controls .hint{color:#888;font-size:12px;margin-left:8px}
#gsel{max-width:100%;margin-bottom:6px;font-size:14px}
#moves{width:34em;max-width:90vw;max-height:26em;overflow-y:auto;position:relative;line-height:1.8;border:1px solid #ddd;padding:4px 8px}
.mv{cursor:pointer;padding:1px 3px;border-radius:3px;white-space:nowrap} .mv:hover{background:#e8eefa}
.mv.cur{background:#fd5} .mv.op{color:#999} .mv .n{color:#888;margin-right:2px}
#moves.grid .mv{display:inline-block;min-width:4.6em} #moves.grid .mv .n{display:inline-block;min-width:1.8em;text-align:right;margin-right:5px;font-size:85%}
#chessboard svg,#gomokuboard svg{max-width:100%;height:auto}
@media (max-width:600px){body{margin:.8em} #viewer{gap:1em}}
#pgnbox summary{cursor:pointer;color:#555;margin-top:.6em} pre#pgn{font-size:11px;white-space:pre-wrap;max-width:50em;max-height:18em;overflow-y:auto;margin:.3em 0}
"""

_ICONS = {"first": "M3 2h2v12H3zM14 2v12L6 8z", "prev": "M12 2v12L4 8z",
          "next": "M4 2v12l8-6z", "last": "M2 2v12l8-6zM11 2h2v12h-2z"}


def _button(key: str, action: str, label: str) -> str:
    return (f'<button id="v{key}" onclick="step({action})" title="{label}" aria-label="{label}">'
            f'<svg width="14" height="14" viewBox="0 0 16 16" fill="currentColor"><path d="{_ICONS[key]}"/></svg></button>')


def html_report(sections: Sequence[Section], records: Sequence[GameRecord], *, title: str = "PlyZero arena") -> str:
    """The whole report as one HTML string."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    for s in sections:
        r = s.ratings
        body.append(f"<h2>{html.escape(s.title)}: {r.games} games, anchor {html.escape(r.anchor)}</h2>")
        body.append(f'<div class="chart">{elo_chart_svg(s)}</div>')
        body.append(_table(*rating_rows(r), cls="ratings", left=(1,)))
        if r.prior:
            body.append('<p class="note">A perfect score made the plain MLE infinite: '
                        'one virtual draw per pair was added.</p>')
        if len(r.players) > 2:
            body.append("<h3>Crosstable (points/games, row vs column)</h3>"
                        + _table(*cross_rows(r), cls="cross", left=(0,), row_header=True))
        first = first_move_line(r, s.board)
        if first:
            body.append(f"<p>{html.escape(first)}.</p>")
        if s.match:
            body.append(f'<pre class="match">{html.escape(chr(10).join(s.match))}</pre>')
    viewer = [game_data(r) for r in records]
    if records:
        options = "".join(
            f'<option value="{i}">#{r.seq + 1} {html.escape(r.first)} vs {html.escape(r.second)}, '
            f'{html.escape(r.board or r.game)}, {html.escape(r.result_text)} ({html.escape(r.reason)})</option>'
            for i, r in enumerate(records))
        rows = "".join(
            f"<tr><td>{r.seq + 1}</td><td class='l'>{html.escape(r.first)} vs {html.escape(r.second)}</td>"
            f"<td>{html.escape(r.board or r.game)}</td><td>{html.escape(r.result_text)}</td>"
            f"<td class='l'>{html.escape(r.reason)}</td><td>{len(r.moves)}</td></tr>" for r in records)
        chess_board = next((game_profile(r.game).records().board_assets() for r, d in zip(records, viewer)
                            if d.get("draw") == "chessboard"), "")
        body.append(
            "<h2>Games</h2>"
            f"<select id='gsel' aria-label='Game'>{options}</select>"
            "<div id='viewer'><div><div id='vtitle'></div><div id='vsub'></div>"
            f"<div id='chessboard' style='display:none'>{chess_board}</div>"
            "<div id='gomokuboard' style='display:none'></div>"
            "<div id='controls'>" + _button("first", "'start'", "First") + _button("prev", "-1", "Back (Left arrow)")
            + _button("next", "1", "Forward (Right arrow)") + _button("last", "'end'", "Last")
            + "<span class='hint'>keys: &larr; &rarr;</span></div><div id='vply'></div></div>"
            "<div><div id='moves'></div><details id='pgnbox' open><summary>PGN</summary><pre id='pgn'></pre></details>"
            "</div></div>")
        body.append("<div class='gameslist'><table class='games'><thead><tr><th>#</th><th class='l'>Players</th>"
                    "<th>Board</th><th>Result</th><th class='l'>Reason</th><th>Plies</th></tr></thead>"
                    f"<tbody>{rows}</tbody></table></div>")
    else:
        body.append("<h2>Games</h2><p>No games.</p>")
    data = json.dumps(viewer).replace("<", "\\u003c")   # no </script> or <!-- inside
    script = f"<script>{_SCRIPT}</script>" if records else ""
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(body)}"
            f"<script type='application/json' id='games-data'>{data}</script>{script}</body></html>")
