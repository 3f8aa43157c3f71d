// PlyZero board: draws what the server's JSON says, sends what the person does.
// The server owns the game; this page only renders snapshots and posts moves and buttons.
"use strict";

const TOKEN_KEY = "plyzero-token";
// A network board's key, when the address has it (the cookie the server set carries it too).
const BOARD_KEY = new URLSearchParams(location.search).get("key");
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

let token = null;
let snap = null;          // the latest snapshot from the server
let options = null;       // players and networks to offer
let polling = 0;          // generation of the poll loop (a new claim starts a new one)
let selected = null;      // chess: the square picked up
let drag = null;          // chess: {from, ghost, x, y, moved}
let built = "";           // which board the DOM holds now ("chess:0", "gomoku:15x15")
let settingsShown = "";   // settings the form was last filled from

// --- talking to the server -----------------------------------------------------------------

async function call(method, path, body) {
  const init = { method, headers: {} };
  if (token) init.headers["X-Plyzero-Session"] = token;
  if (BOARD_KEY) init.headers["X-Plyzero-Key"] = BOARD_KEY;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data;
  try { data = await response.json(); } catch (e) { data = { error: `HTTP ${response.status}` }; }
  if (!response.ok) {
    const err = new Error(data.error || `HTTP ${response.status}`);
    err.status = response.status;
    throw err;
  }
  return data;
}

async function act(path, body) {
  try {
    const s = await call("POST", path, body || {});
    showError("");
    render(s);
    return s;
  } catch (e) {
    failed(e);
    return null;
  }
}

function failed(e) {
  if (e.status === 409 && /tab/.test(e.message)) showBanner(e.message);
  else showError(e.message);
}

async function claim(force) {
  try {
    const r = await call("POST", "/api/claim", { token: sessionStorage.getItem(TOKEN_KEY), force: !!force });
    token = r.token;
    sessionStorage.setItem(TOKEN_KEY, token);
    $("banner").hidden = true;
    options = await call("GET", "/api/options");
    fillChoices();
    poll(++polling);
  } catch (e) {
    failed(e);
  }
}

