//! The online subcommands and the connection, driven against the real server (`server::run`
//! through `e2e::TestServer`, with a sled store in a temporary directory): what players see,
//! whose turn it is, and that the local game never drifts.
//!
//! Every game is created for real, from the shipped B9.41 scenario (German = side A, moving
//! first; Russian = side B).

use client::commands::log::{log, LogArgs};
use client::commands::new::{new, NewArgs};
use client::commands::run::{run, RunArgs};
use client::commands::state::{state, StateArgs};
use client::commands::watch::{watch, WatchArgs};
use client::commands::{GameArgs, ServerArg};
use client::{Connection, Failure, NewGame, Reply, Status};
use e2e::TestServer;
use protocol::event::GameCreated;
use protocol::ReadScenario;
use protocol::{apply, Command, Event, Game, Scenario, Side, Viewer};
use server::operations::config::Config;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;

/// Long enough for any of these games on a loaded machine; a hang fails instead of stalling.
const TEST_WAIT_MAX: Duration = Duration::from_secs(20);

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

fn scenario_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/b9-41-wall-advantage.toml")
}

/// A real server on a fresh data directory. The directory is returned so it outlives the
/// server, and so a test can start another server on it.
async fn start(config: Config) -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), config).await;
    (dir, server)
}

/// Creates the B9.41 game, as `asl new` does.
async fn create_game(s: &TestServer) -> NewGame {
    let mut connection = Connection::connect(&s.url).await.unwrap();
    let created = connection.create_game(SCENARIO, None).await.unwrap();
    connection.close().await;
    created
}

/// The game as the spectator sees it on the server now.
async fn server_game(s: &TestServer, g: &NewGame) -> Game {
    let mut connection = Connection::connect(&s.url).await.unwrap();
    let joined = connection
        .join(&g.game, &g.tokens.spectator, None)
        .await
        .unwrap();
    connection.close().await;
    joined.state.expect("a fresh join carries a snapshot")
}

fn server(s: &TestServer) -> ServerArg {
    ServerArg { url: s.url.clone() }
}

fn game(g: &NewGame, token: &str) -> GameArgs {
    GameArgs {
        game: g.game.clone(),
        token: token.into(),
    }
}

