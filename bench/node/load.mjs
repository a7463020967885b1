// One load generator, five targets, the same shape (issue 21): N matches at once, two seats
// per match alternating one cheap legal command, one command in flight per match. Latency is
// send → the opponent's receipt of what the command did; moves/s is all matches' moves over
// the run's wall time; the target's CPU per move is its process's CPU time over the run
// (/proc/PID/task/*/schedstat) ÷ moves, with the time it waited for a CPU beside it.
//
// Targets, each a child process started here on a free loopback port:
//   server  asl-server, durable (every event fdatasync'ed before it is acknowledged or sent
//           on), over its JSON text frames: the protocol the spectator page and `asl` speak.
//   relay   `asl-load relay-server`: a bare tokio-tungstenite relay that forwards each frame to
//           the other seat of its match. No rules, no storage, no encoding.
//   relay-node  the same relay in Node (`ws`, relay-server.mjs): what a bare relay costs when
//           it is written the way a Node deployment would write it.
//   bgio    boardgame.io 0.50.2's own Server (in-memory storage) with a one-move game, driven
//           by boardgame.io's own Client over its socket.io transport.
//   colyseus  Colyseus 0.18's own Server (in memory, colyseus-server.mjs) with a one-counter
//           room whose patch is broadcast after each move, driven by its own client
//           (@colyseus/sdk).
//
// Runs alternate between targets (the order rotated each repeat); the figures are medians over
// repeats. Every wait has a limit, so a target that fails to start or a match that stalls is
// reported, never waited on forever.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { Client as ColyseusClient } from '@colyseus/sdk';
import { BenchGame } from './bgio-game.mjs';

const require = createRequire(import.meta.url);
// boardgame.io ships CommonJS packages without an `exports` map: required, not imported.
const { Client: BgioClient } = require('boardgame.io/client');
const { SocketIO: BgioSocketIO } = require('boardgame.io/multiplayer');
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');

/** How long any one reply may take before the match counts as stalled. Replies come in
 * milliseconds; this only keeps a broken run from hanging. */
const REPLY_WAIT_MS = 20_000;
/** How long a started target may take to accept connections. */
const START_WAIT_MS = 20_000;
/** Steps a game of the stretched scenario has at the least (30 Game Turns of `done`s before
 * any Wall Advantage answer; asl-load's `STEPS_PER_GAME_MIN`): a run plays one game per match. */
const STEPS_PER_GAME_MIN = 600;
/** Most matches in one run: two connections each, all from one loopback address. */
const MATCHES_MAX = 2_000;
/** Matches set up at once before a run (creating, joining): bounds the burst of connects. */
const SETUP_CONCURRENCY = 25;
/** The server's per-connection command budget, raised as asl-load raises it: each seat sends
 * as fast as the server answers, and the default would measure the limiter. */
const COMMANDS_PER_SECOND_UNTHROTTLED = 1_000_000;
/** Every load client is on one address: the per-address connection cap is lifted. */
const CONNECTIONS_PER_IP_UNLIMITED = 1_000_000;
/** The admin token the server is started with and games are created with (asl-load's). */
const ADMIN_TOKEN = 'asl-load';
/** Writes timed for the fdatasync floor printed beside the figures. */
const FLOOR_SYNCS = 200;
const TARGETS = ['server', 'relay', 'relay-node', 'bgio', 'colyseus'];

const USAGE = `usage: node load.mjs [--matches 1,50,200] [--moves 300] [--repeats 3]
                    [--targets server,relay,relay-node,bgio,colyseus] [--server-bin PATH] [--load-bin PATH]
  --server-bin  asl-server to run (env ASL_SERVER_BIN; default target/release/asl-server)
  --load-bin    asl-load whose relay-server to run (env ASL_LOAD_BIN; default target/release/asl-load)`;

// ---------------------------------------------------------------------------------------------
// Options

