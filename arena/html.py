"""A self-contained HTML report: Elo tables with error bars (inline SVG), crosstables,
and a game viewer that replays any game (no external assets, a little inline JS).

Chess boards come from python-chess: `chess.svg.board` draws the empty board once and
`chess.svg.piece` the twelve piece glyphs, which the viewer places per ply (embedding
one full SVG per position would cost ~20 kB each).  Gomoku boards are our own SVG grid.
"""
from __future__ import annotations

import html
import json
import math
import re
from typing import Sequence

import chess
import chess.svg

from arena.export import pgn_game
from arena.records import GameRecord
from arena.report import Section, cross_rows, rating_rows

__all__ = ["html_report", "elo_chart_svg"]


def elo_chart_svg(section: Section, width: int = 640) -> str:
    """Horizontal error bars: a dot at each Elo, a bar over its 95 % interval."""
    players = section.ratings.players
    finite = [p for p in players if math.isfinite(p.elo)]
    if not finite:
        return ""
    lo = min(p.elo - p.error for p in finite)
    hi = max(p.elo + p.error for p in finite)
    lo, hi = (lo - 10, hi + 10) if hi - lo < 20 else (lo, hi)
    left, right, row = 160, 30, 26
    height = row * len(players) + 40
    scale = lambda v: left + (v - lo) / (hi - lo) * (width - left - right)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">']
    zero = scale(0.0) if lo <= 0 <= hi else None
    if zero is not None:
        parts.append(f'<line x1="{zero:.1f}" y1="10" x2="{zero:.1f}" y2="{height - 25}" stroke="#bbb" stroke-dasharray="3,3"/>')
    for tick in _ticks(lo, hi):
        x = scale(tick)
        parts.append(f'<text x="{x:.1f}" y="{height - 8}" text-anchor="middle" fill="#555">{tick:g}</text>')
    for i, p in enumerate(players):
        y = 20 + i * row
        parts.append(f'<text x="{left - 10}" y="{y + 4}" text-anchor="end">{html.escape(p.name)}</text>')
        if not math.isfinite(p.elo):
            continue
        x0, x1, x = scale(p.elo - p.error), scale(p.elo + p.error), scale(p.elo)
        parts.append(f'<line x1="{x0:.1f}" y1="{y}" x2="{x1:.1f}" y2="{y}" stroke="#3b6ea5" stroke-width="3"/>')
        parts.append(f'<circle cx="{x:.1f}" cy="{y}" r="5" fill="#c0392b"><title>{p.elo:+.1f} ± {p.error:.1f}</title></circle>')
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
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def _chess_assets() -> str:
    """The empty board (with coordinates) and the piece glyphs as <defs>, from python-chess."""
    board = chess.svg.board(chess.Board(None), size=400, coordinates=True)
    glyphs = "".join(re.sub(r"^<svg[^>]*>|</svg>$", "", chess.svg.piece(chess.Piece.from_symbol(s)))
                     for s in "PNBRQKpnbrqk")
    board = board.replace("<defs />", f"<defs>{glyphs}</defs>", 1)
    return board.replace("</svg>", '<g id="pieces"></g></svg>')


def _game_data(r: GameRecord) -> dict:
    data = {"title": f"#{r.seq + 1} {r.first} vs {r.second} {r.result_text}", "game": r.game,
            "board": r.board, "reason": r.reason, "moves": list(r.moves), "opening": r.opening_plies,
            "times": list(r.times)}
    if r.game == "chess":
        board = chess.Board(r.start_fen) if r.start_fen else chess.Board()
        frames, sans = [board.board_fen()], []
        for text in r.moves:
            move = chess.Move.from_uci(text)
            sans.append(board.san(move))
            board.push(move)
            frames.append(board.board_fen())
        data.update(frames=frames, sans=sans, pgn=str(pgn_game(r)))
    else:
        w, _, h = r.board.partition("x")
        data.update(width=int(w), height=int(h))
    return data


