//! A game on real boards, end to end: the server is pointed at a directory of VASL board
//! archives (synthesised here in VASL's format), a scenario names its boards, the game is
//! created, played over them, and survives a restart (replayed from its log); a server without
//! the boards, or a scenario naming a board the directory lacks, is refused with the reason.

use client::commands::log::{log, LogArgs};
use client::commands::new::{new, NewArgs};
use client::commands::run::{run, RunArgs};
use client::commands::state::{state, StateArgs};
use client::commands::{boards::BoardsArg, GameArgs, ServerArg};
use client::{Failure, Status};
use e2e::TestServer;
use protocol::board::vasl::synth::{code, SynthBoard};
use server::operations::config::Config;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SCENARIO: &str = r#"name = "Two real boards"
turns = 2
first = "german"
sides = [{ id = "german", name = "German" }, { id = "russian", name = "Russian" }]

[map]
boards = [["1", "2r"]]

[[units]]
id = "ge"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1D5"

[[units]]
id = "ru"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "2C3"
"#;

/// The RPh (whose end, 1.32B, passes by itself: no unit could claim Wall Advantage, B9.322),
/// the PFPh, then the moves.
const GERMAN: &str = "done\ndone\nmove ge 1E5 => ok\nmove ge 1F5 => refused B1\n";
/// The Russian has no step to play before the German moves.
const RUSSIAN: &str = "";

fn synthesise(dir: &Path) {
    let mut one = SynthBoard::geomorphic("01");
    one.hex("E5".parse().unwrap(), code::WOODS, 38.0);
    one.hex("F5".parse().unwrap(), code::SWAMP, 36.0);
    std::fs::write(dir.join("bd01"), one.archive()).unwrap();
    let two = SynthBoard::geomorphic("02");
    std::fs::write(dir.join("bd02"), two.archive()).unwrap();
}

/// Runs `script` as `asl run` does, for the side whose `token` it is; its status and output.
async fn play(
    url: &str,
    game: &str,
    token: String,
    script: PathBuf,
) -> (Result<Status, Failure>, String) {
    let args = RunArgs {
        server: ServerArg { url: url.into() },
        game: GameArgs {
            game: game.into(),
            token,
        },
        script,
        no_wait: false,
        keep_going: false,
        fresh: false,
        json: false,
    };
    let mut out = vec![];
    let status = tokio::time::timeout(Duration::from_secs(60), run(&args, &mut out))
        .await
        .expect("the script finishes");
    (status, String::from_utf8(out).unwrap())
}

