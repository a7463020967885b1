//! One module per subcommand. Each takes its parsed arguments and the `out` to write its report
//! to, and returns a [`Status`](crate::Status) or a [`Failure`].
//!
//! The argument structs derive `clap::Args` so the binary's parser is built from them, and
//! tests build them by hand.

pub mod check;
pub mod log;
pub mod new;
pub mod run;
pub mod state;
pub mod watch;

use crate::connection::{Connection, ConnectionError, Joined};
use crate::follower::Follower;
use crate::{Failure, DEFAULT_SERVER};

/// Where the server is. Every online subcommand takes it.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct ServerArg {
    /// The server's websocket address (the `/v1` path is added).
    #[arg(long = "server", env = "ASL_SERVER", default_value = DEFAULT_SERVER)]
    pub url: String,
}

/// Which game to join, and as whom.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct GameArgs {
    /// The game id `asl new` printed.
    #[arg(long)]
    pub game: String,
    /// A side's token, or the spectator token.
    #[arg(long)]
    pub token: String,
}

/// Connects and joins for a full snapshot, which the returned follower starts from (checked
/// against the server's state hash).
pub(crate) async fn join_fresh(
    server: &ServerArg,
    game: &GameArgs,
) -> Result<(Connection, Joined, Follower), Failure> {
    let mut connection = Connection::connect(&server.url).await?;
    let mut joined = connection.join(&game.game, &game.token, None).await?;
    let state = joined.state.take().ok_or_else(|| {
        ConnectionError::Unexpected("the `joined` reply to a fresh join carried no state".into())
    })?;
    let follower = Follower::from_snapshot(state, joined.state_hash)?;
    Ok((connection, joined, follower))
}
