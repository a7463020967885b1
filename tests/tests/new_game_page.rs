//! Starting a game from the page opened without a link, as `asl new` does: a scenario file
//! chosen, the game created by the server, and its three links shown — each opening the page
//! as that side or as a spectator. A file the server refuses is answered in the form with its
//! code; a server that restricts creation asks for its admin token, which the form sends.
//! Needs Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use e2e::chromium::{Browser, Tab};
use e2e::TestServer;
use page::{chromium_binary, text, SETTLED, WAIT};
use server::operations::config::Config;
use std::path::Path;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");

/// Chooses `file` as the scenario and presses Create, then waits for the server's answer.
async fn create(browser: &mut Browser, tab: &Tab, file: &Path) -> String {
    browser.choose_file(tab, "#new-scenario", file).await;
    browser
        .eval(
            tab,
            "document.getElementById('new-report').textContent = ''; \
             document.getElementById('new-create').click()",
        )
        .await;
    browser
        .wait_for(
            tab,
            "the server's answer to the creation",
            "!document.getElementById('new-create').disabled && \
             document.getElementById('new-report').textContent !== '' && \
             !document.getElementById('new-report').textContent.startsWith('Creating')",
            WAIT,
        )
        .await;
    text(
        browser,
        tab,
        "document.getElementById('new-report').textContent",
    )
    .await
}

