// boardgame.io's own Server (Koa + socket.io, its default in-memory storage) serving BenchGame
// and its Lobby API on 127.0.0.1:PORT, PORT the only argument; started by load.mjs as a
// child process, whose CPU time is the target's.
import { createRequire } from 'node:module';
import { BenchGame } from './bgio-game.mjs';

const require = createRequire(import.meta.url);
const { Server, Origins } = require('boardgame.io/server');

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`usage: node bgio-server.mjs PORT (got ${process.argv[2]})`);
  process.exit(2);
}
const server = Server({ games: [BenchGame], origins: [Origins.LOCALHOST] });
server.run(port);
