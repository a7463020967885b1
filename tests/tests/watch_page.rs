//! The spectator page in a real browser: a server, a game created and played through the CLI,
//! and headless Chromium on the watch link `asl new` printed. Everything is asserted from the
//! page's DOM, as a spectator would see it: the unit moved, the Wall Advantage marker appeared,
//! the phase banner changed, the event list names the rule; replay goes back and returns live;
//! the page resumes after the server restarts under it; and the hidden unit never reaches the
//! page, neither its DOM nor any frame it received.
//!
//! A second test plays a game to its end, exports it with `asl export` and opens the file on the
//! page for review.
//!
//! Needs Chromium (`apt-get install chromium`; `.ci/run` installs it). A screenshot of the board
//! is saved under the target directory; with `ASL_UPDATE_SCREENSHOT=1` it also replaces
//! `docs/watch-page.png`, the one the README shows.

use client::commands::export::{export, ExportArgs};
use client::commands::new::{new, NewArgs};
use client::commands::run::{run, RunArgs};
use client::commands::{GameArgs, ServerArg};
use client::Status;
use e2e::chromium::{self, Browser, Tab};
use e2e::TestServer;
use serde_json::Value;
use server::operations::config::Config;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Long enough for the page to hear of a move on a loaded machine; a hang fails instead.
const PAGE_WAIT_MAX: Duration = Duration::from_secs(15);

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// The hidden Russian half-squad of the scenario: its id and ratings must never reach the page.
const HIDDEN_ID: &str = "r3";
const HIDDEN_RATINGS: &str = "2-2-7";

/// Plays `script` as the token's side through `asl run`, and checks every line was accepted.
async fn play(server: &TestServer, game: &str, token: &str, dir: &Path, script: &str) {
    let path = dir.join(format!("{token}-{}.txt", script.len()));
    std::fs::write(&path, script).unwrap();
    let args = RunArgs {
        server: ServerArg {
            url: server.url.clone(),
        },
        game: GameArgs {
            game: game.into(),
            token: token.into(),
        },
        script: path,
        no_wait: false,
        keep_going: false,
        fresh: false,
        json: false,
    };
    let mut out = vec![];
    let status = tokio::time::timeout(PAGE_WAIT_MAX, run(&args, &mut out))
        .await
        .expect("the script finishes")
        .unwrap_or_else(|e| panic!("asl run failed: {e}"));
    let out = String::from_utf8(out).unwrap();
    assert_eq!(status, Status::Success, "{out}");
    assert!(!out.contains("refused"), "{out}");
}

/// JavaScript for the hex the page draws `unit`'s counter in, or null.
fn unit_hex(unit: &str) -> String {
    format!("(document.querySelector('.counter[data-unit=\"{unit}\"]')?.dataset.hex ?? null)")
}

const PHASE: &str = "document.getElementById('phase').textContent";
const STATUS: &str = "document.getElementById('status').textContent";

/// The Chromium to drive, or a failure that says how to get one.
fn chromium_binary() -> PathBuf {
    chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM to a \
         Chromium/Chrome binary); `.ci/run` installs it",
    )
}

/// What `asl new --json` printed.
struct Created {
    game: String,
    german: String,
    russian: String,
    spectator: String,
    link: String,
}

/// Creates a game of the village scenario through `asl new`.
async fn new_game(server: &TestServer) -> Created {
    let mut out = vec![];
    let args = NewArgs {
        boards: Default::default(),
        server: ServerArg {
            url: server.url.clone(),
        },
        scenario: repo("scenarios/village-outskirts.toml"),
        json: true,
        admin_token: None,
        save: None,
        clock: None,
    };
    new(&args, &mut out).await.unwrap();
    let created: Value = serde_json::from_slice(&out).unwrap();
    let field = |v: &Value| v.as_str().unwrap().to_string();
    Created {
        game: field(&created["game"]),
        german: field(&created["tokens"]["side_a"]),
        russian: field(&created["tokens"]["side_b"]),
        spectator: field(&created["tokens"]["spectator"]),
        link: field(&created["watch"]),
    }
}