fn script(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run_args(s: &TestServer, g: &NewGame, token: &str, script: PathBuf) -> RunArgs {
    RunArgs {
        server: server(s),
        game: game(g, token),
        script,
        no_wait: false,
        keep_going: false,
        fresh: false,
        json: false,
    }
}

fn watch_args(s: &TestServer, g: &NewGame, count: Option<u64>, json: bool) -> WatchArgs {
    WatchArgs {
        server: server(s),
        game: game(g, &g.tokens.spectator),
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

/// A report a subcommand running in the background is still writing, readable meanwhile.
#[derive(Clone, Default)]
struct Report(Arc<Mutex<Vec<u8>>>);

impl Write for Report {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Report {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    /// Waits until a line starting with `prefix` has been written.
    async fn wait_for_line(&self, prefix: &str) {
        let written = async {
            while !self.text().lines().any(|l| l.starts_with(prefix)) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        if tokio::time::timeout(TEST_WAIT_MAX, written).await.is_err() {
            panic!("no line starting {prefix:?} in:\n{}", self.text());
        }
    }
}

/// Starts `asl watch` in the background and waits until it has joined (its preface is out),
/// so every event played from then on is one it must print.
async fn start_watching(args: WatchArgs) -> (JoinHandle<Result<Status, Failure>>, Report) {
    assert!(
        !args.json,
        "the preface, which says it joined, is text only"
    );
    let report = Report::default();
    let mut out = report.clone();
    let watcher = tokio::spawn(async move { watch(&args, &mut out).await });
    report.wait_for_line("Watching ").await;
    (watcher, report)
}

/// The `#SEQ` of each event line of a text record, in order.
fn event_seqs(record: &str) -> Vec<u64> {
    record
        .lines()
        .filter_map(|l| l.strip_prefix('#')?.split_once("  ")?.0.parse().ok())
        .collect()
}

/// German: through the RPh and PFPh into the MPh, one move, then the end of the MPh.
const GERMAN_SCRIPT: &str = "\
german done
done                        => ok phase=MPh
move 447a I8                => ok mf_spent=447a:3 hex=447a:I8
german done                 => ok phase=DFPh acting=russian
";

/// Russian: the DFPh, where it enters what its fire did (no unit of either side could claim WA
/// at the end of the RPh, so both of its steps pass by themselves, B9.322). Every line waits
/// until the Russian is to act, so the two scripts make the same eleven-event log however they
/// are scheduled: `GameCreated`, eight events of the German's (the RPh's end and the two steps
/// that passed, two more `done`s, and the move's three: 447a loses WA (B9.41), moves, and the
/// 3-3-7 across the wall must claim it (B9.323)) and two of the Russian's.
const RUSSIAN_SCRIPT: &str = "\
adjudicate 467a pin \"IFT 2, DR 7\" => ok pinned=467a
done                        => ok phase=AFPh acting=german
";

/// Plays both scripts at once to the end.
async fn play_both(s: &TestServer, g: &NewGame, dir: &tempfile::TempDir) -> (String, String) {
    let german = run_args(s, g, &g.tokens.side_a, script(dir, "g.txt", GERMAN_SCRIPT));
    let russian = run_args(s, g, &g.tokens.side_b, script(dir, "r.txt", RUSSIAN_SCRIPT));
    let ((g, g_out), (r, r_out)) = tokio::join!(play(german), play(russian));
    assert_eq!(g, Ok(Status::Success), "{g_out}");
    assert_eq!(r, Ok(Status::Success), "{r_out}");
    (g_out, r_out)
}

/// `asl new` creates a real game: the tokens it prints, as JSON or as text with commands to
/// paste, are the ones the server then accepts, each for its own seat.
#[tokio::test]
async fn new_prints_tokens_as_text_and_json() {
    let (_dir, s) = start(Config::default()).await;
    let mut args = NewArgs {
        boards: Default::default(),
        server: server(&s),
        scenario: scenario_path(),
        json: true,
        admin_token: None,
        save: None,
        clock: None,
    };
    let mut out = vec![];
    assert_eq!(new(&args, &mut out).await, Ok(Status::Success));
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let id = v["game"].as_str().unwrap().to_string();
    assert_eq!(v["sides"][0]["name"], "German");
    assert_eq!(v["sides"][1]["id"], "russian");
    let seats = [
        ("side_a", Viewer::Side(Side::A)),
        ("side_b", Viewer::Side(Side::B)),
        ("spectator", Viewer::Spectator),
    ];
    for (field, viewer) in seats {
        let token = v["tokens"][field].as_str().unwrap();
        let mut connection = Connection::connect(&s.url).await.unwrap();
        let joined = connection.join(&id, token, None).await.unwrap();
        assert_eq!(joined.viewer, viewer, "{field}");
        assert_eq!(joined.version, 1, "only GameCreated");
    }

    args.json = false;
    let mut out = vec![];
    new(&args, &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    let second = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("Game "))
        .and_then(|l| l.strip_suffix(" created."))
        .unwrap_or_else(|| panic!("no game id in:\n{text}"));
    assert_ne!(second, id, "a second game");
    let german = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("German (german)"))
        .and_then(|l| l.trim().strip_prefix("token "))
        .unwrap_or_else(|| panic!("no German token in:\n{text}"));
    assert!(
        text.contains(&format!(
            "asl run --server {} --game {second} --token {german} script.txt",
            s.url
        )),
        "{text}"
    );
    let mut connection = Connection::connect(&s.url).await.unwrap();
    let joined = connection.join(second, german, None).await.unwrap();
    assert_eq!(joined.viewer, Viewer::Side(Side::A));
    s.stop().await;
}

/// Two players' scripts, run at once, interleave by whose turn it is, and every expectation
/// (checked against each player's own local game) holds.
#[tokio::test]
async fn two_scripts_interleave_by_turn() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let (g_out, r_out) = play_both(&s, &g, &dir).await;
    assert!(
        g_out.contains(
            "3: move 447a I8 -> accepted: 447a Wall Advantage lost on starting to enter a new \
             Location (B9.41); 447a 55H7 → 55I8: 3 MF = "
        ),
        "{g_out}"
    );
    // The Russian unit is under "?": the German knows it by its alias only.
    assert!(
        g_out.contains("; ?1 claimed Wall Advantage mandatory"),
        "{g_out}"
    );
    assert!(!g_out.contains("expectation failed"), "{g_out}");
    assert!(!r_out.contains("expectation failed"), "{r_out}");
    assert_eq!(g_out.lines().count(), 4, "{g_out}");
    assert_eq!(r_out.lines().count(), 2, "{r_out}");
    assert!(
        r_out.starts_with("1: adjudicate 467a pin \"IFT 2, DR 7\" -> accepted"),
        "{r_out}"
    );
    assert!(
        g_out.starts_with("1: german done -> accepted: German ended RPh")
            && g_out.contains("ATTACKER passed")
            && g_out.contains("DEFENDER passed"),
        "{g_out}"
    );
    let game = server_game(&s, &g).await;
    assert_eq!(game.version, 1 + (5 + 3) + 2);
    assert!(game.units["467a"].pinned);
    // The spectator knows the concealed Russian squad by its alias only.
    assert!(game.units["?1"].wall_advantage);
    s.stop().await;
}

/// B9.41 EX: the 4-6-7 leaving H5 gives the Russian 7-4-7 a chance to claim WA, and play waits
/// for the answer (B9.322) though the MPh is the German's. The Russian's `decline-wa` is sent
/// during the German's step, and the German's `done` only after it: sent at once, it would be
/// refused B9.322 and fail its expectation.
#[tokio::test]
async fn scripts_wait_for_the_side_offered_wall_advantage() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let german_script = "\
german done
done                        => ok phase=MPh
move 467a H6                => ok hex=467a:H6 chance=russian
done                        => ok phase=DFPh acting=russian
";
    let russian_script = "\
decline-wa                  => ok chance=none no_wa=747a wa=467a
done                        => ok phase=AFPh acting=german
";
    let german = run_args(
        &s,
        &g,
        &g.tokens.side_a,
        script(&dir, "g.txt", german_script),
    );
    let russian = run_args(
        &s,
        &g,
        &g.tokens.side_b,
        script(&dir, "r.txt", russian_script),
    );
    let ((g_res, g_out), (r_res, r_out)) = tokio::join!(play(german), play(russian));
    assert_eq!(g_res, Ok(Status::Success), "{g_out}");
    assert_eq!(r_res, Ok(Status::Success), "{r_out}");
    assert!(!g_out.contains("refused"), "{g_out}");
    assert!(
        r_out.contains(
            "1: decline-wa -> accepted: Russian let the chance to claim Wall Advantage pass"
        ),
        "{r_out}"
    );
    let game = server_game(&s, &g).await;
    // GameCreated, the German's 3 `done`s with the 2 end-of-RPh steps that passed and 3 move
    // events (WA lost, the move, the chance), and the Russian's `done` and its decline, after
    // which the 4-6-7 must claim WA.
    assert_eq!(game.version, 1 + (5 + 3) + (1 + 2));
    assert!(game.wa_chance.is_none());
    assert!(game.units["467a"].wall_advantage);
    s.stop().await;
}

#[tokio::test]
async fn failed_expectations_and_refusals_are_reported() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let text = "move 467a H6 => ok\ndone => ok phase=MPh\ndone => refused\n";
    let mut args = run_args(&s, &g, &g.tokens.side_a, script(&dir, "g.txt", text));
    args.no_wait = true;
    args.json = true;
    args.keep_going = true;
    let (result, out) = play(args).await;
    assert_eq!(result, Ok(Status::Refused), "{out}");
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
        .contains("the phase is PFPh, not MPh"));
    assert_eq!(lines[2]["accepted"], true);
    assert_eq!(
        lines[2]["failures"][0],
        "expected a refusal, but it was accepted"
    );
    s.stop().await;
}

