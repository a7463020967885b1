//! Fire, rally and Melee from the play page in a real browser, as two players would.
//!
//! The first Game Turn of `scenarios/wall-and-sewer.toml` played by two pages: in the German
//! PFPh the 4-6-7 and the 8-1 leader in 55F5 fire at the Russian 7-4-7 in the woods of 55G6.
//! Before anything is sent the preview's fire panel shows what the referee will make of the
//! attack (A7): the FP and its IFT column, each DRM with its rule, and the LOS. The attack is
//! declared, then resolved from the prompt; the dice are the server's, so the test reads
//! whatever they gave, and both players' records show the attack as a fire log line. The rest
//! of the turn is played out to the end of the game.
//!
//! A second game shows the Rally Phase and the CCPh: a broken squad rallied by its leader from
//! the Rally form (Y), and a Close Combat Location's Melee recorded from the prompt (A11.7).
//!
//! Nothing is timed: every step waits for a condition on the page, with a generous bound.
//! Needs Chromium (`apt-get install chromium`).

use client::Connection;
use e2e::chromium::{self, Browser, Tab};
use e2e::TestServer;
use serde_json::Value;
use server::operations::config::Config;
use std::time::Duration;

/// Long enough for a page to hear of a command on a loaded machine; a hang fails instead.
const WAIT: Duration = Duration::from_secs(30);

/// Steps a Game Turn has, with room to spare: the loop that plays them out fails rather than
/// spin if the game never ends.
const TURN_ACTIONS_MAX: usize = 60;

const WALL_AND_SEWER: &str = include_str!("../../scenarios/wall-and-sewer.toml");

/// A German squad broken in 1B2 with its 9-1 leader, and a German squad sharing 1D4 with a
/// Russian one: a rally in the RPh and a Close Combat Location in the CCPh.
const RALLY_AND_MELEE: &str = r#"name = "Rally and Melee"
turns = 1
first = "german"
sides = [
    { id = "german", name = "German" },
    { id = "russian", name = "Russian" },
]

[[area]]
from = "1A1"
to = "1H8"
terrain = "open_ground"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1B2"
morale = "broken"

[[units]]
id = "gl"
side = "german"
kind = "leader"
ratings = "9-1"
hex = "1B2"

[[units]]
id = "g2"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1D4"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1D4"
"#;

fn chromium_binary() -> std::path::PathBuf {
    chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM to a \
         Chromium/Chrome binary); `.ci/run` installs it",
    )
}

