//! `asl`: parses flags and calls the `client` library, which does the work.

use clap::Parser;
use client::commands::{
    boards, check, export, games, import, log, new, notify, play, replay, run, state, verify, watch,
};
use client::{saved, Failure, Status};
use std::future::Future;
use std::process::ExitCode;

/// Play Advanced Squad Leader on an asl-server: create games, play scripts of commands,
/// watch games, and check scripts offline.
///
/// Exit codes: 0 success, 1 a command was refused or an expectation in a script failed (or
/// `verify` found the log invalid), 2 bad input (files, script lines, a token for the wrong side), 3 the server could
/// not be reached or refused.
#[derive(Parser, Debug)]
#[command(name = "asl", version)]
struct Cli {
    #[command(subcommand)]
    command: Subcommand,
}

#[derive(clap::Subcommand, Debug)]
enum Subcommand {
    /// Create a game from a scenario file; print its id, each side's token, the spectator
    /// token and commands to start playing.
    New(new::NewArgs),
    /// Play a script's commands on a server as the token's side, waiting for that side's turn
    /// before each `done` and `move`, and check the script's expectations.
    Run(run::RunArgs),
    /// Play as the token's side at a prompt: each line a command sent at once, the opponent's
    /// moves printed as they come, and what the game waits for.
    Play(play::PlayArgs),
    /// Run a script offline against a scenario, with no server, and check its expectations.
    Check(check::CheckArgs),
    /// Print a game's events as they happen, until the game ends or Ctrl-C.
    Watch(watch::WatchArgs),
    /// Print where the game stands and every unit, as the token's holder may see them.
    State(state::StateArgs),
    /// Print the game record from the first event on.
    Log(log::LogArgs),
    /// Write a finished game's whole log to a self-contained file (docs/review.md).
    Export(export::ExportArgs),
    /// Check an exported log offline: its hash chain, every event, every die against the
    /// revealed seed; print a summary, or the first bad event and why.
    Verify(verify::VerifyArgs),
    /// List the VASL board archives a directory holds (board, version, size, hills) and name
    /// the files that cannot be read, and why.
    Boards(boards::ListArgs),
    /// Print the position at any moment of a game (an event number, `end`, or "turn 3 German
    /// MPh"), from an export file or a live game.
    Replay(replay::ReplayArgs),
    /// Make a scenario file from a VASL saved game (`.vsav`): its boards, every unit with
    /// its ratings in its hex or off board to set up, and a report of what was left out.
    Import(import::ImportArgs),
    /// Tell this seat when the game waits on it: a signed webhook, an e-mail, or `--off`
    /// (docs/notifications.md). Uses the seat's token (a saved game's side name finds it).
    Notify(notify::NotifyArgs),
    /// List the games saved with `asl new --save`: for each, whose turn it is and both clocks,
    /// asked of each game's server as a spectator.
    Games(games::GamesArgs),
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    // A failure may quote others' words (a scenario file's, a save's, a server's): written
    // with control characters and bidi overrides escaped, whatever command failed.
    if let Err(failure) = resolve_saved(&mut cli.command) {
        eprintln!("asl: {}", client::printable_lines(&failure.to_string()));
        return ExitCode::from(failure.exit_code());
    }
    // Each write locks stdout on its own, so the futures stay `Send`; lines are still whole.
    let mut out = std::io::stdout();
    let result = match cli.command {
        Subcommand::New(args) => block_on(new::new(&args, &mut out)),
        Subcommand::Run(args) => block_on(run::run(&args, &mut out)),
        Subcommand::Play(args) => block_on(play::play(&args, &mut out)),
        Subcommand::Check(args) => check::check(&args, &mut out),
        Subcommand::Watch(args) => block_on(async {
            tokio::select! {
                result = watch::watch(&args, &mut out) => result,
                _ = tokio::signal::ctrl_c() => Ok(Status::Success),
            }
        }),
        Subcommand::State(args) => block_on(state::state(&args, &mut out)),
        Subcommand::Log(args) => block_on(log::log(&args, &mut out)),
        Subcommand::Export(args) => block_on(export::export(&args, &mut out)),
        Subcommand::Verify(args) => verify::verify(&args, &mut out),
        Subcommand::Replay(args) => block_on(replay::replay(&args, &mut out)),
        Subcommand::Import(args) => import::import(&args, &mut out),
        Subcommand::Boards(args) => boards::list(&args, &mut out),
        Subcommand::Notify(args) => block_on(notify::notify(&args, &mut out)),
        Subcommand::Games(args) => block_on(games::games(&args, &mut out)),
    };
    match result {
        Ok(status) => ExitCode::from(status.exit_code()),
        Err(failure) => {
            // Whoever read our output stopped (`asl log | head`): nothing to tell them.
            if failure != Failure::Output(std::io::ErrorKind::BrokenPipe) {
                eprintln!("asl: {}", client::printable_lines(&failure.to_string()));
            }
            ExitCode::from(failure.exit_code())
        }
    }
}