async function poll(generation) {
  while (generation === polling) {
    try {
      const s = await call("GET", `/api/state?after=${snap ? snap.version : -1}`);
      if (generation !== polling) return;
      render(s);
    } catch (e) {
      if (e.status === 409) { polling++; showBanner(e.message); return; }
      showError(`lost the server: ${e.message}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

function showError(text) { $("error").textContent = text; }

function showBanner(text) {
  $("banner-text").textContent = text;
  $("banner").hidden = false;
  $("status").textContent = "not connected";
}

// --- rendering --------------------------------------------------------------------------------

function render(s) {
  if (snap && s.version < snap.version) return;   // a late answer: a newer snapshot is shown
  snap = s;
  if (s.settings.game === "chess") renderChess(s); else renderGomoku(s);
  renderStatus(s);
  renderLook(s);
  renderMoves(s);
  fillSettings(s.settings);
  if (s.error) showError(s.error);
}

function canMove(s) {
  if (!s || s.result) return false;
  if (s.turn === "either") return true;
  return s.turn === "human" && s.thinking !== "move";
}

function renderStatus(s) {
  const colours = s.colours;
  let text;
  if (s.result) text = `Game over: ${s.result.text} (${s.result.reason})`;
  else if (s.thinking === "analysis") text = `Analysing (${colours[s.to_play]} to move)`;
  else if (s.thinking === "move") text = `${s.opponent} is thinking…`;
  else if (s.turn === "human") text = `Your move (${colours[s.to_play]})`;
  else if (s.turn === "either") text = `Analysis mode: ${colours[s.to_play]} to move`;
  else text = `${s.opponent} to move`;
  $("status").textContent = text;
  $("result").textContent = s.result ? `${s.result.text} — ${s.result.reason}` : "";
  const play = s.settings.mode === "play";
  $("undo").disabled = s.moves.length === 0 && !(s.result && /resigns/.test(s.result.reason));
  $("resign").disabled = !play || !!s.result;
  $("stop").disabled = !s.thinking;
  $("analyse").disabled = play || !!s.result;
  $("analyse").textContent = s.analysing || s.thinking === "analysis" ? "Stop analysis" : "Analyse";
}

function fmtValue(value, mate) {
  if (mate !== null && mate !== undefined) return mate > 0 ? `#${Math.ceil(mate / 2)}` : `#-${Math.ceil(-mate / 2)}`;
  return (value >= 0 ? "+" : "") + value.toFixed(2);
}

function fmtCount(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e4) return (n / 1e3).toFixed(0) + "k";
  return String(n);
}

function renderLook(s) {
  const look = s.look;
  $("searcher").textContent = look ? `(${look.searcher})` : "";
  $("priors").parentElement.classList.toggle("hide", !(look && look.heat.length));   // MCTS only
  const [w, d, l] = look ? look.wdl_first : [0, 0, 0];
  const bar = $("wdl");
  bar.querySelector(".w").style.width = `${w / 10}%`;
  bar.querySelector(".d").style.width = `${d / 10}%`;
  bar.querySelector(".l").style.width = `${l / 10}%`;
  bar.dataset.wdl = look ? look.wdl_first.join(",") : "";
  $("wdl-text").textContent = look
    ? `${s.colours[0]} ${(w / 10).toFixed(1)}% · draw ${(d / 10).toFixed(1)}% · ${s.colours[1]} ${(l / 10).toFixed(1)}%` : "";
  $("eval").textContent = look ? `${fmtValue(look.value, look.mate)} (${s.colours[look.side]})` : "–";
  $("depth").textContent = look ? `${look.depth}/${look.seldepth}` : "–";
  $("nodes").textContent = look ? fmtCount(look.nodes) : "–";
  $("nodes").dataset.nodes = look ? look.nodes : "";
  $("nps").textContent = look ? fmtCount(look.nps) : "–";
  const lines = $("lines");
  lines.replaceChildren(...(look ? look.lines : []).map((line) => {
    const li = document.createElement("li");
    const b = document.createElement("b");
    b.textContent = fmtValue(line.value, line.mate);
    li.append(b, " " + line.pv.join(" "));
    li.dataset.moves = line.moves.join(" ");
    return li;
  }));
}

function renderMoves(s) {
  const list = $("moves");
  list.replaceChildren(...s.moves.map((m) => {
    const li = document.createElement("li");
    li.textContent = m.label;
    li.dataset.move = m.move;
    return li;
  }));
  list.scrollTop = list.scrollHeight;
}

// Heat entries to draw: visits (or the raw priors when toggled) as shares of the largest.
function heatShares(look) {
  if (!look || !look.heat.length) return [];
  const usePriors = $("priors").checked;
  const key = usePriors ? "prior" : "visits";
  const total = look.heat.reduce((sum, h) => sum + h[key], 0);
  if (total <= 0) return [];
  return look.heat.filter((h) => h[key] > 0)
    .map((h) => ({ move: h.move, share: h[key] / total, count: h[key], kind: key }))
    .sort((a, b) => b.share - a.share);
}

// --- chess ------------------------------------------------------------------------------------

function squareName(file, rank) { return "abcdefgh"[file] + (rank + 1); }

function fenPieces(fen) {
  const pieces = {};
  fen.split(" ")[0].split("/").forEach((row, i) => {
    let file = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) file += Number(ch);
      else { pieces[squareName(file, 7 - i)] = ch; file++; }
    }
  });
  return pieces;
}

function pieceImage(ch) {
  const img = document.createElement("img");
  img.className = "piece";
  img.src = `/pieces/${ch === ch.toUpperCase() ? "w" : "b"}${ch.toUpperCase()}.svg`;
  img.alt = ch;
  img.draggable = false;
  return img;
}

function buildChess(flipped) {
  const board = $("board");
  board.className = "chess";
  board.replaceChildren();
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 8; col++) {
      const file = flipped ? 7 - col : col, rank = flipped ? row : 7 - row;
      const sq = document.createElement("div");
      sq.className = "sq " + ((file + rank) % 2 ? "light" : "dark");
      sq.dataset.square = squareName(file, rank);
      if (row === 7) sq.insertAdjacentHTML("beforeend", `<span class="coord file">${"abcdefgh"[file]}</span>`);
      if (col === 0) sq.insertAdjacentHTML("beforeend", `<span class="coord rank">${rank + 1}</span>`);
      board.append(sq);
    }
  }
  const arrows = document.createElementNS(SVG, "svg");
  arrows.id = "arrows";
  arrows.setAttribute("viewBox", "0 0 8 8");
  arrows.innerHTML = '<defs><marker id="head" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="3" markerHeight="3" orient="auto">'
    + '<path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs><g id="arrow-layer"></g>';
  board.append(arrows);
  selected = null;
}