/// A refusal the script did not expect stops it there, with exit status 1; `--keep-going`
/// plays on. A refusal the script expects (`=> refused`) is no reason to stop.
#[tokio::test]
async fn a_refusal_stops_the_script_unless_told_to_keep_going() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let text = "done => refused\nmove 467a H6\ndone\n";
    let mut args = run_args(&s, &g, &g.tokens.side_b, script(&dir, "r.txt", text));
    args.no_wait = true;
    let (result, out) = play(args.clone()).await;
    assert_eq!(result, Ok(Status::Refused), "{out}");
    assert_eq!(result.unwrap().exit_code(), 1);
    assert_eq!(out.lines().count(), 2, "stopped at line 2:\n{out}");
    args.keep_going = true;
    let (result, out) = play(args).await;
    assert_eq!(result, Ok(Status::Refused), "{out}");
    assert_eq!(out.lines().count(), 3, "played on:\n{out}");
    s.stop().await;
}

#[tokio::test]
async fn bad_scripts_and_tokens_stop_before_sending() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let german = g.tokens.side_a.as_str();
    let cases = [
        (
            german,
            "done\nrussian done\n",
            2,
            "g.txt:2: the line is for the Russian",
        ),
        (
            german,
            "dice 3\n",
            2,
            "g.txt:1: `dice` lines work only offline",
        ),
        (
            german,
            "german fly 467a\n",
            2,
            "g.txt:1: unknown command `fly`",
        ),
        (g.tokens.spectator.as_str(), "done\n", 2, "spectator token"),
        ("nobody", "done\n", 3, "(bad_token)"),
    ];
    for (token, text, code, message) in cases {
        let (result, out) = play(run_args(&s, &g, token, script(&dir, "g.txt", text))).await;
        let failure = result.unwrap_err();
        assert_eq!(failure.exit_code(), code, "{failure}");
        assert!(failure.to_string().contains(message), "{failure}");
        assert!(out.is_empty());
    }
    assert_eq!(server_game(&s, &g).await.version, 1, "nothing was sent");
    s.stop().await;
}