async fn create(server: &TestServer, scenario: &Path, boards: &Path) -> Result<String, Failure> {
    let mut out = vec![];
    new(
        &NewArgs {
            boards: BoardsArg {
                dir: Some(boards.to_path_buf()),
                module: None,
            },
            server: ServerArg {
                url: server.url.clone(),
            },
            scenario: scenario.to_path_buf(),
            json: true,
            admin_token: None,
            save: None,
            clock: None,
        },
        &mut out,
    )
    .await?;
    Ok(String::from_utf8(out).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_on_real_boards_is_created_played_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let boards = dir.path().join("boards");
    std::fs::create_dir(&boards).unwrap();
    synthesise(&boards);
    let scenario = dir.path().join("real.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let script = dir.path().join("german.txt");
    std::fs::write(&script, GERMAN).unwrap();
    let russian_script = dir.path().join("russian.txt");
    std::fs::write(&russian_script, RUSSIAN).unwrap();
    let data = dir.path().join("data");
    let config = || Config {
        boards: Some(server::operations::boards::open(&boards, None).unwrap()),
        ..Config::default()
    };
    let server = TestServer::start(&data, config()).await;
    let created: serde_json::Value =
        serde_json::from_str(&create(&server, &scenario, &boards).await.unwrap()).unwrap();
    let game = created["game"].as_str().unwrap().to_string();
    let german = created["tokens"]["side_a"].as_str().unwrap().to_string();
    let russian = created["tokens"]["side_b"].as_str().unwrap().to_string();

    let player = |token: String, script: PathBuf| play(&server.url, &game, token, script);
    let (german_run, russian_run) = tokio::join!(
        player(german.clone(), script.clone()),
        player(russian, russian_script)
    );
    let (status, text) = german_run;
    assert_eq!(status, Ok(Status::Success), "{text}");
    assert_eq!(russian_run.0, Ok(Status::Success), "{}", russian_run.1);
    assert!(
        text.contains("Swamp"),
        "the refusal names the unmodelled terrain:\n{text}"
    );

    // Restarted, the game replays from its log onto the same boards.
    let addr = server.addr;
    server.stop().await;
    let server = TestServer::start_at(&data, config(), addr).await;
    let mut out = vec![];
    state(
        &StateArgs {
            server: ServerArg {
                url: server.url.clone(),
            },
            game: GameArgs {
                game,
                token: german,
            },
            json: true,
        },
        &mut out,
    )
    .await
    .unwrap();
    let position: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(position["units"]["ge"]["hex"], "1E5", "{position}");
    assert_eq!(position["scenario"]["map"]["rows"][0][1]["rotated"], true);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_boards_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let boards = dir.path().join("boards");
    std::fs::create_dir(&boards).unwrap();
    synthesise(&boards);
    let scenario = dir.path().join("real.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let e = create(&server, &scenario, &boards).await.unwrap_err();
    let Failure::Server(why) = e else {
        panic!("{e:?}")
    };
    assert!(why.contains("--boards"), "{why}");
    server.stop().await;

    // A board the directory lacks is named, before anything is sent.
    std::fs::remove_file(boards.join("bd02")).unwrap();
    let server = TestServer::start(&dir.path().join("data2"), Config::default()).await;
    let e = create(&server, &scenario, &boards).await.unwrap_err();
    let Failure::Input(why) = e else {
        panic!("{e:?}")
    };
    assert!(why.contains("board 2") && why.contains("bd02"), "{why}");
    server.stop().await;
}

/// A unit walks over the seam onto the rotated board, naming the seam hex by board 1's name
/// (`1GG5`, which the map calls `2GG6`), and on along board 2's FF column.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_crosses_the_seam_onto_a_rotated_board() {
    let dir = tempfile::tempdir().unwrap();
    let boards = dir.path().join("boards");
    std::fs::create_dir(&boards).unwrap();
    synthesise(&boards);
    let scenario = dir.path().join("seam.toml");
    std::fs::write(
        &scenario,
        SCENARIO.replace("hex = \"1D5\"", "hex = \"1FF5\""),
    )
    .unwrap();
    let script = dir.path().join("german.txt");
    // The RPh (its end passing by itself, as in `GERMAN`) and the PFPh, then the moves.
    std::fs::write(
        &script,
        "done\ndone\nmove ge 1GG5 => ok\nmove ge 2FF6 => ok\n",
    )
    .unwrap();
    let russian_script = dir.path().join("russian.txt");
    std::fs::write(&russian_script, RUSSIAN).unwrap();
    let config = Config {
        boards: Some(server::operations::boards::open(&boards, None).unwrap()),
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let created: serde_json::Value =
        serde_json::from_str(&create(&server, &scenario, &boards).await.unwrap()).unwrap();
    let game = created["game"].as_str().unwrap().to_string();
    let german = created["tokens"]["side_a"].as_str().unwrap().to_string();
    let russian = created["tokens"]["side_b"].as_str().unwrap().to_string();
    let player = |token: String, script: PathBuf| play(&server.url, &game, token, script);
    let (german_run, russian_run) = tokio::join!(
        player(german.clone(), script),
        player(russian, russian_script)
    );
    assert_eq!(german_run.0, Ok(Status::Success), "{}", german_run.1);
    assert_eq!(russian_run.0, Ok(Status::Success), "{}", russian_run.1);
    let mut out = vec![];
    state(
        &StateArgs {
            server: ServerArg {
                url: server.url.clone(),
            },
            game: GameArgs {
                game,
                token: german,
            },
            json: true,
        },
        &mut out,
    )
    .await
    .unwrap();
    let position: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(position["units"]["ge"]["hex"], "2FF6", "{position}");
    server.stop().await;
}

/// Boards stacked north–south, board 1 above board 2, with a wall on a seam hexside (between
/// board 1's X10 — board 2's X0 — and its Y10): the game is written with hexsides whose two
/// hexes lie on two boards. A unit walks over the seam; the game is read back through the CLI
/// live, after a restart, and after it sat idle long enough to be unloaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_on_boards_stacked_north_south_survives_a_restart_and_an_unload() {
    let dir = tempfile::tempdir().unwrap();
    let boards = dir.path().join("boards");
    std::fs::create_dir(&boards).unwrap();
    let mut one = SynthBoard::geomorphic("01");
    one.hexside(
        "X10".parse().unwrap(),
        "Y10".parse().unwrap(),
        code::WALL,
        3.0,
    );
    std::fs::write(boards.join("bd01"), one.archive()).unwrap();
    std::fs::write(boards.join("bd02"), SynthBoard::geomorphic("02").archive()).unwrap();
    let scenario = dir.path().join("column.toml");
    std::fs::write(
        &scenario,
        SCENARIO
            .replace("[[\"1\", \"2r\"]]", "[[\"1\"], [\"2\"]]")
            .replace("hex = \"1D5\"", "hex = \"1C9\"")
            .replace("hex = \"2C3\"", "hex = \"2Z5\""),
    )
    .unwrap();
    let script = dir.path().join("german.txt");
    // The RPh (no unit stands at the wall, so its end passes by itself, B9.322) and the
    // PFPh; then the move: 1C10 is the seam's half hex (board 2's C0); 2C1 lies beyond it.
    std::fs::write(
        &script,
        "done\ndone\nmove ge 1C10 => ok\nmove ge 2C1 => ok\n",
    )
    .unwrap();
    let russian_script = dir.path().join("russian.txt");
    std::fs::write(&russian_script, RUSSIAN).unwrap();
    let data = dir.path().join("data");
    let config = || Config {
        boards: Some(server::operations::boards::open(&boards, None).unwrap()),
        game_unload_after_idle: Duration::from_millis(200),
        ..Config::default()
    };
    let server = TestServer::start(&data, config()).await;
    let created: serde_json::Value =
        serde_json::from_str(&create(&server, &scenario, &boards).await.unwrap()).unwrap();
    let game = created["game"].as_str().unwrap().to_string();
    let german = created["tokens"]["side_a"].as_str().unwrap().to_string();
    let russian = created["tokens"]["side_b"].as_str().unwrap().to_string();
    let player = |token: String, script: PathBuf| play(&server.url, &game, token, script);
    let (german_run, russian_run) = tokio::join!(
        player(german.clone(), script),
        player(russian, russian_script)
    );
    assert_eq!(german_run.0, Ok(Status::Success), "{}", german_run.1);
    assert_eq!(russian_run.0, Ok(Status::Success), "{}", russian_run.1);

    let read = |url: String| {
        let game = GameArgs {
            game: game.clone(),
            token: german.clone(),
        };
        async move {
            let mut out = vec![];
            state(
                &StateArgs {
                    server: ServerArg { url: url.clone() },
                    game: game.clone(),
                    json: true,
                },
                &mut out,
            )
            .await
            .unwrap_or_else(|e| panic!("state: {e:?}"));
            let position: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(position["units"]["ge"]["hex"], "2C1", "{position}");
            let sides = position["scenario"]["hexsides"].as_object().unwrap();
            assert!(
                sides.keys().any(|k| k == "1Y10-2X0"),
                "the seam wall, by the map's names: {:?}",
                sides.keys().collect::<Vec<_>>()
            );
            let mut out = vec![];
            let status = log(
                &LogArgs {
                    server: ServerArg { url },
                    game,
                    json: true,
                    from: 1,
                },
                &mut out,
            )
            .await;
            assert_eq!(status, Ok(Status::Success));
            assert!(String::from_utf8(out).unwrap().lines().count() >= 5);
        }
    };
    read(server.url.clone()).await;

    // Restarted, the game is replayed from its log; idle, it is unloaded and loaded again.
    let addr = server.addr;
    server.stop().await;
    let server = TestServer::start_at(&data, config(), addr).await;
    read(server.url.clone()).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    read(server.url.clone()).await;
    // And the page reads it, the seam's wall and all.
    let binary = e2e::chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM); `.ci/run` installs it",
    );
    let mut browser = e2e::chromium::Browser::launch(&binary).await;
    let tab = browser
        .open(&format!(
            "http://{}/watch#game={game}&token={german}",
            server.addr
        ))
        .await;
    browser
        .wait_for(
            &tab,
            "the German's squad beyond the seam",
            "(() => { const p = window.aslWatch; return p.joined && p.live && p.live.units.ge && \
             p.live.units.ge.hex === '2C1' && document.querySelector('.counter[data-unit=\"ge\"]') !== null; })()",
            Duration::from_secs(30),
        )
        .await;
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