function legalFrom(s, from) {
  return new Set((s.board.legal || []).filter((m) => m.startsWith(from)).map((m) => m.slice(2, 4)));
}

function renderChess(s) {
  const flipped = s.settings.human === 1;
  const key = `chess:${flipped}`;
  if (built !== key) { buildChess(flipped); built = key; }
  const pieces = fenPieces(s.board.fen);
  const last = s.moves.length ? s.moves[s.moves.length - 1].move : "";
  if (selected && !canMove(s)) selected = null;
  const targets = selected ? legalFrom(s, selected) : new Set();
  for (const sq of $("board").querySelectorAll(".sq")) {
    const name = sq.dataset.square;
    const ch = pieces[name] || "";
    const img = sq.querySelector("img.piece");
    if ((img ? img.alt : "") !== ch) {
      if (img) img.remove();
      if (ch) sq.prepend(pieceImage(ch));
    }
    sq.dataset.piece = ch;
    sq.classList.toggle("last", !!last && (last.slice(0, 2) === name || last.slice(2, 4) === name));
    sq.classList.toggle("sel", name === selected);
    sq.classList.toggle("target", targets.has(name));
    sq.classList.toggle("occupied", !!ch);
    sq.classList.toggle("check", name === s.board.check);
  }
  drawArrows(s, flipped);
}

function drawArrows(s, flipped) {
  const layer = $("arrow-layer");
  if (!layer) return;
  let arrows = heatShares(s.look).slice(0, 5).filter((h) => h.share >= 0.04)
    .map((h) => ({ move: h.move, width: 0.06 + 0.22 * h.share, label: `${Math.round(100 * h.share)}%` }));
  if (!arrows.length && s.look) {
    arrows = s.look.lines.filter((line) => line.moves.length)
      .map((line, i) => ({ move: line.moves[0], width: 0.2 - 0.04 * Math.min(i, 3), label: `#${line.rank}` }));
  }
  const centre = (name) => {
    const file = name.charCodeAt(0) - 97, rank = Number(name[1]) - 1;
    return flipped ? [7 - file + 0.5, rank + 0.5] : [file + 0.5, 7 - rank + 0.5];
  };
  layer.replaceChildren(...arrows.map((a, i) => {
    const [x1, y1] = centre(a.move.slice(0, 2)), [x2, y2] = centre(a.move.slice(2, 4));
    const len = Math.hypot(x2 - x1, y2 - y1) || 1;
    const shorten = 0.3;
    const line = document.createElementNS(SVG, "line");
    line.setAttribute("class", "arrow");
    line.dataset.move = a.move;
    line.setAttribute("x1", x1); line.setAttribute("y1", y1);
    line.setAttribute("x2", x2 - (x2 - x1) * shorten / len); line.setAttribute("y2", y2 - (y2 - y1) * shorten / len);
    line.setAttribute("stroke", i === 0 ? "rgba(0,110,40,.8)" : "rgba(20,90,200,.6)");
    line.setAttribute("stroke-width", a.width);
    line.setAttribute("stroke-linecap", "round");
    line.setAttribute("marker-end", "url(#head)");
    const title = document.createElementNS(SVG, "title");
    title.textContent = a.label;
    line.append(title);
    return line;
  }));
}

function squareAtPoint(x, y) {
  const el = document.elementFromPoint(x, y);
  const sq = el && el.closest ? el.closest(".sq") : null;
  return sq ? sq.dataset.square : null;
}

function sideToMove(s) { return s.board.fen.split(" ")[1]; }

function ownPiece(s, square) {
  const ch = fenPieces(s.board.fen)[square];
  if (!ch) return false;
  return (ch === ch.toUpperCase() ? "w" : "b") === sideToMove(s);
}

function tryMove(from, to) {
  const matches = (snap.board.legal || []).filter((m) => m.slice(0, 4) === from + to);
  selected = null;
  if (matches.length > 1) {                 // a promotion: ask which piece
    const promo = $("promo");
    promo.dataset.move = from + to;
    promo.hidden = false;
    renderChess(snap);
    return;
  }
  if (matches.length === 1) act("/api/move", { move: matches[0] });
  renderChess(snap);
}