/// Events from the other player that arrive while a command waits are kept for
/// `next_event`, in order.
#[tokio::test]
async fn connection_buffers_events_while_a_command_waits() {
    let (_dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let mut german = Connection::connect(&s.url).await.unwrap();
    let mut russian = Connection::connect(&s.url).await.unwrap();
    german.join(&g.game, &g.tokens.side_a, None).await.unwrap();
    let joined = russian.join(&g.game, &g.tokens.side_b, None).await.unwrap();
    assert_eq!(joined.version, 1);
    // The RPh ends (#2) and both its end steps pass by themselves (#3, #4, B9.322).
    let reply = german.command(1, Command::Done, None).await.unwrap();
    assert!(
        matches!(reply, Reply::Accepted { version: 4, .. }),
        "{reply:?}"
    );
    // The German is still to act, so this is refused; events #2–#4 came before the reply.
    let reply = russian.command(7, Command::Done, None).await.unwrap();
    assert!(
        matches!(reply, Reply::Refused { version: 4, .. }),
        "{reply:?}"
    );
    // The PFPh (#5) and the MPh (#6) end: the Russian's DFPh.
    german.command(2, Command::Done, None).await.unwrap();
    german.command(3, Command::Done, None).await.unwrap();
    let reply = russian.command(8, Command::Done, None).await.unwrap();
    assert!(
        matches!(reply, Reply::Accepted { version: 7, .. }),
        "{reply:?}"
    );
    for seq in 2..=6 {
        assert_eq!(russian.next_event().await.unwrap().seq, seq);
    }
    assert_eq!(russian.version(), 7);
    let state = russian.get_state().await.unwrap();
    assert_eq!(state.version, 7);
    assert_eq!(state.state_hash, state.state.state_hash());
    s.stop().await;
}

/// A connection that waits quietly for the other player pings the server, so a server that
/// closes idle connections keeps it. The pings come ten times per idle timeout, so a loaded
/// machine that delays a few of them by most of a second still keeps the connection.
#[tokio::test]
async fn waiting_quietly_keeps_the_connection_alive() {
    let idle_timeout = Duration::from_secs(1);
    let (_dir, s) = start(Config {
        idle_timeout,
        ..Config::default()
    })
    .await;
    let g = create_game(&s).await;
    let mut russian = Connection::connect(&s.url).await.unwrap();
    russian.set_keepalive_after(idle_timeout / 10);
    russian.join(&g.game, &g.tokens.side_b, None).await.unwrap();
    let (url, id, token) = (s.url.clone(), g.game.clone(), g.tokens.side_a.clone());
    let german = tokio::spawn(async move {
        // Three idle timeouts of silence on the Russian's connection.
        tokio::time::sleep(idle_timeout * 3).await;
        let mut german = Connection::connect(&url).await.unwrap();
        german.join(&id, &token, None).await.unwrap();
        german.command(1, Command::Done, None).await.unwrap();
    });
    let event = tokio::time::timeout(TEST_WAIT_MAX, russian.next_event())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(event.seq, 2);
    german.await.unwrap();
    s.stop().await;
}

/// The watcher joins, then the game is played: it prints every event once, under a header for
/// each phase — the nine of these turns, the move's three (WA lost, the move, the 3-3-7's
/// claim) among them.
#[tokio::test]
async fn watch_prints_events_with_phase_headers() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let (watcher, report) = start_watching(watch_args(&s, &g, Some(9), false)).await;
    // The RPh ends and both its end steps pass by themselves (#2–#4, B9.322): the German
    // plays on through the PFPh into the MPh.
    let turns = [
        (&g.tokens.side_a, "done\ndone\nmove 447a I8\ndone\n"),
        (&g.tokens.side_b, "adjudicate 467a pin\n"),
    ];
    for (i, (token, text)) in turns.into_iter().enumerate() {
        let path = script(&dir, &format!("p{i}.txt"), text);
        let (result, out) = play(run_args(&s, &g, token, path)).await;
        assert_eq!(result, Ok(Status::Success), "{out}");
    }

    let result = tokio::time::timeout(TEST_WAIT_MAX, watcher)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result, Ok(Status::Success));
    let out = report.text();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("Watching \"B9.41"), "{out}");
    assert_eq!(lines[1], "== Turn 1, German Player Turn: RPh ==", "{out}");
    assert!(lines[2].starts_with("#2  German ended RPh;"), "{out}");
    for phase in ["PFPh", "MPh", "DFPh"] {
        let header = format!("== Turn 1, German Player Turn: {phase} ==");
        assert_eq!(
            lines.iter().filter(|l| **l == header).count(),
            1,
            "{header} once in:\n{out}"
        );
    }
    assert!(
        out.contains(
            "== Turn 1, German Player Turn: MPh ==\n\
             #6  447a Wall Advantage lost on starting to enter a new Location (B9.41)\n\
             #7  447a 55H7 → 55I8: "
        ),
        "{out}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("#10  Russian adjudicated: 467a pin"),
        "{out}"
    );
    assert_eq!(event_seqs(&out), (2..=10).collect::<Vec<u64>>(), "{out}");
    s.stop().await;
}

