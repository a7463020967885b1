//! The online subcommands and the connection, driven against the stand-in server in
//! `support`: what players see, whose turn it is, and that the local game never drifts.

mod support;

use client::commands::log::{log, LogArgs};
use client::commands::new::{new, NewArgs};
use client::commands::run::{run, RunArgs};
use client::commands::state::{state, StateArgs};
use client::commands::watch::{watch, WatchArgs};
use client::commands::{GameArgs, ServerArg};
use client::{Connection, Failure, Reply, Status};
use protocol::{Command, Game};
use std::path::PathBuf;
use std::time::Duration;
use support::{FakeServer, Options, GAME, GERMAN, RUSSIAN, SPECTATOR};

/// Long enough for any of these games on a loaded machine; a hang fails instead of stalling.
const TEST_WAIT_MAX: Duration = Duration::from_secs(20);

fn server(s: &FakeServer) -> ServerArg {
    ServerArg { url: s.url.clone() }
}

fn game(token: &str) -> GameArgs {
    GameArgs {
        game: GAME.into(),
        token: token.into(),
    }
}

fn script(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run_args(s: &FakeServer, token: &str, script: PathBuf) -> RunArgs {
    RunArgs {
        server: server(s),
        game: game(token),
        script,
        no_wait: false,
        json: false,
    }
}

fn watch_args(s: &FakeServer, count: Option<u64>, json: bool) -> WatchArgs {
    WatchArgs {
        server: server(s),
        game: game(SPECTATOR),
        json,
        count,
    }
}

/// Runs a script to the end, returning its status and what it printed.
async fn play(args: RunArgs) -> (Result<Status, Failure>, String) {
    let mut out = vec![];
    let result = tokio::time::timeout(TEST_WAIT_MAX, run(&args, &mut out))
        .await
        .expect("the script finishes");
    (result, String::from_utf8(out).unwrap())
}

/// German: through the RPh and PFPh into the MPh, one move, then the end of the MPh.
const GERMAN_SCRIPT: &str = "\
german done
done
done                        => ok phase=MPh
move 447a I8                => ok mf_spent=447a:3 hex=447a:I8
german done                 => ok phase=DFPh acting=russian
";

/// Russian: its end-of-RPh step, then the DFPh. Each `done` must wait for the German, so the
/// two scripts make the same nine-event log however they are scheduled.
const RUSSIAN_SCRIPT: &str = "\
russian done                => ok phase=PFPh
done                        => ok phase=AFPh acting=german
adjudicate 467a pin \"IFT 2, DR 7\" => ok pinned=467a
";

#[tokio::test]
async fn new_prints_tokens_as_text_and_json() {
    let s = FakeServer::start(Options::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let scenario = script(&dir, "s.toml", support::SCENARIO);
    let mut args = NewArgs {
        server: server(&s),
        scenario,
        json: true,
        admin_token: None,
    };
    let mut out = vec![];
    assert_eq!(new(&args, &mut out).await, Ok(Status::Success));
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["game"], GAME);
    assert_eq!(v["sides"][0]["name"], "German");
    assert_eq!(v["tokens"]["side_b"], RUSSIAN);
    assert_eq!(v["tokens"]["spectator"], SPECTATOR);

    args.json = false;
    let mut out = vec![];
    new(&args, &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(&format!(
            "asl run --server {} --game {GAME} --token {GERMAN} script.txt",
            s.url
        )),
        "{text}"
    );
}

/// Two players' scripts, run at once, interleave by whose turn it is, and every expectation
/// (checked against each player's own local game) holds.
#[tokio::test]
async fn two_scripts_interleave_by_turn() {
    let s = FakeServer::with_game(Options::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let german = run_args(&s, GERMAN, script(&dir, "g.txt", GERMAN_SCRIPT));
    let russian = run_args(&s, RUSSIAN, script(&dir, "r.txt", RUSSIAN_SCRIPT));
    let ((g, g_out), (r, r_out)) = tokio::join!(play(german), play(russian));
    assert_eq!(g, Ok(Status::Success), "{g_out}");
    assert_eq!(r, Ok(Status::Success), "{r_out}");
    assert!(
        g_out.contains("4: move 447a I8 -> accepted: 447a 55H7 → 55I8: 3 MF = "),
        "{g_out}"
    );
    assert!(!g_out.contains("expectation failed"), "{g_out}");
    assert_eq!(g_out.lines().count(), 5, "{g_out}");
    assert!(
        r_out.starts_with("1: russian done -> accepted: Russian ended end of RPh"),
        "{r_out}"
    );
    assert_eq!(s.game().version, 1 + 5 + 3);
}

/// The reply can come before the other player's events that precede it; the runner waits for
/// those rather than apply its own events over a gap.
#[tokio::test]
async fn late_events_are_waited_for() {
    let s = FakeServer::with_game(Options {
        late_events: true,
        ..Options::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let german = run_args(&s, GERMAN, script(&dir, "g.txt", GERMAN_SCRIPT));
    let russian = run_args(&s, RUSSIAN, script(&dir, "r.txt", RUSSIAN_SCRIPT));
    let ((g, g_out), (r, r_out)) = tokio::join!(play(german), play(russian));
    assert_eq!(g, Ok(Status::Success), "{g_out}");
    assert_eq!(r, Ok(Status::Success), "{r_out}");
}

#[tokio::test]
async fn failed_expectations_and_refusals_are_reported() {
    let s = FakeServer::with_game(Options::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let text = "move 467a H6 => ok\ndone => ok phase=PFPh\ndone => refused\n";
    let mut args = run_args(&s, GERMAN, script(&dir, "g.txt", text));
    args.no_wait = true;
    args.json = true;
    let (result, out) = play(args).await;
    assert_eq!(result, Ok(Status::ExpectationsFailed), "{out}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["accepted"], false);
    assert_eq!(lines[0]["violation"]["rule"], "A4");
    assert_eq!(lines[0]["failures"].as_array().unwrap().len(), 1);
    assert_eq!(lines[1]["accepted"], true);
    assert!(lines[1]["failures"][0]
        .as_str()
        .unwrap()
        .contains("the phase is RPh, not PFPh"));
    assert_eq!(lines[2]["accepted"], true);
    assert_eq!(
        lines[2]["failures"][0],
        "expected a refusal, but it was accepted"
    );
}

#[tokio::test]
async fn bad_scripts_and_tokens_stop_before_sending() {
    let s = FakeServer::with_game(Options::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            GERMAN,
            "done\nrussian done\n",
            2,
            "g.txt:2: the line is for the Russian",
        ),
        (
            GERMAN,
            "dice 3\n",
            2,
            "g.txt:1: `dice` lines work only offline",
        ),
        (
            GERMAN,
            "german fly 467a\n",
            2,
            "g.txt:1: unknown command `fly`",
        ),
        (SPECTATOR, "done\n", 2, "spectator token"),
        ("nobody", "done\n", 3, "(bad_token)"),
    ];
    for (token, text, code, message) in cases {
        let (result, out) = play(run_args(&s, token, script(&dir, "g.txt", text))).await;
        let failure = result.unwrap_err();
        assert_eq!(failure.exit_code(), code, "{failure}");
        assert!(failure.to_string().contains(message), "{failure}");
        assert!(out.is_empty());
    }
    assert_eq!(s.game().version, 1, "nothing was sent");
}

/// Events from the other player that arrive while a command waits are kept for
/// `next_event`, in order.
#[tokio::test]
async fn connection_buffers_events_while_a_command_waits() {
    let s = FakeServer::with_game(Options::default()).await;
    let mut german = Connection::connect(&s.url).await.unwrap();
    let mut russian = Connection::connect(&s.url).await.unwrap();
    german.join(GAME, GERMAN, None).await.unwrap();
    let joined = russian.join(GAME, RUSSIAN, None).await.unwrap();
    assert_eq!(joined.version, 1);
    let reply = german.command(1, Command::Done).await.unwrap();
    assert!(
        matches!(reply, Reply::Accepted { version: 2, .. }),
        "{reply:?}"
    );
    // The German is still to act, so this is refused; event #2 waits behind the reply.
    let reply = russian.command(7, Command::Done).await.unwrap();
    assert!(
        matches!(reply, Reply::Refused { version: 2, .. }),
        "{reply:?}"
    );
    german.command(2, Command::Done).await.unwrap();
    let reply = russian.command(8, Command::Done).await.unwrap();
    assert!(
        matches!(reply, Reply::Accepted { version: 4, .. }),
        "{reply:?}"
    );
    assert_eq!(russian.next_event().await.unwrap().seq, 2);
    assert_eq!(russian.next_event().await.unwrap().seq, 3);
    assert_eq!(russian.version(), 4);
    let state = russian.get_state().await.unwrap();
    assert_eq!(state.version, 4);
    assert_eq!(state.state_hash, state.state.state_hash());
}

/// A connection that waits quietly for the other player pings the server, so a server that
/// closes idle connections keeps it.
#[tokio::test]
async fn waiting_quietly_keeps_the_connection_alive() {
    let s = FakeServer::with_game(Options {
        idle_timeout: Duration::from_millis(200),
        ..Options::default()
    })
    .await;
    let mut russian = Connection::connect(&s.url).await.unwrap();
    russian.set_keepalive_after(Duration::from_millis(50));
    russian.join(GAME, RUSSIAN, None).await.unwrap();
    let url = s.url.clone();
    let german = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let mut german = Connection::connect(&url).await.unwrap();
        german.join(GAME, GERMAN, None).await.unwrap();
        german.command(1, Command::Done).await.unwrap();
    });
    let event = tokio::time::timeout(TEST_WAIT_MAX, russian.next_event())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(event.seq, 2);
    german.await.unwrap();
}

/// The watcher joins, then the game is played: it prints every event once, with headers.
#[tokio::test]
async fn watch_prints_events_with_phase_headers() {
    let s = FakeServer::with_game(Options::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let args = watch_args(&s, Some(5), false);
    let watcher = tokio::spawn(async move {
        let mut out = vec![];
        let result = watch(&args, &mut out).await;
        (result, String::from_utf8(out).unwrap())
    });
    s.wait_for_joins(1).await;
    let (result, out) = play(run_args(&s, GERMAN, script(&dir, "g.txt", "done\ndone\n"))).await;
    assert_eq!(result, Ok(Status::Success), "{out}");
    let russian = "russian done\nadjudicate 467a pin\n";
    let (result, out) = play(run_args(&s, RUSSIAN, script(&dir, "r.txt", russian))).await;
    assert!(result.is_ok(), "{out}");
    let (g, _) = play(run_args(&s, GERMAN, script(&dir, "g.txt", "done\n"))).await;
    assert!(g.is_ok());

    let (result, out) = tokio::time::timeout(TEST_WAIT_MAX, watcher)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result, Ok(Status::Success));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("Watching \"B9.41"), "{out}");
    assert_eq!(lines[1], "== Turn 1, German Player Turn: RPh ==", "{out}");
    assert!(lines[2].starts_with("#2  German ended RPh;"), "{out}");
    assert!(
        lines.contains(&"== Turn 1, German Player Turn: PFPh =="),
        "{out}"
    );
    let seqs: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_once("  ").map(|(s, _)| s))
        .filter(|s| s.starts_with('#'))
        .collect();
    assert_eq!(seqs, ["#2", "#3", "#4", "#5", "#6"], "{out}");
}

/// The connection drops twice mid-stream; the watcher resumes from its version and prints
/// every event exactly once.
#[tokio::test]
async fn watch_resumes_without_gaps_or_duplicates() {
    let s = FakeServer::with_game(Options {
        drops: 2,
        drop_after: 2,
        ..Options::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let args = watch_args(&s, Some(8), true);
    let watcher = tokio::spawn(async move {
        let mut out = vec![];
        let result = watch(&args, &mut out).await;
        (result, String::from_utf8(out).unwrap())
    });
    s.wait_for_joins(1).await;
    let german = run_args(&s, GERMAN, script(&dir, "g.txt", GERMAN_SCRIPT));
    let russian = run_args(&s, RUSSIAN, script(&dir, "r.txt", RUSSIAN_SCRIPT));
    let ((g, g_out), (r, r_out)) = tokio::join!(play(german), play(russian));
    assert!(g.is_ok() && r.is_ok(), "{g_out}\n{r_out}");

    let (result, out) = tokio::time::timeout(TEST_WAIT_MAX, watcher)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result, Ok(Status::Success));
    let seqs: Vec<u64> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (2..=9).collect::<Vec<u64>>(), "{out}");
    let joins = s.joins();
    assert_eq!(joins[0], None);
    assert_eq!(
        joins.iter().filter(|j| j.is_some()).count(),
        2,
        "resumed twice: {joins:?}"
    );
}

#[tokio::test]
async fn watch_of_a_finished_game_returns_at_once() {
    let s = FakeServer::with_game(Options::default()).await;
    let dir = tempfile::tempdir().unwrap();
    // Two Game Turns of eleven steps per Player Turn: 44 `done`s end the game.
    let mut both = String::new();
    for _ in 0..2 {
        for side in ["german", "russian"] {
            let (attacker, defender) = if side == "german" {
                ("german", "russian")
            } else {
                ("russian", "german")
            };
            for who in [
                attacker, attacker, defender, attacker, attacker, defender, attacker, attacker,
                defender, attacker, attacker,
            ] {
                both += &format!("{who} done\n");
            }
        }
    }
    let german: String = both
        .lines()
        .filter(|l| l.starts_with("german"))
        .map(|l| format!("{l}\n"))
        .collect();
    let russian: String = both
        .lines()
        .filter(|l| l.starts_with("russian"))
        .map(|l| format!("{l}\n"))
        .collect();
    let g = run_args(&s, GERMAN, script(&dir, "g.txt", &german));
    let r = run_args(&s, RUSSIAN, script(&dir, "r.txt", &russian));
    let ((g, g_out), (r, r_out)) = tokio::join!(play(g), play(r));
    assert!(g.is_ok() && r.is_ok(), "{g_out}\n{r_out}");
    assert!(s.game().over, "{g_out}\n{r_out}");

    let mut out = vec![];
    let result = tokio::time::timeout(TEST_WAIT_MAX, watch(&watch_args(&s, None, false), &mut out))
        .await
        .unwrap();
    assert_eq!(result, Ok(Status::Success));
    assert!(String::from_utf8(out)
        .unwrap()
        .ends_with("the game is over.\n"));
}

#[tokio::test]
async fn log_pages_through_and_prints_from_n() {
    let s = FakeServer::with_game(Options {
        page_max: 3,
        ..Options::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let german = run_args(&s, GERMAN, script(&dir, "g.txt", GERMAN_SCRIPT));
    let russian = run_args(&s, RUSSIAN, script(&dir, "r.txt", RUSSIAN_SCRIPT));
    let ((g, _), (r, _)) = tokio::join!(play(german), play(russian));
    assert!(g.is_ok() && r.is_ok());

    let mut args = LogArgs {
        server: server(&s),
        game: game(SPECTATOR),
        json: false,
        from: 1,
    };
    let mut out = vec![];
    assert_eq!(log(&args, &mut out).await, Ok(Status::Success));
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("#1  game created from scenario \"B9.41"),
        "{text}"
    );
    assert!(
        text.contains("== Turn 1, German Player Turn: MPh ==\n#6  447a 55H7 → 55I8"),
        "{text}"
    );
    assert!(
        text.ends_with("#8  Russian ended DFPh; now turn 1 AFPh (A3.5), German to act\n== Turn 1, German Player Turn: AFPh ==\n#9  Russian adjudicated: 467a pin (IFT 2, DR 7)\n"),
        "{text}"
    );

    args.from = 6;
    let mut out = vec![];
    log(&args, &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("== Turn 1, German Player Turn: MPh ==\n#6  "),
        "{text}"
    );

    args.json = true;
    let mut out = vec![];
    log(&args, &mut out).await.unwrap();
    let seqs: Vec<u64> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [6, 7, 8, 9]);
}

#[tokio::test]
async fn state_prints_the_projection() {
    let s = FakeServer::with_game(Options::default()).await;
    let args = StateArgs {
        server: server(&s),
        game: game(RUSSIAN),
        json: true,
    };
    let mut out = vec![];
    assert_eq!(state(&args, &mut out).await, Ok(Status::Success));
    let game: Game = serde_json::from_slice(&out).unwrap();
    assert_eq!(game, s.game());

    let mut out = vec![];
    state(
        &StateArgs {
            json: false,
            ..args
        },
        &mut out,
    )
    .await
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("Viewing as:  Russian\n"), "{text}");
    assert!(text.contains("Version:     1\n"), "{text}");
    assert!(
        text.contains(&format!("State hash:  {}\n", s.game().state_hash())),
        "{text}"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_exit_code_3() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    drop(listener);
    let args = StateArgs {
        server: ServerArg { url },
        game: game(GERMAN),
        json: false,
    };
    let failure = state(&args, &mut vec![]).await.unwrap_err();
    assert_eq!(failure.exit_code(), 3, "{failure}");
}