function onChessDown(e) {
  const square = e.target.closest ? (e.target.closest(".sq") || {}).dataset : null;
  if (!square || !square.square || !canMove(snap)) return;
  const name = square.square;
  e.preventDefault();
  if (selected && selected !== name && legalFrom(snap, selected).has(name)) { tryMove(selected, name); return; }
  if (ownPiece(snap, name)) {
    selected = name;
    const img = e.target.closest(".sq").querySelector("img.piece");
    const ghost = img.cloneNode();
    ghost.id = "ghost";
    const rect = img.getBoundingClientRect();
    ghost.style.width = `${rect.width}px`;
    ghost.style.height = `${rect.height}px`;
    ghost.hidden = true;
    document.body.append(ghost);
    drag = { from: name, ghost, x: e.clientX, y: e.clientY, size: rect.width, moved: false };
  } else {
    selected = null;
  }
  renderChess(snap);
}

function onChessMove(e) {
  if (!drag) return;
  if (!drag.moved && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) > 5) {
    drag.moved = true;
    drag.ghost.hidden = false;
    const img = document.querySelector(`.sq[data-square="${drag.from}"] img.piece`);
    if (img) img.style.opacity = "0.3";
  }
  if (drag.moved) {
    drag.ghost.style.left = `${e.clientX - drag.size / 2}px`;
    drag.ghost.style.top = `${e.clientY - drag.size / 2}px`;
  }
}

function onChessUp(e) {
  if (!drag) return;
  const d = drag;
  drag = null;
  d.ghost.remove();
  const img = document.querySelector(`.sq[data-square="${d.from}"] img.piece`);
  if (img) img.style.opacity = "";
  if (!d.moved) return;                       // a click: the piece stays selected
  const to = squareAtPoint(e.clientX, e.clientY);
  if (to && to !== d.from && legalFrom(snap, d.from).has(to)) tryMove(d.from, to);
}

// --- gomoku -------------------------------------------------------------------------------------

const CELL = 32, MARGIN = 30;

function buildGomoku(width, height) {
  const board = $("board");
  board.className = "gomoku";
  const w = MARGIN * 2 + CELL * (width - 1), h = MARGIN * 2 + CELL * (height - 1);
  const at = (i) => MARGIN + CELL * i;
  let grid = `<rect width="${w}" height="${h}" fill="#dcb35c"/>`;
  for (let x = 0; x < width; x++) {
    grid += `<line x1="${at(x)}" y1="${at(0)}" x2="${at(x)}" y2="${at(height - 1)}" stroke="#5a4520" stroke-width="1"/>`;
    grid += `<text class="cx" x="${at(x)}" y="${MARGIN / 2 - 2}">${x}</text>`;
    grid += `<text class="cx" x="${at(x)}" y="${h - MARGIN / 2 + 2}">${x}</text>`;
  }
  for (let y = 0; y < height; y++) {
    grid += `<line x1="${at(0)}" y1="${at(y)}" x2="${at(width - 1)}" y2="${at(y)}" stroke="#5a4520" stroke-width="1"/>`;
    grid += `<text class="cy" x="${MARGIN / 2 - 2}" y="${at(y)}">${y}</text>`;
    grid += `<text class="cy" x="${w - MARGIN / 2 + 2}" y="${at(y)}">${y}</text>`;
  }
  if (width % 2 && height % 2) {
    grid += `<circle cx="${at((width - 1) / 2)}" cy="${at((height - 1) / 2)}" r="3.5" fill="#5a4520"/>`;
  }
  let cells = "";
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      cells += `<rect class="cell" data-xy="${x},${y}" x="${at(x) - CELL / 2}" y="${at(y) - CELL / 2}" width="${CELL}" height="${CELL}"/>`;
    }
  }
  board.innerHTML = `<svg xmlns="${SVG}" viewBox="0 0 ${w} ${h}">${grid}<g id="heat"></g><g id="stones"></g>`
    + `<g id="cells">${cells}</g></svg>`;
}

