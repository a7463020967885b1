// The boardgame.io target's game: two players, one move (`done`) that ends the turn, so the
// seats alternate one cheap legal command each, as `done` does on asl-server. Shared by the
// server (bgio-server.mjs) and the generator's clients, which run a game's moves locally too.
export const BenchGame = {
  name: 'bench',
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ moves: 0 }),
  moves: {
    done: ({ G }) => {
      G.moves += 1;
    },
  },
  // One move per turn: the turn passes to the other player as soon as it is made.
  turn: { minMoves: 1, maxMoves: 1 },
};