async fn text(browser: &mut Browser, tab: &Tab, expression: &str) -> String {
    match browser.eval(tab, expression).await {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_page_follows_a_game_live() {
    let started = Instant::now();
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut server = TestServer::start(&data, Config::default()).await;

    // `asl new` prints the watch link; the test opens exactly that.
    let Created {
        game,
        german,
        russian,
        link,
        ..
    } = new_game(&server).await;
    assert!(
        link.starts_with(&format!("http://{}/watch#game=", server.addr)),
        "{link}"
    );

    let mut browser = Browser::launch(&binary).await;
    let tab = browser.open(&link).await;
    browser
        .wait_for(
            &tab,
            "the board at the start",
            &format!("{} === '12B4' && {PHASE} === 'RPh'", unit_hex("g1")),
            PAGE_WAIT_MAX,
        )
        .await;
    let banner_before = text(&mut browser, &tab, PHASE).await;
    assert!(
        text(
            &mut browser,
            &tab,
            "document.getElementById('attacker').textContent"
        )
        .await
            == "ATTACKER: German"
    );

    // Into the MPh, and the German stack moves into the grain behind the hedge: Wall
    // Advantage is mandatory there (B9.323).
    tokio::join!(
        play(
            &server,
            &game,
            &german,
            dir.path(),
            // The RPh, whose German end step passes by itself (no German unit could claim
            // WA, B9.322), and the PFPh.
            "done\ndone\nmove g1 g2 g-ldr C4\n"
        ),
        // The stack must claim WA in C4; the Russian, with a hidden unit, is asked first (B9.324).
        play(&server, &game, &russian, dir.path(), "done\ndecline-wa\n"),
    );
    browser
        .wait_for(
            &tab,
            "g1 in 12C4",
            &format!("{} === '12C4'", unit_hex("g1")),
            PAGE_WAIT_MAX,
        )
        .await;
    browser
        .wait_for(
            &tab,
            "the Wall Advantage marker in 12C4",
            "document.querySelector('.marker.wall-advantage[data-hex=\"12C4\"]') !== null",
            PAGE_WAIT_MAX,
        )
        .await;
    browser
        .wait_for(
            &tab,
            "the event list naming the rule",
            "[...document.querySelectorAll('#events li[data-seq]')].some(li => \
             li.textContent.includes('claimed Wall Advantage') && \
             [...li.querySelectorAll('.rule')].some(r => r.textContent === 'B9.323'))",
            PAGE_WAIT_MAX,
        )
        .await;
    let banner_after = text(&mut browser, &tab, PHASE).await;
    assert_eq!(
        (banner_before.as_str(), banner_after.as_str()),
        ("RPh", "MPh")
    );
    let moving = browser
        .wait_for(
            &tab,
            "the moving stack's MF",
            "document.getElementById('moving').textContent",
            PAGE_WAIT_MAX,
        )
        .await;
    assert!(
        moving
            .as_str()
            .unwrap()
            .contains("g1 4-6-7: 1½ MF spent, 4½ left of 6"),
        "{moving}"
    );

    // The board as the README shows it.
    browser.viewport(&tab, 1200, 820, false).await;
    let shot = browser.screenshot(&tab).await;
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("watch-page.png");
    std::fs::write(&saved, &shot).unwrap();
    if std::env::var_os("ASL_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(repo("docs/watch-page.png"), &shot).unwrap();
    }

    // The LOS thread: L for the LOS tool, then two clicked hexes; the server's verdict and
    // reasons drawn on the map.
    browser.type_key(&tab, "l").await;
    for hex in ["12E3", "12E7"] {
        browser
            .eval(
                &tab,
                &format!("document.querySelector('.hex-cell[data-hex=\"{hex}\"] polygon').dispatchEvent(new MouseEvent('click'))"),
            )
            .await;
    }
    browser
        .wait_for(
            &tab,
            "the LOS thread 12E3 → 12E7, blocked by the building in E4",
            "document.querySelector('#los-thread.blocked line') !== null && \
             document.getElementById('los-info').textContent.includes('B23')",
            PAGE_WAIT_MAX,
        )
        .await;

    // Replay: back to the first event (the button), then live again (the End key).
    browser
        .eval(&tab, "document.getElementById('first').click()")
        .await;
    browser
        .wait_for(
            &tab,
            "the position after event #1",
            &format!(
                "{} === '12B4' && {PHASE} === 'RPh' && \
                 document.querySelector('.marker.wall-advantage') === null",
                unit_hex("g1")
            ),
            PAGE_WAIT_MAX,
        )
        .await;
    browser.press(&tab, "ArrowRight", 39).await;
    browser
        .wait_for(
            &tab,
            "the position after event #2",
            "document.getElementById('position').textContent.startsWith('Replay: position after event #2 ') && \
             window.aslWatch.shown.version === 2",
            PAGE_WAIT_MAX,
        )
        .await;
    browser.press(&tab, "End", 35).await;
    browser
        .wait_for(
            &tab,
            "the live position again",
            &format!("{} === '12C4' && {PHASE} === 'MPh'", unit_hex("g1")),
            PAGE_WAIT_MAX,
        )
        .await;

    // The server restarts under the page: it resumes from the version it holds, no reload.
    browser.eval(&tab, "window.notReloaded = true").await;
    let addr = server.addr;
    server.stop().await;
    server = TestServer::start_at(&data, Config::default(), addr).await;
    browser
        .wait_for(
            &tab,
            "the page to resume",
            &format!("{STATUS}.startsWith('Resumed at event #')"),
            PAGE_WAIT_MAX,
        )
        .await;
    play(&server, &game, &german, dir.path(), "done\n").await;
    browser
        .wait_for(
            &tab,
            "the DFPh after the restart",
            &format!("{PHASE} === 'DFPh'"),
            PAGE_WAIT_MAX,
        )
        .await;
    assert_eq!(browser.eval(&tab, "window.notReloaded").await, true);

    // The hidden half-squad never reached the page: not in its DOM, not in any frame.
    let html = text(&mut browser, &tab, "document.documentElement.outerHTML").await;
    let frames = text(&mut browser, &tab, "window.aslWatch.frames.join('\\n')").await;
    assert!(frames.contains("\"r1\""), "the frames name visible units");
    assert!(
        html.contains("data-unit=\"r1\""),
        "the DOM draws visible units"
    );
    assert!(!frames.contains(&format!("\"{HIDDEN_ID}\"")), "{frames}");
    assert!(!frames.contains(HIDDEN_RATINGS), "{frames}");
    assert!(!html.contains(&format!("data-unit=\"{HIDDEN_ID}\"")));
    assert!(!html.contains(HIDDEN_RATINGS));
    assert_eq!(
        browser
            .eval(
                &tab,
                "document.querySelectorAll('.counter[data-hex=\"12E5\"]').length"
            )
            .await,
        0
    );

    // At phone width the page fits without sideways scrolling and the board stays usable.
    browser.viewport(&tab, 390, 844, true).await;
    let fits = browser
        .wait_for(
            &tab,
            "the page at phone width",
            "document.documentElement.scrollWidth <= window.innerWidth && \
             document.getElementById('board').getBoundingClientRect().width",
            PAGE_WAIT_MAX,
        )
        .await;
    assert!(fits.as_f64().unwrap() > 300.0, "board {fits} px wide");

    browser.close().await;
    server.stop().await;
    eprintln!(
        "watch page test: {:?}; screenshot at {}",
        started.elapsed(),
        saved.display()
    );
}

/// Three Game Turns of `done`: the Russian ends 11 steps a Game Turn, 8 as ATTACKER and 3 as
/// DEFENDER.
const WHOLE_GAME_DONES: usize = 33;
/// The German ends 7 a Game Turn: no German unit could claim WA at the end of an RPh, so its
/// end-of-RPh step passes by itself in each Player Turn (B9.322), and none is broken or under
/// "?", so its RtPh step does too (A10.5).
const WHOLE_GAME_GERMAN_DONES: usize = WHOLE_GAME_DONES - 3 * 2 - 3 * 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_page_reviews_an_export() {
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = new_game(&server).await;
    // The German moves once in its first MPh; otherwise both sides just end their steps.
    // After its first `done`, the Russian lets the HIP moment of the German move pass (B9.324).
    let russian = format!(
        "done\ndecline-wa\n{}",
        "done\n".repeat(WHOLE_GAME_DONES - 1)
    );
    let german = format!(
        "done\ndone\nmove g1 g2 g-ldr C4\n{}",
        "done\n".repeat(WHOLE_GAME_GERMAN_DONES - 2)
    );
    tokio::join!(
        play(&server, &created.game, &created.german, dir.path(), &german),
        play(
            &server,
            &created.game,
            &created.russian,
            dir.path(),
            &russian
        ),
    );
    let file = dir.path().join("game.asl-log");
    let args = ExportArgs {
        server: ServerArg {
            url: server.url.clone(),
        },
        game: GameArgs {
            game: created.game.clone(),
            token: created.spectator.clone(),
        },
        out: Some(file.clone()),
    };
    export(&args, &mut vec![]).await.unwrap();

    // The page without a game, as a referee would open it, and the file chosen.
    let mut browser = Browser::launch(&binary).await;
    let tab = browser.open(&format!("http://{}/watch", server.addr)).await;
    browser
        .wait_for(
            &tab,
            "the page waiting for a link or a file",
            &format!("{STATUS}.startsWith('Open the watch link')"),
            PAGE_WAIT_MAX,
        )
        .await;
    browser.choose_file(&tab, "#export-file", &file).await;
    browser
        .wait_for(
            &tab,
            "the export verified",
            &format!(
                "{STATUS}.startsWith('Reviewing game {}: the export is valid')",
                created.game
            ),
            PAGE_WAIT_MAX,
        )
        .await;
    browser
        .wait_for(
            &tab,
            "the whole record and the end of the game",
            "document.querySelectorAll('#events li[data-seq]').length === window.aslWatch.version && \
             document.getElementById('acting').textContent === 'Game over'",
            PAGE_WAIT_MAX,
        )
        .await;
    // The game is over and the file holds all of it: the hidden half-squad is shown, marked.
    let hidden = browser
        .wait_for(
            &tab,
            "the hidden unit drawn",
            &format!("document.querySelector('.counter[data-unit=\"{HIDDEN_ID}\"]')?.textContent"),
            PAGE_WAIT_MAX,
        )
        .await;
    assert!(hidden.as_str().unwrap().contains("HIP"), "{hidden}");
    assert_eq!(
        browser.eval(&tab, &unit_hex(HIDDEN_ID)).await,
        Value::String("12E5".into())
    );
    // Back to the start, and to the move.
    browser
        .eval(&tab, "document.getElementById('first').click()")
        .await;
    browser
        .wait_for(
            &tab,
            "the position after event #1 of the export",
            &format!("{} === '12B4' && {PHASE} === 'RPh'", unit_hex("g1")),
            PAGE_WAIT_MAX,
        )
        .await;
    browser
        .eval(
            &tab,
            "[...document.querySelectorAll('#events li[data-seq]')].find(li => li.textContent.includes('12B4 → 12C4')).click()",
        )
        .await;
    browser
        .wait_for(
            &tab,
            "the move replayed from the export",
            &format!("{} === '12C4' && {PHASE} === 'MPh'", unit_hex("g1")),
            PAGE_WAIT_MAX,
        )
        .await;

    browser.close().await;
    server.stop().await;
}