/// The server stops under a watcher (which is told `shutting_down`, and the socket closes);
/// events are played while it cannot connect, on a server at an address it does not know, and
/// the server comes back at its address. It resumes with `since`, catches up, and goes on
/// through a second restart. Every event is printed exactly once: a resume by snapshot would
/// skip the missed ones, a resume from scratch would repeat the early ones.
#[tokio::test]
async fn watch_resumes_without_gaps_or_duplicates() {
    let (dir, first) = start(Config::default()).await;
    let scripts = tempfile::tempdir().unwrap();
    let addr = first.addr;
    let g = create_game(&first).await;
    let (watcher, report) = start_watching(watch_args(&first, &g, Some(10), false)).await;
    let turn = |s: &TestServer, token: &str, text: &str| {
        let mut args = run_args(s, &g, token, script(&scripts, "p.txt", text));
        args.fresh = true; // one file, a new script each turn
        play(args)
    };

    // Seen live: the RPh's end (#2) and its two end steps passing by themselves (#3, #4,
    // B9.322).
    let (result, out) = turn(&first, &g.tokens.side_a, "done\n").await;
    assert_eq!(result, Ok(Status::Success), "{out}");
    report.wait_for_line("#4  ").await;
    first.stop().await;

    // Played on the same log at an address the watcher does not know, so it can only learn of
    // these by resuming: #5, the PFPh's end, and #6 to #8 (the move is three events: WA lost,
    // the move, the 3-3-7's claim).
    let elsewhere = TestServer::start(dir.path(), Config::default()).await;
    let (result, out) = turn(&elsewhere, &g.tokens.side_a, "done\nmove 447a I8\n").await;
    assert_eq!(result, Ok(Status::Success), "{out}");
    elsewhere.stop().await;

    // Back at the watcher's address: it catches up, then sees the rest live.
    let back = TestServer::start_at(dir.path(), Config::default(), addr).await;
    report.wait_for_line("#8  ").await;
    let (result, out) = turn(&back, &g.tokens.side_a, "done\n").await;
    assert_eq!(result, Ok(Status::Success), "{out}");
    report.wait_for_line("#9  ").await;
    back.stop().await;

    // A second restart in place, with nothing missed this time.
    let again = TestServer::start_at(dir.path(), Config::default(), addr).await;
    let (result, out) = turn(&again, &g.tokens.side_b, "adjudicate 467a pin\ndone\n").await;
    assert_eq!(result, Ok(Status::Success), "{out}");

    let result = tokio::time::timeout(TEST_WAIT_MAX, watcher)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result, Ok(Status::Success));
    let out = report.text();
    assert_eq!(event_seqs(&out), (2..=11).collect::<Vec<u64>>(), "{out}");
    again.stop().await;
}

