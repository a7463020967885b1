//! The play page driven in a real browser, as two players would: what the page tests share.
//! A server on `127.0.0.1:0`, one Chromium tab per side, and steps that wait on conditions
//! on the page (never a fixed sleep), each with a generous bound.

#![allow(dead_code)] // each test file uses its own share of these

use client::{Connection, NewGame};
use e2e::chromium::{self, Browser, Tab};
use e2e::TestServer;
use serde_json::Value;
use server::operations::config::Config;
use std::time::Duration;

/// Long enough for a page to hear of a command on a loaded machine; a hang fails instead.
pub const WAIT: Duration = Duration::from_secs(30);

/// Steps a Game Turn has, with room to spare: the loop that plays them out fails rather than
/// spin if the game never ends.
pub const TURN_ACTIONS_MAX: usize = 60;

pub fn chromium_binary() -> std::path::PathBuf {
    chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM to a \
         Chromium/Chrome binary); `.ci/run` installs it",
    )
}

pub async fn text(browser: &mut Browser, tab: &Tab, expression: &str) -> String {
    match browser.eval(tab, expression).await {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// A server started with `config` and a new game of `scenario` on it.
pub async fn game_on(config: Config, scenario: &str) -> (tempfile::TempDir, TestServer, NewGame) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(scenario, None)
        .await
        .unwrap();
    (dir, server, created)
}

/// The page of game `created` for the holder of `token`.
pub fn link(server: &TestServer, created: &NewGame, token: &str) -> String {
    format!(
        "http://{}/watch#game={}&token={token}",
        server.addr, created.game
    )
}

/// A server with a new game of `scenario` and both players' pages open on it.
pub async fn start(scenario: &str) -> (tempfile::TempDir, TestServer, Browser, [Tab; 2]) {
    let (dir, server, created) = game_on(Config::default(), scenario).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    let german = browser
        .open(&link(&server, &created, &created.tokens.side_a))
        .await;
    let russian = browser
        .open(&link(&server, &created, &created.tokens.side_b))
        .await;
    (dir, server, browser, [german, russian])
}

/// JavaScript that clicks the hex `hex` on the board (its terrain, as a pointer would).
pub fn click_hex(hex: &str) -> String {
    format!(
        "document.querySelector('.hex-cell[data-hex=\"{hex}\"] polygon').dispatchEvent(new MouseEvent('click'))"
    )
}

/// The phase line of the header: "PFPh, ATTACKER".
pub const PHASE_LINE: &str =
    "document.getElementById('phase').textContent + document.getElementById('role').textContent";

/// The page has the position of its own stream's head and no request in flight.
pub const SETTLED: &str = "(() => { const p = window.aslWatch; return p.joined && p.live && \
    p.shown === p.live && p.live.version === p.version && !p.stateAsked && p.sent.size === 0 && \
    p.entries.length === p.version; })()";

/// Both players' pages settled on the same moment of play.
pub async fn settle(browser: &mut Browser, players: [&Tab; 2]) {
    let clock = "JSON.stringify([window.aslWatch.live.clock, window.aslWatch.live.over, \
                 window.aslWatch.live.attack !== null])";
    loop {
        for tab in players {
            browser
                .wait_for(tab, "the page to settle", SETTLED, WAIT)
                .await;
        }
        let a = text(browser, players[0], clock).await;
        let b = text(browser, players[1], clock).await;
        if a == b {
            return;
        }
        // One page has heard of the latest event and the other not yet: wait for it.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks the hex and picks `units` from its spread-out stack.
pub async fn select(browser: &mut Browser, tab: &Tab, hex: &str, units: &[&str]) {
    browser.eval(tab, &click_hex(hex)).await;
    for unit in units {
        let button = format!("#stack button.unit-pick[data-unit=\"{unit}\"]");
        browser
            .wait_for(
                tab,
                &format!("{unit} in the stack of {hex}"),
                &format!("document.querySelector('{button}') !== null"),
                WAIT,
            )
            .await;
        browser
            .eval(tab, &format!("document.querySelector('{button}').click()"))
            .await;
    }
}

/// Waits for the preview of the proposed command, and returns its text.
pub async fn previewed(browser: &mut Browser, tab: &Tab) -> String {
    browser
        .wait_for(
            tab,
            "the referee's preview",
            "(() => { const t = document.getElementById('proposal-text').textContent; \
             return !document.getElementById('proposal').hidden && !t.endsWith('asking the referee…') && t; })()",
            WAIT,
        )
        .await
        .as_str()
        .unwrap()
        .to_string()
}

/// Confirms the previewed command with Enter and waits until the server accepted it.
pub async fn send(browser: &mut Browser, tab: &Tab) -> String {
    let preview = previewed(browser, tab).await;
    assert!(!preview.contains("refused ("), "{preview}");
    let id = browser.eval(tab, "window.aslWatch.proposal.id").await;
    browser.press(tab, "Enter", 13).await;
    let outcome = browser
        .wait_for(
            tab,
            "the command answered",
            &format!(
                "document.getElementById('outcome').dataset.answered === '{id}' && \
                 document.getElementById('outcome').textContent"
            ),
            WAIT,
        )
        .await;
    let outcome = outcome.as_str().unwrap().to_string();
    assert!(outcome.contains(": done ("), "{preview} → {outcome}");
    preview
}

/// The text of the page's prompt area.
pub async fn prompt(browser: &mut Browser, tab: &Tab) -> String {
    text(
        browser,
        tab,
        "document.getElementById('prompt').textContent",
    )
    .await
}

/// Whoever the game waits on answers its prompt (1) or ends the step (N), until `until` holds
/// on the German's settled page; the phase lines seen on the way.
pub async fn play_until(browser: &mut Browser, players: [&Tab; 2], until: &str) -> Vec<String> {
    let mut phase_lines = vec![];
    for _ in 0..TURN_ACTIONS_MAX {
        settle(browser, players).await;
        if browser.eval(players[0], until).await == true {
            return phase_lines;
        }
        phase_lines.push(text(browser, players[0], PHASE_LINE).await);
        let mut acted = false;
        for tab in players {
            let answer = browser
                .eval(
                    tab,
                    "document.querySelector('#prompt .prompt.yours:not(.optional) button.answer') !== null",
                )
                .await;
            if answer == true {
                browser.type_key(tab, "1").await;
                send(browser, tab).await;
                acted = true;
                break;
            }
            if prompt(browser, tab).await.starts_with("Your move") {
                browser.type_key(tab, "n").await;
                send(browser, tab).await;
                acted = true;
                break;
            }
        }
        assert!(
            acted,
            "no page has anything to do: {} / {}",
            prompt(browser, players[0]).await,
            prompt(browser, players[1]).await
        );
    }
    panic!("`{until}` never came: {phase_lines:?}");
}

/// JavaScript: the German's page is at the step whose phase line is `line`.
pub fn at(line: &str) -> String {
    format!("({PHASE_LINE}) === '{line}'")
}

/// Whoever an Original CC DR of 2 or 12 asks whether its units infiltrate (A11.22) declines
/// from its prompt, as often as the Close Combat asks, so that the CC goes on to its end: the
/// server's dice give such a DR to one CC attack in eighteen.
pub async fn decline_infiltrations(browser: &mut Browser, players: [&Tab; 2]) {
    let button = "[...document.querySelectorAll('#prompt button.answer')]\
                  .find(b => b.textContent.endsWith('Decline Infiltration'))";
    for _ in 0..TURN_ACTIONS_MAX {
        settle(browser, players).await;
        let mut asked = false;
        for tab in players {
            if browser.eval(tab, &format!("{button} !== undefined")).await == true {
                browser.eval(tab, &format!("{button}.click()")).await;
                send(browser, tab).await;
                asked = true;
            }
        }
        if !asked {
            return;
        }
    }
}
