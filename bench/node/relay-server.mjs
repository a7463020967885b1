// A bare websocket relay in Node (`ws`), the `relay-node` target of load.mjs. It speaks the
// protocol of `asl-load relay-server`: a connection names its match (8 bytes, big-endian) and
// seat (1 byte) in its first frame, which is echoed once the seat is in the table; every later
// frame goes to the other seat of the match. No rules, no storage, no encoding.
//
// Why a second relay: a bare relay written in Node costs more CPU per frame than the
// tokio-tungstenite one, so a ratio to either says something different. Both are measured
// side by side rather than one chosen.
//
// usage: node relay-server.mjs PORT

import { WebSocketServer } from 'ws';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('usage: node relay-server.mjs PORT');
  process.exit(2);
}

/** Match number → its two seats' sockets. */
const matches = new Map();
const wss = new WebSocketServer({ host: '127.0.0.1', port, perMessageDeflate: false, maxPayload: 1 << 16 });

wss.on('connection', (ws) => {
  let match = null;
  let seat = -1;
  ws.on('message', (data, isBinary) => {
    if (!isBinary) return;
    if (match === null) {
      if (data.length < 9 || data[8] > 1) {
        ws.close(1008, 'first frame: 8-byte match number and a seat of 0 or 1');
        return;
      }
      match = data.readBigUInt64BE(0);
      seat = data[8];
      let seats = matches.get(match);
      if (!seats) {
        seats = [null, null];
        matches.set(match, seats);
      }
      seats[seat] = ws;
      ws.send(data, { binary: true });
      return;
    }
    const other = matches.get(match)?.[1 - seat];
    if (other) other.send(data, { binary: true });
  });
  ws.on('close', () => {
    if (match !== null) matches.delete(match);
  });
});

wss.on('error', (e) => {
  console.error(`relay-server: ${e.message}`);
  process.exit(1);
});