#[tokio::test]
async fn watch_of_a_finished_game_returns_at_once() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    // Two Game Turns of eleven steps per Player Turn, the two at the end of each RPh passing
    // by themselves (no unit could claim WA, B9.322): 36 `done`s end the game.
    let mut both = String::new();
    for _ in 0..2 {
        for (attacker, defender) in [("german", "russian"), ("russian", "german")] {
            for who in [
                attacker, attacker, attacker, defender, attacker, attacker, defender, attacker,
                attacker,
            ] {
                both += &format!("{who} done\n");
            }
        }
    }
    let lines_of = |side: &str| -> String {
        both.lines()
            .filter(|l| l.starts_with(side))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let german = run_args(
        &s,
        &g,
        &g.tokens.side_a,
        script(&dir, "g.txt", &lines_of("german")),
    );
    let russian = run_args(
        &s,
        &g,
        &g.tokens.side_b,
        script(&dir, "r.txt", &lines_of("russian")),
    );
    let ((g_res, g_out), (r_res, r_out)) = tokio::join!(play(german), play(russian));
    assert!(g_res.is_ok() && r_res.is_ok(), "{g_out}\n{r_out}");
    assert!(server_game(&s, &g).await.over, "{g_out}\n{r_out}");

    let mut out = vec![];
    let args = watch_args(&s, &g, None, false);
    let result = tokio::time::timeout(TEST_WAIT_MAX, watch(&args, &mut out))
        .await
        .unwrap();
    assert_eq!(result, Ok(Status::Success));
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with("the game is over.\n"), "{text}");
    assert_eq!(text.lines().count(), 1, "no events: {text}");
    s.stop().await;
}

/// The whole record, described in the position each event happened in, and from `--from` on.
/// (Paging through more than one `Log` page is tested in `commands::log`: the server's pages
/// are larger than a game of this scenario.)
#[tokio::test]
async fn log_prints_the_record_and_from_n() {
    let (dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    play_both(&s, &g, &dir).await;

    let mut args = LogArgs {
        server: server(&s),
        game: game(&g, &g.tokens.spectator),
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
        text.contains(
            "== Turn 1, German Player Turn: MPh ==\n\
             #6  447a Wall Advantage lost on starting to enter a new Location (B9.41)\n\
             #7  447a 55H7 → 55I8: 3 MF = 1 COT (B1) + 1 uphill (B10) + 1 wall (B9.4); \
             447a spent 3 of 4, left 1\n\
             #8  ?1 claimed Wall Advantage mandatory: no in-hex TEM of +1 or more (B9.323)\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "== Turn 1, German Player Turn: DFPh ==\n\
             #10  Russian adjudicated: 467a pin (IFT 2, DR 7)\n\
             #11  Russian ended DFPh; now turn 1 AFPh (A3.5), German to act\n"
        ),
        "{text}"
    );
    assert_eq!(event_seqs(&text), (1..=11).collect::<Vec<u64>>(), "{text}");

    args.from = 6;
    let mut out = vec![];
    log(&args, &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("== Turn 1, German Player Turn: MPh ==\n#6  447a Wall Advantage lost"),
        "{text}"
    );
    assert_eq!(event_seqs(&text), [6, 7, 8, 9, 10, 11], "{text}");

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
    assert_eq!(seqs, [6, 7, 8, 9, 10, 11]);
    s.stop().await;
}

/// Each side's `state` is its own projection of the game, as the client would compute it from
/// the scenario, carrying the viewer's own version; the concealed Russian 3-3-7 is on the map
/// for both (concealed is not hidden), marked as concealed, and the German knows it only by
/// its alias.
#[tokio::test]
async fn state_prints_the_projection() {
    let (_dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let scenario = Scenario::from_toml(SCENARIO).unwrap();
    let mut expected = Game::new(scenario.clone());
    apply(&mut expected, &Event::GameCreated(GameCreated { scenario }));

    let mut args = StateArgs {
        server: server(&s),
        game: game(&g, &g.tokens.side_b),
        json: true,
    };
    let mut out = vec![];
    assert_eq!(state(&args, &mut out).await, Ok(Status::Success));
    let russian: Game = serde_json::from_slice(&out).unwrap();
    let projection = |viewer| {
        let mut view = expected.project(viewer);
        view.version = 1;
        view
    };
    assert_eq!(russian, projection(Viewer::Side(Side::B)));
    assert!(russian.units["337a"].concealed);

    args.game = game(&g, &g.tokens.side_a);
    let mut out = vec![];
    state(&args, &mut out).await.unwrap();
    let german: Game = serde_json::from_slice(&out).unwrap();
    assert_eq!(german, projection(Viewer::Side(Side::A)));
    assert!(german.units["?1"].concealed);
    assert!(!german.units.contains_key("337a"));

    args.game = game(&g, &g.tokens.side_b);
    args.json = false;
    let mut out = vec![];
    state(&args, &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("Viewing as:  Russian\n"), "{text}");
    assert!(text.contains("Version:     1\n"), "{text}");
    assert!(
        text.contains(&format!("State hash:  {}\n", russian.state_hash())),
        "{text}"
    );
    s.stop().await;
}

#[tokio::test]
async fn an_unreachable_server_is_exit_code_3() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    drop(listener);
    let args = StateArgs {
        server: ServerArg { url },
        game: GameArgs {
            game: "g1".into(),
            token: "any".into(),
        },
        json: false,
    };
    let failure = state(&args, &mut vec![]).await.unwrap_err();
    assert_eq!(failure.exit_code(), 3, "{failure}");
}

/// `asl play`'s session: a typed line is sent at once and answered; the opponent's events are
/// printed as they come, with the status line saying what the game waits for.
#[tokio::test]
async fn play_answers_each_line_and_shows_the_opponents_moves() {
    use client::commands::play::{session, Vocabulary};
    let (_dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let mut connection = Connection::connect(&s.url).await.unwrap();
    let mut joined = connection
        .join(&g.game, &g.tokens.side_a, None)
        .await
        .unwrap();
    let mut follower =
        client::Follower::from_snapshot(joined.state.take().unwrap(), joined.state_hash).unwrap();
    let said = Arc::new(Mutex::new(Vec::<String>::new()));
    let (typed, lines) = tokio::sync::mpsc::channel(8);
    let vocabulary = Mutex::new(Vocabulary::default());
    let heard = said.clone();
    let german = tokio::spawn(async move {
        let mut say = move |text: String| heard.lock().unwrap().push(text);
        session(
            &mut connection,
            &mut follower,
            Side::A,
            lines,
            &mut say,
            &vocabulary,
        )
        .await
    });
    let said_line = |prefix: &'static str| {
        let said = said.clone();
        async move {
            let found = async {
                while !said.lock().unwrap().iter().any(|l| l.starts_with(prefix)) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            };
            if tokio::time::timeout(TEST_WAIT_MAX, found).await.is_err() {
                panic!(
                    "nothing said starting {prefix:?}: {:?}",
                    said.lock().unwrap()
                );
            }
        }
    };
    said_line("-- your turn: the German: Turn 1").await;
    typed.send("done".into()).await.unwrap();
    said_line("1: done -> accepted").await;
    typed.send("move 467a Q9".into()).await.unwrap();
    said_line("2: move 467a Q9 -> refused").await;
    // A preview is answered with the refusal the command itself would get; nothing is sent.
    typed.send("preview move 467a Q9".into()).await.unwrap();
    said_line("preview move 467a Q9 -> refused ").await;
    typed.send("fly away".into()).await.unwrap();
    said_line("? unknown command `fly`").await;
    // Typed lines are numbered, the preview and the unknown command too: the PFPh ends at 5.
    typed.send("done".into()).await.unwrap();
    said_line("5: done -> accepted").await;
    typed.send("done".into()).await.unwrap();
    said_line("-- waiting for the Russian").await;

    // The Russian ends the DFPh from elsewhere: the German's session hears of it at once.
    let mut russian = Connection::connect(&s.url).await.unwrap();
    russian.join(&g.game, &g.tokens.side_b, None).await.unwrap();
    let reply = russian.command(1, Command::Done, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    said_line("#").await;
    said_line("-- your turn: the German").await;
    typed.send("quit".into()).await.unwrap();
    let status = tokio::time::timeout(TEST_WAIT_MAX, german)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, Ok(Status::Success));
    let heard_russian = said
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.starts_with('#') && l.contains("Russian"));
    assert!(heard_russian, "{:?}", said.lock().unwrap());
    s.stop().await;
}

