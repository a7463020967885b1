// The spectator page: joins a game's websocket with the spectator token, draws the position
// the server projects for spectators, lists the game record in words, and replays any earlier
// position. It holds no rules: what a position is and what an event means come from the server
// (`get_state`, `get_state_at`, `get_record`), so the page can never disagree with the engine.
// The same reads serve an export file opened for review (`review`), which the server verifies.
// `STEPS` (the sequence of play) and `FRAME_BYTES_MAX` are prepended by the server from the
// engine's own tables.
"use strict";

(() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  /** Frames kept for inspection (`window.aslWatch.frames`): a whole evening's game, bounded. */
  const FRAMES_KEPT_MAX = 5000;
  /** Reconnection waits, doubling from the first to the last after each failed attempt. */
  const RECONNECT_DELAY_MIN_MS = 250;
  const RECONNECT_DELAY_MAX_MS = 8000;
  /** Centre-to-corner size of a hex, in board units. */
  const HEX = 30;
  const SQRT3 = Math.sqrt(3);
  /** Side length of a counter, in board units, and how far each one in a stack is offset. */
  const COUNTER = 24;
  const STACK_OFFSET = 6;
  /** Space between boards drawn side by side, in board units. */
  const BOARD_GAP = 2 * HEX;

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

  const page = {
    game: null,
    token: null,
    /** The `review` frame (an export file) when reviewing instead of watching a game. */
    review: null,
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
    reconnectDelay: RECONNECT_DELAY_MIN_MS,
    /** The pending reconnection, cancelled when the page switches to reviewing a file. */
    reconnectTimer: null,
    /** Join from scratch next time: a resume was refused (too far behind). */
    resumeRefused: false,
    /** Stop reconnecting: the server said the game or the token is wrong. */
    fatal: false,
    frames: [],
    connections: 0,
  };
  window.aslWatch = page;

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

  function corners(c, size) {
    const points = [];
    for (let i = 0; i < 6; i++) {
      const a = (Math.PI / 3) * i;
      points.push(`${(c.x + size * Math.cos(a)).toFixed(2)},${(c.y + size * Math.sin(a)).toFixed(2)}`);
    }
    return points.join(" ");
  }

  /** Lays the scenario's boards out side by side; returns centres by hex name and the box. */
  function layOut(scenario) {
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
    return { centres, box: { x: -HEX, y: minY - HEX, width, height: maxY - minY + 2 * HEX } };
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
      item.textContent = r;
      list.append(item);
    }
    info.append(list);
  }

  /** Terrain, hexsides, roads and Manholes: drawn once, since the map never changes. */
  function drawMap(scenario) {
    const board = el("board");
    board.replaceChildren();
    const geometry = layOut(scenario);
    page.geometry = geometry;
    const { box } = geometry;
    board.setAttribute("viewBox", `${box.x} ${box.y} ${box.width} ${box.height}`);
    const terrain = svg("g", { id: "terrain" }, board);
    for (const [name, spec] of Object.entries(scenario.hexes)) {
      const c = geometry.centres.get(name);
      if (!c) continue;
      const g = svg("g", { class: "hex-cell", "data-hex": name }, terrain);
      const shape = svg(
        "polygon",
        {
          class: `hex terrain-${spec.terrain}`,
          points: corners(c, HEX),
          fill: TERRAIN_COLOURS[spec.terrain] || "#ddd",
          "data-hex": name,
        },
        g,
      );
      svg("title", {}, shape).textContent = describeHex(name, spec);
      if (BUILDING_COLOURS[spec.terrain]) {
        const s = HEX * 0.9;
        svg("rect", {
          class: "building",
          x: c.x - s / 2,
          y: c.y - s / 2,
          width: s,
          height: s,
          fill: BUILDING_COLOURS[spec.terrain],
        }, g);
      }
      const label = parseHex(name);
      svg("text", { class: "hex-label", x: c.x, y: c.y - HEX * 0.62 }, g).textContent =
        name.slice(label.board.length);
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
        losClick(name);
      });
    }
    drawRoads(scenario, geometry, svg("g", { id: "roads" }, board));
    drawHexsides(scenario, geometry, svg("g", { id: "hexsides" }, board));
    const manholes = svg("g", { id: "manholes" }, board);
    for (const [name, spec] of Object.entries(scenario.hexes)) {
      const c = geometry.centres.get(name);
      if (!c || !spec.manhole) continue;
      const g = svg("g", { class: "manhole", "data-hex": name }, manholes);
      svg("circle", { cx: c.x - HEX * 0.45, cy: c.y + HEX * 0.5, r: 5 }, g);
      svg("text", { x: c.x - HEX * 0.45, y: c.y + HEX * 0.5 + 2 }, g).textContent = "M";
      svg("title", {}, g).textContent = `Manhole in ${name} (B8.1)`;
    }
    svg("g", { id: "units" }, board);
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
          svg("line", { class: `road ${spec.road}`, x1: a.x, y1: a.y, x2: b.x, y2: b.y }, layer);
        }
      }
      if (!linked && a) svg("circle", { class: `road ${spec.road}`, cx: a.x, cy: a.y, r: 2 }, layer);
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

  /** One counter: side colour and ratings, or "?" for a concealed unit. */
  function drawCounter(layer, state, unit, x, y, moving) {
    const classes = ["counter", sideClass(state, unit.side)];
    if (unit.morale === "broken") classes.push("broken");
    if (moving) classes.push("moving");
    if (unit.concealed) classes.push("concealed");
    const g = svg("g", { class: classes.join(" "), "data-unit": unit.id, "data-hex": unit.hex }, layer);
    svg("rect", { x, y, width: COUNTER, height: COUNTER, rx: 2 }, g);
    const cx = x + COUNTER / 2;
    const title = svg("title", {}, g);
    if (unit.concealed) {
      svg("text", { class: "concealed-mark", x: cx, y: y + COUNTER * 0.7 }, g).textContent = "?";
      title.textContent = `${sideName(state, unit.side)} concealed unit in ${unit.hex}`;
      return;
    }
    svg("text", { class: "unit-id", x: cx, y: y + 7 }, g).textContent = unit.id;
    svg("text", { class: "ratings", x: cx, y: y + 15 }, g).textContent = unit.ratings;
    const flags = [];
    if (unit.morale === "broken") flags.push("BRK");
    if (unit.morale === "berserk") flags.push("BSK");
    if (unit.pinned) flags.push("PIN");
    if (unit.cx) flags.push("CX");
    if (unit.hidden) flags.push("HIP"); // only ever in a review: an export holds everything
    if (flags.length) {
      svg("text", { class: "state", x: cx, y: y + 22 }, g).textContent = flags.join(" ");
    }
    title.textContent = `${sideName(state, unit.side)} ${words(unit.kind)} ${unit.id} ${unit.ratings} in ${unit.hex}` +
      (flags.length ? ` (${flags.join(", ")})` : "");
  }

  function drawMarker(layer, kind, label, hex, x, y, width, title) {
    const g = svg("g", { class: `marker ${kind}`, "data-hex": hex }, layer);
    svg("rect", { x, y, width, height: 9, rx: 2 }, g);
    svg("text", { x: x + width / 2, y: y + 6.6 }, g).textContent = label;
    svg("title", {}, g).textContent = title;
    return g;
  }

  /** The counters of a position: stacks per hex, "Sewer?" over units below ground, WA on top. */
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
    for (const [hex, units] of byHex) {
      const c = page.geometry.centres.get(hex);
      if (!c) continue;
      const above = units.filter((u) => !u.underground);
      const below = units.filter((u) => u.underground);
      const pieces = above.length + (below.length ? 1 : 0);
      let x = c.x - COUNTER / 2 - ((pieces - 1) * STACK_OFFSET) / 2;
      let y = c.y - COUNTER / 2 + ((pieces - 1) * STACK_OFFSET) / 2;
      if (below.length) {
        // Units below ground show only as "Sewer?", whoever they are (B8.2).
        const sides = [...new Set(below.map((u) => sideName(state, u.side)))].join("/");
        const g = svg("g", { class: "marker sewer", "data-hex": hex }, layer);
        svg("rect", { x, y, width: COUNTER, height: COUNTER, rx: 2 }, g);
        svg("text", { x: x + COUNTER / 2, y: y + COUNTER * 0.6 }, g).textContent = "Sewer?";
        svg("title", {}, g).textContent = `${sides} unit(s) beneath ${hex} in a sewer or tunnel (B8)`;
        x += STACK_OFFSET;
        y -= STACK_OFFSET;
      }
      for (const unit of above) {
        drawCounter(layer, state, unit, x, y, moving.has(unit.id));
        x += STACK_OFFSET;
        y -= STACK_OFFSET;
      }
      const holders = above.filter((u) => u.wall_advantage);
      if (holders.length) {
        // On top of the stack as on the board, but small, so the top counter stays legible.
        const names = holders.map((u) => (u.concealed ? "?" : u.id)).join(", ");
        drawMarker(layer, "wall-advantage", "WA", hex, x + COUNTER * 0.45, y - 4, COUNTER * 0.6,
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
    const acting = step.attacker_acts ? attacker : other(attacker);
    el("scenario").textContent = state.scenario.name;
    el("turn").textContent = `Game Turn ${state.clock.turn} of ${state.scenario.turns}`;
    el("player-turn").textContent = `${sideName(state, attacker)} Player Turn`;
    el("phase").textContent = step.name === step.phase ? step.phase : `${step.phase}: ${step.name}`;
    el("phase").title = `${step.name} (${step.rule})`;
    el("attacker").textContent = `ATTACKER: ${sideName(state, attacker)}`;
    el("acting").textContent = state.over ? "Game over" : `${sideName(state, acting)} to act`;
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
    box.textContent = `Moving (A4.1): ${lines.join("; ")}`;
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
    text.textContent = entry.text;
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

  /** The dice as faces, each modifier with its reason, and the Final result. */
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
      drm.textContent = `${m.value > 0 ? "+" : ""}${m.value} ${m.reason}`;
      box.appendChild(drm);
    }
    const final = document.createElement("span");
    final.className = "final";
    final.textContent = `= ${roll.final_result} → ${roll.outcome}`;
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
    el("position").textContent = page.viewing === null
      ? `${page.review ? "End of the export" : "Live"}: event #${page.version}`
      : `Replay: position after event #${page.viewing} of ${page.version}` +
        (at !== page.viewing ? " (loading…)" : "");
  }

  function show(state) {
    const mapKey = JSON.stringify([state.scenario.hexes, state.scenario.hexsides]);
    if (mapKey !== page.mapKey) {
      drawMap(state.scenario);
      page.mapKey = mapKey;
    }
    page.shown = state;
    drawBanner(state);
    drawUnits(state);
    drawMoving(state);
    markList();
    drawControls();
  }

  // ---- Talking to the server ------------------------------------------------------------

  function status(text, problem) {
    const s = el("status");
    s.textContent = text;
    s.classList.toggle("problem", Boolean(problem));
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
    if (message.los) {
      drawThread(message.los);
    } else if (message.joined) {
      const joined = message.joined;
      page.joined = true;
      page.reconnectDelay = RECONNECT_DELAY_MIN_MS;
      page.resumeRefused = false;
      page.version = Math.max(page.version, joined.version);
      if (joined.state) {
        page.live = joined.state;
      }
      status(page.connections > 1 ? `Resumed at event #${joined.version}` : "Watching live");
    } else if (message.reviewing) {
      const reviewing = message.reviewing;
      page.joined = true;
      page.reconnectDelay = RECONNECT_DELAY_MIN_MS;
      page.version = reviewing.version;
      el("review-report").textContent = reviewing.report;
      status(`Reviewing game ${reviewing.game}: the export is valid, ${reviewing.version} events`);
    } else if (message.event) {
      page.version = Math.max(page.version, message.event.seq);
    } else if (message.record) {
      page.recordAsked = false;
      appendEntries(message.record.entries);
      page.version = Math.max(page.version, message.record.version);
      if (page.shown) drawMoving(page.shown);
      markList();
    } else if (message.state) {
      const asked = page.stateAsked;
      page.stateAsked = null;
      const state = message.state.state;
      if (!asked || asked.live) {
        page.live = state;
      } else if (page.viewing === asked.at) {
        show(state);
      }
    } else if (message.error) {
      const { code, message: text } = message.error;
      status(`${text} (${code})`, true);
      if (!page.joined && ["unknown_game", "bad_token", "bad_export"].includes(code)) {
        page.fatal = true;
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

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const ws = new WebSocket(`${scheme}${location.host}/v1`);
    page.ws = ws;
    page.joined = false;
    page.recordAsked = false;
    page.stateAsked = null;
    page.connections += 1;
    ws.onopen = () => {
      if (page.review) {
        ws.send(page.review);
        return;
      }
      // A resume asks only for what happened since the last event the page has heard of.
      const since = page.version > 0 && !page.resumeRefused ? page.version : null;
      if (since === null) page.live = null;
      ws.send(JSON.stringify({ join: { game: page.game, token: page.token, since } }));
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
      page.joined = false;
      if (page.fatal) return;
      const wait = page.reconnectDelay;
      page.reconnectDelay = Math.min(wait * 2, RECONNECT_DELAY_MAX_MS);
      status(`Connection lost${close.reason ? ` (${close.reason})` : ""}; reconnecting in ${(wait / 1000).toFixed(1)} s…`, true);
      page.reconnectTimer = setTimeout(connect, wait);
    };
  }

  // ---- Replay controls -------------------------------------------------------------------

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
      const keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), Home: () => viewAt(1), End: () => viewAt(page.version) };
      if (keys[e.key] && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        keys[e.key]();
      }
    });
  }

  /** Leaves the game (if any) and opens `text`, an export file, for review on a new connection. */
  function startReview(text) {
    const frame = JSON.stringify({ review: { export: text } });
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
      connections: 0,
    });
    el("events").replaceChildren();
    delete el("events").dataset.lastWhen;
    el("review-report").textContent = "";
    status("Verifying the export…");
    connect();
  }

  function start() {
    wireControls();
    // A narrower window rewraps the list: keep the latest event (or the replayed one) in view.
    window.addEventListener("resize", markList);
    el("export-file").addEventListener("change", async (e) => {
      const file = e.target.files[0];
      if (file) startReview(await file.text());
    });
    const params = new URLSearchParams(location.hash.slice(1));
    page.game = params.get("game");
    page.token = params.get("token");
    if (!page.game || !page.token) {
      status("Open the watch link `asl new` printed, or review an exported game log below.");
      el("review").open = true;
      return;
    }
    connect();
  }

  start();
})();