function parseOptions(argv) {
  const o = {
    matches: [1, 50, 200],
    moves: 300,
    repeats: 3,
    targets: [...TARGETS],
    serverBin: process.env.ASL_SERVER_BIN || path.join(REPO, 'target/release/asl-server'),
    loadBin: process.env.ASL_LOAD_BIN || path.join(REPO, 'target/release/asl-load'),
  };
  const count = (flag, text, max) => {
    const n = Number(text);
    if (!/^\d+$/.test(text ?? '') || n < 1 || n > max) {
      throw new Error(`${flag} ${text}: expected a whole number from 1 to ${max}`);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    i += 1;
    switch (flag) {
      case '--matches':
        o.matches = value.split(',').map((n) => count('--matches', n.trim(), MATCHES_MAX));
        break;
      case '--moves':
        o.moves = count('--moves', value, Number.MAX_SAFE_INTEGER);
        break;
      case '--repeats':
        o.repeats = count('--repeats', value, 1_000);
        break;
      case '--targets':
        o.targets = value.split(',').map((t) => t.trim());
        for (const t of o.targets) {
          if (!TARGETS.includes(t)) throw new Error(`--targets: \`${t}\` is not one of ${TARGETS}`);
        }
        if (new Set(o.targets).size !== o.targets.length) throw new Error('--targets: a target twice');
        break;
      case '--server-bin':
        o.serverBin = path.resolve(value);
        break;
      case '--load-bin':
        o.loadBin = path.resolve(value);
        break;
      default:
        throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  if (o.targets.includes('server') && o.moves > STEPS_PER_GAME_MIN) {
    throw new Error(`--moves ${o.moves}: a run plays one game per match, which has at least ${STEPS_PER_GAME_MIN} steps`);
  }
  for (const [t, bin, flag] of [['server', o.serverBin, '--server-bin'], ['relay', o.loadBin, '--load-bin']]) {
    if (o.targets.includes(t) && !fs.existsSync(bin)) {
      throw new Error(`${bin} not found: build it (cargo build --release -p asl-server -p asl-load) or pass ${flag}`);
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Processes, ports, CPU

/** A free loopback port: bound, read, released (a start fails loudly if it was taken since). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function canConnect(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('connect', () => { c.destroy(); resolve(true); });
    c.once('error', () => resolve(false));
  });
}

/** A target as a child process on a loopback port, its stderr in `log`. */
class Target {
  static async start(name, command, args, port, log, env = {}) {
    const child = spawn(command, args, {
      stdio: ['ignore', 'ignore', fs.openSync(log, 'a')],
      env: { ...process.env, ...env },
    });
    const t = new Target(name, child, port, log);
    const start = performance.now();
    while (performance.now() - start < START_WAIT_MS) {
      if (t.exited) throw new Error(`${name} exited at start (${t.exited}); see ${log}`);
      if (await canConnect(port)) return t;
      await sleep(5);
    }
    t.kill();
    throw new Error(`${name} did not listen on 127.0.0.1:${port} within ${START_WAIT_MS} ms; see ${log}`);
  }

  constructor(name, child, port, log) {
    this.name = name;
    this.child = child;
    this.port = port;
    this.log = log;
    this.exited = null;
    this.gone = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exited = signal ? `signal ${signal}` : `exit code ${code}`;
        resolve();
      });
      child.once('error', (e) => {
        this.exited = e.message;
        resolve();
      });
    });
  }

  get pid() {
    return this.child.pid;
  }

  /** Fails if the target died: a stalled match then names the cause. */
  alive() {
    if (this.exited) throw new Error(`${this.name} died during the run (${this.exited}); see ${this.log}`);
  }

  async kill() {
    if (!this.exited) this.child.kill('SIGKILL');
    await this.gone;
  }
}

/** Time (ns) every thread of `pid` has spent on a CPU, and waiting on a run queue for one:
 * the first two fields of /proc/PID/task/TID/schedstat. The second says how much of a run a
 * target was kept off the cores by other load on this shared machine. */
function schedNanos(pid) {
  const dir = `/proc/${pid}/task`;
  let run = 0n;
  let wait = 0n;
  for (const tid of fs.readdirSync(dir)) {
    try {
      const [onCpu, queued] = fs.readFileSync(`${dir}/${tid}/schedstat`, 'utf8').split(' ');
      run += BigInt(onCpu);
      wait += BigInt(queued);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return { run, wait };
}

/** write + fdatasync of a frame-sized record, the floor a durable command pays once. */
function fdatasyncMs(dir, bytes) {
  const file = path.join(dir, 'floor');
  const fd = fs.openSync(file, 'w');
  const record = Buffer.alloc(bytes, 1);
  const start = performance.now();
  for (let i = 0; i < FLOOR_SYNCS; i += 1) {
    fs.writeSync(fd, record);
    fs.fdatasyncSync(fd);
  }
  const ms = (performance.now() - start) / FLOOR_SYNCS;
  fs.closeSync(fd);
  fs.rmSync(file);
  return ms;
}

// ---------------------------------------------------------------------------------------------
// A websocket whose frames are read in order, each stamped when it arrived.

class Socket {
  static open(url, label) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 20 });
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`${label}: connecting to ${url} timed out`));
      }, REPLY_WAIT_MS);
      ws.once('open', () => {
        clearTimeout(timer);
        resolve(new Socket(ws, label));
      });
      ws.once('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`${label}: connecting to ${url}: ${e.message}`));
      });
    });
  }

  constructor(ws, label) {
    this.ws = ws;
    this.label = label;
    this.frames = [];
    this.waiter = null;
    this.closed = null;
    ws.on('message', (data, binary) => {
      const frame = { data, binary, at: performance.now() };
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = null;
        clearTimeout(w.timer);
        w.resolve(frame);
      } else {
        this.frames.push(frame);
      }
    });
    ws.on('close', (code, reason) => this.fail(`the connection was closed (${code} ${reason})`));
    ws.on('error', (e) => this.fail(e.message));
  }

  fail(why) {
    this.closed = this.closed ?? why;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      clearTimeout(w.timer);
      w.reject(new Error(`${this.label}: ${why}`));
    }
  }

  send(data) {
    this.ws.send(data);
  }

  /** The next frame: `{ data, binary, at }`, `at` when it arrived (performance.now()). */
  next() {
    if (this.frames.length) return Promise.resolve(this.frames.shift());
    if (this.closed) return Promise.reject(new Error(`${this.label}: ${this.closed}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`${this.label}: stalled, no frame in ${REPLY_WAIT_MS} ms`));
      }, REPLY_WAIT_MS);
      this.waiter = { resolve, reject, timer };
    });
  }

  /** The next frame as a protocol message. */
  async message() {
    const frame = await this.next();
    return { message: JSON.parse(frame.data.toString()), at: frame.at };
  }

  close() {
    this.closed = this.closed ?? 'closed by the generator';
    this.ws.terminate();
  }
}

/** The body of an externally tagged message (`{"accepted":{…}}`), or an error naming what came. */
function expectTag(message, tag, label) {
  if (message && typeof message === 'object' && tag in message) return message[tag];
  throw new Error(`${label}: expected \`${tag}\`, got ${JSON.stringify(message).slice(0, 400)}`);
}

// ---------------------------------------------------------------------------------------------
// Target 1: asl-server over JSON.

/** The scenario asl-load plays: B9.41's, stretched to 30 Game Turns (660 `done`s). */
function scenario() {
  const text = fs.readFileSync(path.join(REPO, 'scenarios/b9-41-wall-advantage.toml'), 'utf8');
  const long = text.replace('turns = 2\n', 'turns = 30\n');
  if (long === text) throw new Error("scenarios/b9-41-wall-advantage.toml: its `turns = 2` line moved");
  return long;
}

/** Who acts at each step of a Player Turn: protocol/game/src/phase.rs `STEPS`, in order. If
 * that table changes and this copy does not, the server refuses a command and the run says so. */
const STEP_ROLES = [
  'attacker', // RPh
  'attacker', // end of RPh, ATTACKER (B9.322)
  'defender', // end of RPh, DEFENDER (B9.322)
  'attacker', // PFPh
  'attacker', // MPh
  'defender', // DFPh
  'attacker', // AFPh
  'attacker', // RtPh, ATTACKER
  'defender', // RtPh, DEFENDER
  'attacker', // APh
  'attacker', // CCPh
];

const opponent = (side) => (side === 'A' ? 'B' : 'A');
const seatOf = (side) => (side === 'A' ? 0 : 1);

/** The part of one side's projection that says who moves play on next: the clock and the
 * Wall Advantage prompts. Follows the events that side receives as `protocol::game::apply`
 * changes these fields (protocol/game/src/lib.rs); other events leave them alone. */
class Replica {
  constructor(state) {
    this.first = state.scenario.first;
    this.clock = state.clock;
    this.waChance = state.wa_chance;
    this.waHipWindow = state.wa_hip_window;
    this.waChallenge = state.wa_challenge;
    this.over = state.over;
  }

  acting() {
    const attacker = this.clock.player_turn === 1 ? this.first : opponent(this.first);
    const role = STEP_ROLES[this.clock.step];
    if (!role) throw new Error(`clock step ${this.clock.step} is past the generator's copy of STEPS`);
    return role === 'attacker' ? attacker : opponent(attacker);
  }

  apply(event) {
    const [tag] = Object.keys(event);
    const e = event[tag];
    switch (tag) {
      case 'step_ended':
      case 'step_passed': // a step nobody can act in passes by itself (rules::passing)
        this.clock = e.next;
        break;
      case 'game_ended':
      case 'conceded':
      case 'end_agreed':
        this.over = true;
        break;
      case 'wall_advantage_claimed':
        if (e.how === 'enemy_lost_it') this.waChance = null;
        break;
      case 'wall_advantage_forfeited':
        if (e.why === 'challenge_forfeited') this.waChallenge = null;
        break;
      case 'wall_advantage_denied':
        this.waChance = null;
        this.waChallenge = null;
        break;
      case 'wall_advantage_chance_declined':
        this.waChance = null;
        if (this.waHipWindow?.side === e.side) this.waHipWindow = null;
        break;
      case 'wall_advantage_hip_window_offered':
        this.waHipWindow = e;
        break;
      case 'wall_advantage_challenged':
        this.waChallenge = e;
        break;
      case 'wall_advantage_chance_offered':
        this.waChance = e;
        break;
      case 'hidden_unit_placed':
        if (this.waHipWindow?.side === e.unit.side) this.waHipWindow = null;
        break;
      default:
        break;
    }
  }
}

/** Who sends what to move play on one step (asl-load's `table::next_step`): a side given the
 * moment to place a hidden unit declines; a side whose concealed WA is challenged forfeits
 * (B9.324); a side offered the chance to claim WA declines (B9.322); otherwise the acting
 * side's `done`. Decided on side A's replica; a forfeit names the units as the challenged
 * side knows them. */
function nextStep(replicas) {
  const a = replicas[0];
  if (a.waHipWindow) return [a.waHipWindow.side, 'decline_wall_advantage'];
  if (a.waChallenge) {
    const side = a.waChallenge.side;
    const own = replicas[seatOf(side)].waChallenge ?? a.waChallenge;
    return [side, { forfeit_wall_advantage: { units: own.holders } }];
  }
  if (a.waChance) return [a.waChance.side, 'decline_wall_advantage'];
  return [a.acting(), 'done'];
}

const serverTarget = {
  name: 'server',
  async start(dir) {
    const port = await freePort();
    return Target.start('asl-server', OPTIONS.serverBin, [
      '--listen', `127.0.0.1:${port}`,
      '--data-dir', path.join(dir, 'server-data'),
      '--commands-per-second-max', String(COMMANDS_PER_SECOND_UNTHROTTLED),
      '--connections-per-ip-max', String(CONNECTIONS_PER_IP_UNLIMITED),
      '--admin-token', ADMIN_TOKEN,
    ], port, path.join(dir, 'server.log'), { RUST_LOG: undefined });
  },

  async setup(target, n) {
    const url = `ws://127.0.0.1:${target.port}/v1`;
    const label = `asl-server match ${n}`;
    const creator = await Socket.open(url, `${label} (creator)`);
    creator.send(JSON.stringify({ create_game: { scenario: SCENARIO, admin_token: ADMIN_TOKEN } }));
    const created = expectTag((await creator.message()).message, 'created', label);
    creator.close();
    const seats = [];
    const replicas = [];
    for (const [side, token] of [['A', created.tokens.side_a], ['B', created.tokens.side_b]]) {
      const seat = await Socket.open(url, `${label} side ${side}`);
      seat.send(JSON.stringify({ join: { game: created.game, token, since: null } }));
      const joined = expectTag((await seat.message()).message, 'joined', seat.label);
      seats.push(seat);
      replicas.push(new Replica(joined.state));
    }
    return { label: `${label} (game ${created.game})`, seats, replicas };
  },

  /** One step: the acting side sends, the opponent's first event is timed, and each side's
   * replica follows what it received (every event of these commands is public, so the
   * opponent receives as many as the actor's `accepted` lists). */
  async step(m, id) {
    const [side, command] = nextStep(m.replicas);
    const me = seatOf(side);
    const other = 1 - me;
    const sent = performance.now();
    m.seats[me].send(JSON.stringify({ command: { id, command, key: null } }));
    const answer = (await m.seats[me].message()).message;
    if (answer.refused) {
      throw new Error(`${m.label}: ${JSON.stringify(command)} by side ${side} was refused: ${JSON.stringify(answer.refused.violation)}`);
    }
    const mine = expectTag(answer, 'accepted', m.label).events.map((s) => s.viewed.event);
    const theirs = [];
    let latency = 0;
    for (let i = 0; i < mine.length; i += 1) {
      const { message, at } = await m.seats[other].message();
      if (i === 0) latency = at - sent;
      theirs.push(expectTag(message, 'event', `${m.label}, the other seat`).viewed.event);
    }
    for (const e of mine) m.replicas[me].apply(e);
    for (const e of theirs) m.replicas[other].apply(e);
    if (m.replicas[0].over) throw new Error(`${m.label} ended; a run must fit one game's steps`);
    return latency;
  },

  teardown(m) {
    for (const s of m.seats) s.close();
  },
};

// ---------------------------------------------------------------------------------------------
// Target 2: the bare relay.

/** What a relay seat sends each move: as many bytes as the server target's JSON `done`. */
const RELAY_FRAME = Buffer.alloc(
  Buffer.byteLength(JSON.stringify({ command: { id: 100, command: 'done', key: null } })),
  7,
);
let relayMatchNumber = 0n;

const relayTarget = {
  name: 'relay',
  async start(dir) {
    const port = await freePort();
    return Target.start('relay', OPTIONS.loadBin, ['relay-server', '--listen', `127.0.0.1:${port}`],
      port, path.join(dir, 'relay.log'));
  },

  /** Both seats of a relay match: each names its match (8 bytes, big-endian) and seat in its
   * first frame, which the relay echoes once the seat is in its table. */
  async setup(target, n) {
    const number = relayMatchNumber;
    relayMatchNumber += 1n;
    const label = `relay match ${n}`;
    const seats = [];
    for (const seat of [0, 1]) {
      const s = await Socket.open(`ws://127.0.0.1:${target.port}/`, `${label} seat ${seat}`);
      const hello = Buffer.alloc(9);
      hello.writeBigUInt64BE(number);
      hello[8] = seat;
      s.send(hello);
      await s.next();
      seats.push(s);
    }
    return { label, seats };
  },

  async step(m, id) {
    const me = id % 2;
    const sent = performance.now();
    m.seats[me].send(RELAY_FRAME);
    const { at } = await m.seats[1 - me].next();
    return at - sent;
  },

  teardown(m) {
    for (const s of m.seats) s.close();
  },
};

/** The same relay protocol served by Node's `ws` (relay-server.mjs). */
const relayNodeTarget = {
  ...relayTarget,
  name: 'relay-node',
  async start(dir) {
    const port = await freePort();
    return Target.start('relay-node', process.execPath, [path.join(HERE, 'relay-server.mjs'), String(port)],
      port, path.join(dir, 'relay-node.log'), { NODE_ENV: 'production' });
  },
};

// ---------------------------------------------------------------------------------------------
// Target 3: boardgame.io.

const bgioTarget = {
  name: 'bgio',
  async start(dir) {
    const port = await freePort();
    return Target.start('boardgame.io', process.execPath, [path.join(HERE, 'bgio-server.mjs'), String(port)],
      port, path.join(dir, 'bgio.log'), { NODE_ENV: 'production' });
  },

  /** A match made through boardgame.io's Lobby API, and a Client per seat on its socket.io
   * transport (websocket only), each waiting for its first sync. */
  async setup(target, n) {
    const base = `http://127.0.0.1:${target.port}`;
    const label = `boardgame.io match ${n}`;
    const post = async (route, body) => {
      const res = await fetch(`${base}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REPLY_WAIT_MS),
      });
      if (!res.ok) throw new Error(`${label}: POST ${route}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const { matchID } = await post(`/games/${BenchGame.name}/create`, { numPlayers: 2 });
    const seats = [];
    for (const playerID of ['0', '1']) {
      const { playerCredentials } = await post(`/games/${BenchGame.name}/${matchID}/join`, {
        playerID,
        playerName: `seat ${playerID}`,
      });
      const client = BgioClient({
        game: BenchGame,
        multiplayer: BgioSocketIO({ server: base, socketOpts: { transports: ['websocket'] } }),
        matchID,
        playerID,
        credentials: playerCredentials,
        debug: false,
      });
      seats.push(new BgioSeat(client, `${label} player ${playerID}`));
    }
    for (const s of seats) s.client.start();
    await Promise.all(seats.map((s) => s.until((st) => st !== null)));
    return { label, seats, target };
  },

  /** One move by the current player; timed to the opponent's state update from the server
   * (its turn number moves on). The mover also waits for the server's state: its own copy
   * moved optimistically, but only the server's ends the turn. */
  async step(m, id) {
    const turn = m.seats[0].client.getState().ctx.turn;
    const current = m.seats[0].client.getState().ctx.currentPlayer;
    const me = Number(current);
    const moved = (st) => st && st.ctx.turn > turn;
    const sent = performance.now();
    const theirs = m.seats[1 - me].until(moved);
    const mine = m.seats[me].until(moved);
    m.seats[me].client.moves.done();
    const [at] = await Promise.all([theirs, mine]).catch((e) => {
      m.target.alive();
      throw new Error(`${e.message} (move ${id})`);
    });
    return at - sent;
  },

  teardown(m) {
    for (const s of m.seats) s.client.stop();
  },
};

/** A boardgame.io client and the waits on its state. */
class BgioSeat {
  constructor(client, label) {
    this.client = client;
    this.label = label;
    this.waits = [];
    client.subscribe((state) => {
      const at = performance.now();
      this.waits = this.waits.filter((w) => {
        if (!w.pred(state)) return true;
        clearTimeout(w.timer);
        w.resolve(at);
        return false;
      });
    });
  }

  /** When the client's state first satisfies `pred` (performance.now() of that update). */
  until(pred) {
    const now = this.client.getState();
    if (pred(now)) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      w.timer = setTimeout(() => {
        this.waits = this.waits.filter((x) => x !== w);
        reject(new Error(`${this.label}: stalled, no state update in ${REPLY_WAIT_MS} ms`));
      }, REPLY_WAIT_MS);
      this.waits.push(w);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Target 4: Colyseus.

const colyseusTarget = {
  name: 'colyseus',
  async start(dir) {
    const port = await freePort();
    return Target.start('colyseus', process.execPath, [path.join(HERE, 'colyseus-server.mjs'), String(port)],
      port, path.join(dir, 'colyseus.log'), { NODE_ENV: 'production' });
  },

  /** A room created by the first seat and joined by id by the second, each through Colyseus's
   * own client, both holding the room's first state. */
  async setup(target, n) {
    const label = `colyseus match ${n}`;
    const client = new ColyseusClient(`ws://127.0.0.1:${target.port}`);
    const limit = (p, what) => Promise.race([
      p,
      sleep(REPLY_WAIT_MS).then(() => { throw new Error(`${label}: ${what}: no answer in ${REPLY_WAIT_MS} ms`); }),
    ]);
    const first = await limit(client.create('bench'), 'create');
    const second = await limit(client.joinById(first.roomId), 'join');
    const seats = [new ColyseusSeat(first, `${label} seat 0`), new ColyseusSeat(second, `${label} seat 1`)];
    await Promise.all(seats.map((s) => s.until(() => true)));
    return { label, seats, target, moves: 0 };
  },

  /** One `done` by the seat whose turn it is, timed to the opponent's patch showing it. */
  async step(m, id) {
    const me = m.moves % 2;
    const next = m.moves + 1;
    const sent = performance.now();
    const theirs = m.seats[1 - me].until((st) => st.moves >= next);
    m.seats[me].room.send('done');
    const at = await theirs.catch((e) => {
      m.target.alive();
      throw new Error(`${e.message} (move ${id})`);
    });
    m.moves = next;
    return at - sent;
  },

  teardown(m) {
    for (const s of m.seats) s.room.leave().catch(() => {});
  },
};

/** A Colyseus room as one seat sees it, and the waits on its state. */
class ColyseusSeat {
  constructor(room, label) {
    this.room = room;
    this.label = label;
    this.waits = [];
    // The first state may have come with the join, before this seat listened.
    this.synced = room.state?.moves !== undefined;
    room.onStateChange((state) => {
      this.synced = true;
      const at = performance.now();
      this.waits = this.waits.filter((w) => {
        if (!w.pred(state)) return true;
        clearTimeout(w.timer);
        w.resolve(at);
        return false;
      });
    });
  }

  /** When the room's state first satisfies `pred` (performance.now() of that patch). */
  until(pred) {
    if (this.synced && pred(this.room.state)) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      w.timer = setTimeout(() => {
        this.waits = this.waits.filter((x) => x !== w);
        reject(new Error(`${this.label}: stalled, no patch in ${REPLY_WAIT_MS} ms`));
      }, REPLY_WAIT_MS);
      this.waits.push(w);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Runs and figures

/** Sets up `n` matches on `target`, a bounded number at once. */
async function setupMatches(driver, target, n) {
  const matches = [];
  for (let i = 0; i < n; i += SETUP_CONCURRENCY) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + SETUP_CONCURRENCY); j += 1) batch.push(driver.setup(target, j));
    matches.push(...(await Promise.all(batch)));
  }
  return matches;
}

/** One run: every match plays `moves` steps at once; CPU read around it. */
async function run(driver, target, n, moves) {
  const matches = await setupMatches(driver, target, n);
  const latencies = [];
  const sched = schedNanos(target.pid);
  const mine = process.cpuUsage();
  const start = performance.now();
  try {
    await Promise.all(matches.map(async (m) => {
      for (let id = 0; id < moves; id += 1) latencies.push(await driver.step(m, id));
    }));
  } catch (e) {
    target.alive();
    throw e;
  }
  const seconds = (performance.now() - start) / 1e3;
  const after = schedNanos(target.pid);
  const cpuMs = Number(after.run - sched.run) / 1e6;
  const waitMs = Number(after.wait - sched.wait) / 1e6;
  const used = process.cpuUsage(mine);
  for (const m of matches) driver.teardown(m);
  const total = latencies.length;
  return {
    rate: total / seconds,
    latencies,
    cpuMs: cpuMs / total,
    waitMs: waitMs / total,
    generatorMs: (used.user + used.system) / 1e3 / total,
  };
}

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
}

function percentile(values, p) {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
}

function summarize(runs) {
  return {
    rate: median(runs.map((r) => r.rate)),
    p50: median(runs.map((r) => percentile(r.latencies, 50))),
    p99: median(runs.map((r) => percentile(r.latencies, 99))),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    waitMs: median(runs.map((r) => r.waitMs)),
    generatorMs: median(runs.map((r) => r.generatorMs)),
  };
}

const NAMES = {
  server: 'asl-server (durable, JSON)',
  relay: 'bare relay (no rules, no storage)',
  'relay-node': 'bare relay in Node `ws` (no rules, no storage)',
  bgio: 'boardgame.io 0.50.2 (in-memory)',
  colyseus: 'Colyseus 0.18 (in-memory, a patch per move)',
};

const fmt = (x, digits) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function printRatios(n, s, label, o) {
  console.log(
    `  N = ${n}, server/${label}: moves/s ${fmt(s.rate / o.rate, 2)}x, p50 ${fmt(s.p50 / o.p50, 2)}x (${s.p50 >= o.p50 ? '+' : ''}${fmt(s.p50 - o.p50, 3)} ms), CPU/move ${fmt(s.cpuMs / o.cpuMs, 2)}x`,
  );
}

/** The machine as the run found it: CPU model and load average, from /proc. */
function machine() {
  const model = /^model name\s*:\s*(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  return `${os.cpus().length} CPUs (${model}), load average ${load} at the start`;
}

async function main() {
  const drivers = { server: serverTarget, relay: relayTarget, 'relay-node': relayNodeTarget, bgio: bgioTarget, colyseus: colyseusTarget };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asl-node-bench-'));
  const targets = {};
  const stop = async () => Promise.all(Object.values(targets).map((t) => t.kill()));
  process.once('SIGINT', () => stop().then(() => process.exit(130)));
  try {
    for (const name of OPTIONS.targets) targets[name] = await drivers[name].start(dir);
    const floor = fdatasyncMs(dir, RELAY_FRAME.length);
    console.log(
      `node generator: ${OPTIONS.moves} moves per match, one in flight per match, send -> opponent's receipt; ${OPTIONS.repeats} repeats, targets interleaved (order rotated each repeat)`,
    );
    console.log(`  ${machine()}; node ${process.version}`);
    console.log(
      `  write+fdatasync on this disk (same run): ${fmt(floor, 3)} ms per sync; a JSON \`done\` command and a relay frame are ${RELAY_FRAME.length} B`,
    );
    const results = [];
    for (const n of OPTIONS.matches) {
      const runs = Object.fromEntries(OPTIONS.targets.map((t) => [t, []]));
      for (let r = 0; r < OPTIONS.repeats; r += 1) {
        const k = OPTIONS.targets.length;
        for (let i = 0; i < k; i += 1) {
          const name = OPTIONS.targets[(i + r) % k];
          runs[name].push(await run(drivers[name], targets[name], n, OPTIONS.moves));
        }
      }
      const summary = Object.fromEntries(Object.entries(runs).map(([t, rs]) => [t, summarize(rs)]));
      results.push([n, summary]);
      for (const [t, s] of Object.entries(summary)) {
        console.error(`  done: N = ${n}, ${t}: ${fmt(s.rate, 0)} moves/s, p50 ${fmt(s.p50, 3)} ms`);
      }
    }
    console.log('');
    console.log('| N | target | moves/s | p50 ms | p99 ms | target CPU ms/move | target run-queue wait ms/move | generator CPU ms/move |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [n, summary] of results) {
      for (const [t, s] of Object.entries(summary)) {
        console.log(`| ${n} | ${NAMES[t]} | ${fmt(s.rate, 0)} | ${fmt(s.p50, 3)} | ${fmt(s.p99, 3)} | ${fmt(s.cpuMs, 4)} | ${fmt(s.waitMs, 4)} | ${fmt(s.generatorMs, 4)} |`);
      }
    }
    console.log('');
    for (const [n, summary] of results) {
      if (!summary.server) continue;
      if (summary.relay) printRatios(n, summary.server, 'relay', summary.relay);
      if (summary['relay-node']) printRatios(n, summary.server, 'relay-node', summary['relay-node']);
      if (summary.bgio) printRatios(n, summary.server, 'boardgame.io', summary.bgio);
      if (summary.colyseus) printRatios(n, summary.server, 'Colyseus', summary.colyseus);
    }
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  } catch (e) {
    await stop();
    console.error(`node generator failed: ${e.message}\n  (the targets' logs and data are kept in ${dir})`);
    process.exitCode = 1;
  }
}

let OPTIONS;
let SCENARIO;
try {
  OPTIONS = parseOptions(process.argv.slice(2));
  if (OPTIONS.targets.includes('server')) SCENARIO = scenario();
} catch (e) {
  console.error(e.message);
  process.exit(2);
}
await main();
process.exit(process.exitCode ?? 0);
