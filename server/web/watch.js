// The watch and play page: joins a game's websocket with the spectator token (to watch) or a
// side's token (to play that side), draws the position
// the server projects for spectators, lists the game record in words, and replays any earlier
// position. It holds no rules: what a position is and what an event means come from the server
// (`get_state`, `get_state_at`, `get_record`), so the page can never disagree with the engine.
// The same reads serve an export file opened for review (`review`), which the server verifies.
// A side plays through the commands the CLI sends: every action is first asked of the server
// as a `preview` (its cost, or the refusal with its rule) and sent once confirmed; prompts and
// their answers come from the position the server projects. The page decides no rule.
// `STEPS` (the sequence of play), `FRAME_BYTES_MAX` and `IDLE_TIMEOUT_MS` are prepended by the
// server from the engine's own tables and its configuration.
"use strict";

(() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  /** Frames kept for inspection (`window.aslWatch.frames`): a whole evening's game, bounded. */
  const FRAMES_KEPT_MAX = 5000;
  /** Reconnection waits, doubling from the first to the last after each failed attempt. */
  const RECONNECT_DELAY_MIN_MS = 250;
  const RECONNECT_DELAY_MAX_MS = 8000;
  /** A page someone has open may only listen for a long while: it pings three times per idle
   * timeout, so the server never closes it as dead even if one ping is late. */
  const KEEPALIVE_MS = Math.max(250, Math.floor(IDLE_TIMEOUT_MS / 3));
  /** Centre-to-corner size of a hex, in board units. */
  const HEX = 30;
  const SQRT3 = Math.sqrt(3);
  /** Side length of a counter, in board units. */
  const COUNTER = 24;
  /** The room a stack fans out in, in board units: about a hex across, so every counter of a
   * stack is seen whole (shrunk when there are many) instead of hidden under the top one. */
  const FAN = 50;
  /** Counter colours by nationality, as ASL's counters are printed; others fall back to a
   * colour per side. */
  const NATIONALITY_COLOURS = {
    german: "#8da4bd",
    russian: "#c6a064",
    american: "#9ead6b",
    british: "#cdb98b",
    japanese: "#e3c84f",
    italian: "#b3b59a",
    french: "#7f9ccc",
    finnish: "#d2d6da",
    polish: "#c9a3a3",
    chinese: "#9fbf9f",
  };
  const SIDE_COLOURS = { A: "#7f97b2", B: "#c9a063" };
  /** Kinds of unit as a counter abbreviates them. */
  const KIND_MARKS = {
    squad: "SQD",
    half_squad: "HS",
    crew: "CREW",
    leader: "LDR",
    hero: "HERO",
    vehicle: "AFV",
    dummy: "DUMMY",
  };
  /** Space between boards drawn side by side, in board units. */
  const BOARD_GAP = 2 * HEX;
  /** VASL's geomorphic grid in a board image's own pixels (protocol/board/src/vasl/archive.rs):
   * columns 56.25 apart (33 over 1800), hexes 64.5 high (10 over 645), column A's first centre
   * on the west edge half a hex down. */
  const VASL_HEX_WIDTH = 1800 / 32;
  const VASL_HEX_HEIGHT = 645 / 10;
  /** Board units per image pixel on real boards: a hex as wide as a drawn one (1.5 HEX from
   * column to column), so counters keep their size on the artwork. */
  const IMAGE_SCALE = (1.5 * HEX) / VASL_HEX_WIDTH;
  /** Zoom bounds, as factors of the board's first size: out until the whole map fits its
   * frame (never below ZOOM_MIN, a 3 × 3 map of boards on a phone), in to read a counter's
   * ratings on a phone. Each step (a key, a wheel notch) zooms by ZOOM_STEP. */
  const ZOOM_MIN = 0.1;
  const ZOOM_MAX = 4;
  const ZOOM_STEP = 1.25;
  /** Screen pixels an arrow key pans the board by. */
  const PAN_STEP_PX = 80;
  /** A press that moves further than this (screen pixels) pans the board instead of clicking. */
  const DRAG_SLOP_PX = 5;

  const TERRAIN_COLOURS = {
    open_ground: "#e9e4c9",
    shellholes: "#d6cba3",
    sunken_road: "#cdbb8f",
    elevated_road: "#d8c59a",
    runway: "#d0d0cc",
    brush: "#b8c98a",
    woods: "#6f9a4f",
    orchard: "#a9c981",
    olive_grove: "#9fb57a",
    cactus_patch: "#bcc57c",
    grain: "#ead97c",
    marsh: "#9cc3b4",
    crag: "#a49c92",
    graveyard: "#bdbdad",
    gully: "#b59f7a",
    stone_building: "#e9e4c9",
    wooden_building: "#e9e4c9",
  };
  const BUILDING_COLOURS = { stone_building: "#9e9890", wooden_building: "#b4834f" };

  const el = (id) => document.getElementById(id);
  /** Ids in the order a player counts them: `ru-sq2` before `ru-sq10`. */
  const naturally = new Intl.Collator("en", { numeric: true }).compare;
  /** Characters of a counter's ratings line, and of its id line, that fit its face at their
   * type sizes (`4-6-7`, `ge-sq12`); a longer text is pressed into the face's width. */
  const RATINGS_CHARS_MAX = 5;
  const ID_CHARS_MAX = 8;

  /** Sets `text` on the SVG text `node`, pressed into `width` when it has more than `chars`
   * characters (smaller, and squeezed to that width), so it stays on its counter. */
  function fitted(node, text, chars, width) {
    const shown = text === null || text === undefined ? "" : String(text);
    node.textContent = shown;
    if (shown.length <= chars) return;
    node.classList.add("long");
    node.setAttribute("textLength", String(width));
    node.setAttribute("lengthAdjust", "spacingAndGlyphs");
  }

  /** Units left to set up that the set-up prompt names one by one; more are counted by kind. */
  const SETUP_NAMED_MAX = 12;

  const page = {
    game: null,
    token: null,
    /** The `review` frame (an export file) when reviewing instead of watching a game. */
    review: null,
    /** What the page says of the receipts it checked a review with, before the report. */
    reviewNote: "",
    ws: null,
    /** Whether a join has been answered on the current connection. */
    joined: false,
    /** The head version: the latest event of this viewer's own stream (events it may not see
     * are not in it, so its numbers are its own, not the log's). */
    version: 0,
    /** Record entries in order: entries[i] is event #(i + 1) of this viewer's own stream. */
    entries: [],
    recordAsked: false,
    /** What the one `state` request in flight asked for: {live: true} or {at: N}; or null. */
    stateAsked: null,
    /** The latest head position received. */
    live: null,
    /** The version being replayed, or null when following the game live. */
    viewing: null,
    /** The state on the board now. */
    shown: null,
    /** The map drawn, as text: terrain is redrawn only when it differs. */
    mapKey: null,
    geometry: null,
    /** Each real board's image by board number: "loading", "shown" or "failed" (drawn). */
    boardImages: {},
    /** How far the board is zoomed, a factor of its fitted size (ZOOM_MIN … ZOOM_MAX). */
    zoom: 1,
    reconnectDelay: RECONNECT_DELAY_MIN_MS,
    /** The pending reconnection, cancelled when the page switches to reviewing a file. */
    reconnectTimer: null,
    /** Join from scratch next time: a resume was refused (too far behind). */
    resumeRefused: false,
    /** The server refused the receipt this browser kept (`bad_receipt`): join without it. */
    receiptRefused: false,
    /** Why the receipt was not shown, said with the next join's status; null when none. */
    receiptWarning: null,
    /** Stop reconnecting: the server said the game or the token is wrong. */
    fatal: false,
    frames: [],
    connections: 0,
    /** "A" or "B" when joined with a side's token: the side this page plays. */
    side: null,
    /** Own units picked to act, by id. */
    selected: new Set(),
    /** What a hex click means: "move", "bypass" (pick the hex, then hexsides) or "sewer". */
    mode: "move",
    /** A Bypass being built: the hex bypassed and the hexsides (hexes across them) in order. */
    bypass: null,
    /** The hex whose stack is listed below the board. */
    stackHex: null,
    /** Whether hex clicks trace LOS (L) rather than pick stacks and moves. */
    losMode: false,
    /** Pings sent and pongs heard on this page, for the keepalive. */
    pings: 0,
    pongs: 0,
    keepalive: null,
    /** The version the last answered command reached: a later event (the opponent's) clears
     * its result. */
    outcomeVersion: 0,
    /** The version of an end offer this player chose to play on against. */
    endDeclinedAt: null,
    /** The command asked about: {id, command, label, outcome}; sent once confirmed. */
    proposal: null,
    /** Commands sent and not answered yet, by id. */
    sent: new Map(),
    nextId: 1,
    /** Both sides' clocks as the server last told them (`ClockView`), null without a time
     * control; `clocksAt` is when this page heard it (`Date.now()`), the countdown's start. */
    clocks: null,
    clocksAt: 0,
    /** Set-up weapons (A4.43) picked to go with the next unit placed. */
    setupWeapons: new Set(),
    /** Own units waiting off board picked to enter (A2.51). */
    entering: new Set(),
    /** The first event (this stream's numbering) of this side's last command sent from this
     * page: what an undo asks to take back from. */
    lastCommandFrom: null,
    /** What the board was last opened at (the set-up area, the side's units): once each. */
    openedAt: null,
    /** In this side's RtPh step: the quiet preview of `done` asked at a version, and its
     * answer, whose refusal names the broken unit that must rout (A10.5): {id, version,
     * outcome}. The server decides who must rout; the page only asks. */
    routCheck: null,
    /** The morale on the router's broken side, as the player typed it for the rout panel: an
     * Interdicted rout step's NMC is against it (A10.53, A10.4), and the counter carries it,
     * not its ratings. Sent with every rout; the server asks for it only where needed. */
    routMorale: null,
    /** The Close Combat form's attacks being built (A11.12): {hex, rows: [{attackers: Set,
     * defenders: Set}]}; null while the form is closed. */
    cc: null,
    /** The notice target sent (`notify`) and not answered yet: its kind; null when none is. */
    notifyAsked: null,
    /** A finished game's export being read (`get_export`), page by page: {header, lines,
     * bytes}; null when none is. */
    exporting: null,
    /** The last export file made, as text (for inspection and to save again); null before. */
    exported: null,
  };
  window.aslWatch = page;
  setInterval(drawClocks, 1000);

  // ---- Hex names and geometry (the rules README's coordinates, as protocol/src/hex.rs) ------

  /** "12C4" → {board: "12", column: 3, row: 4}; AA is column 27. */
  function parseHex(name) {
    const m = /^(\d*)([A-Z]+)(\d+)$/.exec(name);
    if (!m) return null;
    const letters = m[2];
    const column =
      letters.length === 1
        ? letters.charCodeAt(0) - 64
        : 26 + (letters.charCodeAt(0) - 64);
    return { board: m[1], column, row: Number(m[3]) };
  }

  /** Hex centres with flat tops: even columns put row r at height r, odd ones at r − ½. */
  function centreOf(hex, boardOffset) {
    const x = boardOffset + 1.5 * HEX * (hex.column - 1);
    const y = SQRT3 * HEX * (hex.row - (hex.column % 2 === 1 ? 0.5 : 0));
    return { x, y };
  }

  /** A flat-topped hex around `c`, `size` to its corners; `squash` scales it north–south
   * (VASL's hexes are 0.7% flatter than regular ones). */
  function corners(c, size, squash = 1) {
    const points = [];
    for (let i = 0; i < 6; i++) {
      const a = (Math.PI / 3) * i;
      points.push(`${(c.x + size * Math.cos(a)).toFixed(2)},${(c.y + squash * size * Math.sin(a)).toFixed(2)}`);
    }
    return points.join(" ");
  }

  /** Where `hex` (its column and row as VASL prints them) sits on its board's image, in the
   * image's pixels: column A's row 1 half a hex down, odd columns (B, D …) half a hex higher
   * and counting from row 0, the half hex on the north edge. */
  function imagePixel(hex) {
    const c = hex.column - 1;
    return { x: VASL_HEX_WIDTH * c, y: VASL_HEX_HEIGHT * (hex.row - (c % 2 === 1 ? 0 : 0.5)) };
  }

  /** Lays out a map of real boards (`scenario.map`) as VASL does: rows north to south, boards
   * west to east, each board as large as its image (its last column's centres on its east edge,
   * shared with the next board's first column), a board turned 180° with its image turned
   * about its middle. Returns the centres, the box and where each board's image goes. */
  function layOutBoards(scenario) {
    const sizes = new Map();
    for (const name of Object.keys(scenario.hexes)) {
      const hex = parseHex(name);
      if (!hex) continue;
      const size = sizes.get(hex.board) || { columns: 1, rows: 1 };
      size.columns = Math.max(size.columns, hex.column);
      size.rows = Math.max(size.rows, hex.row);
      sizes.set(hex.board, size);
    }
    const placed = new Map();
    const images = [];
    let top = 0;
    let right = 0;
    for (const row of scenario.map.rows) {
      let left = 0;
      let height = 0;
      for (const [i, spot] of row.entries()) {
        const size = sizes.get(String(spot.board));
        if (!size) continue;
        // A seam hex goes by the later board's name, so a board with another east of it
        // names no hex in its own east column (GG, or A when turned): count it back.
        const seam = i + 1 < row.length && !spot.rotated ? 1 : 0;
        const w = VASL_HEX_WIDTH * (size.columns + seam - 1);
        const h = VASL_HEX_HEIGHT * size.rows;
        placed.set(String(spot.board), { left, top, w, h, rotated: spot.rotated });
        images.push({
          board: spot.board,
          digest: spot.digest,
          rotated: spot.rotated,
          x: left * IMAGE_SCALE,
          y: top * IMAGE_SCALE,
          width: w * IMAGE_SCALE,
          height: h * IMAGE_SCALE,
        });
        left += w;
        height = Math.max(height, h);
      }
      right = Math.max(right, left);
      top += height;
    }
    const centres = new Map();
    for (const name of Object.keys(scenario.hexes)) {
      const hex = parseHex(name);
      const board = hex && placed.get(hex.board);
      if (!board) continue;
      let p = imagePixel(hex);
      if (board.rotated) p = { x: board.w - p.x, y: board.h - p.y };
      centres.set(name, { x: (board.left + p.x) * IMAGE_SCALE, y: (board.top + p.y) * IMAGE_SCALE });
    }
    const margin = HEX;
    return {
      centres,
      images,
      squash: (VASL_HEX_HEIGHT / 2 / (VASL_HEX_WIDTH * 2 / 3)) / (SQRT3 / 2),
      box: {
        x: -margin,
        y: -margin,
        width: right * IMAGE_SCALE + 2 * margin,
        height: top * IMAGE_SCALE + 2 * margin,
      },
    };
  }

  /** Lays the scenario's boards out side by side; returns centres by hex name and the box. */
  function layOut(scenario) {
    if (scenario.map && scenario.map.rows) return layOutBoards(scenario);
    const boards = new Map();
    for (const name of Object.keys(scenario.hexes)) {
      const hex = parseHex(name);
      if (!hex) continue;
      if (!boards.has(hex.board)) boards.set(hex.board, []);
      boards.get(hex.board).push([name, hex]);
    }
    const centres = new Map();
    let offset = 0;
    let minY = Infinity;
    let maxY = -Infinity;
    const order = [...boards.keys()].sort((a, b) => Number(a) - Number(b));
    for (const board of order) {
      const hexes = boards.get(board);
      const minColumn = Math.min(...hexes.map(([, h]) => h.column));
      const maxColumn = Math.max(...hexes.map(([, h]) => h.column));
      const shift = offset - 1.5 * HEX * (minColumn - 1);
      for (const [name, hex] of hexes) {
        const c = centreOf(hex, shift);
        centres.set(name, c);
        minY = Math.min(minY, c.y);
        maxY = Math.max(maxY, c.y);
      }
      offset += 1.5 * HEX * (maxColumn - minColumn) + 2 * HEX + BOARD_GAP;
    }
    const width = Math.max(offset - BOARD_GAP, 2 * HEX);
    return { centres, images: [], squash: 1, box: { x: -HEX, y: minY - HEX, width, height: maxY - minY + 2 * HEX } };
  }

  // ---- Drawing -------------------------------------------------------------------------

  function svg(tag, attributes, parent) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attributes || {})) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function words(snake) {
    return snake.replace(/_/g, " ");
  }

  /** Puts `text` into `node` as a person reads it: what the server quotes in backquotes (a
   * unit id, a command) becomes a chip, never a backquote on screen. */
  function setRich(node, text) {
    node.replaceChildren();
    String(text).split(/`([^`]*)`/).forEach((part, i) => {
      if (i % 2 === 0) {
        if (part) node.append(part);
      } else {
        const chip = document.createElement("code");
        chip.className = "chip";
        chip.textContent = part;
        node.append(chip);
      }
    });
    return node;
  }

  function describeHex(name, spec) {
    const parts = [name, words(spec.terrain)];
    if (spec.elevation) parts.push(`level ${spec.elevation}`);
    if (spec.road) parts.push(`${spec.road} road`);
    if (spec.manhole) parts.push("Manhole");
    return parts.join(" — ");
  }

  // ---- The LOS thread ---------------------------------------------------------------------
  // Click a hex, then another: the page asks the server (`los`) and draws the thread with the
  // engine's verdict and reasons. The page decides nothing itself.

  /** Turns the LOS tool on (L) or off (L again, Esc): while it is on, hex clicks trace LOS
   * and nothing else, so picking stacks and moving never draws a thread by accident. */
  function setLosMode(on) {
    page.losMode = on;
    page.losFrom = null;
    page.losTo = null;
    clearThread();
    el("los-mode").classList.toggle("on", on);
    el("los-mode").setAttribute("aria-pressed", on ? "true" : "false");
    el("los-info").hidden = !on;
    el("los-info").textContent = on ? "LOS: click the first hex (L or Esc: back to play)." : "";
    document.body.classList.toggle("los-mode", on);
  }

  function losClick(name) {
    if (!page.losFrom || page.losTo) {
      page.losFrom = name;
      page.losTo = null;
      clearThread();
      el("los-info").textContent = `LOS from ${name}: click a second hex.`;
      return;
    }
    page.losTo = name;
    el("los-info").textContent = `LOS from ${page.losFrom} to ${name}: asking the engine…`;
    send({ los: { from: page.losFrom, to: name } });
  }

  function clearThread() {
    const old = document.getElementById("los-thread");
    if (old) old.remove();
  }

  /** The verdict as the engine sends it: "clear", "blocked" or { hindered: N }. */
  function verdictKind(verdict) {
    if (!verdict) return "error";
    return typeof verdict === "string" ? verdict : "hindered";
  }

  function verdictText(verdict) {
    if (!verdict) return "cannot be traced";
    return typeof verdict === "string" ? verdict : `hindered ${verdict.hindered}`;
  }

  function drawThread(answer) {
    clearThread();
    const a = page.geometry && page.geometry.centres.get(answer.from);
    const b = page.geometry && page.geometry.centres.get(answer.to);
    const kind = verdictKind(answer.verdict);
    if (a && b) {
      const g = svg("g", { id: "los-thread", class: `los ${kind}` }, el("board"));
      svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y }, g);
      svg("circle", { cx: a.x, cy: a.y, r: 3 }, g);
      svg("circle", { cx: b.x, cy: b.y, r: 3 }, g);
      svg("title", {}, g).textContent = answer.reasons.join("\n");
    }
    const info = el("los-info");
    info.replaceChildren();
    const head = document.createElement("strong");
    head.textContent = `LOS ${answer.from} → ${answer.to}: ${verdictText(answer.verdict)}`;
    info.append(head);
    const list = document.createElement("ul");
    for (const r of answer.reasons) {
      const item = document.createElement("li");
      setRich(item, r);
      list.append(item);
    }
    info.append(list);
  }

  /** Terrain, hexsides, roads and Manholes: drawn once, since the map never changes. */
  function drawMap(scenario) {
    const board = el("board");
    board.replaceChildren();
    board.classList.remove("with-images");
    page.boardImages = {};
    const geometry = layOut(scenario);
    page.geometry = geometry;
    const { box } = geometry;
    board.setAttribute("viewBox", `${box.x} ${box.y} ${box.width} ${box.height}`);
    // The smallest width the board is drawn at, one pixel per board unit: a larger map
    // scrolls in its frame (watch.css) rather than shrink its counters out of reading.
    board.style.setProperty("--board-width", `${Math.ceil(box.width)}px`);
    board.style.setProperty("--board-aspect", String(box.width / box.height));
    // Layers, bottom to top: each real board's own image, the hex grid (its terrain drawn
    // only where no image lies under it), roads, hexsides, Manholes, counters, the LOS thread.
    const underlay = svg("g", { id: "underlay" }, board);
    const terrain = svg("g", { id: "terrain" }, board);
    for (const [name, spec] of Object.entries(scenario.hexes)) {
      const c = geometry.centres.get(name);
      if (!c) continue;
      const hex = parseHex(name);
      const g = svg("g", { class: "hex-cell", "data-hex": name, "data-board": hex.board }, terrain);
      const shape = svg(
        "polygon",
        {
          class: `hex terrain-${spec.terrain}`,
          points: corners(c, HEX, geometry.squash),
          fill: TERRAIN_COLOURS[spec.terrain] || "#ddd",
          "data-hex": name,
        },
        g,
      );
      svg("title", {}, shape).textContent = describeHex(name, spec);
      if (BUILDING_COLOURS[spec.terrain]) {
        const s = HEX * 0.9;
        const stone = spec.terrain === "stone_building";
        svg("rect", {
          class: `building ${stone ? "stone" : "wooden"}`,
          x: c.x - s / 2,
          y: c.y - s / 2,
          width: s,
          height: s,
          fill: BUILDING_COLOURS[spec.terrain],
        }, g);
        // Stone or wooden at a glance, not only by colour: a letter in the corner.
        svg("text", { class: "building-kind", x: c.x + s / 2 - 4, y: c.y + s / 2 - 2 }, g)
          .textContent = stone ? "S" : "W";
      }
      // The full name, board and all, as every message names hexes.
      svg("text", { class: "hex-label", x: c.x, y: c.y - HEX * 0.62 }, g).textContent = name;
      if (spec.elevation) {
        svg("text", { class: "level", x: c.x + HEX * 0.55, y: c.y + HEX * 0.1 }, g).textContent =
          `L${spec.elevation}`;
      }
      const pick = () => {
        el("hex-info").textContent = describeHex(name, spec);
        for (const p of board.querySelectorAll(".hex.picked")) p.classList.remove("picked");
        shape.classList.add("picked");
      };
      shape.addEventListener("mouseenter", pick);
      shape.addEventListener("click", () => {
        pick();
        hexClicked(name);
      });
    }
    for (const image of geometry.images) drawBoardImage(underlay, image);
    drawRoads(scenario, geometry, svg("g", { id: "roads" }, board));
    drawHexsides(scenario, geometry, svg("g", { id: "hexsides" }, board));
    const manholes = svg("g", { id: "manholes" }, board);
    for (const [name, spec] of Object.entries(scenario.hexes)) {
      const c = geometry.centres.get(name);
      if (!c || !spec.manhole) continue;
      const g = svg("g", { class: "manhole", "data-hex": name }, manholes);
      // At the hex's foot, below the stack's counters, so a stack never hides it.
      svg("circle", { cx: c.x, cy: c.y + HEX * 0.7, r: 4.5 }, g);
      svg("text", { x: c.x, y: c.y + HEX * 0.7 + 2 }, g).textContent = "M";
      svg("title", {}, g).textContent = `Manhole in ${name} (B8.1)`;
    }
    // Under the counters: the viewer's set-up area, the edge its reinforcements enter by.
    svg("g", { id: "areas" }, board);
    svg("g", { id: "units" }, board);
  }

  /** The hexes of `state`'s map on `edge` ("north", "east" …): a step outward across it leaves
   * the map, as the engine's `Edge::holds` says. Only a picture of where to click: the server
   * rules on the hex. On a map of several boards each board's own edges count. */
  function edgeHexes(state, edge) {
    const g = page.geometry;
    if (!g) return [];
    const names = [...g.centres.keys()];
    // Neighbours are a column (1.5 hexes) apart across and half a row up or down.
    const ys = [...new Set(names.map((n) => Math.round(g.centres.get(n).y * 10)))].sort((a, b) => a - b);
    let half = Infinity;
    for (let i = 1; i < ys.length; i++) half = Math.min(half, (ys[i] - ys[i - 1]) / 10);
    if (!Number.isFinite(half)) half = (SQRT3 * HEX) / 2;
    const key = (x, y) => `${Math.round(x / 5)},${Math.round(y / 5)}`;
    const board = new Map(names.map((n) => {
      const c = g.centres.get(n);
      return [key(c.x, c.y), parseHex(n).board];
    }));
    const steps = {
      north: [[0, -2 * half]],
      south: [[0, 2 * half]],
      east: [[1.5 * HEX, -half], [1.5 * HEX, half]],
      west: [[-1.5 * HEX, -half], [-1.5 * HEX, half]],
    }[edge] || [];
    return names.filter((n) => {
      const c = g.centres.get(n);
      const own = parseHex(n).board;
      return steps.some(([dx, dy]) => board.get(key(c.x + dx, c.y + dy)) !== own);
    });
  }

  /** Shades the viewer's own set-up area in its set-up step (A12.12), and the edge hexes its
   * picked reinforcements may enter by (A2.51). */
  function drawAreas(state) {
    const layer = el("areas");
    if (!layer || !page.geometry) return;
    layer.replaceChildren();
    const setup = state.scenario.setup;
    const shade = (names, kind, title) => {
      for (const name of names) {
        const c = page.geometry.centres.get(name);
        if (!c) continue;
        const shape = svg("polygon", {
          class: kind,
          "data-hex": name,
          points: corners(c, HEX * 0.92, page.geometry.squash),
        }, layer);
        svg("title", {}, shape).textContent = `${name}: ${title}`;
      }
    };
    if (page.side !== null && page.viewing === null && state.setup && state.setup.side === page.side && setup && !state.over) {
      shade(setup.areas[page.side === "A" ? 0 : 1] || [], "setup-area", `your set-up area (A12.12)`);
    }
    if (page.side !== null && page.viewing === null && page.entering.size && setup) {
      const edges = new Set([...page.entering].map((id) => setup.units[id] && setup.units[id].enters)
        .filter(Boolean).map((e) => e.edge));
      for (const edge of edges) shade(edgeHexes(state, edge), "entry-edge", `the ${edge} edge your units enter by (A2.51)`);
    }
  }

  /** Scrolls the board's frame so that the hexes `names` are in the middle of it. */
  function centreOn(names) {
    const g = page.geometry;
    const points = names.map((n) => g && g.centres.get(n)).filter(Boolean);
    if (!points.length) return;
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    const x = (Math.min(...xs) + Math.max(...xs)) / 2;
    const y = (Math.min(...ys) + Math.max(...ys)) / 2;
    const frame = el("board-scroll");
    const board = el("board").getBoundingClientRect();
    const box = frame.getBoundingClientRect();
    const k = board.width / g.box.width;
    frame.scrollLeft += board.left + (x - g.box.x) * k - (box.left + frame.clientWidth / 2);
    frame.scrollTop += board.top + (y - g.box.y) * k - (box.top + frame.clientHeight / 2);
  }

  /** Opens the board where this viewer's play is, once: a side in its set-up step at its
   * set-up area, else at its own units (all units, for a spectator). A map larger than its
   * frame (a phone's) would otherwise open at its north-west corner, perhaps with no unit. */
  function openBoard(state) {
    const setup = state.scenario.setup;
    const mine = page.side !== null && state.setup && state.setup.side === page.side && setup;
    const at = mine ? "setup" : "units";
    if (page.openedAt === at || page.viewing !== null) return;
    const names = mine
      ? [...(setup.areas[page.side === "A" ? 0 : 1] || [])]
      : Object.values(state.units)
        .filter((u) => !u.eliminated && (page.side === null || u.side === page.side))
        .map((u) => u.hex);
    if (!names.length) return;
    page.openedAt = at;
    centreOn(names);
  }

  /** Lays a real board's own image under its hexes, served by this server from the operator's
   * VASL archive and asked for by the archive's digest the scenario names. Shown once it has
   * loaded; then that board's drawn terrain steps aside (`on-image`) and the artwork shows
   * through the grid. A server without the board, or an image that fails, leaves the board
   * drawn from the scenario's terrain as on any map. `page.boardImages` says which did which. */
  function drawBoardImage(underlay, image) {
    const href = `/boards/${image.board}/image?v=${encodeURIComponent(image.digest)}`;
    const attributes = {
      class: "board-image loading",
      "data-board": image.board,
      href,
      x: image.x,
      y: image.y,
      width: image.width,
      height: image.height,
      preserveAspectRatio: "none",
    };
    if (image.rotated) {
      attributes.transform = `rotate(180 ${image.x + image.width / 2} ${image.y + image.height / 2})`;
    }
    const node = svg("image", attributes, underlay);
    page.boardImages[image.board] = "loading";
    node.addEventListener("load", () => {
      node.classList.remove("loading");
      page.boardImages[image.board] = "shown";
      const drawn = `#terrain [data-board="${image.board}"], #roads [data-board="${image.board}"]`;
      for (const node of el("board").querySelectorAll(drawn)) node.classList.add("on-image");
      el("board").classList.add("with-images");
    });
    node.addEventListener("error", () => {
      node.remove();
      page.boardImages[image.board] = "failed";
    });
  }

  function adjacent(a, b) {
    return Math.hypot(a.x - b.x, a.y - b.y) < SQRT3 * HEX * 1.01;
  }

  /** A road runs between adjacent road hexes (a road gap in a wall is drawn by the wall). */
  function drawRoads(scenario, geometry, layer) {
    const roads = Object.entries(scenario.hexes).filter(([, s]) => s.road);
    for (const [name, spec] of roads) {
      const a = geometry.centres.get(name);
      let linked = false;
      for (const [other] of roads) {
        const b = geometry.centres.get(other);
        if (other === name || !a || !b || !adjacent(a, b)) continue;
        linked = true;
        if (other > name) {
          svg("line", { class: `road ${spec.road}`, "data-board": parseHex(name).board, x1: a.x, y1: a.y, x2: b.x, y2: b.y }, layer);
        }
      }
      if (!linked && a) {
        svg("circle", { class: `road ${spec.road}`, "data-board": parseHex(name).board, cx: a.x, cy: a.y, r: 2 }, layer);
      }
    }
  }

  /** Walls, hedges and bocage on the edge two hexes share; a road through one leaves a gap. */
  function drawHexsides(scenario, geometry, layer) {
    for (const [name, spec] of Object.entries(scenario.hexsides)) {
      if (!spec.feature) continue;
      const [x, y] = name.split("-");
      const a = geometry.centres.get(x);
      const b = geometry.centres.get(y);
      if (!a || !b) continue;
      const mid = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
      const d = Math.hypot(b.x - a.x, b.y - a.y);
      const perp = { x: -(b.y - a.y) / d, y: (b.x - a.x) / d };
      const classes = `hexside ${spec.feature}${spec.breach ? " breach" : ""}`;
      const segments = spec.road ? [[-0.5, -0.2], [0.2, 0.5]] : [[-0.5, 0.5]];
      const g = svg("g", { "data-hexside": name, class: `hexside-group ${spec.feature}` }, layer);
      for (const [from, to] of segments) {
        svg("line", {
          class: classes,
          x1: mid.x + perp.x * HEX * from,
          y1: mid.y + perp.y * HEX * from,
          x2: mid.x + perp.x * HEX * to,
          y2: mid.y + perp.y * HEX * to,
        }, g);
      }
      svg("title", {}, g).textContent =
        `${words(spec.feature)} on ${name}${spec.road ? " (road gap)" : ""}${spec.breach ? " (Breach)" : ""}`;
    }
  }

  function sideClass(state, side) {
    return side === "A" ? "side-a" : "side-b";
  }

  function sideName(state, side) {
    return state.scenario.sides[side === "A" ? 0 : 1].name;
  }

  function other(side) {
    return side === "A" ? "B" : "A";
  }

  /** The colour of a side's counters: its nationality's, else one per side. */
  function sideColour(state, side) {
    const spec = state.scenario.sides[side === "A" ? 0 : 1];
    const key = `${spec.id || ""} ${spec.name || ""}`.toLowerCase();
    const found = Object.keys(NATIONALITY_COLOURS).find((n) => key.includes(n));
    return found ? NATIONALITY_COLOURS[found] : SIDE_COLOURS[side];
  }

  /** A small marker counter laid on a unit (PIN, CX, a held SW), in the unit's own units. */
  function badge(g, kind, label, x, y, width) {
    const m = svg("g", { class: `badge ${kind}` }, g);
    svg("rect", { x, y, width, height: 8, rx: 1.5 }, m);
    svg("text", { x: x + width / 2, y: y + 6 }, m).textContent = label;
    return m;
  }

  /** One counter, drawn as ASL players read it: the nationality's colour, the unit's kind, its
   * ratings along the bottom as printed (a squad's `4-6-7`, a leader's `9-1`), and markers laid
   * on it: broken (its broken side), PIN, CX, "?" and WA, the SW it possesses on it. An enemy
   * under "?" is only a "?" counter in its side's colour (A12). Drawn at (0, 0) and placed by
   * `transform`, so a fanned-out stack can shrink it. */
  function drawCounter(layer, state, unit, transform, moving) {
    const classes = ["counter", sideClass(state, unit.side)];
    if (unit.morale === "broken") classes.push("broken");
    if (moving) classes.push("moving");
    const own = page.side !== null && unit.side === page.side;
    if (unit.concealed) classes.push(own ? "own-concealed" : "concealed");
    if (page.selected.has(unit.id)) classes.push("selected");
    const g = svg("g", {
      class: classes.join(" "),
      "data-unit": unit.id,
      "data-hex": unit.hex,
      transform,
    }, layer);
    svg("rect", { class: "face", x: 0, y: 0, width: COUNTER, height: COUNTER, rx: 2, fill: sideColour(state, unit.side) }, g);
    g.addEventListener("click", (e) => {
      e.stopPropagation();
      hexClicked(unit.hex);
    });
    const cx = COUNTER / 2;
    const title = svg("title", {}, g);
    if (unit.concealed && !own) {
      svg("text", { class: "concealed-mark", x: cx, y: COUNTER * 0.72 }, g).textContent = "?";
      title.textContent = `${sideName(state, unit.side)} concealed unit in ${unit.hex} (A12)`;
      return;
    }
    const broken = unit.morale === "broken";
    fitted(svg("text", { class: "unit-id", x: 2, y: 6 }, g), unit.id, ID_CHARS_MAX, COUNTER - 3);
    svg("text", { class: "kind", x: cx, y: 13.5 }, g).textContent = KIND_MARKS[unit.kind] || words(unit.kind);
    if (broken) {
      // The broken side of the counter: a red band over it (A10.2).
      svg("rect", { class: "broken-band", x: 0, y: 15, width: COUNTER, height: 9 }, g);
    }
    // A vehicle's or Gun's name ("50L AT PaK 38") stands where a unit's ratings do: pressed
    // into the counter's width rather than spilling over its neighbours.
    fitted(svg("text", { class: "ratings", x: cx, y: 22 }, g), unit.ratings, RATINGS_CHARS_MAX, COUNTER - 2);
    const flags = [];
    if (broken) flags.push("broken");
    if (unit.morale === "berserk") flags.push("berserk");
    if (unit.pinned) flags.push("pinned");
    if (unit.desperation) flags.push("Desperation Morale");
    // The Wound counter of a wounded SMC, which both sides see (A17.1).
    if (unit.wounded) flags.push("wounded");
    // The Bounding Fire counter of an Opportunity Firer, which both sides see (A7.25).
    const opportunity = (state.opportunity_fire || []).includes(unit.id);
    if (opportunity) flags.push("Opportunity Fire");
    // Its own FP forfeited for the Player Turn by the SW it fired (A9.11).
    if ((state.inherent_fp_forfeited || []).includes(unit.id)) flags.push("own FP forfeited");
    if (unit.cx) flags.push("CX");
    // Only the owner (or a review, which shows everything) sees its own "?" and HIP units.
    const hip = setUpHidden(state, unit);
    if (hip) flags.push("HIP");
    if (unit.concealed) flags.push("concealed");
    // Markers on the counter, as a player lays them: top right, one under the other.
    let my = -3;
    const mark = (kind, label) => {
      badge(g, kind, label, COUNTER - 10, my, 13);
      my += 7;
    };
    if (unit.pinned) mark("pin", "PIN");
    if (unit.desperation) mark("dm", "DM");
    if (unit.wounded) mark("wound", "WND");
    if (opportunity) mark("opportunity", "OPP");
    if (unit.cx) mark("cx", "CX");
    if (unit.concealed) mark("own-concealed", "?");
    if (hip) mark("hip", "HIP");
    if (unit.morale === "berserk") mark("berserk", "BSK");
    const held = weaponsHeldBy(state, unit.id);
    held.forEach((w, i) => {
      // The SW with its holder (A4.43): a tag along the counter's foot, the ratings left clear.
      badge(g, "sw", w.name, 1, COUNTER - 1 + i * 7, Math.max(14, w.name.length * 3.4 + 3));
    });
    if (held.length) flags.push(`holds ${held.map((w) => w.name).join(", ")}`);
    title.textContent = `${sideName(state, unit.side)} ${words(unit.kind)} ${unit.id} ${unit.ratings} in ${unit.hex}` +
      (flags.length ? ` (${flags.join(", ")})` : "");
  }

  /** Whether `unit` is HIP (A12.3). In the set-up step every unit placed is out of the other
   * side's sight until it ends, so `hidden`: only those placed HIP (`setup.hip`) are. */
  function setUpHidden(state, unit) {
    if (!unit.hidden) return false;
    return !state.setup || (state.setup.hip || []).includes(unit.id);
  }

  /** The support weapons a unit possesses (A4.43), from the position the server sent. */
  function weaponsHeldBy(state, id) {
    return Object.values(state.weapons || {}).filter((w) => w.held_by === id);
  }

  function drawMarker(layer, kind, label, hex, x, y, width, title) {
    const g = svg("g", { class: `marker ${kind}`, "data-hex": hex }, layer);
    svg("rect", { x, y, width, height: 9, rx: 2 }, g);
    svg("text", { x: x + width / 2, y: y + 6.6 }, g).textContent = label;
    svg("title", {}, g).textContent = title;
    return g;
  }

  /** Where each of `pieces` counters of a hex goes: a grid about a hex across, centred on the
   * hex, every counter whole; shrunk (`scale`) only when many share the hex. */
  function fan(c, pieces) {
    const columns = Math.ceil(Math.sqrt(pieces));
    const rows = Math.ceil(pieces / columns);
    const cell = COUNTER + 2;
    const scale = Math.min(1, FAN / (columns * cell), FAN / (rows * cell));
    const size = cell * scale;
    const spots = [];
    for (let i = 0; i < pieces; i++) {
      const row = Math.floor(i / columns);
      const inRow = Math.min(columns, pieces - row * columns);
      const x = c.x - (inRow * size) / 2 + (i % columns) * size + scale;
      const y = c.y - (rows * size) / 2 + row * size + scale;
      spots.push({ x, y, scale, transform: `translate(${x.toFixed(2)} ${y.toFixed(2)}) scale(${scale.toFixed(3)})` });
    }
    return spots;
  }

  /** The counters of a position: each hex's stack fanned out, "Sewer?" for units below
   * ground, unpossessed SW as their own counters, WA on top. */
  function drawUnits(state) {
    const layer = el("units");
    if (!layer || !page.geometry) return;
    layer.replaceChildren();
    const moving = new Set(state.clock && STEPS[state.clock.step].phase === "MPh"
      ? state.movement.moving_stack : []);
    const byHex = new Map();
    for (const unit of Object.values(state.units)) {
      if (unit.eliminated) continue;
      if (!byHex.has(unit.hex)) byHex.set(unit.hex, []);
      byHex.get(unit.hex).push(unit);
    }
    const lyingIn = new Map();
    for (const w of Object.values(state.weapons || {})) {
      if (w.held_by) continue;
      if (!lyingIn.has(w.hex)) lyingIn.set(w.hex, []);
      lyingIn.get(w.hex).push(w);
      if (!byHex.has(w.hex)) byHex.set(w.hex, []);
    }
    for (const [hex, units] of byHex) {
      const c = page.geometry.centres.get(hex);
      if (!c) continue;
      const above = units.filter((u) => !u.underground).sort((a, b) => naturally(a.id, b.id));
      const below = units.filter((u) => u.underground);
      const lying = lyingIn.get(hex) || [];
      const spots = fan(c, (below.length ? 1 : 0) + above.length + lying.length);
      let i = 0;
      if (below.length) {
        // Units below ground show only as "Sewer?", whoever they are (B8.2).
        const sides = [...new Set(below.map((u) => sideName(state, u.side)))].join("/");
        const g = svg("g", { class: "marker sewer", "data-hex": hex, transform: spots[i].transform }, layer);
        svg("rect", { x: 0, y: 0, width: COUNTER, height: COUNTER, rx: 2 }, g);
        svg("text", { x: COUNTER / 2, y: COUNTER * 0.6 }, g).textContent = "Sewer?";
        svg("title", {}, g).textContent = `${sides} unit(s) beneath ${hex} in a sewer or tunnel (B8)`;
        i += 1;
      }
      for (const unit of above) {
        drawCounter(layer, state, unit, spots[i].transform, moving.has(unit.id));
        i += 1;
      }
      for (const w of lying) {
        const g = svg("g", { class: "marker weapon", "data-hex": hex, transform: spots[i].transform }, layer);
        svg("rect", { x: 0, y: 4, width: COUNTER, height: 16, rx: 2 }, g);
        svg("text", { x: COUNTER / 2, y: 14.5 }, g).textContent = w.name;
        svg("title", {}, g).textContent = `${w.name} (${w.id}) lies unpossessed in ${hex} (A4.43)`;
        i += 1;
      }
      const holders = above.filter((u) => u.wall_advantage);
      if (holders.length) {
        // Beside the stack, at its left, small: the counters and the hex's name stay legible.
        const names = holders.map((u) => (u.concealed ? "?" : u.id)).join(", ");
        drawMarker(layer, "wall-advantage", "WA", hex, c.x - FAN / 2 - 3, c.y - 4.5, 12,
          `Wall Advantage in ${hex}: ${names} (B9.32)`);
      }
    }
  }

  // ---- Banner, MF and the record --------------------------------------------------------

  function mf(halves) {
    const whole = Math.floor(halves / 2);
    if (halves % 2 === 0) return String(whole);
    return whole === 0 ? "½" : `${whole}½`;
  }

  function drawBanner(state) {
    const step = STEPS[state.clock.step];
    const attacker = state.clock.player_turn === 1 ? state.scenario.first : other(state.scenario.first);
    // Before Turn 1, the side setting up acts (A12.12); the DEFENDER designates his CC
    // attacks once the ATTACKER has (A11.12).
    const designated = Object.keys((state.movement || {}).cc_designated || {}).length > 0;
    const acting = state.setup ? state.setup.side
      : designated ? other(attacker) : step.attacker_acts ? attacker : other(attacker);
    el("scenario").textContent = state.scenario.name;
    el("turn").textContent = `Game Turn ${state.clock.turn} of ${state.scenario.turns}`;
    el("player-turn").textContent = `${sideName(state, attacker)} Player Turn`;
    // The role goes after the phase ("RtPh, ATTACKER"), so a step's name is shown without it.
    const name = step.name.replace(/, (ATTACKER|DEFENDER)$/, "");
    el("phase").textContent = name === step.phase ? step.phase : `${step.phase}: ${name}`;
    el("phase").title = `${step.name} (${step.rule})`;
    el("attacker").textContent = `ATTACKER: ${sideName(state, attacker)}`;
    // The phase line as the rulebook writes it: "RtPh, ATTACKER".
    el("role").textContent = state.over ? "" : `, ${step.attacker_acts ? "ATTACKER" : "DEFENDER"}`;
    if (state.setup && !state.over) {
      // Before Turn 1 there is no Player Turn, no phase and no ATTACKER yet: only set-up.
      el("turn").textContent = "Before Game Turn 1";
      el("player-turn").textContent = "";
      el("attacker").textContent = "";
      el("phase").textContent = `Set-up step: the ${sideName(state, state.setup.side)}`;
      el("phase").title = "Set-up before Turn 1 (A12.12)";
      el("role").textContent = "";
    }
    el("acting").textContent = state.over ? "Game over" : `${sideName(state, acting)} to act`;
    el("acting").classList.toggle("you", !state.over && page.side !== null && acting === page.side);
    // Which side this page plays, first in the banner and in its colour: both players' pages
    // must not look the same.
    el("seat").textContent = page.side === null
      ? (page.review ? "Reviewing an export" : "Watching")
      : `You play the ${sideName(state, page.side)}`;
    el("seat").style.background = page.side === null ? "" : sideColour(state, page.side);
    document.body.classList.toggle("seat-a", page.side === "A");
    document.body.classList.toggle("seat-b", page.side === "B");
  }

  /** During the MPh: what the moving units have spent and have left, from the latest account. */
  function drawMoving(state) {
    const box = el("moving");
    const step = STEPS[state.clock.step];
    const stack = step.phase === "MPh" ? state.movement.moving_stack : [];
    if (!stack.length) {
      box.replaceChildren();
      return;
    }
    const accounts = new Map();
    for (const entry of page.entries.slice(0, state.version)) {
      const event = entry.event && Object.values(entry.event)[0];
      for (const account of (event && accountsOf(event)) || []) accounts.set(account.unit, account);
    }
    const lines = stack.map((id) => {
      const unit = state.units[id];
      const account = accounts.get(id);
      const spent = unit ? unit.mf_spent : account ? account.spent : 0;
      const left = account ? `, ${mf(account.left)} left of ${mf(account.allotment.total)}` : "";
      return `${id}${unit && !unit.concealed ? ` ${unit.ratings}` : ""}: ${mf(spent)} MF spent${left}`;
    });
    setRich(box, `Moving (A4.1): ${lines.join("; ")}`);
  }

  function accountsOf(event) {
    if (Array.isArray(event.mf)) return event.mf;
    if (event.mf && event.mf.unit) return [event.mf];
    return [];
  }

  /** Rule references in a description: "B9.322", "A4.1", "1.32B". */
  function rulesIn(text) {
    const found = text.match(/\b(?:[A-H]\d{1,2}(?:\.\d+)*|\d\.\d+[A-Z])\b/g) || [];
    return [...new Set(found)];
  }

  function entryItem(entry) {
    const li = document.createElement("li");
    li.dataset.seq = entry.seq;
    const seq = document.createElement("span");
    seq.className = "seq";
    seq.textContent = `#${entry.seq}`;
    li.appendChild(seq);
    const text = document.createElement("span");
    text.className = "text";
    setRich(text, entry.text);
    li.appendChild(text);
    const roll = entry.event && entry.event.dice_rolled && entry.event.dice_rolled.roll;
    if (roll) li.appendChild(diceOf(roll));
    const rules = rulesIn(entry.text);
    if (rules.length) {
      const box = document.createElement("span");
      box.className = "rules";
      for (const rule of rules) {
        const tag = document.createElement("span");
        tag.className = "rule";
        tag.textContent = rule;
        box.appendChild(tag);
      }
      li.appendChild(box);
    }
    return li;
  }

  /** The dice as faces, each modifier by its value and rule (its reason on hover), and the
   * Final result. The entry's words beside it say the rest: each reason in full and what the
   * roll came to (a fire log line, a check's result, a roller's note). */
  function diceOf(roll) {
    const box = document.createElement("span");
    box.className = "dice";
    for (const face of roll.dice) {
      const die = document.createElement("span");
      die.className = "die";
      die.textContent = face;
      box.appendChild(die);
    }
    for (const m of roll.modifiers) {
      const drm = document.createElement("span");
      drm.className = "drm";
      drm.textContent = `${m.value < 0 ? "−" + -m.value : "+" + m.value} ${m.rule}`;
      drm.title = m.reason.replace(/`/g, "");
      box.appendChild(drm);
    }
    const final = document.createElement("span");
    final.className = "final";
    final.textContent = `= ${roll.final_result}`;
    box.appendChild(final);
    return box;
  }

  /** Adds entries the list does not have yet, with a heading whenever the phase changes. */
  function appendEntries(entries) {
    const list = el("events");
    let lastWhen = list.dataset.lastWhen || "";
    for (const entry of entries) {
      if (entry.seq !== page.entries.length + 1) continue;
      page.entries.push(entry);
      if (entry.seq > 1 && entry.when !== lastWhen) {
        const heading = document.createElement("li");
        heading.className = "when";
        heading.textContent = entry.when;
        list.appendChild(heading);
        lastWhen = entry.when;
      }
      list.appendChild(entryItem(entry));
    }
    list.dataset.lastWhen = lastWhen;
  }

  function markList() {
    const at = page.shown ? page.shown.version : page.version;
    let current = null;
    for (const li of el("events").querySelectorAll("li[data-seq]")) {
      const seq = Number(li.dataset.seq);
      li.classList.toggle("future", seq > at);
      li.classList.toggle("current", seq === at);
      if (seq === at) current = li;
    }
    if (current && page.viewing !== null) current.scrollIntoView({ block: "nearest" });
    if (page.viewing === null) {
      const list = el("events");
      list.scrollTop = list.scrollHeight;
    }
  }

  function drawControls() {
    const scrub = el("scrub");
    scrub.max = Math.max(page.version, 1);
    scrub.value = page.viewing === null ? page.version : page.viewing;
    // An export under review has an end rather than a live head.
    el("live").textContent = page.review ? "End" : "Live";
    el("live").classList.toggle("on", page.viewing === null);
    const at = page.shown ? page.shown.version : 0;
    drawStatus();
    drawExport();
    // A side reviewing an earlier moment may ask to go back to it: an undo, which the referee
    // allows or refuses by its own rules (docs/review.md), previewed like any command.
    el("undo-to").hidden = page.side === null || page.viewing === null || Boolean(page.review) ||
      !page.live || page.live.over;
    el("position").textContent = page.viewing === null
      ? `${page.review ? "End of the export" : "Live"}: event #${page.version}`
      : `Replay: position after event #${page.viewing} of ${page.version}` +
        (at !== page.viewing ? " (loading…)" : "");
  }

  /** The header says what the page is doing now: never "live" while it shows the past. */
  function drawStatus() {
    const s = el("status");
    if (s.classList.contains("problem") || !page.joined) return;
    if (page.viewing !== null) {
      s.textContent = `Replaying: position after event #${page.viewing} of ${page.version} (End: back to live)`;
    } else if (page.review) {
      s.textContent = page.reviewStatus || s.textContent;
    } else {
      s.textContent = page.liveStatus || s.textContent;
    }
  }

  function show(state) {
    const mapKey = JSON.stringify([state.scenario.hexes, state.scenario.hexsides, state.scenario.map]);
    if (mapKey !== page.mapKey) {
      drawMap(state.scenario);
      page.mapKey = mapKey;
    }
    page.shown = state;
    drawBanner(state);
    drawAreas(state);
    drawUnits(state);
    drawMoving(state);
    drawStack();
    drawPlay();
    markList();
    drawControls();
    openBoard(state);
    // The first position on screen, for measuring the page (BENCHMARKS.md).
    if (!page.firstRender) {
      page.firstRender = true;
      performance.mark("asl-first-render");
    }
  }

  // ---- Talking to the server ------------------------------------------------------------

  function status(text, problem) {
    const s = el("status");
    setRich(s, text);
    s.classList.toggle("problem", Boolean(problem));
  }

  /** The status while following the game at its head (replay shows its own). */
  function liveStatus(text) {
    page.liveStatus = text;
    status(text);
    drawStatus();
  }

  function send(message) {
    if (page.ws && page.ws.readyState === WebSocket.OPEN) page.ws.send(JSON.stringify(message));
  }

  /** Asks for whatever the page lacks: the rest of the record, and the position to show. */
  function refresh() {
    if (!page.joined) return;
    if (!page.recordAsked && page.entries.length < page.version) {
      page.recordAsked = true;
      send({ get_record: { from: page.entries.length + 1 } });
    }
    if (page.stateAsked) return;
    if (page.viewing === null) {
      if (!page.live || page.live.version < page.version) {
        page.stateAsked = { live: true };
        send("get_state");
      } else if (page.shown !== page.live) {
        show(page.live);
      }
    } else if (!page.shown || page.shown.version !== page.viewing) {
      page.stateAsked = { at: page.viewing };
      send({ get_state_at: { version: page.viewing } });
    }
  }

  function onMessage(message) {
    if (message.pong) {
      page.pongs += 1;
      return;
    }
    if (message.los) {
      drawThread(message.los);
    } else if (message.previewed) {
      previewed(message.previewed);
    } else if (message.accepted) {
      keepReceipt(message.accepted.signed, message.accepted.version);
      answered(message.accepted.id, null, message.accepted);
      page.version = Math.max(page.version, message.accepted.version);
    } else if (message.refused) {
      answered(message.refused.id, message.refused.violation, null);
      page.version = Math.max(page.version, message.refused.version);
    } else if (message.joined) {
      const joined = message.joined;
      page.joined = true;
      page.reconnectDelay = RECONNECT_DELAY_MIN_MS;
      page.resumeRefused = false;
      page.version = Math.max(page.version, joined.version);
      if (joined.state) {
        page.live = joined.state;
      }
      keepReceipt(joined.signed, joined.version);
      page.side = joined.viewer && joined.viewer.side ? joined.viewer.side : null;
      el("play").hidden = page.side === null;
      takeClocks(joined.clocks);
      // A receipt the server could not check is said for as long as the page plays on.
      const what = `${page.side === null ? "Watching live" : "Playing live"}${page.receiptWarning ? `. ${page.receiptWarning}` : ""}`;
      page.liveWhat = what;
      resendUnanswered();
      // After a resume the header says so until the game moves on, then is "live" again.
      page.resumedAt = page.connections > 1 ? joined.version : null;
      const warning = page.receiptWarning ? `. ${page.receiptWarning}` : "";
      liveStatus(page.connections > 1 ? `Resumed at event #${joined.version}${warning}` : what);
    } else if (message.reviewing) {
      const reviewing = message.reviewing;
      page.joined = true;
      page.reconnectDelay = RECONNECT_DELAY_MIN_MS;
      page.version = reviewing.version;
      el("review-report").textContent = `${page.reviewNote || ""}${reviewing.report}`;
      page.reviewStatus = `Reviewing game ${reviewing.game}: the export is valid, ${reviewing.version} events`;
      status(page.reviewStatus);
    } else if (message.event) {
      page.version = Math.max(page.version, message.event.seq);
      if (page.resumedAt !== null && page.resumedAt !== undefined && page.version > page.resumedAt) {
        page.resumedAt = null;
        liveStatus(page.liveWhat);
      }
      // The result of this page's last command stays until someone else's event follows it.
      if (page.sent.size === 0 && message.event.seq > page.outcomeVersion) clearOutcome();
    } else if (message.record) {
      page.recordAsked = false;
      appendEntries(message.record.entries);
      page.version = Math.max(page.version, message.record.version);
      if (page.shown) drawMoving(page.shown);
      drawPlay();
      markList();
    } else if (message.state) {
      const asked = page.stateAsked;
      page.stateAsked = null;
      const state = message.state.state;
      if (!asked || asked.live) {
        page.live = state;
        takeClocks(message.state.clocks);
      } else if (page.viewing === asked.at) {
        show(state);
      }
    } else if (message.export) {
      exportPage(message.export);
    } else if (message.error && page.exporting && EXPORT_REFUSALS.includes(message.error.code)) {
      exportFailed(`${message.error.message} (${message.error.code})`);
    } else if (message.notifying) {
      notified(message.notifying);
    } else if (message.error && page.notifyAsked && NOTIFY_REFUSALS.includes(message.error.code)) {
      // A refused notice target is the form's answer; the game connection goes on.
      notifyRefused(message.error.message, message.error.code);
    } else if (message.error) {
      const { code, message: text } = message.error;
      // Over a budget, a registration waiting is not served either: the form says so, and the
      // connection starts over as for any refusal of its kind (commands sent go again).
      if (page.notifyAsked && code === "limit_reached") notifyRefused(text, code);
      status(`${text} (${code})`, true);
      if (!page.joined && ["unknown_game", "bad_token", "bad_export", "rolled_back"].includes(code)) {
        page.fatal = true;
        if (code !== "bad_export") showFatal(code, text);
      } else if (!page.joined && code === "bad_receipt") {
        // Not a receipt this server signed (its key was made anew): it cannot check it, so the
        // page joins without it rather than lock the player out, and says so.
        page.receiptRefused = true;
        forgetReceipt();
        page.receiptWarning = `The server could not check this browser's receipt (${text}); joined without it.`;
      } else if (!page.joined && code === "limit_reached") {
        // Perhaps too far behind to resume: the next attempt joins afresh.
        page.resumeRefused = true;
      }
      // Start over on a new connection, after the usual wait, rather than retry at once.
      page.ws.close();
      return;
    }
    drawControls();
    refresh();
  }

  /** A link that cannot work (a wrong token, a game this server does not have) takes the whole
   * page: what went wrong and what to do, instead of an empty board. */
  function showFatal(code, text) {
    const box = el("fatal");
    box.hidden = false;
    document.body.classList.add("fatal");
    if (code === "rolled_back") {
      el("fatal-title").textContent = "This server's copy of the game went back";
      setRich(el("fatal-detail"), `The server said: ${text}`);
      el("fatal-help").textContent = "The receipt this browser kept shows events the server " +
        "signed for you that its log no longer holds (an older copy restored, or writes lost). " +
        "Play stops until its operator restores the game (docs/review.md).";
      return;
    }
    el("fatal-title").textContent = code === "bad_token"
      ? "This link's token does not open this game"
      : "This server has no such game";
    setRich(el("fatal-detail"), `The server said: ${text}`);
    el("fatal-help").textContent = code === "bad_token"
      ? "Check that the whole link was copied (the token is the long part after token=). " +
        "Each player has their own link and the watch link is a third; whoever created the " +
        "game with asl new has them all."
      : "The game id in the link is not on this server: check the link and the server's " +
        "address, or ask whoever created the game for the link asl new printed.";
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const ws = new WebSocket(`${scheme}${location.host}/v1`);
    page.ws = ws;
    page.joined = false;
    page.recordAsked = false;
    page.stateAsked = null;
    page.connections += 1;
    if (page.exporting) exportFailed("the connection was lost while the log was read: save it again");
    if (page.notifyAsked) notifyRefused("the connection was lost before the server answered: register again", "lost");
    ws.onopen = () => {
      clearInterval(page.keepalive);
      page.keepalive = setInterval(() => {
        if (ws.readyState !== WebSocket.OPEN) return;
        page.pings += 1;
        ws.send(JSON.stringify({ ping: { nonce: page.pings } }));
      }, KEEPALIVE_MS);
      if (page.review) {
        ws.send(page.review);
        return;
      }
      // A resume asks only for what happened since the last event the page has heard of.
      const since = page.version > 0 && !page.resumeRefused ? page.version : null;
      if (since === null) page.live = null;
      // A page opened afresh shows the receipt it kept, so a server whose log went back says
      // so instead of serving what it has; the whole position comes after it all the same.
      const receipt = since === null && !page.receiptRefused ? keptReceipt() : null;
      ws.send(JSON.stringify(receipt
        ? { join_with_receipt: { game: page.game, token: page.token, receipt, snapshot: true } }
        : { join: { game: page.game, token: page.token, since } }));
    };
    ws.onmessage = (frame) => {
      if (page.ws !== ws) return; // a connection the page has left
      page.frames.push(frame.data);
      if (page.frames.length > FRAMES_KEPT_MAX) page.frames.shift();
      let message;
      try {
        message = JSON.parse(frame.data);
      } catch (e) {
        status(`unreadable frame from the server: ${e}`, true);
        return;
      }
      onMessage(message);
    };
    ws.onclose = (close) => {
      if (page.ws !== ws) return;
      clearInterval(page.keepalive);
      page.joined = false;
      if (page.fatal) return;
      const wait = page.reconnectDelay;
      page.reconnectDelay = Math.min(wait * 2, RECONNECT_DELAY_MAX_MS);
      status(`Connection lost${close.reason ? ` (${close.reason})` : ""}; reconnecting in ${(wait / 1000).toFixed(1)} s…`, true);
      page.reconnectTimer = setTimeout(connect, wait);
    };
  }

  // ---- Playing a side ---------------------------------------------------------------------
  // With a side's token the page acts for that side through the commands the CLI sends. Each
  // action is a command the page builds from what was picked; it is first asked of the server
  // as a `preview` (nothing happens), shown with its cost or its refusal and rule, and sent
  // only when confirmed. Prompts and their answers come from the position the server projects
  // and the events of this side's stream. Legality, costs and consequences are the server's.

  const liveState = () => page.live;

  /** The own units of `state`, by id, that are in play. */
  function ownUnits(state) {
    return Object.values(state.units).filter((u) => u.side === page.side && !u.eliminated);
  }

  /** A hex clicked (or typed): in LOS mode an end of the thread; else builds a command from
   * the selection and mode, or lists the hex's stack. */
  function hexClicked(name) {
    if (page.losMode) {
      losClick(name);
      return;
    }
    const state = liveState();
    if (page.side === null || page.viewing !== null || !state) {
      pickStack(name);
      return;
    }
    if (state.setup && state.setup.side === page.side) {
      setUpIn(state, name);
      return;
    }
    if (page.cc && page.cc.withdrawers.size && name !== page.cc.hex) {
      // The CC form's units ticked to withdraw go to the hex clicked (A11.2).
      el("cc-withdraw").value = name;
      markTarget(name);
      say(`${[...page.cc.withdrawers].sort(naturally).join(" ")} withdraw to ${name}: Preview the designation (A11.2).`);
      return;
    }
    if (page.mode === "enter" && page.entering.size) {
      const entering = [...page.entering].sort(naturally);
      markTarget(name);
      propose({ enter: { units: entering, to: name } }, `Enter ${entering.join(" ")} at ${name}`);
      return;
    }
    if (page.mode === "melee") {
      markTarget(name);
      propose({ melee: { hex: name } }, `Record the Melee in ${name}`);
      return;
    }
    const units = [...page.selected];
    if (page.mode === "attack" && units.length && !units.some((id) => state.units[id] && state.units[id].hex === name)) {
      markTarget(name);
      propose({ declare_attack: { firers: units, target: name, into_sewer: false } },
        `Attack ${name} with ${units.join(" ")}`);
      return;
    }
    if (page.mode === "bypass" && units.length) {
      if (!page.bypass) {
        page.bypass = { hex: name, along: [] };
      } else {
        page.bypass.along.push(name);
        markTarget(name);
        propose({ bypass: { units, hex: page.bypass.hex, along: [...page.bypass.along] } },
          `Bypass ${page.bypass.hex} along ${page.bypass.along.join(", ")}`);
      }
      drawPlay();
      return;
    }
    const here = units.length && state.units[units[0]] ? state.units[units[0]].hex : null;
    if (units.length && (name !== here || page.mode === "sewer")) {
      const why = unavailable(state, page.mode);
      if (why) {
        say(why);
        return;
      }
      markTarget(name);
      if (moment(state).step.phase === "RtPh" && page.mode === "move") {
        // A rout is one broken unit's, one hex per command (A10.5); a Good Order leader of its
        // Location picked with it routs along (Voluntary Rout, A10.711), every step of it.
        // Of two picked, the broken one routs and the other goes along; the server rules on both.
        const broken = units.length === 2
          ? units.filter((id) => state.units[id] && state.units[id].morale === "broken") : units;
        if (units.length > 2 || broken.length !== 1) {
          markTarget(null);
          say(`Select the one broken unit to rout, and a leader of its Location if he routs along: units rout one at a time (A10.5, A10.711).`);
          return;
        }
        const along = units.find((id) => id !== broken[0]);
        // The broken side's morale goes with it, for an Interdiction NMC (A10.53).
        if (along) {
          propose({ rout_with_leader: { unit: broken[0], leader: along, to: name, morale: page.routMorale } },
            `Rout ${broken[0]} with ${along} to ${name}`);
        } else {
          propose({ rout: { unit: broken[0], to: name, morale: page.routMorale } }, `Rout ${broken[0]} to ${name}`);
        }
      } else if (page.mode === "sewer") {
        propose({ sewer_move: { units, to: name } }, `Sewer move of ${units.join(" ")} to ${name}`);
      } else if (moment(state).step.phase === "APh") {
        // In the APh units change Location only by the one-Location advance (A4.7).
        propose({ advance: { units, to: name } }, `Advance ${units.join(" ")} to ${name}`);
      } else {
        propose({ move: { units, to: name } }, `Move ${units.join(" ")} to ${name}`);
      }
      return;
    }
    pickStack(name);
  }

  /** How the unit picked sets up: a Dummy only as a "?" (A12.11); a "?" only for a unit its OB
   * gives one, HIP only for one an SSR lets hide (A12.12, A12.3); else as the player chose. */
  function setupHowFor(pick) {
    if (!pick) return page.setupHow || "";
    if (pick.kind === "dummy") return "concealed";
    const how = page.setupHow || "";
    if (how === "concealed" && !pick.may_conceal) return "";
    if (how === "hidden" && !pick.may_hide) return "";
    return how;
  }

  /** In one's own set-up: a click on a hex places the unit picked there (or moves the one
   * selected on the map); the server rules on the area, stacking and terrain (A12.12, A5.1). */
  function setUpIn(state, name) {
    const selected = [...page.selected].filter((id) => state.units[id]);
    // A unit selected is set up again where it is clicked: in another hex it moves there; in
    // its own, with weapons picked, it takes them where it stands (A4.43).
    const one = selected.length === 1 ? state.units[selected[0]] : null;
    const moving = one && (one.hex !== name || page.setupWeapons.size) ? one : null;
    const unit = moving ? moving.id : (setupPick(state) || {}).id;
    if (!unit) {
      pickStack(name);
      return;
    }
    const hip = (state.setup.hip || []).includes(unit);
    const how = moving ? (hip ? "hidden" : moving.concealed ? "concealed" : "") : setupHowFor(setupPick(state));
    // A unit set up again keeps only the weapons named again (A4.43): those given to it
    // before, and those picked now.
    const giving = new Set(weaponsToGive(state).map((w) => w.id));
    const given = moving
      ? weaponsHeldBy(state, unit).filter((w) => isGivenAtSetUp(state, w.id)).map((w) => w.id)
      : [];
    const weapons = [...new Set(given.concat([...page.setupWeapons].filter((id) => giving.has(id))))];
    const names = weapons.map((id) => weaponName(state, id));
    markTarget(name);
    propose({ set_up: { unit, hex: name, concealed: how === "concealed", hidden: how === "hidden", weapons } },
      `Set up ${unit} in ${name}${how ? `, ${how}` : ""}${names.length ? ` with ${names.join(", ")}` : ""}`);
  }

  /** Whether `id` is one of the viewer's set-up weapons no unit of the order of battle holds:
   * its side gives it to a unit as it sets it up (A4.43). */
  function isGivenAtSetUp(state, id) {
    const setup = state.scenario.setup;
    const w = setup && setup.weapons[id];
    return Boolean(w && w.held_by === null && w.side === page.side);
  }

  /** The viewer's set-up weapons that no unit possesses yet (A4.43): `done` waits for them. */
  function weaponsToGive(state) {
    const setup = state.scenario.setup;
    if (!state.setup || !setup || page.side === null) return [];
    return Object.values(setup.weapons || {})
      .filter((w) => isGivenAtSetUp(state, w.id))
      .filter((w) => !(state.weapons[w.id] && state.weapons[w.id].held_by))
      .sort((a, b) => naturally(a.id, b.id));
  }

  function weaponName(state, id) {
    const setup = state.scenario.setup;
    const w = (setup && setup.weapons[id]) || state.weapons[id];
    return w ? `${w.name} (${id})` : id;
  }

  /** Lists the stack of `name` below the board, each counter pickable. */
  function pickStack(name) {
    page.stackHex = name;
    page.stackPickedAt = page.shown ? page.shown.version : null;
    drawStack();
  }

  /** The hex a proposed move goes to, outlined until the proposal is sent or dropped. */
  function markTarget(name) {
    for (const t of document.querySelectorAll(".hex.target")) t.classList.remove("target");
    if (!name) return;
    const shape = document.querySelector(`.hex-cell[data-hex="${name}"] polygon`);
    if (shape) shape.classList.add("target");
  }

  /** The stack of the picked hex, spread out: every counter, leader and SW, each pickable. */
  function drawStack() {
    const box = el("stack");
    const state = page.shown;
    if (!page.stackHex || !state) {
      box.hidden = true;
      return;
    }
    // The list follows the picked units where they went: it never shows a hex they left.
    const picked = [...page.selected].map((id) => state.units[id]).find((u) => u && !u.eliminated);
    if (picked && page.viewing === null) page.stackHex = picked.hex;
    const hex = page.stackHex;
    const units = Object.values(state.units).filter((u) => u.hex === hex && !u.eliminated)
      .sort((a, b) => naturally(a.id, b.id));
    const weapons = Object.values(state.weapons || {}).filter((w) =>
      w.hex === hex || (w.held_by && units.some((u) => u.id === w.held_by)));
    if (!units.length && !weapons.length && page.stackPickedAt !== state.version) {
      // "no counters" answers a click on an empty hex; once play moves on it is stale.
      page.stackHex = null;
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.replaceChildren();
    const head = document.createElement("strong");
    head.textContent = units.length || weapons.length ? `In ${hex}:` : `${hex}: no counters`;
    box.append(head);
    const list = document.createElement("ul");
    for (const unit of units) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = `unit-pick ${sideClass(state, unit.side)}`;
      b.style.background = sideColour(state, unit.side);
      b.dataset.unit = unit.id;
      const own = page.side !== null && unit.side === page.side;
      const flags = [];
      if (unit.underground) flags.push("beneath, in the sewer/tunnel");
      if (unit.concealed) flags.push("concealed");
      if (setUpHidden(state, unit)) flags.push("HIP");
      if (unit.morale && unit.morale !== "good_order") flags.push(words(unit.morale));
      if (unit.pinned) flags.push("pinned");
      if (unit.wounded) flags.push("wounded");
      if ((state.opportunity_fire || []).includes(unit.id)) flags.push("Opportunity Fire");
      if ((state.inherent_fp_forfeited || []).includes(unit.id)) flags.push("own FP forfeited (A9.11)");
      if (unit.cx) flags.push("CX");
      if (unit.wall_advantage) flags.push("WA");
      const held = weaponsHeldBy(state, unit.id).map((w) => w.name);
      if (held.length) flags.push(`holds ${held.join(", ")}`);
      b.textContent = unit.concealed && !own
        ? `${unit.id}: ${sideName(state, unit.side)} concealed unit`
        : `${unit.id} ${unit.ratings} ${words(unit.kind)}${flags.length ? ` (${flags.join(", ")})` : ""}`;
      if (own && page.side !== null) {
        b.setAttribute("aria-pressed", page.selected.has(unit.id) ? "true" : "false");
        b.classList.toggle("selected", page.selected.has(unit.id));
        b.addEventListener("click", () => toggle(unit.id));
      } else {
        b.disabled = true;
      }
      li.append(b);
      list.append(li);
    }
    for (const w of weapons) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "weapon-pick";
      b.dataset.weapon = w.id;
      const marks = [];
      if (w.malfunctioned) marks.push("malfunctioned");
      if (w.fired) marks.push("fired");
      b.textContent = `${w.name} (${w.id}, ${w.pp} PP) ${w.held_by ? `held by ${w.held_by}` : "unpossessed"}${marks.length ? ` (${marks.join(", ")})` : ""}`;
      if (page.side === null) b.disabled = true;
      b.setAttribute("aria-pressed", page.selected.has(w.id) ? "true" : "false");
      b.classList.toggle("selected", page.selected.has(w.id));
      b.addEventListener("click", () => weaponClicked(w));
      li.append(b);
      list.append(li);
    }
    box.append(list);
    const acts = hexActs(state, hex);
    if (acts.length) {
      const line = document.createElement("div");
      line.className = "hex-acts";
      line.append(...acts);
      box.append(line);
    }
  }

  /** The acts done on the hex itself rather than on a counter, each a button under its
   * stack where the position shows what they need: in this side's MPh, at a road Manhole,
   * declaring it out of Known enemy LOS for its sewer stacks' Sewer Emergence (B8.42); where
   * this side saw an enemy tunnel entrance used, the search for it by the one unit of the
   * side picked there, in the MPh (B8.63, A4.44); where it discovered one, its destruction
   * (B8.63). The referee rules on each, as on the `manhole-unseen`, `discover-tunnel` and
   * `destroy-tunnel` lines. */
  function hexActs(state, hex) {
    if (page.side === null || page.viewing !== null || state.over || state.setup) return [];
    const { step, acting } = moment(state);
    if (acting !== page.side) return [];
    const acts = [];
    const button = (act, label, command) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "hex-act";
      b.dataset.act = act;
      b.textContent = label;
      b.addEventListener("click", () => {
        markTarget(hex);
        propose(command, label);
      });
      acts.push(b);
    };
    const spec = state.scenario.hexes[hex];
    const mph = step.phase === "MPh";
    if (mph && spec && spec.manhole && spec.road) {
      button("manhole_unseen", `Manhole ${hex} out of enemy LOS (B8.42)`, { declare_manhole_unseen: { hex } });
    }
    const discovered = (state.tunnel_discoveries || []).some(([side, at]) => side === page.side && at === hex);
    const seen = (state.tunnel_sightings || []).some(([at]) => at === hex);
    const picked = [...page.selected].map((id) => state.units[id]).filter(Boolean);
    if (mph && seen && !discovered && picked.length === 1 && picked[0].hex === hex && picked[0].side === page.side) {
      const unit = picked[0].id;
      button("discover_tunnel", `${unit} searches ${hex} for the tunnel entrance seen used (B8.63)`, { discover_tunnel: { unit } });
    }
    if (discovered) {
      button("destroy_tunnel", `Destroy the tunnel entrance at ${hex} (B8.63)`, { destroy_tunnel: { entrance: hex } });
    }
    return acts;
  }

  function toggle(id) {
    if (page.selected.has(id)) page.selected.delete(id);
    else page.selected.add(id);
    page.bypass = null;
    redrawPicks();
  }

  function redrawPicks() {
    if (page.shown) drawAreas(page.shown);
    if (page.shown) drawUnits(page.shown);
    drawStack();
    drawPlay();
  }

  /** Whether `w` is possessed by a unit of the viewer's side. */
  function ownWeapon(state, w) {
    const holder = w.held_by && state.units[w.held_by];
    return page.side !== null && Boolean(holder) && holder.side === page.side && !holder.eliminated;
  }

  /** In the attack mode, a weapon of the viewer's is picked among the firers or dropped from
   * them (A9.1: an attack names the SW it fires); in the RPh a malfunctioned one of the
   * viewer's is repaired (A9.72); otherwise an unpossessed SW is recovered by the one selected
   * unit (A4.44: its Recovery dr, in the RPh or for an MF in the MPh), one of its own dropped
   * (A4.43), and in the APh one of the viewer's held by another unit transferred to the selected
   * one (A4.431). The referee checks every one of them. */
  function weaponClicked(w) {
    const state = page.shown;
    const own = ownWeapon(state, w);
    if (own && page.mode === "attack") {
      if (page.selected.has(w.id)) page.selected.delete(w.id);
      else page.selected.add(w.id);
      say(`Firers: ${[...page.selected].sort(naturally).join(" ") || "none"}; click the hex to attack (A7).`);
      redrawPicks();
      return;
    }
    if (own && w.malfunctioned && moment(state).step.phase === "RPh") {
      propose({ repair_weapon: { weapon: w.id } }, `Repair ${w.name} (${w.id})`);
      return;
    }
    const units = [...page.selected];
    if (w.held_by && page.selected.has(w.held_by)) {
      propose({ drop: { unit: w.held_by, weapon: w.id } }, `${w.held_by} drops ${w.name}`);
    } else if (own && units.length === 1 && moment(state).step.phase === "APh") {
      propose({ transfer_weapon: { weapon: w.id, to: units[0] } }, `Transfer ${w.name} to ${units[0]}`);
    } else if (units.length === 1) {
      propose({ pick_up: { unit: units[0], weapon: w.id } }, `${units[0]} recovers ${w.name}`);
    } else {
      say(`Select the one unit to recover ${w.name}, or its holder to drop it.`);
    }
  }

  function say(text) {
    el("selection").textContent = text;
  }

  /** Asks the server what `command` would do; the answer is shown with Send and Cancel. */
  function propose(command, label) {
    clearOutcome();
    const id = page.nextId++;
    page.proposal = { id, command, label, outcome: null };
    el("proposal").hidden = false;
    el("proposal").classList.remove("refused");
    el("proposal-text").textContent = `${label}: asking the referee…`;
    el("proposal-sewer").hidden = !atManhole(command);
    drawFirePreview(null);
    el("confirm").disabled = true;
    send({ preview: { id, command } });
  }

  /** Whether `command` is an attack at a Manhole hex's surface: the same clicks may aim at
   * the sewer beneath it instead (B8.3), as `attack … at HEX sewer` does. */
  function atManhole(command) {
    const a = command && command.declare_attack;
    const state = liveState();
    if (!a || a.into_sewer || !state) return false;
    const spec = state.scenario.hexes[a.target];
    return Boolean(spec && spec.manhole);
  }

  /** The attack proposed at a Manhole's surface, proposed again at the sewer beneath it. */
  function aimIntoSewer() {
    const p = page.proposal;
    if (!p || !atManhole(p.command)) return;
    const a = p.command.declare_attack;
    propose({ declare_attack: { firers: a.firers, target: a.target, into_sewer: true } },
      `Attack the sewer beneath ${a.target} with ${a.firers.join(" ")}`);
  }

  function previewed(answer) {
    if (page.routCheck && page.routCheck.id === answer.id) {
      page.routCheck.outcome = answer.outcome;
      drawPlay();
      return;
    }
    const p = page.proposal;
    if (!p || p.id !== answer.id) return;
    p.outcome = answer.outcome;
    const box = el("proposal");
    drawFirePreview(answer.outcome.allowed ? answer.outcome.allowed.attack : null);
    if (answer.outcome.allowed) {
      box.classList.remove("refused");
      setRich(el("proposal-text"), answer.outcome.allowed.attack
        ? `${p.label}: before the dice (A7):`
        : `${p.label}: ${answer.outcome.allowed.summary}`);
      el("confirm").disabled = false;
      // Enter sends it, wherever the keyboard was (a form's field too): Send has the focus.
      el("confirm").focus({ preventScroll: true });
    } else {
      const v = answer.outcome.refused;
      box.classList.add("refused");
      setRich(el("proposal-text"), `${p.label}: refused (${v.rule}): ${v.detail}`);
      el("confirm").disabled = true;
      // An Interdicted rout step waits on the router's broken morale, which the referee asks
      // for as the CLI's line takes it: on the page it goes in the rout prompt's box.
      const rout = p.command.rout || p.command.rout_with_leader;
      const moraleBox = document.getElementById("rout-morale");
      if (rout && rout.morale === null && v.rule === "A10.53" && moraleBox) {
        say(`Type ${rout.unit}'s broken-side morale in the Broken morale box above, then click ${rout.to} again (A10.53).`);
        moraleBox.focus({ preventScroll: true });
      }
    }
  }

  /** The fire panel of an attack's preview: the FP and its column, each DRM with its rule,
   * what doubles do, and each firer's LOS to the target hex (A6) — or why the engine leaves
   * the attack to the players. All of it is the server's (`protocol::preview::FirePreview`). */
  function drawFirePreview(attack) {
    const panel = el("fire-preview");
    panel.replaceChildren();
    panel.hidden = !attack;
    if (!attack) return;
    const line = (className, text) => {
      const div = document.createElement("div");
      div.className = className;
      setRich(div, text);
      panel.append(div);
      return div;
    };
    const a = attack.assessment;
    if (a.resolved) {
      const r = a.resolved;
      line("fire-fp", `${r.fp} FP on the ${r.column} column (A7.3): ${r.shares.join("; ")}`);
      const drms = document.createElement("ul");
      drms.className = "fire-drms";
      for (const m of r.drms) {
        const li = document.createElement("li");
        li.dataset.rule = m.rule;
        setRich(li, `${m.value < 0 ? "−" + -m.value : "+" + m.value} ${m.reason} (${m.rule})`);
        drms.append(li);
      }
      if (!r.drms.length) {
        const li = document.createElement("li");
        li.textContent = "no DRM";
        drms.append(li);
      }
      panel.append(drms);
      line("fire-cower", r.cowering);
    } else {
      const left = a.left_to_players;
      line("fire-left", `The referee leaves this attack to the players: ${left.why} (${left.rule}).`);
    }
    const los = document.createElement("ul");
    los.className = "fire-los";
    for (const f of attack.los) {
      const li = document.createElement("li");
      li.dataset.verdict = verdictKind(f.verdict);
      const why = f.reasons.length ? `: ${f.reasons.join("; ")}` : "";
      const blocked = f.verdict === "blocked"
        ? " — declared, the attack is not made but the firers count as having fired (A6.11)" : "";
      setRich(li, `LOS \`${f.unit}\` → ${attack.target}: ${verdictText(f.verdict)}${why}${blocked}`);
      los.append(li);
    }
    panel.append(los);
  }

  function confirmProposal() {
    const p = page.proposal;
    if (!p || !p.outcome || !p.outcome.allowed) return;
    page.proposal = null;
    el("proposal").hidden = true;
    // An exactly-once key: sent again after a dropped connection, the server answers with what
    // the command made the first time instead of playing it twice.
    p.key = exactlyOnceKey();
    page.sent.set(p.id, p);
    markTarget(null);
    // Sent from a form's field: the form's work is done, and the keys act on the page again.
    const active = document.activeElement;
    if (active && active.closest && active.closest("#forms")) active.blur();
    el("outcome").classList.remove("refused");
    el("outcome").textContent = `${p.label}: sent…`;
    send({ command: { id: p.id, command: p.command, key: p.key } });
  }

  /** A random key a JSON number carries exactly (53 bits). */
  function exactlyOnceKey() {
    const words = crypto.getRandomValues(new Uint32Array(2));
    return (words[0] & 0x1fffff) * 0x100000000 + words[1];
  }

  /** Commands sent and not answered when the connection dropped go again, with their keys. */
  function resendUnanswered() {
    for (const p of page.sent.values()) {
      send({ command: { id: p.id, command: p.command, key: p.key } });
    }
  }

  function cancel() {
    page.proposal = null;
    page.bypass = null;
    el("proposal").hidden = true;
    markTarget(null);
  }

  function clearOutcome() {
    const box = el("outcome");
    box.replaceChildren();
    box.classList.remove("refused");
  }

  function answered(id, violation, accepted) {
    const p = page.sent.get(id);
    if (!p) return;
    page.sent.delete(id);
    const box = el("outcome");
    box.dataset.answered = String(id);
    if (violation) {
      box.classList.add("refused");
      setRich(box, `${p.label}: refused (${violation.rule}): ${violation.detail}`);
    } else {
      page.outcomeVersion = Math.max(page.outcomeVersion, accepted.version);
      // What an undo of this command would take back from (`request_undo`).
      if (accepted.events.length && !p.command.request_undo) page.lastCommandFrom = accepted.events[0].seq;
      if (p.command.set_up) page.setupWeapons.clear();
      if (p.command.dispute_adjudication) el("dispute-reason").value = "";
      if (p.command.rally) {
        el("rally-form").hidden = true;
        el("rally-morale").value = "";
      }
      if (p.command.close_combat) closeCc();
      if (p.command.enter) {
        // In on the map, they are picked to move on with what MF they have left.
        page.entering.clear();
        page.mode = "move";
        page.selected = new Set(p.command.enter.units);
        page.stackHex = p.command.enter.to;
      }
      box.classList.remove("refused");
      const n = accepted.events.length;
      box.textContent = `${p.label}: done (${n} event${n === 1 ? "" : "s"})`;
      page.bypass = null;
      // Units that left the game are no longer picked.
    }
  }

  /** The side the game waits on, as the server's clock runs for it (`protocol::game::timing::
   * awaited`): the side a prompt waits for, else the side acting; null once the game is over. */
  function awaitedSide(state) {
    if (state.over) return null;
    if (state.sewer_designation) return state.sewer_designation.defender;
    if (state.wa_chance) return state.wa_chance.side;
    if (state.wa_hip_window) return state.wa_hip_window.side;
    if (state.wa_challenge) return state.wa_challenge.side;
    // A Close Combat stopped for Infiltration waits on the side it asks (A11.22).
    if (state.cc_infiltration) return state.cc_infiltration.side;
    if (state.setup) return state.setup.side;
    // The ATTACKER's CC designation waits for the DEFENDER's (A11.12).
    if (Object.keys(state.movement.cc_designated || {}).length) return other(moment(state).attacker);
    return moment(state).acting;
  }

  /** The page's own title, before "Your turn" goes in front of it. */
  const TITLE = document.title;

  /** "Your turn" in the tab's title while the game waits on this page's side. */
  function drawTitle() {
    const state = page.live;
    const expired = page.clocks && page.clocks.expired;
    const waits = state && !state.over && expired ? other(expired) : state && awaitedSide(state);
    const yours = page.side !== null && !!state && waits === page.side;
    const title = yours ? `Your turn — ${TITLE}` : TITLE;
    if (document.title !== title) document.title = title;
  }

  /** Takes the clocks a `joined` or live `state` told (none: a game without a time control). */
  function takeClocks(clocks) {
    page.clocks = clocks || null;
    page.clocksAt = Date.now();
    drawClocks();
    drawPlay();
  }

  /** A clock's time as `1d 04:05:06` or `04:05:06`. */
  function clockText(ms) {
    const s = Math.floor(Math.max(0, ms) / 1000);
    const pad = (n) => String(n).padStart(2, "0");
    const hms = `${pad(Math.floor((s % 86400) / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
    const days = Math.floor(s / 86400);
    return days > 0 ? `${days}d ${hms}` : hms;
  }

  /** Both clocks, the running one counted down here from the server's view of it; only a
   * display: the server alone decides when a clock runs out. */
  function drawClocks() {
    drawTitle();
    const box = el("clocks");
    const c = page.clocks;
    const state = page.live;
    if (!c || !state) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const elapsed = Math.max(0, Date.now() - page.clocksAt);
    const shown = ["A", "B"].map((side, i) => {
      let bank = c.bank[i];
      let vacation = c.vacation_left[i];
      if (c.running === side && !c.expired && !state.over) {
        let left = elapsed;
        if (c.on_vacation[i]) {
          const used = Math.min(left, vacation);
          vacation -= used;
          left -= used;
        }
        bank = Math.max(0, bank - left);
      }
      const span = document.createElement("span");
      span.className = `side-clock${c.running === side ? " running" : ""}${c.expired === side ? " expired" : ""}`;
      span.dataset.side = side;
      span.textContent = `${sideName(state, side)} ${clockText(bank)}` +
        (c.on_vacation[i] ? ` (on vacation, ${clockText(vacation)} left)` : "") +
        (c.expired === side ? " — out of time" : "");
      return span;
    });
    box.replaceChildren(...shown);
    box.title = `Time control ${c.control}`;
  }

  /** The step of play now and who acts in it, from the clock the server sent. */
  function moment(state) {
    const step = STEPS[state.clock.step];
    const attacker = state.clock.player_turn === 1 ? state.scenario.first : other(state.scenario.first);
    return { step, attacker, acting: step.attacker_acts ? attacker : other(attacker) };
  }

  /** Why `action` cannot be in this scenario at all for this side (its button is not shown),
   * or null. */
  function absent(state, action) {
    const hexes = Object.values(state.scenario.hexes);
    const sides = Object.values(state.scenario.hexsides);
    switch (action) {
      case "sewer":
        return hexes.some((h) => h.manhole) ? null : "no Manhole on this map (B8.1)";
      case "tunnel":
      case "surface":
      case "rout_tunnel":
        // Tunnels are secret (B8.6): a side's projection holds only its own.
        return (state.tunnels || []).some((t) => t.side === page.side) ? null : "you have no tunnel (B8.6)";
      case "claim_wa":
      case "forfeit_wa":
        return sides.some((h) => ["wall", "hedge", "bocage"].includes(h.feature))
          ? null : "no wall or hedge on this map (B9.32)";
      case "enter":
        return Object.values((state.scenario.setup || {}).units || {})
          .some((u) => u.side === page.side && u.enters)
          ? null : "no unit of yours enters from off board (A2.51)";
      case "take_cover":
        return hexes.some((h) => h.terrain === "shellholes") ? null : "no shellholes on this map (B2)";
      default:
        return null;
    }
  }

  /** Why `action` cannot apply now (its button's hover text; said when its key is pressed), or
   * null when it may. The server still decides: this only keeps the buttons to what the moment
   * of play offers. */
  function unavailable(state, action) {
    const never = absent(state, action);
    if (never) return `Not in this game: ${never}.`;
    if (["hex", "clear", "los"].includes(action)) return null;
    if (state.over) return "The game is over.";
    const { step, acting } = moment(state);
    const now = `now it is the ${step.name} (${step.rule}) and the ${sideName(state, acting)} acts`;
    switch (action) {
      case "move":
        // The same button advances in the APh (A4.7) and routs in the RtPh (A10.5).
        return ["MPh", "APh", "RtPh"].includes(step.phase) && acting === page.side
          ? null : `Movement is for your MPh (A4), the advance for your APh (A4.7), the rout for your RtPh (A10.5): ${now}.`;
      case "assault_move":
        return step.phase === "MPh" && acting === page.side
          ? null : `Assault Movement is declared in your MPh, before any MF is spent (A4.61): ${now}.`;
      case "close_combat": {
        if (step.phase !== "CCPh") return `Close Combat attacks are designated in the CCPh (A11.12): ${now}.`;
        const waiting = Object.keys(state.movement.cc_designated || {});
        const attacker = moment(state).attacker;
        if (waiting.length) {
          return page.side === attacker
            ? `The ${sideName(state, other(attacker))} designates its CC attacks in ${waiting[0]} now (A11.12).` : null;
        }
        return page.side === attacker
          ? null : `The ATTACKER designates his CC attacks first (A11.12): ${now}.`;
      }
      case "bypass":
      case "double_time":
      case "sewer":
      case "tunnel":
        return step.phase === "MPh" && acting === page.side
          ? null : `Movement is for your MPh (A4): ${now}.`;
      case "surface":
        // Units come up from a sewer or a tunnel in the APh, as the referee has it (B8.42,
        // B8.61): a surfacing is the ATTACKER's, in place of an advance.
        return step.phase === "APh" && acting === page.side
          ? null : `Units come up from below ground in your APh (B8.42, B8.61): ${now}.`;
      case "rout_tunnel":
        return step.phase === "RtPh" && acting === page.side
          ? null : `Rout is for your RtPh (A10.5): ${now}.`;
      case "take_cover":
        return step.phase === "MPh" && acting === page.side
          ? null : `Taking shellhole cover is for your MPh (B2): ${now}.`;
      case "enter": {
        if (step.phase !== "MPh" || acting !== page.side) return `Units enter in your MPh (A2.51): ${now}.`;
        return dueToEnter(state).length ? null : `No unit of yours may enter now: ${waitingToEnter(state)
          .map((u) => `${u.id} enters from Turn ${u.enters.turn}`).join(", ") || "all have entered"} (A2.51).`;
      }
      case "attack": {
        if (state.attack && state.attack.by === page.side) return `Your attack on ${state.attack.target} is open: resolve it first (A7).`;
        // Fire is the ATTACKER's in his PFPh and AFPh, the DEFENDER's at the stack moving in
        // the MPh and in his DFPh (A3.2–A3.5): elsewhere the button would only be refused.
        const fires = ["PFPh", "DFPh", "AFPh"].includes(step.phase)
          ? acting === page.side : step.phase === "MPh" && acting !== page.side;
        return fires ? null : `Fire is the ATTACKER's in his PFPh and AFPh, the DEFENDER's in the MPh and his DFPh (A3.2–A3.5): ${now}.`;
      }
      case "opportunity":
        // Beside fire in the PFPh: units that hold their fire for the AFPh (A7.25).
        return step.phase === "PFPh" && acting === page.side
          ? null : `Opportunity Firers are designated in your PFPh (A7.25): ${now}.`;
      case "rally":
        // Both sides rally their own broken units, in the RPh before its end (A10.6).
        return step.phase === "RPh" && step.rule === "A3.1"
          ? null : `Rally attempts are made in the RPh (A10.6): ${now}.`;
      case "melee":
        return step.phase === "CCPh" && acting === page.side
          ? null : `The ATTACKER records a Melee in the CCPh (A11.7): ${now}.`;
      case "undo":
        return page.lastCommandFrom === null
          ? "Nothing sent from this page to take back yet: click the moment to go back to in the record, then “Ask to take back to this moment”."
          : null;
      case "done":
        return prompts(state).some((f) => f.step && f.yours)
          ? null : `Nothing of yours to end: ${prompts(state).map((f) => f.text).join(" ")}`;
      case "propose_end":
        return state.end_proposal ? "An offer to end the game stands already." : null;
      default:
        return null;
    }
  }

  /** What ending the current step leads to, from the sequence of play. */
  function nextStep(state) {
    if (state.setup && !state.over) {
      // The sides set up in the scenario's order, a side with nothing to place left out.
      const setup = state.scenario.setup;
      const order = (setup.order || []).filter((side) =>
        Object.values(setup.units).some((u) => u.side === side && !u.enters));
      const after = order[order.indexOf(state.setup.side) + 1];
      const first = STEPS[0];
      return `End set-up (A12.12); next: ${after ? `the ${sideName(state, after)}'s set-up` : `Game Turn 1, ${first.name} (${first.rule})`}`;
    }
    const { step } = moment(state);
    const next = STEPS[(state.clock.step + 1) % STEPS.length];
    const wraps = state.clock.step + 1 >= STEPS.length;
    return `End ${step.name}; next: ${wraps ? "the next Player Turn, " : ""}${next.name} (${next.rule})`;
  }

  /** The action buttons and keys. */
  function act(action) {
    const units = [...page.selected];
    const state = liveState();
    if (state && page.side !== null) {
      const why = unavailable(state, action);
      if (why) {
        say(why);
        return;
      }
    }
    const need = (what) => {
      if (units.length) return true;
      say(`Select the units to ${what} first: click their hex, then pick them.`);
      return false;
    };
    switch (action) {
      case "move":
      case "sewer":
      case "bypass":
        page.mode = action;
        page.bypass = null;
        break;
      case "enter":
        // Every unit due to enter, unless some were picked already in the prompt.
        if (!page.entering.size) for (const u of dueToEnter(state)) page.entering.add(u.id);
        page.mode = "enter";
        redrawPicks();
        break;
      case "attack":
        if (need("fire with")) page.mode = "attack";
        break;
      case "opportunity":
        if (need("designate as Opportunity Firers")) {
          propose({ mark_opportunity_fire: { units } },
            `Designate ${units.join(" ")} Opportunity Firers: they hold their fire for the AFPh and do not move (A7.25)`);
        }
        break;
      case "rally":
        openRally(state);
        break;
      case "melee":
        page.mode = "melee";
        break;
      case "close_combat":
        openCc(state, null);
        break;
      case "assault_move":
        if (need("declare Assault Movement for")) {
          propose({ assault_move: { units } }, `Assault Movement for ${units.join(" ")}`);
        }
        break;
      case "take_cover":
        if (need("take shellhole cover for")) propose({ take_shellhole_cover: { units } }, `Take shellhole cover for ${units.join(" ")}`);
        break;
      case "undo":
        propose({ request_undo: { from: page.lastCommandFrom } },
          `Ask your opponent to take back events #${page.lastCommandFrom}–#${page.version}`);
        break;
      case "double_time":
        if (need("declare Double Time")) propose({ double_time: { units } }, `Double Time for ${units.join(" ")}`);
        break;
      case "claim_wa":
        if (need("claim WA for")) propose({ claim_wall_advantage: { units } }, `Claim WA for ${units.join(" ")}`);
        break;
      case "forfeit_wa":
        if (need("forfeit WA for")) propose({ forfeit_wall_advantage: { units } }, `Forfeit WA for ${units.join(" ")}`);
        break;
      case "tunnel":
        if (need("take into the tunnel")) propose({ enter_tunnel: { units } }, `${units.join(" ")} enter the tunnel`);
        break;
      case "surface":
        if (need("surface")) propose({ surface: { units } }, `${units.join(" ")} surface`);
        break;
      case "rout_tunnel":
        if (need("rout through the tunnel")) propose({ rout_through_tunnel: { units } }, `${units.join(" ")} rout through the tunnel`);
        break;
      case "done":
        propose("done", state ? nextStep(state) : "Done with this step");
        break;
      case "propose_end":
        propose("propose_end", "Offer your opponent to end the game here (they must accept)");
        break;
      case "concede":
        propose("concede", "Concede: give the game up to your opponent");
        break;
      case "los":
        setLosMode(!page.losMode);
        break;
      case "hex":
        el("hex-form").hidden = false;
        el("hex-input").focus();
        break;
      case "clear":
        cancel();
        el("rally-form").hidden = true;
        closeCc();
        if (page.losMode) setLosMode(false);
        page.selected.clear();
        page.entering.clear();
        page.mode = "move";
        redrawPicks();
        break;
    }
    drawPlay();
  }

  /** The rally form (A10.6), for the broken unit picked (or the first broken unit of this
   * side), led by a Good Order leader picked with it or else the first in its Location. The
   * broken side's morale is the counter's, which the player reads off it. */
  function openRally(state) {
    const own = ownUnits(state).filter((u) => !u.hidden);
    const broken = own.filter((u) => u.morale === "broken").sort((a, b) => naturally(a.id, b.id));
    if (!broken.length) {
      say("No unit of yours is broken: there is nothing to rally (A10.6).");
      return;
    }
    const picked = broken.find((u) => page.selected.has(u.id)) || broken[0];
    fillSelect(el("rally-unit"), broken.map((u) => [u.id, `${u.id} ${u.ratings}`]));
    el("rally-unit").value = picked.id;
    fillRallyLeaders(state);
    el("rally-form").hidden = false;
    el("rally-morale").focus();
    say(`Rally ${picked.id}: give the morale on its broken side, then Enter (A10.6).`);
  }

  /** The leaders who may lead the rally of the unit chosen: Good Order leaders of this side in
   * its hex; the first picked on the map comes first. "Self-rally" is always offered (A10.63). */
  function fillRallyLeaders(state) {
    const unit = state.units[el("rally-unit").value];
    const leaders = unit ? ownUnits(state).filter((u) => u.kind === "leader" && u.id !== unit.id &&
      u.hex === unit.hex && u.morale !== "broken" && !u.hidden) : [];
    leaders.sort((a, b) => Number(page.selected.has(b.id)) - Number(page.selected.has(a.id)) || naturally(a.id, b.id));
    fillSelect(el("rally-leader"), leaders.map((u) => [u.id, `${u.id} ${u.ratings}`]).concat([["", "no leader: self-rally (A10.63)"]]));
    el("rally-leader").value = leaders.length ? leaders[0].id : "";
  }

  /** The units as this side sees them in the Location of `hex` at the CCPh: Known, concealed
   * (by their "?"), never hidden or beneath the ground. */
  function ccUnits(state, hex) {
    return Object.values(state.units)
      .filter((u) => u.hex === hex && !u.eliminated && !u.underground && !u.hidden)
      .sort((a, b) => naturally(a.id, b.id));
  }

  /** The hexes where this side may designate CC attacks now (A11.12): the one waiting for the
   * DEFENDER's designation, else (for the ATTACKER) each Location both sides hold whose CC is
   * not over this CCPh. */
  function ccHexes(state) {
    const waiting = Object.keys(state.movement.cc_designated || {});
    if (waiting.length) return waiting;
    const over = new Set([...(state.movement.cc_resolved || []), ...(state.movement.melee || [])]);
    const seen = Object.values(state.units).filter((u) => !u.eliminated && !u.underground && !u.hidden);
    return [...new Set(seen.filter((u) => seen.some((v) => v.side !== u.side && v.hex === u.hex))
      .map((u) => u.hex))].filter((h) => !over.has(h)).sort(naturally);
  }

  /** Opens the CC form (A11.12) at `hex` (or the first Location this side designates in),
   * with one attack: the units picked on the map (else all of this side's there) against every
   * enemy unit there. */
  function openCc(state, hex) {
    const hexes = ccHexes(state);
    if (!hexes.length) {
      say("No Location holds units of both sides whose Close Combat is yours to designate (A11.1).");
      return;
    }
    const at = hexes.includes(hex) ? hex : hexes[0];
    fillSelect(el("cc-hex"), hexes.map((h) => [h, h]));
    el("cc-hex").value = at;
    startCc(state, at);
    el("cc-form").hidden = false;
    el("cc-hex").focus();
  }

  function startCc(state, hex) {
    el("cc-withdraw").value = "";
    const here = ccUnits(state, hex);
    const own = here.filter((u) => u.side === page.side);
    const picked = own.filter((u) => page.selected.has(u.id));
    page.cc = {
      hex,
      rows: [{
        attackers: new Set((picked.length ? picked : own).map((u) => u.id)),
        defenders: new Set(here.filter((u) => u.side !== page.side).map((u) => u.id)),
      }],
      // This side's units there that withdraw from the Melee instead of attacking (A11.2).
      withdrawers: new Set(),
    };
    drawCc(state);
  }

  function closeCc() {
    page.cc = null;
    el("cc-form").hidden = true;
  }

  /** The CC form's rows: for each attack, this side's units and the enemy's in the Location,
   * each a box to tick; above them, who ambushed there, as the engine's check found (A11.4). */
  function drawCc(state) {
    const cc = page.cc;
    const box = el("cc-attacks");
    box.replaceChildren();
    el("cc-withdrawers").replaceChildren();
    if (!cc) return;
    const here = ccUnits(state, cc.hex);
    const ambusher = (state.movement.ambush || {})[cc.hex];
    el("cc-ambush").hidden = !ambusher;
    el("cc-ambush").textContent = ambusher
      ? `The ${sideName(state, ambusher)} ambushed here (A11.4): its attacks come first, at −1, and the other side's after, at +1, by its units still there.`
      : "";
    // With a "?" here the referee makes no Ambush check (A11.4, A11.19): the side designating
    // first gives the players' own, and the referee tells when it is not wanted.
    const first = !(state.movement.cc_designated || {})[cc.hex];
    el("cc-no-ambush-row").hidden = !(first && here.some((u) => u.concealed));
    if (el("cc-no-ambush-row").hidden) el("cc-no-ambush").checked = false;
    const tick = (row, set, unit, role) => {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.dataset.unit = unit.id;
      input.dataset.role = role;
      input.checked = set.has(unit.id);
      input.addEventListener("change", () => {
        if (input.checked) set.add(unit.id);
        else set.delete(unit.id);
      });
      const own = unit.side === page.side;
      label.append(input, ` ${unit.concealed && !own ? `${unit.id} (concealed)` : `${unit.id} ${unit.ratings}`}`);
      row.append(label);
    };
    cc.rows.forEach((attack, i) => {
      const row = document.createElement("div");
      row.className = "cc-attack";
      row.dataset.attack = String(i);
      const head = document.createElement("strong");
      head.textContent = `Attack ${i + 1}:`;
      row.append(head);
      for (const u of here.filter((u) => u.side === page.side)) tick(row, attack.attackers, u, "attacker");
      row.append(" vs ");
      for (const u of here.filter((u) => u.side !== page.side)) tick(row, attack.defenders, u, "defender");
      if (cc.rows.length > 1) {
        const drop = document.createElement("button");
        drop.type = "button";
        drop.textContent = "Remove";
        drop.addEventListener("click", () => {
          cc.rows.splice(i, 1);
          drawCc(state);
        });
        row.append(drop);
      }
      box.append(row);
    });
    // Each unit of this side ticked here withdraws to the hex clicked on the map (or typed)
    // while the others attack, as `cc HEX … and withdraw UNITS to HEX` does; a withdrawing
    // unit makes no attack (A11.2), so ticking it takes it out of the attacks above.
    const away = document.createElement("div");
    away.className = "cc-withdrawal";
    const head = document.createElement("strong");
    head.textContent = "Withdraw (A11.2):";
    away.append(head);
    for (const u of here.filter((u) => u.side === page.side)) {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.dataset.unit = u.id;
      input.dataset.role = "withdrawer";
      input.checked = cc.withdrawers.has(u.id);
      input.addEventListener("change", () => {
        if (input.checked) {
          cc.withdrawers.add(u.id);
          for (const r of cc.rows) r.attackers.delete(u.id);
          say(`Click the hex ${[...cc.withdrawers].sort(naturally).join(" ")} withdraw to, then Preview (A11.2).`);
        } else {
          cc.withdrawers.delete(u.id);
        }
        drawCc(state);
      });
      label.append(input, ` ${u.id} ${u.ratings}`);
      away.append(label);
    }
    el("cc-withdrawers").append(away);
  }

  /** The `close_combat` command the form holds: its attacks, in order, empty rows left out,
   * and the units ticked to withdraw going to the hex given; or, with a hex given and none
   * ticked, every unit of this side there withdrawing to it and no attack (A11.2: a
   * withdrawing unit makes none). */
  function ccCommand(none) {
    const cc = page.cc;
    const to = el("cc-withdraw").value.trim();
    if (!none && to && cc.withdrawers.size) {
      const attacks = cc.rows
        .map((r) => ({ attackers: [...r.attackers].filter((id) => !cc.withdrawers.has(id)).sort(naturally), defenders: [...r.defenders].sort(naturally) }))
        .filter((a) => a.attackers.length);
      return { close_combat: { hex: cc.hex, attacks, withdrawals: [{ units: [...cc.withdrawers].sort(naturally), to }], no_ambush: false } };
    }
    if (!none && to) {
      const state = liveState();
      const own = state ? ccUnits(state, cc.hex).filter((u) => u.side === page.side).map((u) => u.id) : [];
      return { close_combat: { hex: cc.hex, attacks: [], withdrawals: [{ units: own.sort(naturally), to }], no_ambush: false } };
    }
    const attacks = none ? [] : cc.rows
      .filter((r) => r.attackers.size || r.defenders.size)
      .map((r) => ({ attackers: [...r.attackers].sort(naturally), defenders: [...r.defenders].sort(naturally) }));
    const noAmbush = !el("cc-no-ambush-row").hidden && el("cc-no-ambush").checked;
    return { close_combat: { hex: cc.hex, attacks, no_ambush: noAmbush } };
  }

  function ccLabel(command) {
    const c = command.close_combat;
    const list = c.attacks.map((a) => `${a.attackers.join(" ")} vs ${a.defenders.join(" ")}`).join(" and ");
    const away = (c.withdrawals || []).map((w) => `${w.units.join(" ")} withdraw to ${w.to} (A11.2)`).join(" and ");
    return `Close Combat in ${c.hex}: ${[list, away].filter(Boolean).join(" and ") || "no attacks"}`;
  }

  /** The refusal of `done` that names a broken unit of this side that must rout (A10.5), as
   * the server answered the quiet preview at this version; null when none is due (or not
   * heard yet). */
  function routDue(state) {
    const c = page.routCheck;
    if (!c || c.version !== state.version || !c.outcome || !c.outcome.refused) return null;
    const v = c.outcome.refused;
    return v.rule.startsWith("A10.5") ? v : null;
  }

  /** In this side's RtPh step, asks the server (a preview, never sent) whether the step may
   * end: once per version. */
  function checkRout(state) {
    if (!page.joined || page.viewing !== null || state.over || state.setup) return;
    const { step, acting } = moment(state);
    if (step.phase !== "RtPh" || acting !== page.side) return;
    if (page.routCheck && page.routCheck.version === state.version) return;
    const id = page.nextId++;
    page.routCheck = { id, version: state.version, outcome: null };
    send({ preview: { id, command: "done" } });
  }

  /** Every waiting the game has: what this side must answer (with exactly the answers the
   * server takes) or what the opponent is asked, from the projected position and the latest
   * events of this side's stream. */
  /** Units of `side` still to set up (A12.12), from the scenario's public order of battle. */
  function leftToSetUp(state, side) {
    const setup = state.scenario.setup;
    if (!state.setup || !setup) return [];
    return Object.values(setup.units)
      .filter((u) => u.side === side && !u.enters && !state.units[u.id])
      .sort((a, b) => naturally(a.id, b.id));
  }

  /** The viewer's units waiting off board to enter later (A2.51), from the public order of
   * battle: those not on the map yet. */
  function waitingToEnter(state) {
    const setup = state.scenario.setup;
    if (!setup || page.side === null) return [];
    return Object.values(setup.units)
      .filter((u) => u.side === page.side && u.enters && !state.units[u.id])
      .sort((a, b) => naturally(a.id, b.id));
  }

  /** Those of them whose Game Turn has come. */
  function dueToEnter(state) {
    return waitingToEnter(state).filter((u) => u.enters.turn <= state.clock.turn);
  }

  /** The unit a hex click places now: the one picked, else the first left to place. */
  function setupPick(state) {
    const left = leftToSetUp(state, page.side);
    const picked = left.find((u) => u.id === page.setupPick);
    return picked || left[0] || null;
  }

  /** The set-up step's prompt: what is left to place, each pickable, and Done. */
  function setupPrompt(state) {
    const me = page.side;
    if (state.setup.side !== me) {
      return {
        step: true,
        text: `Set-up step. Waiting on the ${sideName(state, state.setup.side)}'s set-up (A12.12): nothing of it shows until set-up ends.`,
      };
    }
    const left = leftToSetUp(state, me);
    const weapons = weaponsToGive(state);
    // The units of its set-up order this side has placed, each one click from being taken
    // back (A12.12), as `lift UNIT` does; not those the scenario puts on the map itself.
    const order = state.scenario.setup.units;
    const placed = ownUnits(state).filter((u) => order[u.id] && !order[u.id].enters)
      .sort((a, b) => naturally(a.id, b.id));
    const give = weapons.length
      ? ` ${weapons.length} support weapon(s) to give (A4.43): ${weapons.map((w) => `\`${w.id}\` ${w.name}`).join(", ")}; pick those the next unit you place takes.`
      : "";
    if (!left.length) {
      return {
        yours: true,
        step: true,
        text: `Set-up step. Your set-up (A12.12): every unit is placed.${give} ${weapons.length ? " To give them to a placed unit, click its hex, pick it in the stack, pick the weapons, then click its hex again (or another hex of your area, shaded, to move it there with them)" : " Click a placed unit's hex and another hex of your area (shaded) to move it, or Done (N) to end your set-up"}; take one back with its ↶ button.`,
        weapons,
        lifts: placed,
      };
    }
    const pick = setupPick(state);
    const words = left.map((u) => {
      const may = [u.may_conceal ? "may be concealed" : "", u.may_hide ? "may be HIP" : ""]
        .filter(Boolean).join(", ");
      return `\`${u.id}\` ${u.kind}${u.ratings ? ` ${u.ratings}` : ""}${may ? ` (${may})` : ""}`;
    });
    if (left.length > SETUP_NAMED_MAX) {
      // A published order of battle runs to a hundred counters: named one by one they bury
      // the prompt, so they are counted by kind and ratings; each is a button below.
      const counts = new Map();
      for (const u of left) {
        const may = [u.may_conceal ? "may be concealed" : "", u.may_hide ? "may be HIP" : ""]
          .filter(Boolean).join(", ");
        const what = `${u.kind}${u.ratings ? ` ${u.ratings}` : ""}${may ? ` (${may})` : ""}`;
        counts.set(what, (counts.get(what) || 0) + 1);
      }
      words.length = 0;
      for (const [what, n] of counts) words.push(`${n} × ${what}`);
      words.push("each picked from the buttons below");
    }
    return {
      yours: true,
      step: true,
      text: `Set-up step. Your set-up (A12.12): ${left.length} left to place: ${words.join(", ")}.${give} Click a hex of your area (shaded) to place \`${pick.id}\`${setupHowFor(pick) ? ` ${setupHowFor(pick)}` : ""}; Done (N) once all are placed.`,
      picks: left.map((u) => u.id),
      weapons,
      lifts: placed,
    };
  }

  function prompts(state) {
    const me = page.side;
    const them = other(me);
    const found = [];
    const ids = (list) => list.join(", ");
    if (state.setup && !state.over) {
      found.push(setupPrompt(state));
      return found;
    }
    const expired = page.clocks && !state.over ? page.clocks.expired : null;
    if (expired === them) {
      found.push({
        yours: true,
        text: `The ${sideName(state, them)}'s clock ran out: claim the game on time, or give the ${sideName(state, them)} time to play on (an hour here, any other amount under Give time below).`,
        answers: [
          ["Claim the game on time", "claim_on_time"],
          ["Give 1 hour", { give_time: { time: 3600000 } }],
        ],
      });
    } else if (expired === me) {
      found.push({ text: `Your clock ran out: the ${sideName(state, them)} may claim the game or give you time; meanwhile you may only concede or offer to end it.` });
    }
    if (state.sewer_designation) {
      const d = state.sewer_designation;
      if (d.defender === me) {
        found.push({
          yours: true,
          text: `The sewer stack beneath ${d.from} is lost: say beneath which Manhole it goes (B8.41).`,
          answers: d.options.map((to) => [`Beneath ${to}`, { designate_sewer: { to } }]),
        });
      } else {
        found.push({ text: `Waiting for the ${sideName(state, d.defender)} to say where the lost sewer stack goes (B8.41).` });
      }
    }
    if (state.wa_chance) {
      const c = state.wa_chance;
      if (c.side === me) {
        found.push({
          yours: true,
          text: `The enemy lost Wall Advantage: you may claim it for ${ids(c.units)} now (B9.322).`,
          // A hidden unit may be placed and claim instead (B9.324).
          answers: [[`Claim WA for ${ids(c.units)}`, { claim_wall_advantage: { units: c.units } }]]
            .concat(ownUnits(state).filter((u) => u.hidden)
              .map((u) => [`Place ${u.id} and claim WA`, { place_hidden: { unit: u.id, claim_wall_advantage: true } }]))
            .concat([["Let the chance pass", "decline_wall_advantage"]]),
        });
      } else {
        found.push({ text: `Waiting for the ${sideName(state, c.side)} to claim Wall Advantage or let the chance pass (B9.322).` });
      }
    }
    if (state.wa_hip_window) {
      const w = state.wa_hip_window;
      if (w.side === me) {
        const hidden = ownUnits(state).filter((u) => u.hidden);
        found.push({
          yours: true,
          text: `The ${sideName(state, them)} ${ids(w.claimants)} ${w.how === "mandatory"
            ? "must claim Wall Advantage where they stand (B9.323)"
            : "claim Wall Advantage as they move (B9.322)"}. Before that claim stands, B9.324 lets ` +
            "you place one of your hidden units along that wall and claim WA for it instead; " +
            "if you let the moment pass, their claim stands. You are asked each time they claim.",
          answers: hidden.map((u) => [`Place ${u.id} and claim WA`, { place_hidden: { unit: u.id, claim_wall_advantage: true } }])
            .concat([["Let the moment pass", "decline_wall_advantage"]]),
        });
      } else {
        found.push({ text: `${ids(w.claimants)} ${w.how === "mandatory"
          ? "must claim Wall Advantage here: they have no in-hex TEM of +1 or more (B9.323), so the claim is not yours to skip"
          : "claim Wall Advantage"}. Waiting for the ${sideName(state, w.side)}, who may first place a hidden unit and claim (B9.324).` });
      }
    }
    if (state.wa_challenge) {
      const c = state.wa_challenge;
      if (c.side === me) {
        found.push({
          yours: true,
          text: `Your concealed WA holders ${ids(c.holders)} are challenged: show a real one or forfeit (B9.324).`,
          answers: c.holders.map((h) => [`Show ${h}`, { show_for_wall_advantage: { unit: h } }])
            .concat([["Forfeit their WA", { forfeit_wall_advantage: { units: c.holders } }]]),
        });
      } else {
        found.push({ text: `Waiting for the ${sideName(state, c.side)} to show a real WA holder or forfeit (B9.324).` });
      }
    }
    if (state.cc_infiltration && !state.over) {
      // An Original CC DR of 2 or 12 stopped a Close Combat (A11.22): its side says whether
      // the units it names leave at once, unattacked. The page declines; infiltrating to a
      // hex is the CLI's `cc HEX infiltrate UNITS to HEX`.
      const c = state.cc_infiltration;
      if (c.side === me) {
        found.push({
          yours: true,
          text: `An Original CC DR of ${c.original} in ${c.hex}: ${ids(c.units)} may infiltrate out of the Close Combat at once, unattacked (A11.22; \`cc ${c.hex} infiltrate UNITS to HEX\` on the CLI), or decline; the Close Combat goes on after your answer.`,
          answers: [["Decline Infiltration", { infiltrate: { hex: c.hex, withdrawals: [] } }]],
        });
      } else {
        found.push({ text: `An Original CC DR of ${c.original} in ${c.hex}: waiting for the ${sideName(state, c.side)} to say whether ${ids(c.units)} infiltrate out of the Close Combat (A11.22).` });
      }
    }
    if (state.attack && !state.over) {
      const a = state.attack;
      if (a.by === me) {
        found.push({
          yours: true,
          text: `Your attack by ${ids(a.firers)} on ${a.target} is open: resolve it — the referee rolls it on the IFT where the engine models everything it needs (A7.3), and otherwise says why it is yours to judge — then adjudicate (A) what it did (A7). Until then no WA changes in ${a.target} (B9.322) and the step cannot end (A3).`,
          answers: [["Resolve the attack", "resolve_attack"]],
        });
      } else {
        found.push({ text: `The ${sideName(state, a.by)}'s attack by ${ids(a.firers)} on ${a.target} is open (A7): waiting for it to be resolved.` });
      }
    }
    const { step: now, acting: actingNow } = moment(state);
    // The enemy stack moving now, as this side's projection shows it: the DEFENDER's moment
    // to fire at it before it moves on (Defensive First Fire, A8.1), which nothing else on
    // the page says while it waits on the ATTACKER's move.
    const moving = now.phase === "MPh" && actingNow !== me && !state.attack && !state.over
      ? (state.movement.moving_stack || []).filter((id) => state.units[id] && !state.units[id].eliminated)
        .sort(naturally) : [];
    if (moving.length) {
      const at = state.units[moving[0]].hex;
      found.push({
        yours: true,
        optional: true,
        text: `The ${sideName(state, actingNow)}'s stack moving now: ${moving.map((id) => `\`${id}\``).join(", ")} in ${at}. You may fire at it before it moves on — Defensive First Fire (A8.1): pick your firers (their SW in the stack list), K, then click ${at}.`,
      });
    }
    for (const { seq, effect } of leftToPlayers()) {
      // What the referee left to the players in this step and nobody adjudicated since: the
      // record says it once, and it would otherwise scroll away unanswered.
      found.push({
        yours: true,
        optional: true,
        text: `Left to the players (#${seq}): ${effect.why} (${effect.rule}). Roll (R) what it needs, then adjudicate (A) the outcome; the other side accepts or disputes it.`,
        answers: effect.unit ? [[`Adjudicate ${effect.unit}…`, () => adjudicateFor(effect.unit)]] : [],
      });
    }
    const due = now.phase === "MPh" && actingNow === me && !state.over ? dueToEnter(state) : [];
    if (due.length) {
      found.push({
        yours: true,
        optional: true,
        text: `Units waiting off board may enter now (A2.51): ${due.map((u) => `\`${u.id}\` from the ${u.enters.edge} edge`).join(", ")}. Pick them (or I), then click a hex of their edge (shaded).`,
        entering: due,
      });
    }
    const rallying = now.phase === "RPh" && now.rule === "A3.1" && !state.over
      ? ownUnits(state).filter((u) => u.morale === "broken" && !u.hidden).sort((a, b) => naturally(a.id, b.id)) : [];
    if (rallying.length) {
      // Each side may try to rally its broken units in every RPh, once each (A10.6).
      found.push({
        yours: true,
        optional: true,
        // The ATTACKER's Done ends the RPh for both sides: the DEFENDER is told his chance
        // lasts only until then.
        text: `Broken units of yours may attempt to rally now (A10.6): ${rallying.map((u) => `\`${u.id}\``).join(", ")}.${actingNow === me ? "" : ` Only until the ${sideName(state, actingNow)} ends the RPh, which ends it for both sides.`}`,
        answers: rallying.map((u) => [`Rally ${u.id}…`, () => {
          page.selected = new Set([u.id]);
          openRally(state);
          redrawPicks();
        }]),
      });
    }
    const theirsBroken = now.phase === "RPh" && now.rule === "A3.1" && actingNow === me && !state.over
      ? Object.values(state.units).filter((u) => u.side !== me && u.morale === "broken" && !u.eliminated &&
        !u.hidden && !(state.movement.rallied || []).includes(u.id)).sort((a, b) => naturally(a.id, b.id)) : [];
    if (theirsBroken.length) {
      // The enemy's broken units, as this side sees them: its Done would end their RPh too.
      found.push({
        optional: true,
        text: `The ${sideName(state, them)}'s broken units may attempt to rally in this RPh too (A10.6): ${theirsBroken.map((u) => `\`${u.id}\``).join(", ")}. Your Done ends the RPh for both sides.`,
      });
    }
    const designated = now.phase === "CCPh" && !state.over
      ? Object.entries(state.movement.cc_designated || {}) : [];
    if (designated.length) {
      // The ATTACKER has designated in one Location: the DEFENDER's designation is awaited,
      // and resolves that CC by the CC Table (A11.12, A11.11).
      const [hex, attacks] = designated[0];
      // With the attacks, the units he withdraws from the Melee there (A11.2).
      const away = ((state.movement.cc_withdrawals || {})[hex] || []).map((w) => `${ids(w.units)} withdrawing to ${w.to}`);
      const theirs = attacks.map((a) => `${ids(a.attackers)} vs ${ids(a.defenders)}`).concat(away).join("; ") || "none";
      if (actingNow !== me) {
        found.push({
          yours: true,
          text: `The ATTACKER designated his Close Combat attacks in ${hex} (${theirs}): designate yours (Q), or none — the referee then rolls every attack on the CC Table (A11.12, A11.11).`,
          answers: [[`Designate in ${hex}…`, () => openCc(state, hex)],
            [`No attacks in ${hex}`, { close_combat: { hex, attacks: [], no_ambush: false } }]],
        });
      } else {
        found.push({ text: `You designated your Close Combat attacks in ${hex} (${theirs}): waiting for the ${sideName(state, other(me))} to designate its own, which resolves the CC (A11.12).` });
      }
    } else if (now.phase === "CCPh" && !state.over) {
      // Locations where both sides' units are, as this side sees them (A11.1): the ATTACKER
      // designates first in each, the DEFENDER then, and the referee rolls them on the CC
      // Table; a Location both sides still hold is a Melee (A11.7).
      const seen = Object.values(state.units).filter((u) => !u.eliminated && !u.underground && !u.hidden);
      const shared = [...new Set(seen.filter((u) => seen.some((v) => v.side !== u.side && v.hex === u.hex))
        .map((u) => u.hex))].sort(naturally);
      const melee = new Set(state.movement.melee || []);
      const resolved = new Set(state.movement.cc_resolved || []);
      if (shared.length && actingNow === me) {
        found.push({
          yours: true,
          optional: true,
          text: `Close Combat in ${shared.join(", ")} (A11): designate your attacks (Q) in each; the ${sideName(state, other(me))} designates next and the referee rolls them on the CC Table (A11.11). Where it leaves a CC to you, roll (R, CC) and adjudicate (A); where both sides remain, record the Melee (A11.7).`,
          answers: shared.filter((hex) => !resolved.has(hex) && !melee.has(hex))
            .map((hex) => [`Designate in ${hex}…`, () => openCc(state, hex)])
            .concat(shared.filter((hex) => !melee.has(hex)).map((hex) => [`Record the Melee in ${hex}`, { melee: { hex } }])),
        });
      } else if (shared.length) {
        found.push({
          optional: true,
          text: `Close Combat in ${shared.join(", ")} (A11): the ATTACKER designates first; you designate yours once he has (A11.12).`,
        });
      }
    }
    const routing = now.phase === "RtPh" && actingNow === me && !state.over ? routDue(state) : null;
    if (routing) {
      // The server's own refusal of `done` names the broken unit that must rout (A10.5).
      found.push({
        yours: true,
        step: true,
        text: `Rout Phase: ${routing.detail} (${routing.rule}). Pick the unit (and a Good Order leader of its Location in the stack list, to rout along: A10.711), then click the adjacent hex it routs to.`,
        routers: ownUnits(state).filter((u) => u.morale === "broken" && !u.hidden && !u.underground)
          .sort((a, b) => naturally(a.id, b.id)),
      });
    }
    if (state.end_proposal && !state.over) {
      if (state.end_proposal === them && page.endDeclinedAt === state.version) {
        found.push({ optional: true, text: "You play on: the offer to end lapses when this step ends." });
      } else if (state.end_proposal === them) {
        found.push({
          yours: true,
          optional: true,
          text: "Your opponent offers to end the game here.",
          answers: [["Accept the end", "accept_end"], ["Decline: play on", null]],
        });
      } else {
        found.push({ optional: true, text: "Waiting for your opponent to accept your offer to end the game." });
      }
    }
    // Answers that the log asks for: the latest event an undo request, adjudications.
    const last = page.entries.length ? page.entries[page.entries.length - 1] : null;
    const undo = last && last.event && last.event.undo_requested;
    if (undo && last.seq === page.version) {
      if (undo.by === them) {
        found.push({
          yours: true,
          text: `Your opponent asks to take back events #${undo.from}–#${undo.to}.`,
          answers: [["Consent to the undo", "consent_to_undo"], ["Decline", "decline_undo"]],
        });
      } else {
        found.push({ text: "Waiting for your opponent to answer your undo request." });
      }
    }
    const answeredEvents = new Set();
    for (const e of page.entries) {
      const ev = e.event || {};
      const a = ev.adjudication_accepted || ev.adjudication_disputed;
      if (a) answeredEvents.add(a.event);
    }
    for (const e of page.entries) {
      const adj = e.event && e.event.outcome_adjudicated;
      if (!adj || adj.by !== them || answeredEvents.has(e.seq)) continue;
      found.push({
        yours: true,
        optional: true,
        text: `Adjudication #${e.seq}: \`${adj.unit}\` ${outcomeText(adj.outcome)}${adj.note ? ` (“${adj.note}”)` : ""}.`,
        answers: [
          ["Accept", { accept_adjudication: { event: e.seq } }],
          // A dispute says why: the answer opens the form for the reason.
          ["Dispute…", () => disputeFor(e.seq)],
        ],
      });
    }
    if (!found.some((f) => !f.optional) && !state.over) {
      const step = STEPS[state.clock.step];
      const attacker = state.clock.player_turn === 1 ? state.scenario.first : other(state.scenario.first);
      const acting = step.attacker_acts ? attacker : other(attacker);
      found.push(acting === me
        ? { yours: true, step: true, text: `Your move: ${step.name} (${step.rule}). Act, then Done (N).` }
        : { step: true, text: `Waiting on the ${sideName(state, acting)}: ${step.name} (${step.rule}).` });
    }
    if (state.over) found.push({ text: "The game is over." });
    // What must be answered first, then what may be (the sort keeps each group's order).
    return found.sort((a, b) => Number(Boolean(a.optional)) - Number(Boolean(b.optional)));
  }

  /** The number key of the `key`th answer of the prompt (1–9; none after), set on `b`. */
  function keyOf(b, key) {
    const k = document.createElement("kbd");
    if (key <= 9) {
      b.dataset.key = String(key);
      k.textContent = String(key);
    }
    return k;
  }

  /** The prompt, the selection and the mode, for the side this page plays. */
  function drawPlay() {
    if (page.side === null) return;
    const state = liveState();
    if (!state) return;
    checkRout(state);
    const box = el("prompt");
    box.replaceChildren();
    const found = prompts(state);
    box.classList.toggle("yours", found.some((f) => f.yours));
    let key = 1;
    for (const f of found) {
      const line = document.createElement("div");
      line.className = `prompt ${f.yours ? "yours" : "theirs"}${f.optional ? " optional" : ""}`;
      line.append(setRich(document.createElement("span"), f.text), " ");
      for (const [label, command] of f.answers || []) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = "answer";
        b.dataset.key = String(key);
        const k = document.createElement("kbd");
        k.textContent = key <= 9 ? String(key) : "";
        b.append(k, ` ${label}`);
        b.addEventListener("click", () => {
          if (typeof command === "function") {
            command();
            return;
          }
          if (command !== null) {
            propose(command, label);
            return;
          }
          // There is no command to decline an end: the offer lapses when its step ends.
          page.endDeclinedAt = state.version;
          drawPlay();
        });
        line.append(b);
        key += 1;
      }
      for (const id of f.picks || []) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = "answer";
        b.textContent = id === (setupPick(state) || {}).id ? `▸ ${id}` : id;
        b.addEventListener("click", () => {
          page.setupPick = id;
          drawPlay();
        });
        line.append(b);
      }
      if (f.picks) {
        const pick = setupPick(state);
        for (const [how, label] of [["", "in the open"], ["concealed", "concealed"], ["hidden", "HIP"]]) {
          if (how === "" && pick && pick.kind === "dummy") continue;
          if (how === "concealed" && !(pick && (pick.may_conceal || pick.kind === "dummy"))) continue;
          if (how === "hidden" && !(pick && pick.may_hide)) continue;
          const b = document.createElement("button");
          b.type = "button";
          b.className = "answer";
          b.textContent = setupHowFor(pick) === how ? `▸ ${label}` : label;
          b.addEventListener("click", () => {
            page.setupHow = how;
            drawPlay();
          });
          line.append(b);
        }
      }
      for (const w of f.weapons || []) {
        // A set-up weapon picked goes with the next unit placed (A4.43).
        const b = document.createElement("button");
        b.type = "button";
        b.className = "answer weapon-give";
        b.dataset.weapon = w.id;
        const on = page.setupWeapons.has(w.id);
        b.setAttribute("aria-pressed", on ? "true" : "false");
        b.append(keyOf(b, key), ` ${on ? "▸ " : ""}give ${w.name} (${w.id})`);
        key += 1;
        b.addEventListener("click", () => {
          if (page.setupWeapons.has(w.id)) page.setupWeapons.delete(w.id);
          else page.setupWeapons.add(w.id);
          drawPlay();
        });
        line.append(b);
      }
      for (const u of f.lifts || []) {
        // A unit placed in this set-up, taken back off the map to be placed again (A12.12).
        const b = document.createElement("button");
        b.type = "button";
        b.className = "answer lift-pick";
        b.dataset.unit = u.id;
        b.title = `Take ${u.id} back off the map, to place it again (A12.12)`;
        b.textContent = `↶ ${u.id} in ${u.hex}`;
        b.addEventListener("click", () => {
          page.selected = new Set([u.id]);
          propose({ lift_set_up: { unit: u.id } }, `Take back ${u.id} from ${u.hex}`);
        });
        line.append(b);
      }
      if ((f.routers || []).length) {
        // The router's broken side's morale, which an Interdicted step's NMC is against
        // (A10.53, A10.4): the counter shows it, its ratings do not.
        const label = document.createElement("label");
        label.className = "rout-morale";
        label.append("Broken morale ");
        const input = document.createElement("input");
        input.id = "rout-morale";
        input.type = "number";
        input.min = "1";
        input.max = "10";
        input.size = 3;
        input.title = "The morale on the router's broken side, for its Interdiction NMC (A10.53)";
        input.value = page.routMorale ? String(page.routMorale) : "";
        input.addEventListener("input", () => {
          const m = Number(input.value);
          page.routMorale = Number.isInteger(m) && m >= 1 && m <= 10 ? m : null;
        });
        label.append(input);
        line.append(label);
      }
      for (const u of f.routers || []) {
        // A broken unit of this side, picked to rout (A10.5); not a numbered answer: the rout
        // itself is the hex clicked next.
        const b = document.createElement("button");
        b.type = "button";
        b.className = "rout-pick";
        b.dataset.unit = u.id;
        const on = page.selected.has(u.id);
        b.setAttribute("aria-pressed", on ? "true" : "false");
        b.textContent = `${on ? "▸ " : ""}${u.id} ${u.ratings} in ${u.hex}`;
        b.addEventListener("click", () => {
          page.selected = new Set([u.id]);
          page.mode = "move";
          pickStack(u.hex);
          redrawPicks();
        });
        line.append(b);
      }
      for (const u of f.entering || []) {
        // A unit waiting off board, picked to enter (A2.51).
        const b = document.createElement("button");
        b.type = "button";
        b.className = "answer enter-pick";
        b.dataset.unit = u.id;
        const on = page.entering.has(u.id);
        b.setAttribute("aria-pressed", on ? "true" : "false");
        b.append(keyOf(b, key), ` ${on ? "▸ " : ""}${u.id} ${u.ratings} ${words(u.kind)}`);
        key += 1;
        b.addEventListener("click", () => {
          if (page.entering.has(u.id)) page.entering.delete(u.id);
          else page.entering.add(u.id);
          page.mode = page.entering.size ? "enter" : "move";
          redrawPicks();
        });
        line.append(b);
      }
      box.append(line);
    }
    for (const id of [...page.entering]) {
      if (state.units[id]) page.entering.delete(id);
    }
    drawForms();
    // Selected units that are gone (eliminated, or no longer this side's to see) are unpicked;
    // a weapon picked stays only among an attack's firers (A9.1): it never moves or rallies.
    for (const id of [...page.selected]) {
      const weapon = state.weapons && state.weapons[id];
      const keep = weapon
        ? page.mode === "attack" && ownWeapon(state, weapon)
        : state.units[id] && !state.units[id].eliminated;
      if (!keep) page.selected.delete(id);
    }
    const units = [...page.selected];
    // Only what can apply now is offered; the rest says why on hover (and when its key is
    // pressed); what this scenario never has is not shown at all.
    if (unavailable(state, page.mode)) page.mode = "move";
    // Units picked while nothing may be done with them now (the other side's move) are told
    // so, not asked for a hex.
    const idle = unavailable(state, page.mode);
    const phaseNow = moment(state).step.phase;
    const modes = {
      move: phaseNow === "RtPh" ? "click an adjacent hex to rout to (A10.5)"
        : phaseNow === "APh" ? "click an adjacent hex to advance to (A4.7)" : "click an adjacent hex to move",
      attack: "click the hex to attack (A7)",
      sewer: "click the Manhole hex to move to beneath it",
      melee: "click the hex whose Close Combat ends in Melee (A11.7)",
      bypass: page.bypass
        ? `Bypass ${page.bypass.hex}: click the hex across each hexside in turn`
        : "click the hex to bypass, then the hex across each hexside",
    };
    say(page.mode === "melee"
      ? `Melee: ${modes.melee}.`
      : page.mode === "enter" && page.entering.size
      ? `Entering ${[...page.entering].sort(naturally).join(" ")}: click a hex of their edge (shaded) (A2.51).`
      : units.length
      ? `Selected ${units.join(" ")} (${mf(Math.max(...units.map((id) => (state.units[id] || {}).mf_spent || 0)))} MF spent): ${!idle ? `${modes[page.mode]}.` : unavailable(state, "attack") ? idle : "fire with them: K, then click the hex to attack (A7)."}`
      : "Select your units: click a stack, then pick its counters.");
    if (unavailable(state, "rally")) el("rally-form").hidden = true;
    if (page.cc && (unavailable(state, "close_combat") || !ccHexes(state).includes(page.cc.hex))) closeCc();
    // In the set-up step only placing, Done and the game's own actions apply (A12.12).
    const settingUp = Boolean(state.setup && !state.over);
    for (const b of document.querySelectorAll("#actions button, #game-actions button")) {
      const action = b.dataset.action;
      const why = unavailable(state, action);
      b.hidden = absent(state, action) !== null ||
        (settingUp && b.closest("#actions") !== null && !["done", "hex", "clear"].includes(action));
      b.disabled = why !== null;
      b.title = why || "";
      b.classList.toggle("on", action === page.mode && ["move", "bypass", "sewer", "enter", "attack", "melee"].includes(action) && !why);
    }
    const list = el("own-units");
    list.replaceChildren();
    for (const u of Object.values(state.units).sort((a, b) => naturally(a.id, b.id))) {
      const o = document.createElement("option");
      o.value = u.id;
      list.append(o);
    }
  }

  /** The opponent's adjudications not answered yet, from this side's stream. */
  function toAnswer() {
    const them = other(page.side);
    const answered = new Set();
    for (const e of page.entries) {
      const ev = e.event || {};
      const a = ev.adjudication_accepted || ev.adjudication_disputed;
      if (a) answered.add(a.event);
    }
    return page.entries.filter((e) => {
      const adj = e.event && e.event.outcome_adjudicated;
      return adj && adj.by === them && !answered.has(e.seq);
    });
  }

  /** An adjudicated outcome in words: a word (`pin`), or a counter's move (`relocate to 3B4`). */
  function outcomeText(outcome) {
    if (typeof outcome === "string") return outcome;
    if (outcome && typeof outcome.relocate === "string") return `relocate to ${outcome.relocate}`;
    return "an outcome";
  }

  /** Fills `select` with `options` ([value, label]), keeping what was chosen if still there. */
  function fillSelect(select, options) {
    const chosen = select.value;
    const key = JSON.stringify(options);
    if (select.dataset.options !== key) {
      select.dataset.options = key;
      select.replaceChildren(...options.map(([value, label]) => {
        const o = document.createElement("option");
        o.value = value;
        o.textContent = label;
        return o;
      }));
    }
    if (options.some(([value]) => value === chosen)) select.value = chosen;
  }

  /** The forms' lists: the rolls an adjudication may cite, the adjudications to dispute. */
  function drawForms() {
    drawGiveTime();
    const rolls = page.entries.filter((e) => e.event && e.event.dice_rolled).reverse().map((e) => {
      const r = e.event.dice_rolled.roll;
      return [String(e.seq), `#${e.seq} ${r.dice.length === 1 ? "dr" : "DR"} ${words(r.purpose)} = ${r.final_result}`];
    });
    fillSelect(el("adjudicate-roll"), [["", "no roll"]].concat(rolls));
    const open = toAnswer().map((e) => {
      const adj = e.event.outcome_adjudicated;
      return [String(e.seq), `#${e.seq} ${adj.unit} ${outcomeText(adj.outcome)}`];
    });
    fillSelect(el("dispute-event"), open);
    el("dispute-form").hidden = !open.length;
  }

  /** Time is given by a player while the game's clocks run: the form is there for a seat of a
   * game under a time control that is not over. */
  function drawGiveTime() {
    const live = page.live;
    el("give-time-form").hidden = page.side === null || !page.clocks || !live || Boolean(live.over);
  }

  /** A duration as `asl`'s `give-time` reads it (`board::time_control::parse_duration`): one or
   * more numbers of at most 9 digits, each with its unit s, m, h or d, summed. Only the words
   * are read here: how much may be given at once, and to a bank of how much, is the referee's
   * (`GIVE_TIME_MAX`, `CLOCK_DURATION_MAX`), said in its refusal of the preview. */
  const DURATION_UNITS = { s: 1000, m: 60 * 1000, h: 60 * 60 * 1000, d: 24 * 60 * 60 * 1000 };

  function parseDuration(text) {
    const t = text.trim();
    if (!t) return { error: "a duration is missing: write e.g. `30m`, `12h` or `5d`" };
    let total = 0;
    let digits = "";
    for (const c of t) {
      if (c >= "0" && c <= "9") {
        digits += c;
        if (digits.length > 9) return { error: `\`${t}\`: too many digits` };
        continue;
      }
      const unit = DURATION_UNITS[c];
      if (!unit) return { error: `\`${t}\`: \`${c}\` is no unit; durations are written with s, m, h or d (\`1h30m\`)` };
      if (!digits) return { error: `\`${t}\`: a number must come before \`${c}\`` };
      // Summed as the CLI sums (saturating): past what a JSON number holds exactly the
      // referee refuses it all the same.
      total = Math.min(Number.MAX_SAFE_INTEGER, total + Number(digits) * unit);
      digits = "";
    }
    if (digits) return { error: `\`${t}\`: \`${digits}\` has no unit; write s, m, h or d after it` };
    return { ms: total };
  }

  /** Gives the opponent the time the form says, through the preview like every command. */
  function giveTime() {
    const text = el("give-time-amount").value;
    const read = parseDuration(text);
    if (read.error) {
      say(`Give time: ${read.error}.`);
      el("give-time-amount").focus();
      return;
    }
    const command = { give_time: { time: read.ms } };
    if (sameProposal(command)) {
      confirmProposal();
      return;
    }
    const live = page.live;
    propose(command, `Give the ${live ? sideName(live, other(page.side)) : "opponent"} ${text.trim()}`);
  }

  /** The Dispute answer: the form, at that adjudication, waiting for the reason. */
  /** The effects the referee left to the players (`fire_effect_left_to_players`) since the
   * current step began, each with its event number, less those of a unit adjudicated after
   * it: from this side's own stream, so they say nothing its projection does not. */
  function leftToPlayers() {
    const found = [];
    const adjudicated = new Set();
    for (let i = page.entries.length - 1; i >= 0; i -= 1) {
      const e = page.entries[i];
      const ev = e.event || {};
      if (ev.step_ended || ev.step_passed || ev.setup_ended) break;
      if (ev.outcome_adjudicated) adjudicated.add(ev.outcome_adjudicated.unit);
      const effect = ev.fire_effect_left_to_players;
      if (effect && !(effect.unit && adjudicated.has(effect.unit))) found.push({ seq: e.seq, effect });
    }
    return found.reverse();
  }

  /** The Adjudicate answer: the form, with the unit the referee left to the players. */
  function adjudicateFor(unit) {
    el("forms").open = true;
    drawForms();
    el("adjudicate-unit").value = unit;
    el("adjudicate-outcome").focus();
    say(`Adjudicate ${unit}: pick its outcome (and the roll it follows), then Enter.`);
  }

  function disputeFor(seq) {
    el("forms").open = true;
    drawForms();
    el("dispute-event").value = String(seq);
    el("dispute-reason").focus();
    say(`Say why you dispute #${seq}, then Enter.`);
  }

  /** Whether `command` is what was previewed and allowed: Enter on it again sends it. */
  function sameProposal(command) {
    const p = page.proposal;
    return Boolean(p && p.outcome && p.outcome.allowed && JSON.stringify(p.command) === JSON.stringify(command));
  }

  // ---- Receipts -----------------------------------------------------------------------------
  // What the CLI keeps in `receipts/` (client-cli/src/receipts.rs, docs/review.md): the latest
  // signed head of this viewer's own stream, from each `joined` and `accepted`, kept by this
  // browser per game and seat (under a tag of the token's blake3 digest, never the token), and
  // shown when the page is opened again (`join_with_receipt`). The page cannot check the
  // server's signature itself: the server checks it when it is shown, and a head under another
  // key replaces the one kept, as the CLI's does.

  /** Largest receipt read back: a signed head with its batch proof is a few KiB. */
  const RECEIPT_CHARS_MAX = 16 * 1024;

  function receiptKey() {
    return `asl-receipt:${page.game}:${window.aslBlake3(String(page.token)).slice(0, 16)}`;
  }

  function keptReceipt() {
    try {
      const text = localStorage.getItem(receiptKey());
      if (!text || text.length > RECEIPT_CHARS_MAX) return null;
      const receipt = JSON.parse(text);
      return receipt && receipt.game === page.game && Number.isInteger(receipt.version) ? receipt : null;
    } catch {
      return null; // storage off, or not a receipt: joined without one
    }
  }

  function keepReceipt(signed, version) {
    if (!signed || typeof signed !== "object" || signed.game !== page.game || signed.version !== version) return;
    const kept = keptReceipt();
    const sameKey = kept && JSON.stringify(kept.signer) === JSON.stringify(signed.signer);
    if (kept && sameKey && kept.version > signed.version) return; // forward only, within a key
    const text = JSON.stringify(signed);
    if (text.length > RECEIPT_CHARS_MAX) return;
    try {
      localStorage.setItem(receiptKey(), text);
    } catch {
      // Storage full or off: the page plays on without a receipt, as a CLI without a state
      // directory does.
    }
  }

  function forgetReceipt() {
    try {
      localStorage.removeItem(receiptKey());
    } catch {
      // Nothing kept to forget.
    }
  }

  // ---- Starting a new game ---------------------------------------------------------------
  // What `asl new` does with a scenario file or a VASL save: the page opened without a link
  // sends the file's text as `create_game` on a connection of its own, and shows the three
  // links the server's tokens make — once, as the server shows them once. The server checks
  // the scenario; a refusal is shown with its code. A VASL save (`.vsav`) is first made a
  // scenario by the server (`import_save`), by the function `asl new SAVE.vsav` uses, and the
  // scenario it answers is created as a file would be (docs/vasl-import.md).

  function newReport(refused, ...nodes) {
    const box = el("new-report");
    box.classList.toggle("refused", refused);
    box.replaceChildren(...nodes);
  }

  /** Where the links point: the server's public address when it says one (a `wss` one is
   * served over `https` at the same host), else this page's own. */
  function linkBase(publicUrl) {
    const m = /^(wss?|https?):\/\/([^/?#\s]+)/.exec(typeof publicUrl === "string" ? publicUrl : "");
    if (!m) return location.origin;
    const scheme = m[1] === "wss" || m[1] === "https" ? "https" : "http";
    return `${scheme}://${m[2]}`;
  }

  /** Bytes in standard base64, as `import_save` carries a save. */
  function base64Of(bytes) {
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return btoa(binary);
  }

  /** The scenario's text with the form's time control as its `[clock]` table, as `asl new
   * --clock` puts it (the server reads and checks it); or why not, said in the form. */
  function withClock(scenario) {
    const clock = el("new-clock").value.trim();
    if (!clock) return { scenario };
    if (!/^[A-Za-z0-9:+/=,.]+$/.test(clock)) {
      el("new-clock").focus();
      return { error: "A time control is written like live:30m+30s or correspondence:12h/5d (docs/clock.md)." };
    }
    if (/^\s*\[clock\]\s*$/m.test(scenario)) {
      return { error: "This file has its own [clock]: leave the time control empty to play under it, or change the file." };
    }
    return { scenario: `${scenario}${scenario.endsWith("\n") ? "" : "\n"}\n[clock]\ncontrol = "${clock}"\n` };
  }

  async function createGame() {
    const file = el("new-scenario").files[0];
    if (!file) {
      newReport(true, "Choose the scenario file first.");
      el("new-scenario").focus();
      return;
    }
    const admin = el("new-admin").value.trim() || null;
    const isSave = /\.vsav$/i.test(file.name);
    let first;
    if (isSave) {
      // Base64 makes 3 bytes 4: a save over what a message holds is not read at all.
      if (Math.ceil(file.size / 3) * 4 + file.name.length + 256 > FRAME_BYTES_MAX) {
        newReport(true, `The save is ${file.size} bytes, over the ${Math.floor((FRAME_BYTES_MAX - 256) / 4) * 3} a message to the server may carry: make it a scenario file with \`asl import\` and create the game from that.`);
        return;
      }
      const save = base64Of(new Uint8Array(await file.arrayBuffer()));
      first = { import_save: { save, name: file.name.replace(/\.vsav$/i, ""), admin_token: admin } };
    } else {
      const made = withClock(await file.text());
      if (made.error) {
        newReport(true, made.error);
        return;
      }
      first = { create_game: { scenario: made.scenario, admin_token: admin } };
    }
    const message = JSON.stringify(first);
    if (message.length > FRAME_BYTES_MAX) {
      newReport(true, `The file is over the ${FRAME_BYTES_MAX} bytes a message may hold.`);
      return;
    }
    el("new-create").disabled = true;
    newReport(false, isSave ? `Reading the VASL save ${file.name}…` : `Creating a game from ${file.name}…`);
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const ws = new WebSocket(`${scheme}${location.host}/v1`);
    let assumed = [];
    const done = () => {
      el("new-create").disabled = false;
      ws.onclose = null;
      ws.close();
    };
    ws.onopen = () => ws.send(message);
    ws.onmessage = (frame) => {
      let answer;
      try {
        answer = JSON.parse(frame.data);
      } catch (e) {
        answer = { error: { code: "unreadable", message: String(e) } };
      }
      if (answer.save_imported) {
        // The save's scenario, created as a file's would be, on this same connection.
        const imported = answer.save_imported;
        assumed = Array.isArray(imported.assumed) ? imported.assumed.map(String) : [];
        const made = withClock(String(imported.scenario));
        if (made.error) {
          newReport(true, made.error);
          done();
          return;
        }
        const create = JSON.stringify({ create_game: { scenario: made.scenario, admin_token: admin } });
        if (create.length > FRAME_BYTES_MAX) {
          newReport(true, `The scenario made of this save is over the ${FRAME_BYTES_MAX} bytes a message may hold: make it with \`asl import\` and create the game with \`asl new\`.`);
          done();
          return;
        }
        newReport(false, `Creating a game from ${file.name}…`);
        ws.send(create);
        return;
      }
      if (answer.created) {
        created(answer.created, assumed);
      } else if (answer.error) {
        const p = document.createElement("div");
        setRich(p, `Not created: ${answer.error.message} (${answer.error.code}).`);
        newReport(true, p);
      } else {
        return;
      }
      done();
    };
    ws.onclose = () => {
      el("new-create").disabled = false;
      newReport(true, "The connection closed before the server answered: try again.");
    };
  }

  /** The game made: a link per player and one to watch, each in words and as a link. */
  function created(answer, assumed = []) {
    const base = linkBase(answer.public_url);
    const link = (token) =>
      `${base}/watch#game=${encodeURIComponent(String(answer.game))}&token=${encodeURIComponent(String(token))}`;
    const sides = Array.isArray(answer.sides) ? answer.sides : [];
    const tokens = answer.tokens || {};
    const head = document.createElement("div");
    head.textContent = `Game ${answer.game} created. The links are shown only now: keep them, ` +
      "and give each player only their own.";
    const list = document.createElement("ul");
    list.id = "new-links";
    const rows = [
      [sides[0] ? `Play as ${sides[0].name}` : "Play the first side", tokens.side_a, "A"],
      [sides[1] ? `Play as ${sides[1].name}` : "Play the second side", tokens.side_b, "B"],
      ["Watch", tokens.spectator, "watch"],
    ];
    for (const [label, token, which] of rows) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = link(token);
      a.dataset.for = which;
      a.textContent = a.href;
      li.append(`${label}: `, a);
      list.append(li);
    }
    const nodes = [head, list];
    if (assumed.length) {
      // What `asl new SAVE.vsav` prints: what the game assumes since the save does not say it.
      const note = document.createElement("div");
      note.textContent = "Assumed, since the save does not say it (to play the card's own, write " +
        "the file with asl import, change it and create the game from it; docs/vasl-import.md):";
      const items = document.createElement("ul");
      items.id = "new-assumed";
      for (const line of assumed) {
        const li = document.createElement("li");
        li.textContent = line;
        items.append(li);
      }
      nodes.push(note, items);
    }
    newReport(false, ...nodes);
  }

  // ---- Saving a finished game's export --------------------------------------------------
  // What `asl export` does (docs/review.md): the stored log of a finished game, read page by
  // page (`get_export`) and written as the export file — header, one hex envelope a line, and
  // the blake3 checksum of all before it — which `asl verify`, `asl replay` and this page's
  // review read. Each page is held to what the server said before, as the CLI holds it.

  /** The errors a `get_export` may be answered with: the save's, not the connection's (a read
   * over its budget is served late, never refused). */
  const EXPORT_REFUSALS = ["not_yet"];

  const hexOf = (bytes) => Array.from(bytes, (b) => (b & 0xff).toString(16).padStart(2, "0")).join("");

  // BLAKE3 (the hash of `record::export`'s checksum line), for one message held whole: chunks
  // of 1024 bytes compressed block by block, merged into the tree as each chunk is done.
  const B3_IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const B3_PERMUTATION = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
  const B3_CHUNK_START = 1;
  const B3_CHUNK_END = 2;
  const B3_PARENT = 4;
  const B3_ROOT = 8;
  const B3_BLOCK = 64;
  const B3_CHUNK = 1024;

  function b3Compress(cv, words, counter, length, flags) {
    const s = new Uint32Array([...cv, B3_IV[0], B3_IV[1], B3_IV[2], B3_IV[3],
      counter % 0x100000000, Math.floor(counter / 0x100000000), length, flags]);
    let m = Uint32Array.from(words);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    const g = (a, b, c, d, x, y) => {
      s[a] = s[a] + s[b] + x;
      s[d] = rotr(s[d] ^ s[a], 16);
      s[c] = s[c] + s[d];
      s[b] = rotr(s[b] ^ s[c], 12);
      s[a] = s[a] + s[b] + y;
      s[d] = rotr(s[d] ^ s[a], 8);
      s[c] = s[c] + s[d];
      s[b] = rotr(s[b] ^ s[c], 7);
    };
    for (let round = 0; round < 7; round += 1) {
      g(0, 4, 8, 12, m[0], m[1]);
      g(1, 5, 9, 13, m[2], m[3]);
      g(2, 6, 10, 14, m[4], m[5]);
      g(3, 7, 11, 15, m[6], m[7]);
      g(0, 5, 10, 15, m[8], m[9]);
      g(1, 6, 11, 12, m[10], m[11]);
      g(2, 7, 8, 13, m[12], m[13]);
      g(3, 4, 9, 14, m[14], m[15]);
      m = Uint32Array.from(B3_PERMUTATION, (i) => m[i]);
    }
    for (let i = 0; i < 8; i += 1) {
      s[i] ^= s[i + 8];
      s[i + 8] ^= cv[i];
    }
    return s;
  }

  /** The 16 little-endian words of the block of `bytes` at `from` (zeros past its end). */
  function b3Words(bytes, from, length) {
    const words = new Uint32Array(16);
    for (let i = 0; i < length; i += 1) words[i >> 2] |= bytes[from + i] << (8 * (i & 3));
    return words;
  }

  /** A chunk's output: every block but the last compressed into its chaining value. */
  function b3Chunk(bytes, from, length, counter) {
    let cv = B3_IV;
    const blocks = Math.max(1, Math.ceil(length / B3_BLOCK));
    for (let b = 0; b < blocks - 1; b += 1) {
      const words = b3Words(bytes, from + b * B3_BLOCK, B3_BLOCK);
      cv = b3Compress(cv, words, counter, B3_BLOCK, b === 0 ? B3_CHUNK_START : 0).slice(0, 8);
    }
    const last = length - (blocks - 1) * B3_BLOCK;
    return {
      cv,
      words: b3Words(bytes, from + (blocks - 1) * B3_BLOCK, last),
      counter,
      length: last,
      flags: (blocks === 1 ? B3_CHUNK_START : 0) | B3_CHUNK_END,
    };
  }

  const b3Chaining = (o) => b3Compress(o.cv, o.words, o.counter, o.length, o.flags).slice(0, 8);
  const b3Parent = (left, right) => ({ cv: B3_IV, words: [...left, ...right], counter: 0, length: B3_BLOCK, flags: B3_PARENT });

  /** The 32-byte BLAKE3 hash of `bytes`, in lowercase hex. */
  function blake3Hex(bytes) {
    const chunks = Math.max(1, Math.ceil(bytes.length / B3_CHUNK));
    const stack = [];
    let out = null;
    for (let c = 0; c < chunks; c += 1) {
      const from = c * B3_CHUNK;
      out = b3Chunk(bytes, from, Math.min(B3_CHUNK, bytes.length - from), c);
      if (c === chunks - 1) break;
      // A finished chunk joins the tree: each pair of subtrees of one size becomes a parent.
      let cv = b3Chaining(out);
      for (let total = c + 1; (total & 1) === 0; total >>= 1) cv = b3Chaining(b3Parent(stack.pop(), cv));
      stack.push(cv);
    }
    while (stack.length) out = b3Parent(stack.pop(), b3Chaining(out));
    const root = b3Compress(out.cv, out.words, 0, out.length, out.flags | B3_ROOT);
    const bytesOut = new Uint8Array(32);
    for (let i = 0; i < 32; i += 1) bytesOut[i] = root[i >> 2] >>> (8 * (i & 3));
    return hexOf(bytesOut);
  }
  window.aslBlake3 = (text) => blake3Hex(new TextEncoder().encode(text));

  function exportReport(refused, text) {
    const box = el("export-report");
    box.classList.toggle("refused", refused);
    setRich(box, text);
  }

  function drawExport() {
    const over = Boolean(page.live && page.live.over);
    el("export").hidden = Boolean(page.review) || !page.game;
    el("export-save").disabled = !over || !page.joined || page.exporting !== null;
    if (!over && !el("export-report").textContent) {
      el("export-save").title = "The log is exported once the game is over";
    } else {
      el("export-save").removeAttribute("title");
    }
  }

  function startExport() {
    if (page.exporting || !page.joined) return;
    page.exporting = { header: null, lines: [], bytes: 0 };
    exportReport(false, "Reading the log…");
    drawExport();
    send({ get_export: { from: 1 } });
  }

  function exportFailed(text) {
    page.exporting = null;
    exportReport(true, `Not saved: ${text}.`);
    drawExport();
  }

  /** One page of the log: held to the count the first page said, then the next asked for. */
  function exportPage(p) {
    const x = page.exporting;
    if (!x) return;
    const from = x.lines.length + 1;
    const envelopes = Array.isArray(p.envelopes) ? p.envelopes : [];
    if (p.from !== from || !envelopes.length) {
      exportFailed(`asked for the log from envelope ${from}, got ${envelopes.length} from ${p.from}`);
      return;
    }
    if (!(p.version <= EXPORT_EVENTS_MAX)) {
      exportFailed(`the server claims ${p.version} events, over the ${EXPORT_EVENTS_MAX} an export may hold`);
      return;
    }
    if (!x.header) x.header = p;
    if (p.version !== x.header.version) {
      exportFailed(`the server said the log holds ${x.header.version} events, then ${p.version}`);
      return;
    }
    if (x.lines.length + envelopes.length > x.header.version) {
      exportFailed(`the server sent envelopes past the ${x.header.version} it says the log holds`);
      return;
    }
    for (const envelope of envelopes) {
      if (typeof envelope !== "string" || !/^[0-9a-f]*$/.test(envelope)) {
        exportFailed("the server sent an envelope that is not lowercase hex");
        return;
      }
      x.bytes += envelope.length + 1;
      if (x.bytes > EXPORT_BYTES_MAX) {
        exportFailed(`the export would pass ${EXPORT_BYTES_MAX} bytes; reading stopped there`);
        return;
      }
      x.lines.push(envelope);
    }
    if (x.lines.length < x.header.version) {
      send({ get_export: { from: x.lines.length + 1 } });
      return;
    }
    page.exporting = null;
    saveExport(renderExport(x.header, x.lines));
  }

  /** The export file, as `record::export::render` writes it. */
  function renderExport(h, lines) {
    const signed = h.signed;
    let text = `asl-game-log ${signed ? 2 : 1}\ngame ${h.game}\nevents ${h.version}\n` +
      `head ${hexOf(h.head)}\nstate ${hexOf(h.state_hash)}\n`;
    if (signed) text += `signer ${hexOf(signed.signer)}\nsignature ${hexOf(signed.signature)}\n`;
    text += lines.map((l) => `${l}\n`).join("");
    return `${text}checksum ${window.aslBlake3(text)}\n`;
  }

  /** Offers the file to the browser to save, and keeps a link to save it again. */
  function saveExport(text) {
    page.exported = text;
    const link = el("export-link");
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    link.download = `${page.game}.log`;
    link.hidden = false;
    exportReport(false, `Saved \`${page.game}.log\`: the whole log, ready for \`asl verify\` and \`asl replay\`.`);
    link.click();
    drawExport();
  }

  // ---- Turn notices -----------------------------------------------------------------------
  // What `asl notify` does (docs/notifications.md): a seat registers where the server tells it
  // that the game waits on it — a webhook, or an e-mail address once its mailed code is given
  // back — or removes them all. The server answers with the seat's targets (and a webhook's
  // signing secret, that once); the page shows what it said and decides nothing.

  /** The errors a `notify` may be answered with while the page is joined: the form's, not the
   * connection's, so they are shown there and the game goes on. */
  const NOTIFY_REFUSALS = ["bad_notify_target", "not_yet", "read_only", "bad_token"];
  /** What the value field holds, per kind of target. */
  const NOTIFY_FIELDS = {
    email: { what: "Address", placeholder: "you@example.org", key: "address" },
    confirm: { what: "Code", placeholder: "K7QD-M2XA", key: "code" },
    webhook: { what: "URL", placeholder: "an http or https URL", key: "url" },
    off: null,
  };

  function drawNotifyForm() {
    const field = NOTIFY_FIELDS[el("notify-kind").value];
    el("notify-what").textContent = field ? field.what : "Nothing to give";
    el("notify-value").disabled = !field;
    el("notify-value").placeholder = field ? field.placeholder : "";
  }

  function notifyReport(refused, ...nodes) {
    const box = el("notify-report");
    box.classList.toggle("refused", refused);
    box.replaceChildren(...nodes);
  }

  /** Sends the form's target as `notify`, with this page's own game and token. */
  function registerNotice() {
    const kind = el("notify-kind").value;
    const field = NOTIFY_FIELDS[kind];
    const value = el("notify-value").value.trim();
    if (field && !value) {
      notifyReport(true, `Give the ${field.what.toLowerCase()} first.`);
      el("notify-value").focus();
      return;
    }
    if (page.notifyAsked) {
      notifyReport(true, "Still waiting for the server's answer to the last registration.");
      return;
    }
    if (!page.joined) {
      notifyReport(true, "Not connected to the game: register once the page is live again.");
      return;
    }
    const target = field ? { [kind]: { [field.key]: value } } : "off";
    page.notifyAsked = kind;
    notifyReport(false, "Asking the server…");
    send({ notify: { game: page.game, token: page.token, target } });
  }

  /** The server's answer: the seat's targets now, and a new webhook secret once. */
  function notified(answer) {
    const asked = page.notifyAsked;
    page.notifyAsked = null;
    const nodes = [];
    const line = (text) => {
      const p = document.createElement("div");
      p.textContent = text;
      nodes.push(p);
      return p;
    };
    const targets = Array.isArray(answer.targets) ? answer.targets : [];
    if (targets.length) {
      line("Notices for your side go to:");
      const list = document.createElement("ul");
      list.id = "notify-targets";
      for (const t of targets) {
        const li = document.createElement("li");
        li.textContent = String(t);
        list.append(li);
      }
      nodes.push(list);
    } else {
      line("No notices for your side.");
    }
    if (answer.secret) {
      const p = line("Webhook secret, shown this once — keep it: each notice's body is signed with it " +
        "(header X-ASL-Signature: sha256=HMAC-SHA256(secret, body)): ");
      const code = document.createElement("code");
      code.id = "notify-secret";
      code.textContent = String(answer.secret);
      p.append(code);
    }
    if (asked === "email") {
      // The address waits for its code: the form asks for it next.
      line("A code was e-mailed to that address: give it here to start its notices.");
      el("notify-kind").value = "confirm";
      drawNotifyForm();
      el("notify-value").focus({ preventScroll: true });
    }
    if (asked !== "off") el("notify-value").value = "";
    notifyReport(false, ...nodes);
  }

  function notifyRefused(text, code) {
    page.notifyAsked = null;
    const p = document.createElement("div");
    setRich(p, `Not registered: ${text} (${code}).`);
    notifyReport(true, p);
  }

  /** Asks to take back every event after the moment the record shows: the undo from the next
   * event on, whichever page or client sent the commands. */
  function undoTo() {
    if (page.viewing === null || page.side === null) return;
    const from = page.viewing + 1;
    propose({ request_undo: { from } }, `Ask your opponent to take back events #${from}–#${page.version}`);
  }

  function wirePlay() {
    el("export-save").addEventListener("click", startExport);
    el("undo-to").addEventListener("click", undoTo);
    el("notify-kind").addEventListener("change", drawNotifyForm);
    drawNotifyForm();
    el("notify-form").addEventListener("submit", (e) => {
      e.preventDefault();
      registerNotice();
    });
    for (const b of document.querySelectorAll("#actions button, #game-actions button")) {
      b.addEventListener("click", () => act(b.dataset.action));
    }
    el("confirm").addEventListener("click", confirmProposal);
    el("proposal-sewer").addEventListener("click", aimIntoSewer);
    el("cancel").addEventListener("click", () => {
      cancel();
      drawPlay();
    });
    el("hex-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const name = el("hex-input").value.trim().toUpperCase();
      el("hex-input").value = "";
      el("hex-form").hidden = true;
      if (page.geometry && page.geometry.centres.has(name)) hexClicked(name);
      else say(`No hex ${name} on this map.`);
    });
    el("adjudicate-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const unit = el("adjudicate-unit").value.trim();
      const chosen = el("adjudicate-outcome").value;
      const note = el("adjudicate-note").value;
      // A counter the engine does not rule on is moved to a hex: `{relocate: "3B4"}`.
      const to = el("adjudicate-to").value.trim();
      if (chosen === "relocate" && !to) {
        say("Say the hex the counter goes to.");
        el("adjudicate-to").focus();
        return;
      }
      const outcome = chosen === "relocate" ? { relocate: to } : chosen;
      // Citing a roll of the record, the referee checks it and names it in the note.
      const roll = el("adjudicate-roll").value;
      const command = roll
        ? { adjudicate_after_roll: { unit, outcome, roll: Number(roll), note } }
        : { adjudicate: { unit, outcome, note } };
      // Enter in a field of the form sends what was previewed, as the Send button says.
      if (sameProposal(command)) {
        confirmProposal();
        return;
      }
      propose(command, `Adjudicate ${unit}: ${outcomeText(outcome)}${roll ? ` after #${roll}` : ""}`);
    });
    el("dispute-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const event = Number(el("dispute-event").value);
      const reason = el("dispute-reason").value.trim();
      if (!event) return;
      if (!reason) {
        say(`Say why you dispute #${event}.`);
        el("dispute-reason").focus();
        return;
      }
      const command = { dispute_adjudication: { event, reason } };
      if (sameProposal(command)) {
        confirmProposal();
        return;
      }
      propose(command, `Dispute #${event}: ${reason}`);
    });
    el("more-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const which = el("more-command").value;
      const units = el("more-units").value.split(/[\s,]+/).filter(Boolean);
      const hex = el("more-hex").value.trim();
      const need = (what, ok) => {
        if (!ok) say(`Give ${what} for this command.`);
        return ok;
      };
      let command = null;
      let label = "";
      switch (which) {
        case "place_hidden":
          // As `place UNIT` in a script: on board at will, no WA claimed (the prompt's answers
          // claim it at the moments B9.322 and B9.324 give).
          if (!need("the hidden unit", units.length === 1)) return;
          command = { place_hidden: { unit: units[0], claim_wall_advantage: false } };
          label = `Place ${units[0]} on board (A12.3)`;
          break;
        case "lift_set_up":
          if (!need("the unit", units.length === 1)) return;
          command = { lift_set_up: { unit: units[0] } };
          label = `Take back ${units[0]}`;
          break;
        case "attack_into_sewer":
          if (!need("the firers and the hex", units.length > 0 && hex)) return;
          command = { declare_attack: { firers: units, target: hex, into_sewer: true } };
          label = `Attack the sewer beneath ${hex} with ${units.join(" ")}`;
          break;
        case "declare_manhole_unseen":
          if (!need("the hex", hex)) return;
          command = { declare_manhole_unseen: { hex } };
          label = `Manhole ${hex} out of enemy LOS`;
          break;
        case "claim_tunnel_seen":
          if (!need("the unit and the entrance's hex", units.length === 1 && hex)) return;
          command = { claim_tunnel_seen: { unit: units[0], entrance: hex } };
          label = `${units[0]} saw the tunnel at ${hex} used`;
          break;
        case "discover_tunnel":
          if (!need("the unit", units.length === 1)) return;
          command = { discover_tunnel: { unit: units[0] } };
          label = `${units[0]} searches for a tunnel entrance`;
          break;
        case "destroy_tunnel":
          if (!need("the entrance's hex", hex)) return;
          command = { destroy_tunnel: { entrance: hex } };
          label = `Destroy the tunnel entrance at ${hex}`;
          break;
        case "start_vacation":
        case "end_vacation":
        case "agree_to_reveal_seed":
          command = which;
          label = words(which);
          break;
        case "contribute_entropy": {
          // A nonce of the player's own browser: the server cannot choose it (docs/dice.md).
          const nonce = Array.from(crypto.getRandomValues(new Uint8Array(32)));
          command = { contribute_entropy: { nonce } };
          label = "Contribute entropy to the dice";
          break;
        }
        default:
          return;
      }
      if (sameProposal(command)) {
        confirmProposal();
        return;
      }
      propose(command, label);
    });
    el("cc-hex").addEventListener("change", () => {
      if (liveState()) startCc(liveState(), el("cc-hex").value);
    });
    el("cc-add").addEventListener("click", () => {
      if (!page.cc || !liveState()) return;
      page.cc.rows.push({ attackers: new Set(), defenders: new Set() });
      drawCc(liveState());
    });
    const proposeCc = (none) => {
      if (!page.cc) return;
      const command = ccCommand(none);
      if (!none && !command.close_combat.attacks.length && !(command.close_combat.withdrawals || []).length) {
        say("Tick your attackers and the units they attack, or choose No attacks here (A11.12).");
        return;
      }
      if (sameProposal(command)) {
        confirmProposal();
        return;
      }
      propose(command, ccLabel(command));
    };
    el("cc-form").addEventListener("submit", (e) => {
      e.preventDefault();
      proposeCc(false);
    });
    el("cc-none").addEventListener("click", () => proposeCc(true));
    el("rally-unit").addEventListener("change", () => {
      if (liveState()) fillRallyLeaders(liveState());
    });
    el("rally-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const unit = el("rally-unit").value;
      const morale = Number(el("rally-morale").value);
      if (!unit) return;
      if (!Number.isInteger(morale) || morale < 1 || morale > 10) {
        say("Give the morale printed on the unit's broken side: a whole number from 1 to 10 (A10.6).");
        el("rally-morale").focus();
        return;
      }
      const leader = el("rally-leader").value || null;
      // Desperation Morale is the unit's own state, tracked by the referee (A10.62).
      const command = { rally: { unit, broken_morale: morale, leader, desperation: false } };
      if (sameProposal(command)) {
        el("rally-form").hidden = true;
        confirmProposal();
        return;
      }
      const live = liveState();
      const dm = Boolean(live && live.units[unit] && live.units[unit].desperation);
      propose(command, `Rally ${unit} (broken morale ${morale})${leader ? ` led by ${leader}` : ", self-rally"}${dm ? " under Desperation Morale (+4, A10.62)" : ""}`);
    });
    el("give-time-form").addEventListener("submit", (e) => {
      e.preventDefault();
      giveTime();
    });
    el("roll-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const dice = el("roll-dice").value;
      const purpose = el("roll-purpose").value;
      const note = el("roll-note").value;
      const command = { roll: { dice, purpose, note } };
      if (sameProposal(command)) {
        confirmProposal();
        return;
      }
      propose(command, `Roll ${dice} for ${words(purpose)}`);
    });
    document.addEventListener("keydown", (e) => {
      if (page.side === null || e.altKey || e.ctrlKey || e.metaKey) return;
      const typing = e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName);
      if (e.key === "Escape") {
        if (typing) e.target.blur();
        act("clear");
        return;
      }
      if (typing) return;
      // Enter sends the previewed command, also from Send itself (which has the focus then).
      const onButton = e.target && e.target.tagName === "BUTTON";
      if (e.key === "Enter" && page.proposal && (!onButton || e.target === el("confirm"))) {
        e.preventDefault();
        confirmProposal();
        return;
      }
      // Another focused button takes Enter and Space itself (picking a counter, an answer).
      if (onButton && (e.key === "Enter" || e.key === " ")) return;
      if (/^[1-9]$/.test(e.key)) {
        const b = document.querySelector(`#prompt button[data-key="${e.key}"]`);
        if (b) {
          e.preventDefault();
          b.click();
        }
        return;
      }
      const key = e.key.toLowerCase();
      if (key === "a" || key === "r") {
        e.preventDefault();
        el("forms").open = true;
        el(key === "a" ? "adjudicate-unit" : "roll-dice").focus();
        return;
      }
      const b = document.querySelector(`#actions button[data-key="${key}"], #game-actions button[data-key="${key}"]`);
      if (b) {
        e.preventDefault();
        act(b.dataset.action);
      }
    });
  }

  // ---- Replay controls -------------------------------------------------------------------

  // ---- Zoom and pan -------------------------------------------------------------------------
  // The board is drawn at its fitted size times `page.zoom` (watch.css) inside a frame that
  // scrolls: zooming keeps the point under the pointer (or the frame's middle) where it was, and
  // panning scrolls the frame. + / − / 0 zoom and Shift + the arrows pan, from anywhere (the
  // arrows alone step through the record). The mouse wheel zooms about the pointer and a drag
  // pans; a touch screen pinches and scrolls as it always does.

  /** The zoom at which the whole map fits its frame (the frame's height as watch.css caps
   * it), or 1 when it fits already. */
  function zoomToFit() {
    const first = el("board").getBoundingClientRect();
    const width = first.width / page.zoom;
    const height = first.height / page.zoom;
    if (!width || !height) return 1;
    const frame = el("board-scroll");
    return Math.min(1, frame.clientWidth / width, (window.innerHeight * 0.76) / height);
  }

  function setZoom(zoom, anchor) {
    const z = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, zoomToFit(), zoom));
    const board = el("board");
    const frame = el("board-scroll");
    if (Math.abs(z - page.zoom) > 1e-9) {
      const before = board.getBoundingClientRect();
      const box = frame.getBoundingClientRect();
      const at = anchor || { x: box.left + frame.clientWidth / 2, y: box.top + frame.clientHeight / 2 };
      const fx = (at.x - before.left) / before.width;
      const fy = (at.y - before.top) / before.height;
      page.zoom = z;
      board.style.setProperty("--zoom", String(z));
      const after = board.getBoundingClientRect();
      frame.scrollLeft += after.left + fx * after.width - at.x;
      frame.scrollTop += after.top + fy * after.height - at.y;
    }
    el("zoom-level").textContent = `${Math.round(page.zoom * 100)}%`;
  }

  function pan(dx, dy) {
    el("board-scroll").scrollBy(dx, dy);
  }

  /** Zoom and pan keys: true when `e` was one (and is handled). */
  function zoomKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return false;
    const zooms = { "+": ZOOM_STEP, "=": ZOOM_STEP, "-": 1 / ZOOM_STEP, _: 1 / ZOOM_STEP };
    if (zooms[e.key]) {
      setZoom(page.zoom * zooms[e.key]);
    } else if (e.key === "0") {
      setZoom(1);
    } else if (e.key === "g" || e.key === "G") {
      setZoom(ZOOM_MIN);
    } else {
      const pans = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
      // With Shift: the arrows alone step through the record.
      if (!pans[e.key] || !e.shiftKey) return false;
      pan(pans[e.key][0] * PAN_STEP_PX, pans[e.key][1] * PAN_STEP_PX);
    }
    e.preventDefault();
    return true;
  }

  function wireZoom() {
    const frame = el("board-scroll");
    el("zoom-in").addEventListener("click", () => setZoom(page.zoom * ZOOM_STEP));
    el("zoom-out").addEventListener("click", () => setZoom(page.zoom / ZOOM_STEP));
    el("zoom-fit").addEventListener("click", () => setZoom(1));
    // As small as the whole map fits its frame: on a phone, the map as wide as the screen.
    el("zoom-whole").addEventListener("click", () => setZoom(ZOOM_MIN));
    frame.addEventListener("wheel", (e) => {
      if (e.ctrlKey || e.deltaY === 0) return; // a pinch on a trackpad: the browser's own zoom
      e.preventDefault();
      // A mouse's notch is 100 pixels (3 lines): one ZOOM_STEP; a trackpad's small deltas
      // zoom smoothly in proportion.
      const notches = e.deltaMode === 1 ? e.deltaY / 3 : e.deltaY / 100;
      setZoom(page.zoom * ZOOM_STEP ** -notches, { x: e.clientX, y: e.clientY });
    }, { passive: false });
    let drag = null;
    let dragged = false;
    frame.addEventListener("pointerdown", (e) => {
      dragged = false;
      if (e.button !== 0 || e.pointerType === "touch") return;
      drag = { id: e.pointerId, x: e.clientX, y: e.clientY, left: frame.scrollLeft, top: frame.scrollTop, moved: false };
    });
    frame.addEventListener("pointermove", (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved) {
        if (Math.hypot(dx, dy) < DRAG_SLOP_PX) return;
        drag.moved = true;
        try {
          frame.setPointerCapture(e.pointerId); // keeps the drag when the pointer leaves the map
        } catch {
          // A pointer the browser no longer tracks: the drag goes on while it stays over the map.
        }
        frame.classList.add("panning");
      }
      frame.scrollLeft = drag.left - dx;
      frame.scrollTop = drag.top - dy;
    });
    const release = (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      dragged = drag.moved;
      frame.classList.remove("panning");
      drag = null;
    };
    frame.addEventListener("pointerup", release);
    frame.addEventListener("pointercancel", release);
    // A drag is not a click: the hex it ended on is neither picked nor moved to.
    frame.addEventListener("click", (e) => {
      if (!dragged) return;
      dragged = false;
      e.stopPropagation();
      e.preventDefault();
    }, true);
    setZoom(1);
  }

  function viewAt(version) {
    const v = Math.round(version);
    page.viewing = v >= page.version ? null : Math.max(1, v);
    drawControls();
    refresh();
    if (page.viewing === null && page.live) show(page.live);
  }

  function step(by) {
    const from = page.viewing === null ? page.version : page.viewing;
    viewAt(from + by);
  }

  function wireControls() {
    el("scrub").addEventListener("input", (e) => viewAt(Number(e.target.value)));
    el("first").addEventListener("click", () => viewAt(1));
    el("prev").addEventListener("click", () => step(-1));
    el("next").addEventListener("click", () => step(1));
    el("live").addEventListener("click", () => viewAt(page.version));
    el("events").addEventListener("click", (e) => {
      const li = e.target.closest("li[data-seq]");
      if (li) viewAt(Number(li.dataset.seq));
    });
    document.addEventListener("keydown", (e) => {
      if (e.target && e.target.id === "scrub") return; // the slider handles its own keys
      if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return;
      if (!e.altKey && !e.ctrlKey && !e.metaKey && (e.key === "l" || e.key === "L")) {
        e.preventDefault();
        setLosMode(!page.losMode);
        return;
      }
      if (e.key === "Escape" && page.losMode && page.side === null) {
        setLosMode(false);
        return;
      }
      if (zoomKey(e)) return;
      const keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), Home: () => viewAt(1), End: () => viewAt(page.version) };
      if (keys[e.key] && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        keys[e.key]();
      }
    });
  }

  /** The receipts this browser kept for `game`, one per seat it played or watched from
   * (`keepReceipt`), at most as many as a review checks. */
  function receiptsKeptFor(game) {
    const found = [];
    try {
      for (let i = 0; i < localStorage.length && found.length < REVIEW_RECEIPTS_MAX; i += 1) {
        const key = localStorage.key(i);
        if (!key || !key.startsWith(`asl-receipt:${game}:`)) continue;
        const text = localStorage.getItem(key);
        if (!text || text.length > RECEIPT_CHARS_MAX) continue;
        const receipt = JSON.parse(text);
        if (receipt && receipt.game === game && Number.isInteger(receipt.version)) found.push(receipt);
      }
    } catch {
      // Storage off, or not a receipt: checked with those read so far.
    }
    return found;
  }

  /** What `asl verify --server-key KEY --receipts` checks, asked of the review: the key the
   * player trusts, typed in, and the receipts this browser kept for the file's game, which
   * the server checks against the file by the CLI's own functions (the signatures are
   * checked there, not here). Without a key, the file is checked under this server's key. */
  function reviewChecks(text) {
    const key = el("review-key").value.trim();
    if (!key) return { checks: {}, note: "" };
    if (!el("review-receipts").checked) return { checks: { server_key: key }, note: "" };
    const m = /^game ([0-9a-z]+)$/m.exec(text.slice(0, 4096));
    const receipts = m ? receiptsKeptFor(m[1]) : [];
    const note = receipts.length
      ? ""
      : `This browser kept no receipt for ${m ? `game ${m[1]}` : "this file's game"}: only the key was checked.\n`;
    return { checks: { server_key: key, receipts }, note };
  }

  /** Leaves the game (if any) and opens `text`, an export file, for review on a new connection. */
  function startReview(text) {
    const { checks, note } = reviewChecks(text);
    page.reviewNote = note;
    const frame = JSON.stringify({ review: { export: text, ...checks } });
    if (new Blob([frame]).size > FRAME_BYTES_MAX) {
      status(`This export is over the ${FRAME_BYTES_MAX}-byte frame limit: check it with \`asl verify\` and replay it with \`asl replay\`.`, true);
      return;
    }
    const old = page.ws;
    page.ws = null;
    if (old) old.close();
    clearTimeout(page.reconnectTimer);
    Object.assign(page, {
      review: frame,
      version: 0,
      entries: [],
      live: null,
      shown: null,
      viewing: null,
      mapKey: null,
      fatal: false,
      resumeRefused: false,
    /** The server refused the receipt this browser kept (`bad_receipt`): join without it. */
    receiptRefused: false,
      connections: 0,
      side: null,
      stackHex: null,
      proposal: null,
      openedAt: null,
      lastCommandFrom: null,
    });
    page.selected.clear();
    el("play").hidden = true;
    el("events").replaceChildren();
    delete el("events").dataset.lastWhen;
    el("review-report").textContent = "";
    status("Verifying the export…");
    connect();
  }

  function start() {
    el("los-mode").addEventListener("click", () => setLosMode(!page.losMode));
    wireControls();
    wireZoom();
    wirePlay();
    // A narrower window rewraps the list: keep the latest event (or the replayed one) in view.
    window.addEventListener("resize", markList);
    el("new-create").addEventListener("click", createGame);
    el("export-file").addEventListener("change", async (e) => {
      const file = e.target.files[0];
      if (file) startReview(await file.text());
    });
    const params = new URLSearchParams(location.hash.slice(1));
    page.game = params.get("game");
    page.token = params.get("token");
    if (!page.game || !page.token) {
      status("Open the watch link `asl new` printed, start a new game, or review an exported game log below.");
      el("review").open = true;
      el("new-game").hidden = false;
      return;
    }
    connect();
  }

  start();
})();