/// Exactly-once: a script run again — even on a restarted server — gets each line's first
/// answer back, nothing is played twice, and a run stopped by a refusal resumes after the
/// lines it played once the script is fixed.
#[tokio::test]
async fn a_script_run_again_resumes_where_the_game_is() {
    let (dir, first) = start(Config::default()).await;
    let g = create_game(&first).await;
    let scripts = tempfile::tempdir().unwrap();
    // The RPh's end steps pass by themselves here (B9.322): three `done`s reach the DFPh.
    let path = script(&scripts, "g.txt", "done\ndone\ndone\nmove 467a Q9\n");
    let mut args = run_args(&first, &g, &g.tokens.side_a, path.clone());
    args.no_wait = true;
    let (result, out) = play(args).await;
    assert_eq!(result, Ok(Status::Refused), "{out}");
    let before = server_game(&first, &g).await.version;
    let addr = first.addr;
    first.stop().await;

    let s = TestServer::start_at(dir.path(), Config::default(), addr).await;
    // Fixed: the first three lines are as they were, the fourth is new.
    std::fs::write(&path, "done\ndone\ndone\ndone\n").unwrap();
    let mut args = run_args(&s, &g, &g.tokens.side_a, path.clone());
    args.no_wait = true;
    let (result, out) = play(args).await;
    assert_eq!(
        result,
        Ok(Status::Refused),
        "the Russian's step; German done refused:\n{out}"
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("1: done -> accepted: played already, as #"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("2: done -> accepted: played already, as #"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("3: done -> accepted: played already, as #"),
        "{out}"
    );
    assert_eq!(
        server_game(&s, &g).await.version,
        before,
        "nothing was played twice"
    );
    s.stop().await;
}

/// A server given `--public-url` sends it with a new game, and `asl new` makes its links from
/// it rather than from the address it used itself.
#[tokio::test]
async fn new_links_to_the_public_url() {
    let (_dir, s) = start(Config {
        public_url: Some("wss://asl.example.org".into()),
        ..Config::default()
    })
    .await;
    let args = NewArgs {
        boards: Default::default(),
        server: server(&s),
        scenario: scenario_path(),
        json: true,
        admin_token: None,
        save: None,
        clock: None,
    };
    let mut out = vec![];
    new(&args, &mut out).await.unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let watch = v["watch"].as_str().unwrap();
    assert!(
        watch.starts_with("https://asl.example.org/watch#game="),
        "{watch}"
    );
    s.stop().await;
}

/// A server restarted while a script waits: `asl run` reconnects, catches up, and plays on
/// with the next line, sent once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_reconnects_after_the_server_restarts() {
    let (dir, first) = start(Config::default()).await;
    let g = create_game(&first).await;
    let scripts = tempfile::tempdir().unwrap();
    // Three steps of the German's (the RPh, whose end passes by itself here, B9.322; the PFPh;
    // the MPh), then one that waits for the Russian's DFPh.
    let path = script(
        &scripts,
        "g.txt",
        "done\ndone\ndone => ok phase=DFPh\ndone => ok phase=RtPh\n",
    );
    let report = Report::default();
    let args = run_args(&first, &g, &g.tokens.side_a, path);
    let mut out = report.clone();
    let german = tokio::spawn(async move { run(&args, &mut out).await });
    report.wait_for_line("3: done -> accepted").await;
    let addr = first.addr;
    first.stop().await;
    let s = TestServer::start_at(dir.path(), Config::default(), addr).await;
    let mut russian = Connection::connect(&s.url).await.unwrap();
    russian.join(&g.game, &g.tokens.side_b, None).await.unwrap();
    let reply = russian.command(1, Command::Done, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    let result = tokio::time::timeout(TEST_WAIT_MAX, german)
        .await
        .expect("the script finishes")
        .unwrap();
    assert_eq!(result, Ok(Status::Success), "{}", report.text());
    assert!(
        report.text().contains("4: done -> accepted"),
        "{}",
        report.text()
    );
    s.stop().await;
}

/// Issue 36: notes and reasons the opponent writes reach the terminal escaped. A German note
/// that would clear the screen and print a fake line comes out of `asl log` and `asl watch` as
/// visible escapes, with no control character in the output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_opponents_words_cannot_drive_the_terminal() {
    let (_dir, s) = start(Config::default()).await;
    let g = create_game(&s).await;
    let (watching, report) = start_watching(watch_args(&s, &g, Some(1), false)).await;
    let mut german = Connection::connect(&s.url).await.unwrap();
    german.join(&g.game, &g.tokens.side_a, None).await.unwrap();
    let note = "\u{1b}[2J\u{1b}]0;pwned\u{7}\rGerman conceded\nRussian wins";
    // The Russian "?" `337a`, by the alias the German knows it by (A12).
    let hostile = Command::Adjudicate {
        unit: "?1".into(),
        outcome: protocol::Outcome::Break,
        note: note.into(),
    };
    assert!(matches!(
        german.command(1, hostile, None).await.unwrap(),
        Reply::Accepted { .. }
    ));
    german.close().await;

    let args = LogArgs {
        server: server(&s),
        game: game(&g, &g.tokens.side_b),
        json: false,
        from: 1,
    };
    let mut out = vec![];
    assert_eq!(log(&args, &mut out).await, Ok(Status::Success));
    let logged = String::from_utf8(out).unwrap();
    assert_eq!(watching.await.unwrap(), Ok(Status::Success));
    let watched = report.text();
    for text in [&logged, &watched] {
        assert!(text.contains("\\u{1b}[2J"), "{text}");
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("German conceded") || l.starts_with("Russian wins")),
            "{text}"
        );
    }
    s.stop().await;
}
