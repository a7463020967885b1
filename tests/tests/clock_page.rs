//! The play page's clocks in a real browser (issue 41): a page opened with the German's token
//! on a game under a live clock shows both clocks, counts the running one down by itself
//! between the server's answers, and puts "Your turn" in the tab's title while the game waits
//! on the German — and takes it out once the German hands the game over. When the Russian's
//! clock runs out (the server's time moved by the test), the German's page offers the claim,
//! and the claim ends the game.
//!
//! Nothing is timed beyond a bound: every step waits for a condition on the page. Needs
//! Chromium (`apt-get install chromium`).

use client::connection::Reply;
use client::Connection;
use e2e::chromium::{self, Browser};
use e2e::TestServer;
use protocol::{Command, Event};
use serde_json::Value;
use server::operations::config::Config;
use std::time::Duration;

/// Long enough for a page to hear of a command on a loaded machine; a hang fails instead.
const WAIT: Duration = Duration::from_secs(30);

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_counts_the_running_clock_down_and_says_whose_turn_in_its_title() {
    let binary = chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM); `.ci/run` installs it",
    );
    let dir = tempfile::tempdir().unwrap();
    // The server's time stands still unless the test moves it; the page counts down by its own.
    let time = server::operations::clock::TimeSource::manual(1_767_225_600_000);
    let config = Config {
        time: time.clone(),
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let timed = format!("{SCENARIO}\n[clock]\ncontrol = \"live:30m+30s\"\n");
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(&timed, None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let tab = browser
        .open(&format!(
            "http://{}/watch#game={}&token={}",
            server.addr, created.game, created.tokens.side_a
        ))
        .await;
    browser
        .wait_for(
            &tab,
            "both clocks and the German's turn in the title",
            "!document.getElementById('clocks').hidden && \
             document.querySelectorAll('#clocks .side-clock').length === 2 && \
             document.title.startsWith('Your turn')",
            WAIT,
        )
        .await;
    let running = "document.querySelector('#clocks .side-clock.running').textContent";
    let first = match browser.eval(&tab, running).await {
        Value::String(s) => s,
        other => panic!("no running clock: {other}"),
    };
    assert!(first.starts_with("German 00:"), "{first}");
    // The page counts down by itself: no message from the server is needed for it.
    browser
        .wait_for(
            &tab,
            "the running clock to tick",
            &format!("{running} !== {}", Value::String(first.clone())),
            WAIT,
        )
        .await;
    let russian = "document.querySelector('#clocks .side-clock[data-side=\"B\"]').textContent";
    assert_eq!(
        browser.eval(&tab, russian).await,
        Value::String("Russian 00:30:00".into())
    );

    // The German hands over (from another connection); the title lets go of "Your turn".
    let mut german = Connection::connect(&server.url).await.unwrap();
    german
        .join(&created.game, &created.tokens.side_a, None)
        .await
        .unwrap();
    for id in 1.. {
        assert!(id < 10, "ten `done`s never handed over");
        let Reply::Accepted { events, .. } = german.command(id, Command::Done, None).await.unwrap()
        else {
            panic!("done was refused");
        };
        if events
            .iter()
            .any(|e| matches!(e.viewed.event, Event::ClockHandedOver(_)))
        {
            break;
        }
    }
    german.close().await;
    browser
        .wait_for(
            &tab,
            "the title without \"Your turn\" and the Russian's clock running",
            "!document.title.startsWith('Your turn') && \
             document.querySelector('#clocks .side-clock.running').dataset.side === 'B'",
            WAIT,
        )
        .await;

    // The Russian's 30 minutes pass on the server: the German's page offers the claim.
    time.advance(Duration::from_secs(31 * 60));
    let claim = "[...document.querySelectorAll('#prompt button.answer')]\
                 .find(b => b.textContent.endsWith('Claim the game on time'))";
    browser
        .wait_for(
            &tab,
            "the claim offered, and the German's turn in the title again",
            &format!("{claim} !== undefined && document.title.startsWith('Your turn')"),
            WAIT,
        )
        .await;
    browser.eval(&tab, &format!("{claim}.click()")).await;
    browser
        .wait_for(
            &tab,
            "the referee's answer to the claim",
            "!document.getElementById('proposal-text').textContent.endsWith('asking the referee…')",
            WAIT,
        )
        .await;
    let answer = browser
        .eval(&tab, "document.getElementById('proposal-text').textContent")
        .await;
    assert!(!answer.to_string().contains("refused"), "{answer}");
    browser
        .wait_for(
            &tab,
            "the claim previewed",
            "!document.getElementById('confirm').disabled",
            WAIT,
        )
        .await;
    browser
        .eval(&tab, "document.getElementById('confirm').click()")
        .await;
    browser
        .wait_for(
            &tab,
            "the game over",
            "window.aslWatch.live && window.aslWatch.live.over === true && \
             !document.title.startsWith('Your turn')",
            WAIT,
        )
        .await;
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
