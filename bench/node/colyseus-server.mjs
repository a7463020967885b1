// Colyseus 0.18's own Server (@colyseus/core over @colyseus/ws-transport, in memory) with the
// same one-counter, two-seat game the other targets play: a seat's `done` on its turn counts
// the move and passes the turn, and the patch is broadcast at once (`broadcastPatch`, the
// patch clock off), so the opponent sees the move as soon as the server has made it. Serves
// 127.0.0.1:PORT, PORT the only argument; started by load.mjs as a child process, whose CPU
// time is the target's.
import { Server, Room } from '@colyseus/core';
import { WebSocketTransport } from '@colyseus/ws-transport';
import { schema, t } from '@colyseus/schema';

const Counter = schema({ moves: t.number().default(0), current: t.number().default(0) }, 'Counter');

class BenchRoom extends Room {
  onCreate() {
    this.maxClients = 2;
    // The generator's seats send as fast as they are answered, as asl-server's limiter is
    // lifted for them.
    this.maxMessagesPerSecond = 1e9;
    this.setState(new Counter());
    // No patch clock: each move's patch is sent by the move itself.
    this.setPatchRate(null);
    this.seats = [];
    this.onMessage('done', (client) => {
      const seat = this.seats.indexOf(client.sessionId);
      // Out of turn: refused, as the referee refuses it (nothing changes, nothing is sent).
      if (seat !== this.state.current) return;
      this.state.moves += 1;
      this.state.current = 1 - seat;
      this.broadcastPatch();
    });
  }

  onJoin(client) {
    this.seats.push(client.sessionId);
  }
}

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`usage: node colyseus-server.mjs PORT (got ${process.argv[2]})`);
  process.exit(2);
}
const server = new Server({ transport: new WebSocketTransport(), greet: false });
server.define('bench', BenchRoom);
await server.listen(port, '127.0.0.1');