/// The link the report shows for `which` (A, B or watch).
async fn link(browser: &mut Browser, tab: &Tab, which: &str) -> String {
    text(
        browser,
        tab,
        &format!("document.querySelector('#new-links a[data-for=\"{which}\"]').href"),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_created_from_a_scenario_file_and_its_links_open_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("village.toml");
    std::fs::write(&good, SCENARIO).unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = 3\n").unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    // On a phone: the long links wrap rather than widen the page.
    let tab = browser
        .open_phone(&format!("http://{}/watch", server.addr), 390, 844)
        .await;
    browser
        .wait_for(
            &tab,
            "the form to start a game",
            "!document.getElementById('new-game').hidden",
            WAIT,
        )
        .await;
    // No file chosen: nothing is sent.
    browser
        .eval(&tab, "document.getElementById('new-create').click()")
        .await;
    assert_eq!(
        text(
            &mut browser,
            &tab,
            "document.getElementById('new-report').textContent"
        )
        .await,
        "Choose the scenario file first."
    );

    let refused = create(&mut browser, &tab, &bad).await;
    assert!(
        refused.starts_with("Not created: ") && refused.ends_with("(bad_scenario)."),
        "{refused}"
    );

    let report = create(&mut browser, &tab, &good).await;
    assert!(report.starts_with("Game "), "{report}");
    assert!(
        report.contains("Play as German: ") && report.contains("Play as Russian: "),
        "{report}"
    );
    let german = link(&mut browser, &tab, "A").await;
    let russian = link(&mut browser, &tab, "B").await;
    let watch = link(&mut browser, &tab, "watch").await;
    let base = format!("http://{}/watch#game=", server.addr);
    for l in [&german, &russian, &watch] {
        assert!(l.starts_with(&base), "{l}");
    }
    assert_eq!(
        browser
            .eval(
                &tab,
                "window.innerWidth === 390 && \
                 document.documentElement.scrollWidth <= window.innerWidth && \
                 [...document.querySelectorAll('#new-links a')].every((a) => \
                 a.getBoundingClientRect().right <= window.innerWidth)"
            )
            .await,
        true,
        "the phone layout holds"
    );
    assert_eq!(
        [&german, &russian, &watch]
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len(),
        3,
        "three different links"
    );

    // Each link opens the game as its side, or to watch.
    for (l, side) in [(&german, "\"A\""), (&russian, "\"B\""), (&watch, "null")] {
        let opened = browser.open(l).await;
        browser
            .wait_for(&opened, "the game's page", SETTLED, WAIT)
            .await;
        assert_eq!(
            text(
                &mut browser,
                &opened,
                "JSON.stringify(window.aslWatch.side)"
            )
            .await,
            side
        );
    }
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_restricts_creation_takes_its_admin_token_from_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("village.toml");
    std::fs::write(&good, SCENARIO).unwrap();
    let config = Config {
        admin_token: Some("operator-secret".into()),
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    let tab = browser.open(&format!("http://{}/watch", server.addr)).await;
    browser
        .wait_for(
            &tab,
            "the form to start a game",
            "!document.getElementById('new-game').hidden",
            WAIT,
        )
        .await;
    let refused = create(&mut browser, &tab, &good).await;
    assert!(refused.ends_with("(creation_restricted)."), "{refused}");
    browser
        .eval(
            &tab,
            "document.getElementById('new-admin').value = 'operator-secret'",
        )
        .await;
    let report = create(&mut browser, &tab, &good).await;
    assert!(report.starts_with("Game "), "{report}");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_control_given_in_the_form_is_the_games_clock() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("village.toml");
    std::fs::write(&good, SCENARIO).unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    let tab = browser.open(&format!("http://{}/watch", server.addr)).await;
    browser
        .wait_for(
            &tab,
            "the form to start a game",
            "!document.getElementById('new-game').hidden",
            WAIT,
        )
        .await;
    let clock = |control: &str| {
        format!(
            "document.getElementById('new-clock').value = {}",
            serde_json::Value::String(control.into())
        )
    };
    // Not a time control's words: the page says how one is written, and sends nothing.
    browser.eval(&tab, &clock("live:30m\"\nx = 1")).await;
    let refused = create(&mut browser, &tab, &good).await;
    assert!(
        refused.starts_with("A time control is written like"),
        "{refused}"
    );
    // Written right but not a time control: the server's refusal.
    browser.eval(&tab, &clock("live:forever")).await;
    let refused = create(&mut browser, &tab, &good).await;
    assert!(refused.ends_with("(bad_scenario)."), "{refused}");

    browser.eval(&tab, &clock("live:30m+30s")).await;
    let report = create(&mut browser, &tab, &good).await;
    assert!(report.starts_with("Game "), "{report}");
    let german = link(&mut browser, &tab, "A").await;
    let opened = browser.open(&german).await;
    browser
        .wait_for(
            &opened,
            "both clocks on the German's page",
            "!document.getElementById('clocks').hidden && \
             document.querySelectorAll('#clocks .side-clock').length === 2",
            WAIT,
        )
        .await;
    assert_eq!(
        text(
            &mut browser,
            &opened,
            "document.querySelector('#clocks .side-clock[data-side=\"B\"]').textContent"
        )
        .await,
        "Russian 00:30:00"
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

/// A VASL save on board 2 with a squad of each side, written as VASL writes one (xz inside
/// the zip), by the save reader's own test writer.
fn synthesised_save() -> Vec<u8> {
    use vasl_save::save::{writer, Encoding};
    let text = writer::saved_game_text(&[
        "bd\t0\t0\t02\tVER\t6.4\t".to_string(),
        writer::piece_command(
            "1",
            &[("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1")],
        ),
        writer::piece_command(
            "2",
            &[("piece;K;D;ru/ru447S;4-4-7 1sq", "Main Map;900;300;1")],
        ),
    ]);
    writer::vsav(&writer::encode(&text, Encoding::Xz), Some("VASL"))
}

/// A `.vsav` chosen in the form is made a scenario by the server, as `asl new SAVE.vsav`
/// makes it, on the server's board archives, and created with the form's time control: the
/// links open it, and what the game assumes since the save does not say it is shown. A file
/// that is no save, and one over what a message carries, are refused in the form with why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_created_from_a_vasl_save_on_the_servers_boards() {
    use protocol::board::vasl::synth::SynthBoard;
    let dir = tempfile::tempdir().unwrap();
    let boards = dir.path().join("boards");
    std::fs::create_dir(&boards).unwrap();
    std::fs::write(boards.join("bd02"), SynthBoard::geomorphic("02").archive()).unwrap();
    let good = dir.path().join("Hill 621.vsav");
    std::fs::write(&good, synthesised_save()).unwrap();
    let broken = dir.path().join("broken.vsav");
    std::fs::write(&broken, b"PK\x03\x04 not a zip at all").unwrap();
    let huge = dir.path().join("huge.vsav");
    std::fs::write(&huge, vec![0u8; 900 * 1024]).unwrap();
    let config = Config {
        boards: Some(server::operations::boards::open(&boards, None).unwrap()),
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    let tab = browser
        .open_phone(&format!("http://{}/watch", server.addr), 390, 844)
        .await;
    browser
        .wait_for(
            &tab,
            "the form to start a game",
            "!document.getElementById('new-game').hidden",
            WAIT,
        )
        .await;

    let refused = create(&mut browser, &tab, &huge).await;
    assert!(
        refused.starts_with("The save is 921600 bytes, over the ")
            && refused.contains("asl import"),
        "{refused}"
    );
    let refused = create(&mut browser, &tab, &broken).await;
    assert!(
        refused.starts_with("Not created: not a VASL save this server can import: ")
            && refused.ends_with("(bad_scenario)."),
        "{refused}"
    );

    browser
        .eval(
            &tab,
            "document.getElementById('new-clock').value = 'live:30m+30s'",
        )
        .await;
    let report = create(&mut browser, &tab, &good).await;
    assert!(report.starts_with("Game "), "{report}");
    assert!(
        report.contains("Play as German: ") && report.contains("Play as Russian: "),
        "{report}"
    );
    let assumed = text(
        &mut browser,
        &tab,
        "[...document.querySelectorAll('#new-assumed li')].map((li) => li.textContent).join('\\n')",
    )
    .await;
    assert!(assumed.contains("the game lasts 6 Game Turns"), "{assumed}");
    assert_eq!(
        browser
            .eval(
                &tab,
                "window.innerWidth === 390 && \
                 document.documentElement.scrollWidth <= window.innerWidth && \
                 [...document.querySelectorAll('#new-links a, #new-assumed li')].every((e) => \
                 e.getBoundingClientRect().right <= window.innerWidth)"
            )
            .await,
        true,
        "the phone layout holds"
    );

    // The German's link opens the game the save made: its name, its squad where the save put
    // it on board 2, its clock.
    let german = link(&mut browser, &tab, "A").await;
    let opened = browser.open(&german).await;
    browser
        .wait_for(&opened, "the German's page", SETTLED, WAIT)
        .await;
    assert_eq!(
        text(
            &mut browser,
            &opened,
            "document.getElementById('scenario').textContent"
        )
        .await,
        "Hill 621"
    );
    assert_eq!(
        text(
            &mut browser,
            &opened,
            "JSON.stringify(Object.values(window.aslWatch.live.units).map((u) => \
             [u.side, u.hex, u.kind]))"
        )
        .await,
        r#"[["A","2C2","squad"]]"#
    );
    browser
        .wait_for(
            &opened,
            "the form's time control as the game's clock",
            "document.getElementById('clocks').title === 'Time control live:30m+30s' && \
             document.querySelector('#clocks .side-clock[data-side=\"A\"]').textContent \
             === 'German 00:30:00'",
            WAIT,
        )
        .await;
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