async fn text(browser: &mut Browser, tab: &Tab, expression: &str) -> String {
    match browser.eval(tab, expression).await {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// A server with a new game of `scenario` and both players' pages open on it.
async fn start(scenario: &str) -> (tempfile::TempDir, TestServer, Browser, [Tab; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(scenario, None)
        .await
        .unwrap();
    let link = |token: &str| {
        format!(
            "http://{}/watch#game={}&token={token}",
            server.addr, created.game
        )
    };
    let mut browser = Browser::launch(&chromium_binary()).await;
    let german = browser.open(&link(&created.tokens.side_a)).await;
    let russian = browser.open(&link(&created.tokens.side_b)).await;
    (dir, server, browser, [german, russian])
}

/// JavaScript that clicks the hex `hex` on the board (its terrain, as a pointer would).
fn click_hex(hex: &str) -> String {
    format!(
        "document.querySelector('.hex-cell[data-hex=\"{hex}\"] polygon').dispatchEvent(new MouseEvent('click'))"
    )
}

/// The phase line of the header: "PFPh, ATTACKER".
const PHASE_LINE: &str =
    "document.getElementById('phase').textContent + document.getElementById('role').textContent";

/// The page has the position of its own stream's head and no request in flight.
const SETTLED: &str = "(() => { const p = window.aslWatch; return p.joined && p.live && \
    p.shown === p.live && p.live.version === p.version && !p.stateAsked && p.sent.size === 0 && \
    p.entries.length === p.version; })()";

/// Both players' pages settled on the same moment of play.
async fn settle(browser: &mut Browser, players: [&Tab; 2]) {
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
async fn select(browser: &mut Browser, tab: &Tab, hex: &str, units: &[&str]) {
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
async fn previewed(browser: &mut Browser, tab: &Tab) -> String {
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
async fn send(browser: &mut Browser, tab: &Tab) -> String {
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
async fn prompt(browser: &mut Browser, tab: &Tab) -> String {
    text(
        browser,
        tab,
        "document.getElementById('prompt').textContent",
    )
    .await
}

/// The fire panel's text, once the preview is in.
async fn fire_panel(browser: &mut Browser, tab: &Tab) -> String {
    previewed(browser, tab).await;
    text(
        browser,
        tab,
        "document.getElementById('fire-preview').hidden ? '' : \
         document.getElementById('fire-preview').innerText",
    )
    .await
}

/// Whoever the game waits on answers its prompt (1) or ends the step (N), until `until` holds
/// on the German's settled page; the phase lines seen on the way.
async fn play_until(browser: &mut Browser, players: [&Tab; 2], until: &str) -> Vec<String> {
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
fn at(line: &str) -> String {
    format!("({PHASE_LINE}) === '{line}'")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_turn_is_played_with_prep_fire_resolved_by_the_rules() {
    let (_dir, server, mut browser, [german, russian]) = start(WALL_AND_SEWER).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("PFPh, ATTACKER")).await;

    // K with the 4-6-7 and its leader picked, then the woods hex: the preview's fire panel
    // says what the referee will make of it before anything is sent.
    select(&mut browser, &german, "55F5", &["467b", "g-ldr"]).await;
    browser.type_key(&german, "k").await;
    browser.eval(&german, &click_hex("55G6")).await;
    let panel = fire_panel(&mut browser, &german).await;
    for piece in [
        "8 FP on the 8 column (A7.3): 467b 8 at range 1, PBF ×2 (A7.21)",
        "−1 g-ldr directs (A7.53)",
        "+1 TEM: in-hex TEM 1 (Woods B13) (B13)",
        "directed by a leader: no Cowering (A7.9)",
        "LOS 467b → 55G6: clear",
        "LOS g-ldr → 55G6: clear",
    ] {
        assert!(panel.contains(piece), "{piece:?} in {panel}");
    }
    assert_eq!(
        browser
            .eval(
                &german,
                "[...document.querySelectorAll('#fire-preview .fire-drms li')].map(l => l.dataset.rule).join(' ')"
            )
            .await,
        "A7.53 B13"
    );
    // The panel as the player sees it, kept beside the test's build for a look.
    let shot = browser.screenshot(&german).await;
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fire-preview.png"),
        &shot,
    )
    .unwrap();
    let declared = send(&mut browser, &german).await;
    assert!(
        declared.starts_with("Attack 55G6 with 467b g-ldr: before the dice (A7):"),
        "{declared}"
    );
    settle(&mut browser, players).await;
    let waits = prompt(&mut browser, &russian).await;
    assert!(
        waits.contains("The German's attack by 467b, g-ldr on 55G6 is open"),
        "{waits}"
    );

    // Resolved from the prompt (1): the same panel, then the server's dice.
    browser.press(&german, "Escape", 27).await;
    browser.type_key(&german, "1").await;
    let panel = fire_panel(&mut browser, &german).await;
    assert!(panel.contains("8 FP on the 8 column (A7.3)"), "{panel}");
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;
    assert!(!prompt(&mut browser, &german).await.contains("is open"));

    // Both records read the attack as a fire log: FP and each DRM, the target, the column,
    // the DR and what it came to; the IFT's line beside it.
    let log_line = "(() => { const t = [...document.querySelectorAll('#events li .text')] \
        .map(li => li.textContent); return t.find(l => l.includes('8 FP −1 (g-ldr directs, A7.53) \
        +1 (TEM, B13) vs 55G6 on the 8 column')) || null; })()";
    let ift_line = "(() => { const t = [...document.querySelectorAll('#events li .text')] \
        .map(li => li.textContent); return t.find(l => l.startsWith('IFT: 8 FP vs 55G6 on the 8 column')) || null; })()";
    for tab in players {
        let line = browser
            .wait_for(tab, "the fire log line", log_line, WAIT)
            .await;
        let line = line.as_str().unwrap();
        let (_, after) = line.split_once(": DR ").unwrap_or_else(|| panic!("{line}"));
        let (dr, rest) = after
            .split_once(", Final ")
            .unwrap_or_else(|| panic!("{line}"));
        let dr: i32 = dr.parse().unwrap_or_else(|_| panic!("{line}"));
        assert!((2..=12).contains(&dr), "{line}");
        // The two DRMs cancel: the Final DR is the DR.
        let (final_dr, result) = rest.split_once(" → ").unwrap_or_else(|| panic!("{line}"));
        assert_eq!(final_dr, dr.to_string(), "{line}");
        assert!(
            ["NE", "PTC", "NMC", "1MC", "2MC", "3MC", "4MC", "K/1", "K/2", "1KIA", "2KIA"]
                .iter()
                .any(|r| result.starts_with(r)),
            "{line}"
        );
        let ift = browser.wait_for(tab, "the IFT line", ift_line, WAIT).await;
        assert!(
            ift.as_str()
                .unwrap()
                .ends_with(&format!("Final DR {dr} → {result} (A7.3)")),
            "{ift} / {line}"
        );
    }

    // What the server quotes is shown as chips, never as backquotes, dice boxes included.
    for tab in players {
        let shown = text(
            &mut browser,
            tab,
            "document.getElementById('events').innerText",
        )
        .await;
        assert!(!shown.contains('`'), "{shown}");
    }
    let shot = browser.screenshot(&russian).await;
    std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fire-log.png"),
        &shot,
    )
    .unwrap();

    // The rest of the Game Turn, both Player Turns, to the end of the game.
    let lines = play_until(&mut browser, players, "window.aslWatch.live.over").await;
    for line in ["MPh, ATTACKER", "DFPh, DEFENDER", "CCPh, ATTACKER"] {
        assert!(lines.iter().any(|l| l == line), "{line} in {lines:?}");
    }
    assert!(prompt(&mut browser, &german)
        .await
        .contains("The game is over."));
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rally_and_a_melee_from_the_page() {
    let (_dir, server, mut browser, [german, russian]) = start(RALLY_AND_MELEE).await;
    let players = [&german, &russian];
    settle(&mut browser, players).await;
    assert_eq!(
        text(&mut browser, &german, PHASE_LINE).await,
        "RPh, ATTACKER"
    );

    // The prompt says who may rally.
    let asked = prompt(&mut browser, &german).await;
    assert!(
        asked.contains("Broken units of yours may attempt to rally now (A10.6): g1."),
        "{asked}"
    );
    assert!(!prompt(&mut browser, &russian).await.contains("rally"));
    // Y with the broken squad and its leader picked: the Rally form, filled from the pick.
    select(&mut browser, &german, "1B2", &["g1", "gl"]).await;
    browser.type_key(&german, "y").await;
    assert_eq!(
        browser
            .eval(
                &german,
                "[document.getElementById('rally-form').hidden, \
                 document.getElementById('rally-unit').value, \
                 document.getElementById('rally-leader').value, \
                 document.activeElement.id]"
            )
            .await,
        serde_json::json!([false, "g1", "gl", "rally-morale"])
    );
    // No morale given: the page asks for it and sends nothing.
    browser
        .eval(
            &german,
            "document.getElementById('rally-form').requestSubmit()",
        )
        .await;
    assert!(text(
        &mut browser,
        &german,
        "document.getElementById('selection').textContent"
    )
    .await
    .contains("broken side"));
    browser
        .eval(
            &german,
            "document.getElementById('rally-morale').value = '8'; \
             document.getElementById('rally-form').requestSubmit()",
        )
        .await;
    let rally = send(&mut browser, &german).await;
    assert!(
        rally.starts_with("Rally g1 (broken morale 8) led by gl: "),
        "{rally}"
    );
    settle(&mut browser, players).await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('rally-form').hidden")
            .await,
        true
    );
    for tab in players {
        browser
            .wait_for(
                tab,
                "the rally in the record",
                "document.getElementById('events').textContent.includes('gl attempted to rally g1 (A10.6)')",
                WAIT,
            )
            .await;
    }
    // Rallied or not, a second attempt is refused with its rule (one per Player Turn).
    let rallied = browser
        .eval(&german, "window.aslWatch.live.units.g1.morale !== 'broken'")
        .await;
    if rallied == false {
        // This time from the prompt's answer, which opens the form for g1 with its leader.
        browser.press(&german, "Escape", 27).await;
        browser
            .eval(
                &german,
                "[...document.querySelectorAll('#prompt button.answer')] \
                 .find(b => b.textContent.includes('Rally g1')).click()",
            )
            .await;
        assert_eq!(
            browser
                .eval(
                    &german,
                    "[document.getElementById('rally-form').hidden, \
                     document.getElementById('rally-leader').value]"
                )
                .await,
            serde_json::json!([false, "gl"])
        );
        browser
            .eval(
                &german,
                "document.getElementById('rally-morale').value = '8'; \
                 document.getElementById('rally-form').requestSubmit()",
            )
            .await;
        let again = previewed(&mut browser, &german).await;
        assert!(again.contains("refused (A10.6)"), "{again}");
        browser.press(&german, "Escape", 27).await;
        // Still broken in the open in r1's LOS and normal range, g1 must rout in the RtPh
        // (A10.5) before the step ends: picked from the prompt, one hex away from r1.
        play_until(&mut browser, players, &at("RtPh, ATTACKER")).await;
        browser
            .wait_for(
                &german,
                "the rout prompt",
                "document.querySelector('#prompt button.rout-pick[data-unit=\"g1\"]') !== null",
                WAIT,
            )
            .await;
        browser
            .eval(
                &german,
                "document.querySelector('#prompt button.rout-pick[data-unit=\"g1\"]').click()",
            )
            .await;
        browser.eval(&german, &click_hex("1B1")).await;
        let routed = send(&mut browser, &german).await;
        assert!(routed.starts_with("Rout g1 to 1B1: "), "{routed}");
    }
    // Melee is not for the RPh: X says why.
    browser.type_key(&german, "x").await;
    assert!(text(
        &mut browser,
        &german,
        "document.getElementById('selection').textContent"
    )
    .await
    .contains("(A11.7)"));

    // In the CCPh the prompt names the Location both sides hold and records its Melee.
    play_until(&mut browser, players, &at("CCPh, ATTACKER")).await;
    let asked = prompt(&mut browser, &german).await;
    assert!(asked.contains("Close Combat in 1D4 (A11)"), "{asked}");
    let key = browser
        .eval(
            &german,
            "[...document.querySelectorAll('#prompt button.answer')] \
             .find(b => b.textContent.includes('Record the Melee in 1D4')).dataset.key",
        )
        .await;
    browser.type_key(&german, key.as_str().unwrap()).await;
    let melee = send(&mut browser, &german).await;
    assert!(melee.starts_with("Record the Melee in 1D4: "), "{melee}");
    settle(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "the Melee in the record",
                "document.getElementById('events').textContent.includes('Melee (A11.7)')",
                WAIT,
            )
            .await;
    }
    // Recorded once: the X button's way is refused now, with its rule.
    browser.type_key(&german, "x").await;
    browser.eval(&german, &click_hex("1D4")).await;
    let again = previewed(&mut browser, &german).await;
    assert!(again.contains("refused (A11.7)"), "{again}");
    browser.press(&german, "Escape", 27).await;

    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}
