//! One game as the load generator plays it: a connection per side, and a replica of the game
//! (side A's projection, updated from the events the server sends) that says whose turn it is
//! and predicts what each command will do.

use crate::client::{Client, Joined};
use anyhow::{bail, Context};
use protocol::game::view::apply_viewed;
use protocol::wire::{ServerMessage, Tokens};
use protocol::{decide, Command, Event, Game, RuleViolation, ScriptedDice, Side, Viewer};
use std::net::SocketAddr;
use std::time::Instant;

/// The scenario every run plays: the one the issue names, stretched to the longest game a
/// scenario may have (30 turns, 660 `done`s) so a run makes fewer games for the same load.
pub fn scenario() -> String {
    protocol::scenario::longest(include_str!("../../scenarios/b9-41-wall-advantage.toml"))
        .expect("the scenario has a turn count")
}

/// Steps a game of [`scenario`] has at the least (30 Game Turns of `done`s, before any Wall
/// Advantage answer): runs that play one game per match stay within it.
pub const STEPS_PER_GAME_MIN: u64 = 600;

pub struct Table {
    pub game: String,
    pub tokens: Tokens,
    /// Side A's and side B's connections.
    pub seats: [Client; 2],
    pub replica: Game,
    /// Side B's projection, from its snapshot at sitting down and its stream since: each side
    /// predicts its own commands on its own view, naming units as it knows them.
    pub replica_b: Game,
}

fn seat_index(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

/// The server answered a command differently from the rules run locally: a bug, never a
/// consequence of a crash, so the crash drill counts it apart from lost connections.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Divergence(pub String);

/// What the server answered to one command, with when its effect reached the other side.
pub struct Played {
    pub result: Result<Vec<Event>, RuleViolation>,
    /// The command's events as side A received them.
    pub seen_by_a: Vec<Event>,
    /// When the opponent's connection received the command's first event (accepted only).
    pub opponent_at: Option<Instant>,
}

impl Table {
    /// Creates a game on `addr` and seats both sides.
    pub async fn create(addr: SocketAddr) -> anyhow::Result<Table> {
        Table::create_of(addr, &scenario()).await
    }

    /// Creates a game of the scenario `text` on `addr` and seats both sides.
    pub async fn create_of(addr: SocketAddr, text: &str) -> anyhow::Result<Table> {
        let mut creator = Client::connect(addr).await?;
        let (game, tokens) = creator.create(text).await?;
        Table::sit(addr, game, tokens).await
    }

    /// Seats both sides at an existing game.
    pub async fn sit(addr: SocketAddr, game: String, tokens: Tokens) -> anyhow::Result<Table> {
        let (a, joined): (Client, Joined) = Client::seat(addr, &game, &tokens.side_a).await?;
        let (b, joined_b) = Client::seat(addr, &game, &tokens.side_b).await?;
        let replica = *joined.state.context("a fresh join carries the state")?;
        let replica_b = *joined_b.state.context("a fresh join carries the state")?;
        Ok(Table {
            game,
            tokens,
            seats: [a, b],
            replica,
            replica_b,
        })
    }

    /// What the rules will say to `command` from `side`, decided on the replica.
    pub fn predict(&self, side: Side, command: &Command) -> Result<Vec<Event>, RuleViolation> {
        let replica = match side {
            Side::A => &self.replica,
            Side::B => &self.replica_b,
        };
        decide(replica, side, command, &mut ScriptedDice::default())
    }

    /// Sends `command` as `side`, reads the answer and the events the other side receives,
    /// and applies accepted events to the replica. Fails if the server's answer differs from
    /// the replica's prediction: the rules are deterministic, so a difference is a bug.
    pub async fn play(&mut self, id: u64, side: Side, command: Command) -> anyhow::Result<Played> {
        let predicted = self.predict(side, &command);
        let (me, other) = (seat_index(side), 1 - seat_index(side));
        self.seats[me]
            .send(&protocol::wire::ClientMessage::Command {
                id,
                command,
                key: None,
            })
            .await?;
        let mut opponent_at = None;
        // What each side receives, which its replica follows.
        let mut seen = [vec![], vec![]];
        if let Ok(events) = &predicted {
            // The other side's events first, so their arrival is timed before we read ours.
            for _ in events {
                match self.seats[other].recv().await? {
                    ServerMessage::Event(s) => {
                        opponent_at = opponent_at.or(Some(Instant::now()));
                        seen[other].push(std::sync::Arc::unwrap_or_clone(s.viewed));
                    }
                    other => bail!("expected an event on the other seat, got {other:?}"),
                }
            }
        }
        let result = match self.seats[me].recv().await? {
            ServerMessage::Accepted { events, .. } => {
                let viewed: Vec<_> = events
                    .into_iter()
                    .map(|s| std::sync::Arc::unwrap_or_clone(s.viewed))
                    .collect();
                let events = viewed.iter().map(|v| v.event.clone()).collect::<Vec<_>>();
                seen[me] = viewed;
                Ok(events)
            }
            ServerMessage::Refused { violation, .. } => Err(violation),
            other => bail!("expected the answer to command {id}, got {other:?}"),
        };
        if result != predicted {
            return Err(Divergence(format!(
                "game {}: the server answered {result:?} where the rules predict {predicted:?}",
                self.game
            ))
            .into());
        }
        for viewed in &seen[0] {
            apply_viewed(&mut self.replica, viewed);
        }
        for viewed in &seen[1] {
            apply_viewed(&mut self.replica_b, viewed);
        }
        let [seen_by_a, _] = seen;
        Ok(Played {
            result,
            seen_by_a: seen_by_a.into_iter().map(|v| v.event).collect(),
            opponent_at,
        })
    }

    /// The command that moves play on: `done` by whichever side is to act, or declining the
    /// chance to claim Wall Advantage when one is offered (B9.322).
    pub async fn done(&mut self, id: u64) -> anyhow::Result<Played> {
        let (side, command) = protocol::rules::moving_on(&self.replica);
        self.play(id, side, command).await
    }

    pub fn viewer_token(&self, viewer: Viewer) -> &str {
        crate::client::token(&self.tokens, viewer)
    }
}