function renderGomoku(s) {
  const { width, height, cells } = s.board;
  const key = `gomoku:${width}x${height}`;
  if (built !== key) { buildGomoku(width, height); built = key; }
  const at = (i) => MARGIN + CELL * i;
  const last = s.moves.length ? s.moves[s.moves.length - 1].move : "";
  let stones = "";
  for (let i = 0; i < cells.length; i++) {
    if (cells[i] === "0") continue;
    const x = i % width, y = Math.floor(i / width), black = cells[i] === "1";
    stones += `<circle class="stone ${black ? "black" : "white"}" data-xy="${x},${y}" cx="${at(x)}" cy="${at(y)}" r="${CELL * 0.45}"`
      + ` fill="${black ? "#111" : "#fafafa"}" stroke="#000" stroke-width="1"/>`;
    if (`${x},${y}` === last) {
      stones += `<circle class="last" cx="${at(x)}" cy="${at(y)}" r="${CELL * 0.12}" fill="${black ? "#f44" : "#d00"}"/>`;
    }
  }
  $("stones").innerHTML = stones;
  let heat = "";
  const shares = heatShares(s.look);
  if (shares.length) {
    const top = shares[0].share;
    shares.forEach((h, rank) => {
      const [x, y] = h.move.split(",").map(Number);
      if (cells[y * width + x] !== "0") return;
      const alpha = 0.12 + 0.78 * h.share / top;
      heat += `<rect class="heat" data-xy="${h.move}" data-${h.kind}="${h.count}" x="${at(x) - CELL / 2 + 1}" y="${at(y) - CELL / 2 + 1}"`
        + ` width="${CELL - 2}" height="${CELL - 2}" rx="4" fill="rgba(220,30,30,${alpha.toFixed(3)})"/>`;
      if (rank < 12) {
        heat += `<text x="${at(x)}" y="${at(y)}" font-size="10" text-anchor="middle" dominant-baseline="central" fill="#fff">`
          + `${Math.round(100 * h.share)}</text>`;
      }
    });
  } else if (s.look) {
    s.look.lines.forEach((line) => {
      if (!line.moves.length) return;
      const [x, y] = line.moves[0].split(",").map(Number);
      heat += `<circle class="bestline" data-xy="${line.moves[0]}" cx="${at(x)}" cy="${at(y)}" r="${CELL * 0.4}" fill="none"`
        + ` stroke="rgba(20,90,200,.85)" stroke-width="3"/><text x="${at(x)}" y="${at(y)}" font-size="12" text-anchor="middle"`
        + ` dominant-baseline="central" fill="#1450c8">${line.rank}</text>`;
    });
  }
  $("heat").innerHTML = heat;
}

function onGomokuClick(e) {
  const cell = e.target.closest ? e.target.closest(".cell") : null;
  if (!cell || !snap || !canMove(snap)) return;
  const [x, y] = cell.dataset.xy.split(",").map(Number);
  if (snap.board.cells[y * snap.board.width + x] !== "0") return;
  act("/api/move", { move: cell.dataset.xy });
}

// --- settings form ------------------------------------------------------------------------------

function fillChoices() {
  const player = $("player");
  player.replaceChildren(...options.players.map((p) => new Option(p, p)));
  // External engines: only the names `engine play --external` gave; the page cannot name a program.
  $("engine").replaceChildren(...options.external.map((name) => new Option(name, name)));
  const externalOption = $("kind").querySelector('option[value="external"]');
  externalOption.disabled = options.external.length === 0;
  externalOption.textContent = options.external.length ? "external engine"
    : "external engine (start the board with --external NAME=COMMAND)";
  fillNetworks();
}

function fillNetworks() {
  if (!options) return;
  const nets = options.networks[$("game").value] || [];
  const keep = $("weights").value;
  $("weights").replaceChildren(new Option("none / default", ""), ...nets.map((n) => new Option(n, n)));
  if (nets.includes(keep)) $("weights").value = keep;
}