_SCRIPT = r"""
const games = JSON.parse(document.getElementById('games-data').textContent);
let cur = null, ply = 0;
const names = {P:'white-pawn',N:'white-knight',B:'white-bishop',R:'white-rook',Q:'white-queen',K:'white-king',
               p:'black-pawn',n:'black-knight',b:'black-bishop',r:'black-rook',q:'black-queen',k:'black-king'};
function drawChess(g) {
  const holder = document.getElementById('chessboard'); holder.style.display = 'block';
  document.getElementById('gomokuboard').style.display = 'none';
  const layer = holder.querySelector('#pieces'); layer.innerHTML = '';
  const rows = g.frames[ply].split('/');
  rows.forEach((row, r) => { let f = 0;
    for (const ch of row) { if (/\d/.test(ch)) { f += +ch; continue; }
      const u = document.createElementNS('http://www.w3.org/2000/svg', 'use');
      u.setAttribute('href', '#' + names[ch]);
      u.setAttribute('transform', `translate(${15 + 45 * f}, ${15 + 45 * r})`);
      layer.appendChild(u); f++; } });
}
function drawGomoku(g) {
  document.getElementById('chessboard').style.display = 'none';
  const el = document.getElementById('gomokuboard'); el.style.display = 'block';
  const c = 24, m = 20, W = g.width, H = g.height;
  let s = `<svg xmlns="http://www.w3.org/2000/svg" width="${2*m+c*(W-1)}" height="${2*m+c*(H-1)}"><rect width="100%" height="100%" fill="#e3c16f"/>`;
  for (let i = 0; i < W; i++) s += `<line x1="${m+c*i}" y1="${m}" x2="${m+c*i}" y2="${m+c*(H-1)}" stroke="#333"/>`;
  for (let j = 0; j < H; j++) s += `<line x1="${m}" y1="${m+c*j}" x2="${m+c*(W-1)}" y2="${m+c*j}" stroke="#333"/>`;
  for (let k = 0; k < ply; k++) { const [x, y] = g.moves[k].split(',').map(Number);
    const black = k % 2 === 0, last = k === ply - 1;
    s += `<circle cx="${m+c*x}" cy="${m+c*y}" r="10" fill="${black?'#111':'#fafafa'}" stroke="${last?'#c0392b':'#111'}" stroke-width="${last?2.5:1}"/>`;
    s += `<text x="${m+c*x}" y="${m+c*y+4}" font-size="10" text-anchor="middle" fill="${black?'#fff':'#111'}">${k < g.opening ? '·' : k+1}</text>`; }
  el.innerHTML = s + '</svg>';
}
function show(i) { cur = games[i]; ply = cur.moves.length; render(); }
function step(d) { if (!cur) return; ply = Math.max(0, Math.min(cur.moves.length, d === 'end' ? cur.moves.length : d === 'start' ? 0 : ply + d)); render(); }
function render() {
  const g = cur; if (g.game === 'chess') drawChess(g); else drawGomoku(g);
  document.getElementById('vtitle').textContent = `${g.title} (${g.reason}) - ply ${ply}/${g.moves.length}`;
  const list = (g.sans || g.moves).map((m, k) => `<span class="mv${k === ply - 1 ? ' cur' : ''}${k < g.opening ? ' op' : ''}" onclick="ply=${k+1};render()">${k % 2 === 0 ? (Math.floor(k/2)+1) + '.' : ''}${m}</span>`);
  document.getElementById('moves').innerHTML = list.join(' ');
  document.getElementById('pgn').textContent = g.pgn || '';
}
document.addEventListener('keydown', e => { if (e.key === 'ArrowLeft') step(-1); if (e.key === 'ArrowRight') step(1); });
if (games.length) show(0);
"""

_STYLE = """
body{font-family:sans-serif;margin:2em;color:#222} table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right} td:nth-child(2){text-align:left}
.games td{cursor:pointer} .games tr:hover{background:#eef} .mv{cursor:pointer;margin-right:2px}
.mv.cur{background:#fd5} .mv.op{color:#888} #viewer{display:flex;gap:2em;align-items:flex-start}
#moves{max-width:40em;line-height:1.6} button{font-size:1.1em} pre{font-size:11px;white-space:pre-wrap;max-width:50em}
"""


def html_report(sections: Sequence[Section], records: Sequence[GameRecord], *, title: str = "PlyZero arena") -> str:
    """The whole report as one HTML string."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    for s in sections:
        r = s.ratings
        body.append(f"<h2>{html.escape(s.title)}: {r.games} games, anchor {html.escape(r.anchor)}</h2>")
        body.append(elo_chart_svg(s))
        body.append(_table(*rating_rows(r)))
        if r.prior:
            body.append("<p>A perfect score made the plain MLE infinite: one virtual draw per pair was added.</p>")
        if len(r.players) > 2:
            body.append("<h3>Crosstable (points/games, row vs column)</h3>" + _table(*cross_rows(r)))
        if s.board and r.first_player_score is not None:
            body.append(f"<p>First player scored {100 * r.first_player_score:.1f}%.</p>")
        for line in s.match:
            body.append(f"<p>{html.escape(line)}</p>")
    rows = "".join(
        f'<tr onclick="show({i})"><td>{r.seq + 1}</td><td>{html.escape(r.first)} vs {html.escape(r.second)}</td>'
        f"<td>{html.escape(r.board or 'chess')}</td><td>{r.result_text}</td><td>{html.escape(r.reason)}</td>"
        f"<td>{len(r.moves)}</td></tr>" for i, r in enumerate(records))
    body.append("<h2>Games</h2><div id='viewer'><div><div id='vtitle'></div>"
                f"<div id='chessboard' style='display:none'>{_chess_assets() if any(r.game == 'chess' for r in records) else ''}</div>"
                "<div id='gomokuboard' style='display:none'></div>"
                "<div><button onclick=\"step('start')\">&#x23EE;</button><button onclick='step(-1)'>&#x25C0;</button>"
                "<button onclick='step(1)'>&#x25B6;</button><button onclick=\"step('end')\">&#x23ED;</button></div>"
                "</div><div><div id='moves'></div><pre id='pgn'></pre></div></div>")
    body.append("<table class='games'><thead><tr><th>#</th><th>Players</th><th>Board</th><th>Result</th>"
                f"<th>Reason</th><th>Plies</th></tr></thead><tbody>{rows}</tbody></table>")
    data = json.dumps([_game_data(r) for r in records]).replace("</", "<\\/")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(body)}"
            f"<script type='application/json' id='games-data'>{data}</script><script>{_SCRIPT}</script></body></html>")