/// Replaces a saved game's name and a side's name (`--game walk --token german`) with the
/// saved id, token and server.
fn resolve_saved(command: &mut Subcommand) -> Result<(), Failure> {
    let (server, game) = match command {
        Subcommand::Run(a) => (&mut a.server, &mut a.game),
        Subcommand::Play(a) => (&mut a.server, &mut a.game),
        Subcommand::Watch(a) => (&mut a.server, &mut a.game),
        Subcommand::State(a) => (&mut a.server, &mut a.game),
        Subcommand::Log(a) => (&mut a.server, &mut a.game),
        Subcommand::Export(a) => (&mut a.server, &mut a.game),
        Subcommand::Notify(a) => (&mut a.server, &mut a.game),
        Subcommand::Replay(a) => {
            if let (Some(game), Some(token)) = (&mut a.game, &mut a.token) {
                let mut args = client::commands::GameArgs {
                    game: std::mem::take(game),
                    token: std::mem::take(token),
                };
                saved::resolve(&mut a.server, &mut args)?;
                (*game, *token) = (args.game, args.token);
            }
            return Ok(());
        }
        Subcommand::New(_)
        | Subcommand::Check(_)
        | Subcommand::Verify(_)
        | Subcommand::Boards(_)
        | Subcommand::Import(_)
        | Subcommand::Games(_) => return Ok(()),
    };
    saved::resolve(server, game)
}

/// Runs an online subcommand. One thread is plenty for one connection, and it starts faster.
fn block_on(work: impl Future<Output = Result<Status, Failure>>) -> Result<Status, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Server(format!("cannot start the async runtime: {e}")))?
        .block_on(work)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("asl").chain(args.iter().copied()))
    }

    #[test]
    fn the_parser_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn server_defaults_and_can_be_given() {
        let Subcommand::State(args) = parse(&["state", "--game", "g", "--token", "t"])
            .unwrap()
            .command
        else {
            panic!("state parses as state");
        };
        // ASL_SERVER may be set where the tests run; the flag must still win.
        if std::env::var_os("ASL_SERVER").is_none() {
            assert_eq!(args.server.url, client::DEFAULT_SERVER);
        }
        let Subcommand::Run(args) = parse(&[
            "run",
            "--server",
            "ws://h:1",
            "--game",
            "g",
            "--token",
            "t",
            "s.txt",
            "--no-wait",
        ])
        .unwrap()
        .command
        else {
            panic!("run parses as run");
        };
        assert_eq!(args.server.url, "ws://h:1");
        assert!(args.no_wait);
        assert_eq!(args.script.to_str(), Some("s.txt"));
    }

    #[test]
    fn check_takes_the_scenario_as_an_option() {
        let Subcommand::Check(args) = parse(&["check", "wa.txt", "--scenario", "b9.toml"])
            .unwrap()
            .command
        else {
            panic!("check parses as check");
        };
        assert_eq!(args.script.to_str(), Some("wa.txt"));
        assert_eq!(args.scenario.unwrap().to_str(), Some("b9.toml"));
        assert!(parse(&["check"]).is_err(), "the script is required");
    }

    #[test]
    fn review_commands_parse() {
        let Subcommand::Replay(args) = parse(&["replay", "g.log", "--to", "turn 3 German MPh"])
            .unwrap()
            .command
        else {
            panic!("replay parses as replay");
        };
        assert_eq!(args.file.unwrap().to_str(), Some("g.log"));
        assert_eq!(args.to, "turn 3 German MPh");
        let Subcommand::Replay(args) = parse(&["replay", "--game", "g", "--token", "t"])
            .unwrap()
            .command
        else {
            panic!("replay parses as replay");
        };
        assert_eq!((args.game.as_deref(), args.to.as_str()), (Some("g"), "end"));
        assert!(parse(&["replay"]).is_err(), "a file or a game");
        assert!(parse(&["replay", "g.log", "--game", "g", "--token", "t"]).is_err());
        assert!(
            parse(&["replay", "--game", "g"]).is_err(),
            "a game needs a token"
        );
        let Subcommand::Verify(args) = parse(&["verify", "g.log"]).unwrap().command else {
            panic!("verify parses as verify");
        };
        assert_eq!(args.file.to_str(), Some("g.log"));
        assert!(parse(&["export", "--game", "g"]).is_err());
        let Subcommand::Export(args) =
            parse(&["export", "--game", "g", "--token", "t", "--out", "x.log"])
                .unwrap()
                .command
        else {
            panic!("export parses as export");
        };
        assert_eq!(args.out.unwrap().to_str(), Some("x.log"));
    }

    #[test]
    fn online_commands_need_game_and_token() {
        for sub in ["watch", "state", "log"] {
            assert!(parse(&[sub, "--game", "g"]).is_err(), "{sub}");
        }
        let Subcommand::Log(args) = parse(&["log", "--game", "g", "--token", "t"])
            .unwrap()
            .command
        else {
            panic!("log parses as log");
        };
        assert_eq!(args.from, 1);
    }
}