function fillSettings(settings) {
  const text = JSON.stringify(settings);
  if (text === settingsShown) return;
  settingsShown = text;
  $("game").value = settings.game;
  $("width").value = settings.width;
  $("height").value = settings.height;
  $("rule").value = settings.rule;
  $("mode").value = settings.mode;
  $("human").value = String(settings.human);
  $("movetime").value = settings.movetime;
  $("lines-n").value = settings.lines;
  $("kind").value = settings.opponent.kind;
  if (settings.opponent.engine) $("engine").value = settings.opponent.engine;
  const opts = settings.opponent.options;
  fillNetworks();
  if (opts.player) $("player").value = opts.player;
  if (opts.weights && ![...$("weights").options].some((o) => o.value === opts.weights)) {
    $("weights").append(new Option(opts.weights, opts.weights));     // a file given on the command line
  }
  $("weights").value = opts.weights || "";
  $("nodes").value = opts.nodes || "";
  $("more").value = Object.entries(opts).filter(([k]) => !["player", "weights", "nodes"].includes(k))
    .map(([k, v]) => `${k}=${v}`).join(" ");
  $("position").value = settings.position;
  const labels = settings.game === "chess" ? ["first (White)", "second (Black)"] : ["first (black stones)", "second (white stones)"];
  $("human").options[0].text = labels[0];
  $("human").options[1].text = labels[1];
  showFields();
}

function showFields() {
  const gomoku = $("game").value === "gomoku", external = $("kind").value === "external";
  document.querySelectorAll(".gomoku-only").forEach((el) => el.classList.toggle("hide", !gomoku));
  document.querySelectorAll(".builtin-only").forEach((el) => el.classList.toggle("hide", external));
  document.querySelectorAll(".external-only").forEach((el) => el.classList.toggle("hide", !external));
}

function formSettings() {
  const optionsOut = { player: $("player").value };
  if ($("weights").value) optionsOut.weights = $("weights").value;
  if ($("nodes").value) optionsOut.nodes = $("nodes").value;
  for (const pair of $("more").value.split(/\s+/).filter(Boolean)) {   // key=value; the server checks them
    const at = pair.indexOf("=");
    optionsOut[at < 0 ? pair : pair.slice(0, at)] = at < 0 ? "" : pair.slice(at + 1);
  }
  return {
    game: $("game").value, width: $("width").value, height: $("height").value, rule: $("rule").value,
    mode: $("mode").value, human: Number($("human").value), movetime: $("movetime").value,
    lines: $("lines-n").value, position: snap && snap.settings.game === $("game").value ? $("position").value : "",
    opponent: $("kind").value === "external" ? { kind: "external", name: $("engine").value }
      : { kind: "builtin", options: optionsOut },
  };
}

// --- buttons ------------------------------------------------------------------------------------

async function save() {
  try {
    const r = await call("GET", "/api/record");
    const area = $("record");
    area.value = r.text;
    area.hidden = false;
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([r.text], { type: "text/plain" }));
    link.download = r.filename;
    document.body.append(link);
    link.click();
    link.remove();
  } catch (e) {
    failed(e);
  }
}

function wire() {
  const board = $("board");
  board.addEventListener("pointerdown", (e) => { if (snap && snap.settings.game === "chess") onChessDown(e); });
  window.addEventListener("pointermove", onChessMove);
  window.addEventListener("pointerup", onChessUp);
  board.addEventListener("click", (e) => { if (snap && snap.settings.game === "gomoku") onGomokuClick(e); });
  $("promo").addEventListener("click", (e) => {
    const piece = e.target.dataset ? e.target.dataset.piece : undefined;
    if (piece === undefined) return;
    const promo = $("promo");
    promo.hidden = true;
    if (piece) act("/api/move", { move: promo.dataset.move + piece });
  });
  $("new").addEventListener("click", () => act("/api/new", {}));
  $("undo").addEventListener("click", () => act("/api/undo"));
  $("swap").addEventListener("click", () => act("/api/swap"));
  $("resign").addEventListener("click", () => act("/api/resign"));
  $("stop").addEventListener("click", () => act("/api/stop"));
  $("save").addEventListener("click", save);
  $("setpos").addEventListener("click", () => act("/api/position", { position: $("position").value }));
  $("analyse").addEventListener("click", () =>
    act("/api/analyse", { on: !(snap && (snap.analysing || snap.thinking === "analysis")) }));
  $("priors").addEventListener("change", () => { if (snap) render(Object.assign({}, snap)); });
  $("takeover").addEventListener("click", () => claim(true));
  $("game").addEventListener("change", () => { fillNetworks(); showFields(); });
  $("kind").addEventListener("change", showFields);
  $("settings").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("status").textContent = "starting…";
    if (await act("/api/new", formSettings())) settingsShown = "";
  });
}

wire();
claim(false);
