//! The play page in a real browser during a set-up step (A12.12): the Russian's page says it
//! is its set-up and lists what is left to place; a click on a hex of its area places the
//! picked unit after the referee's preview; the German's page shows whose set-up it is, what
//! it waits for, and nothing of what the Russian placed. Needs Chromium, as `play_page.rs`.

use client::Connection;
use e2e::chromium::{self, Browser, Tab};
use e2e::TestServer;
use serde_json::Value;
use server::operations::config::Config;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const SCENARIO: &str = include_str!("../../protocol/tests/positions/scenarios/setup.toml");

/// The page has the position of its own stream's head and no request in flight.
const SETTLED: &str = "(() => { const p = window.aslWatch; return p.joined && p.live && \
    p.shown === p.live && p.live.version === p.version && !p.stateAsked && p.sent.size === 0 && \
    p.entries.length === p.version; })()";

async fn text(browser: &mut Browser, tab: &Tab, expression: &str) -> String {
    match browser.eval(tab, expression).await {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_sets_up_from_the_page_and_the_other_sees_nothing_of_it() {
    let binary = chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM); `.ci/run` installs it",
    );
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let link = |token: &str| {
        format!(
            "http://{}/watch#game={}&token={token}",
            server.addr, created.game
        )
    };
    let mut browser = Browser::launch(&binary).await;
    let russian = browser.open(&link(&created.tokens.side_b)).await;
    let german = browser.open(&link(&created.tokens.side_a)).await;
    for tab in [&russian, &german] {
        browser.wait_for(tab, "the board", SETTLED, WAIT).await;
    }

    let phase = "document.getElementById('phase').textContent";
    let prompt = "document.getElementById('prompt').textContent";
    assert_eq!(
        text(&mut browser, &german, phase).await,
        "Set-up: the Russian"
    );
    let waiting = text(&mut browser, &german, prompt).await;
    assert!(
        waiting.contains("Waiting on the Russian's set-up (A12.12)"),
        "{waiting}"
    );
    let left = text(&mut browser, &russian, prompt).await;
    assert!(
        left.contains("Your set-up (A12.12): 6 left to place"),
        "{left}"
    );
    assert!(left.contains("r1 squad 4-4-7 (may be concealed)"), "{left}");

    // A click on 1B2 places the first unit left, r1, once the referee's preview allows it.
    browser
        .eval(
            &russian,
            "document.querySelector('.hex-cell[data-hex=\"1B2\"] polygon').dispatchEvent(new MouseEvent('click'))",
        )
        .await;
    let preview = browser
        .wait_for(
            &russian,
            "the referee's preview",
            "(() => { const t = document.getElementById('proposal-text').textContent; \
             return !document.getElementById('proposal').hidden && !t.endsWith('asking the referee…') && t; })()",
            WAIT,
        )
        .await;
    assert!(
        preview.as_str().unwrap().starts_with("Set up r1 in 1B2"),
        "{preview}"
    );
    browser.press(&russian, "Enter", 13).await;
    browser
        .wait_for(
            &russian,
            "r1 placed",
            &format!("{SETTLED} && window.aslWatch.live.units['r1'] !== undefined && window.aslWatch.live.units['r1'].hex === '1B2'"),
            WAIT,
        )
        .await;
    let left = text(&mut browser, &russian, prompt).await;
    assert!(left.contains("5 left to place"), "{left}");

    // The German's page holds nothing of it: no event, no unit.
    browser.wait_for(&german, "settled", SETTLED, WAIT).await;
    assert_eq!(
        browser
            .eval(
                &german,
                "[window.aslWatch.version, Object.keys(window.aslWatch.live.units).join(' ')].join(' ')"
            )
            .await,
        "1 r0"
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
