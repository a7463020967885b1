//! The play page in a real browser: one full Game Turn of `scenarios/wall-and-sewer.toml`
//! played by two pages, one per seat, each opened with its side's token, while a third page
//! watches with the spectator token. Everything is done as a player would: clicking hexes and
//! the counters of a spread-out stack, the action keys, the preview shown before Enter sends
//! the command. On the way: a move refused with its rule, a sewer move, the Russian's Wall
//! Advantage chance prompt answered with a claim while the German page says what it waits
//! for, and `done` to the end of the game. The watcher sees every public event; no page
//! reports an error; the page fits a 390 px screen.
//!
//! Nothing is timed: every step waits for a condition on the page, with a generous bound.
//! Needs Chromium (`apt-get install chromium`). With `ASL_UPDATE_SCREENSHOT=1` the screenshots
//! of both players' pages and the watcher's, desktop and phone, replace those in `docs/` that
//! the README shows.

#[path = "support/page.rs"]
mod page;

use client::Connection;
use e2e::chromium::{self, Browser, Tab};
use e2e::TestServer;
use page::{click_hex, previewed, prompt, send, text, PHASE_LINE, SETTLED, TURN_ACTIONS_MAX, WAIT};
use server::operations::config::Config;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/wall-and-sewer.toml");

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn chromium_binary() -> PathBuf {
    chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM to a \
         Chromium/Chrome binary); `.ci/run` installs it",
    )
}

/// A server with a new game of the scenario; the directory holds its data.
async fn start() -> (tempfile::TempDir, TestServer, client::NewGame) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    (dir, server, created)
}

/// The page's link for `token`: a side's plays that side, the spectator's watches.
fn link(server: &TestServer, game: &str, token: &str) -> String {
    format!("http://{}/watch#game={game}&token={token}", server.addr)
}

/// Both players' pages settled on the same moment of play.
async fn settle(browser: &mut Browser, players: &[&Tab; 2]) {
    let clock = "JSON.stringify([window.aslWatch.live.clock, window.aslWatch.live.over, \
                 window.aslWatch.live.wa_chance !== null, \
                 window.aslWatch.live.sewer_designation !== null])";
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
    let picked = browser
        .eval(tab, "[...window.aslWatch.selected].sort().join(' ')")
        .await;
    let mut want: Vec<&str> = units.to_vec();
    want.sort();
    assert_eq!(picked, want.join(" "));
}

/// Ends the step from the page of whichever player the game waits on (N, then Enter once the
/// preview allows it); returns the phase it ended.
async fn done_by_whoever(browser: &mut Browser, players: &[&Tab; 2]) -> String {
    settle(browser, players).await;
    let actor = if prompt(browser, players[0]).await.starts_with("Your move") {
        players[0]
    } else {
        players[1]
    };
    let phase = text(
        browser,
        actor,
        "document.getElementById('phase').textContent",
    )
    .await;
    browser.type_key(actor, "n").await;
    let preview = send(browser, actor).await;
    // Done says what it ends and what comes next, not merely that it is allowed.
    assert!(
        preview.starts_with("End ") && preview.contains("; next: "),
        "{preview}"
    );
    phase
}

/// `done` by whoever must act until the German's MPh: the RPh, each end-of-RPh step that does
/// not pass by itself (B9.322), the PFPh.
async fn to_german_mph(browser: &mut Browser, players: &[&Tab; 2]) {
    for _ in 0..4 {
        settle(browser, players).await;
        if text(browser, players[0], PHASE_LINE).await == "MPh, ATTACKER" {
            return;
        }
        done_by_whoever(browser, players).await;
    }
    settle(browser, players).await;
    assert_eq!(text(browser, players[0], PHASE_LINE).await, "MPh, ATTACKER");
}

/// JavaScript: the value of `expression` on the element `id`.
fn of(id: &str, expression: &str) -> String {
    format!("document.getElementById('{id}').{expression}")
}

/// JavaScript: whether two of the counter faces of `hex` overlap anywhere on screen.
fn stack_overlaps(hex: &str) -> String {
    format!(
        "(() => {{ const b = [...document.querySelectorAll('.counter[data-hex=\"{hex}\"] .face')] \
         .map(f => f.getBoundingClientRect()); \
         return b.length + ':' + b.some((p, i) => b.some((q, j) => i < j && p.right > q.left && \
         q.right > p.left && p.bottom > q.top && q.bottom > p.top)); }})()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_pages_play_a_game_turn_while_a_third_watches() {
    let binary = chromium_binary();
    let (_dir, server, created) = start().await;
    let link = |token: &str| link(&server, &created.game, token);

    let mut browser = Browser::launch(&binary).await;
    let german = browser.open(&link(&created.tokens.side_a)).await;
    let russian = browser.open(&link(&created.tokens.side_b)).await;
    let watcher = browser.open(&link(&created.tokens.spectator)).await;
    for tab in [&german, &russian, &watcher] {
        browser.wait_for(tab, "the board", SETTLED, WAIT).await;
    }
    let players = [&german, &russian];

    // Who plays and who watches, and the phase line as the rulebook writes it.
    for (tab, shown, status) in [
        (&german, false, "Playing live"),
        (&russian, false, "Playing live"),
        (&watcher, true, "Watching live"),
    ] {
        assert_eq!(
            browser
                .eval(tab, "document.getElementById('play').hidden")
                .await,
            shown
        );
        assert_eq!(
            text(
                &mut browser,
                tab,
                "document.getElementById('status').textContent"
            )
            .await,
            status
        );
        assert_eq!(text(&mut browser, tab, PHASE_LINE).await, "RPh, ATTACKER");
    }

    // A readable board: the Russian sees its own concealed 3-3-7 as such, the German and the
    // watcher only a "?"; the LMG is drawn with its holder; stone and wooden buildings differ.
    assert_eq!(
        browser
            .eval(
                &russian,
                "document.querySelector('.counter.own-concealed[data-unit=\"337a\"]') !== null"
            )
            .await,
        true
    );
    for tab in [&german, &watcher] {
        let html = text(
            &mut browser,
            tab,
            "document.getElementById('units').innerHTML",
        )
        .await;
        assert!(!html.contains("337a") && !html.contains("3-3-7"), "{html}");
        assert_eq!(
            text(
                &mut browser,
                tab,
                "document.querySelector('.counter[data-hex=\"55I7\"] .concealed-mark').textContent"
            )
            .await,
            "?"
        );
    }
    for tab in [&german, &russian, &watcher] {
        assert_eq!(
            text(
                &mut browser,
                tab,
                "document.querySelector('.counter[data-unit=\"467b\"] .sw').textContent"
            )
            .await,
            "LMG"
        );
        assert_eq!(
            text(
                &mut browser,
                tab,
                "[...document.querySelectorAll('.building-kind')].map(t => t.textContent).sort().join('')"
            )
            .await,
            "SW"
        );
    }

    // The waiting side's page says what it waits for.
    assert!(prompt(&mut browser, &russian)
        .await
        .starts_with("Waiting on the German: RPh"));

    // Each page says whom it plays, in that side's colour; the watcher's that it watches.
    for (tab, seat) in [
        (&german, "You play the German"),
        (&russian, "You play the Russian"),
        (&watcher, "Watching"),
    ] {
        assert_eq!(
            text(&mut browser, tab, &of("seat", "textContent")).await,
            seat
        );
    }
    let colour = "getComputedStyle(document.getElementById('seat')).backgroundColor";
    assert_ne!(
        text(&mut browser, &german, colour).await,
        text(&mut browser, &russian, colour).await
    );

    // Counters as printed: the nationality's colour, the kind, the ratings (a squad's 4-6-7,
    // a leader's 8-1); the stack in 55F5 fanned out so both counters are whole; hexes named
    // in full, board and all, as every message names them.
    for (unit, kind, ratings, fill) in [
        ("467b", "SQD", "4-6-7", "#8da4bd"),
        ("g-ldr", "LDR", "8-1", "#8da4bd"),
        ("747a", "SQD", "7-4-7", "#c6a064"),
    ] {
        let counter = format!("document.querySelector('.counter[data-unit=\"{unit}\"]')");
        assert_eq!(
            text(
                &mut browser,
                &german,
                &format!(
                    "[{counter}.querySelector('.kind').textContent, {counter}.querySelector('.ratings').textContent, \
                     {counter}.querySelector('.face').getAttribute('fill')].join(' ')"
                )
            )
            .await,
            format!("{kind} {ratings} {fill}")
        );
    }
    assert_eq!(
        text(&mut browser, &german, &stack_overlaps("55F5")).await,
        "2:false"
    );
    assert_eq!(
        text(
            &mut browser,
            &german,
            "document.querySelector('.hex-cell[data-hex=\"55H7\"] .hex-label').textContent"
        )
        .await,
        "55H7"
    );

    // Actions are offered only when they can apply: no tunnel here, so no tunnel buttons;
    // in the RPh Move is neither highlighted nor usable, its hover and its key say why.
    let button = |action: &str, property: &str| {
        format!("document.querySelector('#actions button[data-action=\"{action}\"]').{property}")
    };
    for action in ["tunnel", "surface", "rout_tunnel"] {
        assert_eq!(browser.eval(&german, &button(action, "hidden")).await, true);
    }
    assert_eq!(
        browser.eval(&german, &button("sewer", "hidden")).await,
        false
    );
    assert_eq!(
        browser.eval(&german, &button("move", "disabled")).await,
        true
    );
    assert_eq!(
        browser
            .eval(&german, &button("move", "classList.contains('on')"))
            .await,
        false
    );
    assert!(text(&mut browser, &german, &button("move", "title"))
        .await
        .starts_with("Movement is for your MPh (A4)"));
    browser.type_key(&german, "m").await;
    assert!(text(&mut browser, &german, &of("selection", "textContent"))
        .await
        .starts_with("Movement is for your MPh (A4)"));
    // The side not acting cannot end the step.
    assert_eq!(
        browser.eval(&russian, &button("done", "disabled")).await,
        true
    );

    // LOS is a mode of its own: clicks on the board pick stacks and draw no thread until L;
    // then two clicks draw it and the stack list stays as it was; Esc leaves the mode.
    browser.eval(&german, &click_hex("55F5")).await;
    browser.eval(&german, &click_hex("55G6")).await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('los-thread') === null")
            .await,
        true
    );
    assert_eq!(browser.eval(&german, &of("los-info", "hidden")).await, true);
    let listed = text(
        &mut browser,
        &german,
        "document.querySelector('#stack strong').textContent",
    )
    .await;
    assert_eq!(listed, "In 55G6:");
    browser.type_key(&german, "l").await;
    assert_eq!(
        browser
            .eval(&german, &of("los-mode", "getAttribute('aria-pressed')"))
            .await,
        "true"
    );
    for hex in ["55H7", "55F5"] {
        browser.eval(&german, &click_hex(hex)).await;
    }
    browser
        .wait_for(
            &german,
            "the LOS thread 55H7 → 55F5",
            "document.getElementById('los-thread') !== null && \
             document.getElementById('los-info').textContent.startsWith('LOS 55H7 → 55F5')",
            WAIT,
        )
        .await;
    assert_eq!(
        text(
            &mut browser,
            &german,
            "document.querySelector('#stack strong').textContent"
        )
        .await,
        listed
    );
    browser.press(&german, "Escape", 27).await;
    assert_eq!(
        browser
            .eval(
                &german,
                "document.getElementById('los-thread') === null && document.getElementById('los-info').hidden"
            )
            .await,
        true
    );

    // An offer to end the game (E), declined from the other page: it plays on.
    browser.type_key(&german, "e").await;
    send(&mut browser, &german).await;
    settle(&mut browser, &players).await;
    assert!(prompt(&mut browser, &russian)
        .await
        .contains("Your opponent offers to end the game here."));
    browser
        .eval(
            &russian,
            "[...document.querySelectorAll('#prompt button.answer')].find(b => b.textContent.endsWith('Decline: play on')).click()",
        )
        .await;
    assert!(prompt(&mut browser, &russian)
        .await
        .contains("You play on: the offer to end lapses when this step ends."));

    // To the German MPh with `done` (the N key, then Enter once the preview allows it).
    // No unit could claim WA at the end of the RPh: both of its steps pass by themselves
    // (B9.322), so the RPh's `done` brings the PFPh.
    for expected in ["RPh", "PFPh"] {
        let phase = done_by_whoever(&mut browser, &players).await;
        assert!(phase.starts_with(expected), "{phase}");
    }
    settle(&mut browser, &players).await;
    assert_eq!(
        text(&mut browser, &german, PHASE_LINE).await,
        "MPh, ATTACKER"
    );

    // A move two hexes away: the preview shows the refusal with its rule, and nothing is sent.
    select(&mut browser, &german, "55H7", &["447a"]).await;
    browser.eval(&german, &click_hex("55J9")).await;
    let refused = previewed(&mut browser, &german).await;
    assert!(
        refused.starts_with("Move 447a to 55J9: refused (A4"),
        "{refused}"
    );
    // The destination is outlined as such (not as the pointer's hex) until the move is dropped.
    assert_eq!(
        text(
            &mut browser,
            &german,
            "document.querySelector('.hex.target').dataset.hex"
        )
        .await,
        "55J9"
    );
    assert!(
        browser
            .eval(&german, "document.getElementById('confirm').disabled")
            .await
            == true
    );
    browser.press(&german, "Escape", 27).await;
    assert_eq!(
        browser
            .eval(&german, "document.querySelector('.hex.target') === null")
            .await,
        true
    );

    // Down the Manhole at F5 and beneath the one at F8 (B8.4, B8.41): S, then the hex.
    select(&mut browser, &german, "55F5", &["467b", "g-ldr"]).await;
    browser.type_key(&german, "s").await;
    browser.eval(&german, &click_hex("55F8")).await;
    send(&mut browser, &german).await;
    settle(&mut browser, &players).await;
    // A lost stack (B8.41) waits on the Russian to say where it goes: the German page says
    // so, the Russian's offers exactly the Manholes the server allows.
    if browser
        .eval(&russian, "window.aslWatch.live.sewer_designation !== null")
        .await
        == true
    {
        assert!(prompt(&mut browser, &german)
            .await
            .contains("Waiting for the Russian to say where the lost sewer stack goes"));
        browser.type_key(&russian, "1").await;
        send(&mut browser, &russian).await;
        settle(&mut browser, &players).await;
    }
    browser.press(&german, "Escape", 27).await;

    // 467a leaves H5 and with it its WA over the wall to G6 (B9.41): a step priced by the
    // referee before it is sent.
    select(&mut browser, &german, "55H5", &["467a"]).await;
    browser.type_key(&german, "m").await;
    browser.eval(&german, &click_hex("55H4")).await;
    let priced = send(&mut browser, &german).await;
    assert!(
        priced.starts_with("Move 467a to 55H4: 1 MF: 1 COT"),
        "{priced}"
    );
    assert!(priced.contains("467a left 3 of 4"), "{priced}");
    // The stack list follows the units where they went, not the hex they left.
    browser
        .wait_for(
            &german,
            "the stack list in 55H4",
            "document.querySelector('#stack strong').textContent === 'In 55H4:'",
            WAIT,
        )
        .await;

    // The Russian may now claim WA (B9.322): its page asks, the German's says it waits.
    settle(&mut browser, &players).await;
    let asked = prompt(&mut browser, &russian).await;
    assert!(
        asked.contains("you may claim it for 747a now (B9.322)"),
        "{asked}"
    );
    assert!(prompt(&mut browser, &german)
        .await
        .contains("Waiting for the Russian to claim Wall Advantage"));
    // An empty hex clicked says so, until play moves on.
    browser.press(&german, "Escape", 27).await;
    browser.eval(&german, &click_hex("55J4")).await;
    assert_eq!(
        text(
            &mut browser,
            &german,
            "document.querySelector('#stack strong').textContent"
        )
        .await,
        "55J4: no counters"
    );
    browser.type_key(&russian, "1").await;
    send(&mut browser, &russian).await;
    browser
        .wait_for(
            &german,
            "the stale empty-hex note gone",
            "document.getElementById('stack').hidden",
            WAIT,
        )
        .await;
    // The German's last result goes once the Russian has acted.
    browser
        .wait_for(
            &german,
            "the German's last result cleared",
            "document.getElementById('outcome').textContent === ''",
            WAIT,
        )
        .await;

    // The rest of the Game Turn: whoever the game waits on ends the step or answers.
    let mut actions = 0;
    let mut phase_lines = vec![];
    loop {
        settle(&mut browser, &players).await;
        if browser.eval(&german, "window.aslWatch.live.over").await == true {
            break;
        }
        phase_lines.push(text(&mut browser, &german, PHASE_LINE).await);
        actions += 1;
        assert!(actions <= TURN_ACTIONS_MAX, "the Game Turn does not end");
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
                send(&mut browser, tab).await;
                acted = true;
                break;
            }
            if prompt(&mut browser, tab).await.starts_with("Your move") {
                browser.type_key(tab, "n").await;
                send(&mut browser, tab).await;
                acted = true;
                break;
            }
        }
        assert!(
            acted,
            "no page has anything to do: {} / {}",
            prompt(&mut browser, &german).await,
            prompt(&mut browser, &russian).await
        );
    }
    assert!(prompt(&mut browser, &german)
        .await
        .contains("The game is over."));
    // The phase line as the rulebook writes it, through both Player Turns.
    for line in [
        "DFPh, DEFENDER",
        "RtPh, ATTACKER",
        "RtPh, DEFENDER",
        "CCPh, ATTACKER",
    ] {
        assert!(
            phase_lines.iter().any(|l| l == line),
            "{line} in {phase_lines:?}"
        );
    }

    // The watcher saw every event it may know, in order, and the moves of the turn in words.
    browser
        .wait_for(
            &watcher,
            "the watcher at the end",
            &format!("{SETTLED} && window.aslWatch.live.over"),
            WAIT,
        )
        .await;
    let kinds = "JSON.stringify(window.aslWatch.entries.map(e => Object.keys(e.event)[0]) \
                 .filter(k => ['unit_moved', 'wall_advantage_chance_offered', \
                 'wall_advantage_claimed', 'step_ended', 'game_ended'].includes(k)))";
    let watched = text(&mut browser, &watcher, kinds).await;
    assert_eq!(watched, text(&mut browser, &german, kinds).await);
    assert_eq!(watched, text(&mut browser, &russian, kinds).await);
    for needed in ["wall_advantage_claimed", "unit_moved", "game_ended"] {
        assert!(watched.contains(needed), "{needed} in {watched}");
    }
    let record = text(
        &mut browser,
        &watcher,
        "window.aslWatch.entries.map(e => e.text).join('\\n')",
    )
    .await;
    assert!(
        record.contains("sewer") || record.contains("Manhole"),
        "{record}"
    );
    assert_eq!(
        browser
            .eval(
                &watcher,
                "window.aslWatch.entries.every((e, i) => e.seq === i + 1)"
            )
            .await,
        true
    );

    // Replaying, the header never says it is live; back at the end, it does again.
    browser
        .eval(&watcher, "document.getElementById('first').click()")
        .await;
    let replaying = browser
        .wait_for(
            &watcher,
            "the replay status",
            "window.aslWatch.shown.version === 1 && document.getElementById('status').textContent",
            WAIT,
        )
        .await;
    assert!(
        replaying
            .as_str()
            .unwrap()
            .starts_with("Replaying: position after event #1 of "),
        "{replaying}"
    );
    browser.press(&watcher, "End", 35).await;
    browser
        .wait_for(
            &watcher,
            "live again",
            "document.getElementById('status').textContent === 'Watching live'",
            WAIT,
        )
        .await;

    // Text as text: what the server quotes is shown as chips, never as backquotes.
    for tab in [&german, &russian, &watcher] {
        let shown = text(&mut browser, tab, "document.body.innerText").await;
        assert!(!shown.contains('`'), "{shown}");
    }

    // The play page at phone width: nothing sideways, the board and the actions usable.
    browser.viewport(&german, 390, 844, true).await;
    let fits = browser
        .wait_for(
            &german,
            "the play page at phone width",
            "document.documentElement.scrollWidth <= window.innerWidth && \
             document.getElementById('play').getBoundingClientRect().width <= 390 && \
             document.getElementById('board').getBoundingClientRect().width",
            WAIT,
        )
        .await;
    assert!(fits.as_f64().unwrap() > 300.0, "board {fits} px wide");
    // The banner stays in sight, whole, when the page is scrolled to the record's end.
    let banner = browser
        .wait_for(
            &german,
            "the banner at the top of the scrolled page",
            "(() => { window.scrollTo(0, document.body.scrollHeight); \
             const b = document.getElementById('banner').getBoundingClientRect(); \
             return window.scrollY > 0 && b.top === 0 && b.right <= window.innerWidth && \
             document.getElementById('banner').scrollWidth <= window.innerWidth && \
             document.getElementById('seat').getBoundingClientRect().bottom <= b.bottom; })()",
            WAIT,
        )
        .await;
    assert_eq!(banner, true);

    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}

/// The README's pictures: both players' pages and the watcher's in the German MPh, the
/// German's 4-4-7 in H7 picked and its step to I8 previewed, the Russian's own stack listed;
/// each at a desktop size and at a 390 px phone width. Saved under the target directory;
/// with `ASL_UPDATE_SCREENSHOT=1` they replace `docs/play-*.png` and `docs/watch-*.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_play_page_screenshots() {
    let binary = chromium_binary();
    let (_dir, server, created) = start().await;
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    let russian = browser
        .open(&link(&server, &created.game, &created.tokens.side_b))
        .await;
    let watcher = browser
        .open(&link(&server, &created.game, &created.tokens.spectator))
        .await;
    let players = [&german, &russian];
    to_german_mph(&mut browser, &players).await;
    settle(&mut browser, &players).await;
    assert!(prompt(&mut browser, &german)
        .await
        .starts_with("Your move: MPh"));
    browser.eval(&russian, &click_hex("55G6")).await;
    select(&mut browser, &german, "55H7", &["447a"]).await;
    browser.eval(&german, &click_hex("55I8")).await;
    let preview = previewed(&mut browser, &german).await;
    assert!(preview.contains("MF"), "{preview}");
    browser
        .wait_for(&watcher, "the watcher", SETTLED, WAIT)
        .await;
    for (tab, name) in [
        (&german, "play-german"),
        (&russian, "play-russian"),
        (&watcher, "watch"),
    ] {
        for (width, height, mobile, suffix) in
            [(1100, 760, false, "desktop"), (390, 844, true, "phone")]
        {
            browser.viewport(tab, width, height, mobile).await;
            // A frame drawn at the new size: the board's width follows the viewport.
            browser
                .wait_for(
                    tab,
                    "the page laid out at the new width",
                    &format!("window.innerWidth === {width}"),
                    WAIT,
                )
                .await;
            browser.eval(tab, "window.scrollTo(0, 0)").await;
            let shot = browser.screenshot(tab).await;
            assert!(shot.starts_with(b"\x89PNG"), "a PNG");
            let file = format!("{name}-{suffix}.png");
            std::fs::write(Path::new(env!("CARGO_TARGET_TMPDIR")).join(&file), &shot).unwrap();
            if std::env::var_os("ASL_UPDATE_SCREENSHOT").is_some() {
                std::fs::write(repo(&format!("docs/{file}")), &shot).unwrap();
            }
        }
    }
    browser.close().await;
    server.stop().await;
}

/// The rest of the actions, each previewed and then sent from the page: Double Time (D), an SW
/// dropped and picked up again from the spread-out stack, a Bypass by its hexsides (B), a roll
/// and an adjudication from the small forms, and the adjudication answered from the prompt it
/// raises on the other side's page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_actions_from_the_page() {
    let binary = chromium_binary();
    let (dir, server, created) = start().await;
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    let russian = browser
        .open(&link(&server, &created.game, &created.tokens.side_b))
        .await;
    let players = [&german, &russian];
    to_german_mph(&mut browser, &players).await;
    settle(&mut browser, &players).await;

    // Double Time (A4.5): the allotment grows by one.
    select(&mut browser, &german, "55H7", &["447a"]).await;
    browser.type_key(&german, "d").await;
    let double = send(&mut browser, &german).await;
    assert_eq!(double, "Double Time for 447a: allowed; 447a left 5 of 5");
    browser.press(&german, "Escape", 27).await;
    // Double Time makes it CX (A4.51): the marker lies on its counter.
    browser
        .wait_for(
            &german,
            "the CX marker on 447a",
            "document.querySelector('.counter[data-unit=\"447a\"] .badge.cx') !== null",
            WAIT,
        )
        .await;

    // The LMG dropped (A4.43) and recovered (A4.44) from the spread-out stack.
    select(&mut browser, &german, "55F5", &["467b"]).await;
    let lmg = "document.querySelector('#stack button.weapon-pick[data-weapon=\"g-lmg\"]')";
    browser.eval(&german, &format!("{lmg}.click()")).await;
    let dropped = send(&mut browser, &german).await;
    assert!(dropped.starts_with("467b drops LMG: allowed"), "{dropped}");
    browser
        .wait_for(
            &german,
            "the LMG unpossessed",
            &format!("{SETTLED} && {lmg}.textContent.includes('unpossessed')"),
            WAIT,
        )
        .await;
    browser.eval(&german, &format!("{lmg}.click()")).await;
    let recovered = send(&mut browser, &german).await;
    assert_eq!(recovered, "467b recovers LMG: allowed; 467b left 3 of 4");
    browser.press(&german, "Escape", 27).await;

    // 467a steps to I5 (the Russian lets its WA chance pass, the second answer), then
    // Bypasses the building in J5 along its hexside with I6 (A4.3): B, the hex, the hexside.
    settle(&mut browser, &players).await;
    select(&mut browser, &german, "55H5", &["467a"]).await;
    browser.eval(&german, &click_hex("55I5")).await;
    send(&mut browser, &german).await;
    settle(&mut browser, &players).await;
    browser.type_key(&russian, "2").await;
    let declined = send(&mut browser, &russian).await;
    assert!(declined.starts_with("Let the chance pass"), "{declined}");
    settle(&mut browser, &players).await;
    browser.type_key(&german, "b").await;
    browser.eval(&german, &click_hex("55J5")).await;
    browser.eval(&german, &click_hex("55I6")).await;
    let bypass = send(&mut browser, &german).await;
    assert!(
        bypass.starts_with("Bypass 55J5 along 55I6: 1 MF: 1 COT (B1, Bypass of 55J5 (A4.31))"),
        "{bypass}"
    );

    // Out of Bypass before the MPh ends (A4.32): Done is refused until 467a moves on (M).
    browser.type_key(&german, "n").await;
    let held = previewed(&mut browser, &german).await;
    assert!(held.contains("refused (A4.32)"), "{held}");
    browser.type_key(&german, "m").await;
    browser.eval(&german, &click_hex("55I6")).await;
    send(&mut browser, &german).await;

    // A roll from the form (R focuses it): the referee rolls it when it is sent.
    browser.type_key(&german, "r").await;
    browser
        .eval(
            &german,
            "document.getElementById('roll-purpose').value = 'ift'; \
             document.getElementById('roll-note').value = '8 FP vs 747a'; \
             document.activeElement.blur(); \
             document.getElementById('roll-form').requestSubmit()",
        )
        .await;
    let rolled = send(&mut browser, &german).await;
    assert_eq!(rolled, "Roll DR for ift: allowed");

    // Into the DFPh; the Russian adjudicates a pin on 467a, and the German page offers to
    // accept or dispute it.
    browser.press(&german, "Escape", 27).await;
    done_by_whoever(&mut browser, &players).await;
    settle(&mut browser, &players).await;
    browser.type_key(&russian, "a").await;
    browser
        .eval(
            &russian,
            "document.getElementById('adjudicate-unit').value = '467a'; \
             document.getElementById('adjudicate-outcome').value = 'pin'; \
             document.getElementById('adjudicate-note').value = 'PTC failed'; \
             document.activeElement.blur(); \
             document.getElementById('adjudicate-form').requestSubmit()",
        )
        .await;
    let adjudicated = send(&mut browser, &russian).await;
    assert_eq!(adjudicated, "Adjudicate 467a: pin: allowed");
    settle(&mut browser, &players).await;
    let asked = prompt(&mut browser, &german).await;
    assert!(asked.contains("467a pin (“PTC failed”)"), "{asked}");
    browser
        .eval(
            &german,
            "[...document.querySelectorAll('#prompt button.answer')].find(b => b.textContent.endsWith('Accept')).click()",
        )
        .await;
    let accepted = send(&mut browser, &german).await;
    assert!(accepted.starts_with("Accept: allowed"), "{accepted}");
    settle(&mut browser, &players).await;
    assert!(!prompt(&mut browser, &german).await.contains("PTC failed"));
    // The pin accepted, a PIN marker lies on 467a.
    assert_eq!(
        browser
            .eval(
                &german,
                "document.querySelector('.counter[data-unit=\"467a\"] .badge.pin').textContent"
            )
            .await,
        "PIN"
    );

    // An adjudication with no note, previewed and sent with Enter from the form's own field
    // (as its Send button says); the prompt shows no empty quotes, and once accepted 447a
    // shows its broken side.
    browser.type_key(&russian, "a").await;
    browser
        .eval(
            &russian,
            "document.getElementById('adjudicate-unit').value = '447a'; \
             document.getElementById('adjudicate-outcome').value = 'break'; \
             document.getElementById('adjudicate-note').value = ''; \
             document.getElementById('adjudicate-note').focus()",
        )
        .await;
    browser.enter(&russian).await;
    let preview = previewed(&mut browser, &russian).await;
    assert_eq!(preview, "Adjudicate 447a: break: allowed");
    browser
        .eval(
            &russian,
            "document.getElementById('adjudicate-note').focus()",
        )
        .await;
    let id = browser.eval(&russian, "window.aslWatch.proposal.id").await;
    browser.enter(&russian).await;
    browser
        .wait_for(
            &russian,
            "the adjudication sent by Enter in the form",
            &format!(
                "document.getElementById('outcome').dataset.answered === '{id}' && \
                 document.getElementById('outcome').textContent.includes(': done (')"
            ),
            WAIT,
        )
        .await;
    settle(&mut browser, &players).await;
    let asked = prompt(&mut browser, &german).await;
    assert!(asked.contains("447a break."), "{asked}");
    assert!(!asked.contains("“”") && !asked.contains("()"), "{asked}");
    browser
        .eval(
            &german,
            "[...document.querySelectorAll('#prompt button.answer')].find(b => b.textContent.endsWith('Accept')).click()",
        )
        .await;
    send(&mut browser, &german).await;
    browser
        .wait_for(
            &german,
            "447a on its broken side",
            "document.querySelector('.counter.broken[data-unit=\"447a\"] .broken-band') !== null",
            WAIT,
        )
        .await;

    // The server restarts under both pages: they resume where they were and play on.
    let addr = server.addr;
    server.stop().await;
    let server = TestServer::start_at(&dir.path().join("data"), Config::default(), addr).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "the page to resume",
                "document.getElementById('status').textContent.startsWith('Resumed at event #')",
                WAIT,
            )
            .await;
    }
    let phase = done_by_whoever(&mut browser, &players).await;
    assert_eq!(phase, "DFPh");
    settle(&mut browser, &players).await;
    assert_eq!(
        text(&mut browser, &german, PHASE_LINE).await,
        "AFPh, ATTACKER"
    );

    // While the server was down, an attempt to reconnect may have failed: the browser logs
    // that, and it is no fault of the page.
    let errors: Vec<String> = browser
        .page_errors()
        .await
        .into_iter()
        .filter(|e| !e.contains("WebSocket connection to"))
        .collect();
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}

/// A page that only listens stays joined past the server's idle timeout: it pings (the
/// server's `ping`/`pong`) well within it. Here the timeout is 1.5 s, and the page is still on
/// its first connection after four pongs, so more than 1.5 s. Then the German concedes from
/// the page (C), and links that cannot work take the whole page with what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listening_page_stays_connected_and_a_player_can_concede() {
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        idle_timeout: Duration::from_millis(1500),
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    browser.wait_for(&german, "the board", SETTLED, WAIT).await;
    browser
        .wait_for(&german, "four pongs", "window.aslWatch.pongs >= 4", WAIT)
        .await;
    assert_eq!(
        browser
            .eval(
                &german,
                "[window.aslWatch.connections, window.aslWatch.joined, \
                 document.getElementById('status').textContent].join(' ')"
            )
            .await,
        "1 true Playing live"
    );

    // Conceding: C, previewed, Enter; the game is over on the page.
    browser.type_key(&german, "c").await;
    let conceded = send(&mut browser, &german).await;
    assert!(conceded.starts_with("Concede: "), "{conceded}");
    browser
        .wait_for(
            &german,
            "the game over",
            &format!("{SETTLED} && window.aslWatch.live.over && document.getElementById('prompt').textContent.includes('The game is over.')"),
            WAIT,
        )
        .await;

    // A wrong token and an unknown game: a full-page error saying what to do, no empty board.
    for (game, token, title) in [
        (
            created.game.as_str(),
            "not-a-token",
            "This link's token does not open this game",
        ),
        (
            "no-such-game",
            "not-a-token",
            "This server has no such game",
        ),
    ] {
        let tab = browser.open(&link(&server, game, token)).await;
        let shown = browser
            .wait_for(
                &tab,
                "the full-page error",
                "!document.getElementById('fatal').hidden && \
                 getComputedStyle(document.querySelector('main')).display === 'none' && \
                 document.getElementById('fatal-title').textContent",
                WAIT,
            )
            .await;
        assert_eq!(shown, title);
        assert!(text(&mut browser, &tab, &of("fatal-help", "textContent"))
            .await
            .contains("asl new"));
    }
    browser.close().await;
    server.stop().await;
}

/// The README's walkthrough scenario: each German move beside a wall asks the Russian, who has
/// a hidden unit, whether to place it and claim WA first (B9.324). The Russian's page says why
/// it is asked; the German's that its claim is mandatory (B9.323) and what it waits for. Then
/// the Russian offers to end the game and the German accepts from the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_walkthrough_says_why_the_hidden_unit_question_is_asked() {
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let mut creator = Connection::connect(&server.url).await.unwrap();
    let created = creator
        .create_game(include_str!("../../scenarios/village-outskirts.toml"), None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    let russian = browser
        .open(&link(&server, &created.game, &created.tokens.side_b))
        .await;
    let players = [&german, &russian];
    to_german_mph(&mut browser, &players).await;
    settle(&mut browser, &players).await;
    select(&mut browser, &german, "12B4", &["g1", "g2", "g-ldr"]).await;
    browser.eval(&german, &click_hex("12C4")).await;
    send(&mut browser, &german).await;
    settle(&mut browser, &players).await;
    let asked = prompt(&mut browser, &russian).await;
    assert!(
        asked.contains("must claim Wall Advantage where they stand (B9.323)")
            && asked.contains("B9.324 lets you place one of your hidden units")
            && asked.contains("their claim stands"),
        "{asked}"
    );
    let waits = prompt(&mut browser, &german).await;
    assert!(
        waits.contains("the claim is not yours to skip")
            && waits.contains("Waiting for the Russian"),
        "{waits}"
    );
    for tab in players {
        let shown = text(&mut browser, tab, "document.body.innerText").await;
        assert!(!shown.contains('`'), "{shown}");
    }
    // The Russian lets the moment pass (the last answer).
    browser
        .eval(
            &russian,
            "[...document.querySelectorAll('#prompt button.answer')].find(b => b.textContent.endsWith('Let the moment pass')).click()",
        )
        .await;
    send(&mut browser, &russian).await;

    // The Russian offers to end the game (E); the German accepts from its prompt (1).
    settle(&mut browser, &players).await;
    browser.type_key(&russian, "e").await;
    send(&mut browser, &russian).await;
    settle(&mut browser, &players).await;
    assert!(prompt(&mut browser, &german)
        .await
        .contains("Your opponent offers to end the game here."));
    browser.type_key(&german, "1").await;
    let accepted = send(&mut browser, &german).await;
    assert!(accepted.starts_with("Accept the end: "), "{accepted}");
    settle(&mut browser, &players).await;
    assert_eq!(
        browser.eval(&russian, "window.aslWatch.live.over").await,
        true
    );
    browser.close().await;
    server.stop().await;
}

/// One board's corner with a shellhole hex, two German squads and a Russian one, and a German
/// squad waiting off board to enter on Turn 1 from the east edge (A2.51).
const REINFORCEMENTS: &str = r#"name = "Reinforcements and fire"
turns = 1
first = "german"
sides = [
    { id = "german", name = "German" },
    { id = "russian", name = "Russian" },
]

[[area]]
from = "1A1"
to = "1J6"
terrain = "open_ground"

[[hexes]]
hex = "1C3"
terrain = "shellholes"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1B3"

[[units]]
id = "g2"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1B5"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1F3"

[[units]]
id = "g8"
side = "german"
kind = "squad"
ratings = "4-6-7"
enters = { turn = 1, edge = "east" }
"#;

/// What the CLI does beyond moving, from the page, by key and by click: a unit waiting off
/// board enters from its edge (I, or its button in the prompt, then a hex of the shaded edge); a unit that entered
/// shellholes takes their cover (V); the DEFENDER declares fire (K, then the target), rolls for
/// it with a note both sides read in the record, adjudicates citing the roll and resolves the
/// attack from its prompt; the ATTACKER disputes the adjudication with a reason (its key, then
/// the form); the ATTACKER asks to undo its last move (Z) and the DEFENDER consents (1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reinforcements_fire_and_undo_from_the_page() {
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(REINFORCEMENTS, None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    let russian = browser
        .open(&link(&server, &created.game, &created.tokens.side_b))
        .await;
    let players = [&german, &russian];
    to_german_mph(&mut browser, &players).await;
    settle(&mut browser, &players).await;
    assert_eq!(
        text(&mut browser, &german, PHASE_LINE).await,
        "MPh, ATTACKER"
    );

    // g8 waits off board: the prompt offers it; I picks it and shades its edge; a click on a
    // hex of that edge enters it.
    let asked = prompt(&mut browser, &german).await;
    assert!(
        asked.contains("Units waiting off board may enter now (A2.51): g8 from the east edge"),
        "{asked}"
    );
    browser.type_key(&german, "i").await;
    assert_eq!(
        browser
            .eval(
                &german,
                "[document.querySelector('.entry-edge[data-hex=\"1J3\"]') !== null, \
                 document.querySelector('.entry-edge[data-hex=\"1E3\"]') === null]"
            )
            .await,
        serde_json::json!([true, true])
    );
    // Esc drops the pick; the prompt's button for g8 picks it again.
    browser.press(&german, "Escape", 27).await;
    assert_eq!(
        browser
            .eval(&german, "document.querySelectorAll('.entry-edge').length")
            .await,
        0
    );
    browser
        .eval(
            &german,
            "document.querySelector('#prompt button.enter-pick[data-unit=\"g8\"]').click()",
        )
        .await;
    assert_eq!(
        browser
            .eval(
                &german,
                "document.querySelector('.entry-edge[data-hex=\"1J3\"]') !== null"
            )
            .await,
        true
    );
    browser.eval(&german, &click_hex("1J3")).await;
    let entered = send(&mut browser, &german).await;
    assert!(entered.starts_with("Enter g8 at 1J3: "), "{entered}");
    browser
        .wait_for(
            &german,
            "g8 on the map",
            &format!("{SETTLED} && window.aslWatch.live.units.g8 && window.aslWatch.live.units.g8.hex === '1J3'"),
            WAIT,
        )
        .await;
    assert!(!prompt(&mut browser, &german)
        .await
        .contains("waiting off board"));

    // g1 steps into the shellholes at C3 and takes their cover (V).
    browser.press(&german, "Escape", 27).await;
    select(&mut browser, &german, "1B3", &["g1"]).await;
    browser.eval(&german, &click_hex("1C3")).await;
    send(&mut browser, &german).await;
    browser.type_key(&german, "v").await;
    let cover = send(&mut browser, &german).await;
    assert!(
        cover.starts_with("Take shellhole cover for g1: "),
        "{cover}"
    );
    settle(&mut browser, &players).await;

    // The Russian fires at C3 (K, then the hex): the attack stays open on both pages.
    select(&mut browser, &russian, "1F3", &["r1"]).await;
    browser.type_key(&russian, "k").await;
    browser.eval(&russian, &click_hex("1C3")).await;
    let attack = send(&mut browser, &russian).await;
    assert!(attack.starts_with("Attack 1C3 with r1: "), "{attack}");
    settle(&mut browser, &players).await;
    let open = prompt(&mut browser, &russian).await;
    assert!(open.contains("Your attack by r1 on 1C3 is open"), "{open}");
    let waits = prompt(&mut browser, &german).await;
    assert!(
        waits.contains("The Russian's attack by r1 on 1C3 is open"),
        "{waits}"
    );

    // Its roll, with a note the German reads in its record.
    browser.press(&russian, "Escape", 27).await;
    browser.type_key(&russian, "r").await;
    browser
        .eval(
            &russian,
            "document.getElementById('roll-purpose').value = 'ift'; \
             document.getElementById('roll-note').value = '4 FP vs g1'; \
             document.activeElement.blur(); \
             document.getElementById('roll-form').requestSubmit()",
        )
        .await;
    send(&mut browser, &russian).await;
    settle(&mut browser, &players).await;
    browser
        .wait_for(
            &german,
            "the roll's note in the German's record",
            "document.getElementById('events').textContent.includes('4 FP vs g1')",
            WAIT,
        )
        .await;

    // The adjudication cites the roll (the form's After roll), then the attack is resolved
    // from the prompt (1).
    browser.type_key(&russian, "a").await;
    let roll = browser
        .eval(
            &russian,
            "document.getElementById('adjudicate-roll').options[1].value",
        )
        .await;
    let roll = roll.as_str().unwrap().to_string();
    browser
        .eval(
            &russian,
            &format!(
                "document.getElementById('adjudicate-unit').value = 'g1'; \
                 document.getElementById('adjudicate-outcome').value = 'pin'; \
                 document.getElementById('adjudicate-roll').value = '{roll}'; \
                 document.getElementById('adjudicate-note').value = 'PTC failed'; \
                 document.activeElement.blur(); \
                 document.getElementById('adjudicate-form').requestSubmit()"
            ),
        )
        .await;
    let adjudicated = send(&mut browser, &russian).await;
    assert_eq!(
        adjudicated,
        format!("Adjudicate g1: pin after #{roll}: allowed")
    );
    settle(&mut browser, &players).await;
    browser.type_key(&russian, "1").await;
    let resolved = send(&mut browser, &russian).await;
    assert!(resolved.starts_with("Resolve the attack: "), "{resolved}");
    settle(&mut browser, &players).await;
    assert!(!prompt(&mut browser, &german).await.contains("is open"));

    // The German disputes it: the Dispute answer (its key) opens the form at that
    // adjudication; the reason typed, Enter previews it and Enter sends it.
    let asked = prompt(&mut browser, &german).await;
    assert!(
        asked.contains("`g1` pin") || asked.contains("g1 pin"),
        "{asked}"
    );
    browser.type_key(&german, "2").await;
    browser
        .wait_for(
            &german,
            "the dispute's reason field",
            "document.activeElement && document.activeElement.id === 'dispute-reason'",
            WAIT,
        )
        .await;
    browser
        .eval(
            &german,
            "document.getElementById('dispute-reason').value = 'r1 has no LOS to C3'",
        )
        .await;
    browser.enter(&german).await;
    let disputed = send(&mut browser, &german).await;
    assert!(
        disputed.starts_with("Dispute #") && disputed.ends_with(": r1 has no LOS to C3: allowed"),
        "{disputed}"
    );
    settle(&mut browser, &players).await;
    assert!(!prompt(&mut browser, &german).await.contains("g1 pin"));

    // g2 steps to C5; the German asks to take it back (Z), the Russian consents (1).
    browser.press(&german, "Escape", 27).await;
    select(&mut browser, &german, "1B5", &["g2"]).await;
    browser.eval(&german, &click_hex("1C5")).await;
    send(&mut browser, &german).await;
    browser.press(&german, "Escape", 27).await;
    browser.type_key(&german, "z").await;
    let undo = send(&mut browser, &german).await;
    assert!(
        undo.starts_with("Ask your opponent to take back events #"),
        "{undo}"
    );
    settle(&mut browser, &players).await;
    assert!(prompt(&mut browser, &russian)
        .await
        .contains("Your opponent asks to take back events"));
    browser.type_key(&russian, "1").await;
    let consented = send(&mut browser, &russian).await;
    assert!(
        consented.starts_with("Consent to the undo: "),
        "{consented}"
    );
    browser
        .wait_for(
            &german,
            "g2 back in B5",
            &format!("{SETTLED} && window.aslWatch.live.units.g2.hex === '1B5'"),
            WAIT,
        )
        .await;

    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}

/// A board 26 columns wide, the German squad at its far side from the north-west corner.
const WIDE: &str = r#"name = "A wide board"
turns = 1
first = "german"
sides = [
    { id = "german", name = "German" },
    { id = "russian", name = "Russian" },
]

[[area]]
from = "1A1"
to = "1Z10"
terrain = "open_ground"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1X8"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1B2"
"#;

/// JavaScript: whether `unit`'s counter lies whole inside the board's frame and the screen.
fn counter_in_view(unit: &str) -> String {
    format!(
        "(() => {{ const c = document.querySelector('.counter[data-unit=\"{unit}\"] .face').getBoundingClientRect(); \
         const f = document.getElementById('board-scroll').getBoundingClientRect(); \
         return c.width > 0 && c.left >= f.left && c.right <= f.right && c.top >= f.top && c.bottom <= f.bottom && \
         c.left >= 0 && c.right <= window.innerWidth && c.top >= 0 && c.bottom <= window.innerHeight; }})()"
    )
}

/// On a phone (390 × 844) a map wider than the screen opens where the player's units are, a
/// counter of its own in sight, in a frame that fits the screen's width; Whole map (G, or its
/// button) makes the whole map as wide as the frame; every control of the page is within the
/// screen's width. A screenshot is saved under the target directory; with
/// `ASL_UPDATE_SCREENSHOT=1` it replaces `docs/play-phone-map.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_the_map_opens_at_the_units_and_fits_the_width() {
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(WIDE, None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open_phone(
            &link(&server, &created.game, &created.tokens.side_a),
            390,
            844,
        )
        .await;
    browser.wait_for(&german, "the board", SETTLED, WAIT).await;
    assert_eq!(browser.eval(&german, "window.innerWidth").await, 390);
    let frame_fits =
        "(() => { const f = document.getElementById('board-scroll').getBoundingClientRect(); \
        return document.documentElement.scrollWidth <= window.innerWidth && f.left >= 0 && \
        f.right <= window.innerWidth; })()";
    assert_eq!(browser.eval(&german, frame_fits).await, true);
    // Wider than the screen, the map opens at the German's own counter, readable.
    let wide = browser
        .eval(
            &german,
            "document.getElementById('board').getBoundingClientRect().width",
        )
        .await;
    assert!(wide.as_f64().unwrap() > 390.0, "{wide}");
    assert_eq!(browser.eval(&german, &counter_in_view("g1")).await, true);
    let shot = browser.screenshot(&german).await;
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("play-phone-map.png"),
        &shot,
    )
    .unwrap();
    if std::env::var_os("ASL_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(repo("docs/play-phone-map.png"), &shot).unwrap();
    }

    // Whole map, by its key and by its button: as wide as the frame, the counter still shown.
    let whole = "document.getElementById('board').getBoundingClientRect().width <= \
        document.getElementById('board-scroll').clientWidth + 1";
    browser.type_key(&german, "g").await;
    assert_eq!(browser.eval(&german, whole).await, true);
    assert_eq!(browser.eval(&german, &counter_in_view("g1")).await, true);
    browser.type_key(&german, "0").await;
    assert_eq!(browser.eval(&german, whole).await, false);
    browser
        .eval(&german, "document.getElementById('zoom-whole').click()")
        .await;
    assert_eq!(browser.eval(&german, whole).await, true);
    assert_eq!(browser.eval(&german, frame_fits).await, true);

    // Every control is within the screen's width (the page scrolls down to reach them).
    let off = browser
        .eval(
            &german,
            "[...document.querySelectorAll('button, input, select, summary')] \
             .filter(b => b.getClientRects().length > 0) \
             .filter(b => { const r = b.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth; }) \
             .map(b => b.id || b.dataset.action || b.textContent)",
        )
        .await;
    assert_eq!(off, serde_json::json!([]), "controls off the screen");

    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the page reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}

/// Four whole boards (33 × 10 hexes each, open ground) with a squad a side: the size of map a
/// larger scenario draws, for measuring the page's first render.
fn four_boards() -> String {
    let mut toml = String::from(
        "name = \"Four boards\"\nturns = 1\nmonth = 6\nfirst = \"german\"\n\
         sides = [\n    { id = \"german\", name = \"German\" },\n    { id = \"russian\", name = \"Russian\" },\n]\n",
    );
    for board in 1..=4 {
        toml.push_str(&format!(
            "\n[[area]]\nfrom = \"{board}A1\"\nto = \"{board}GG10\"\nterrain = \"open_ground\"\n"
        ));
    }
    toml.push_str(
        "\n[[units]]\nid = \"g1\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"1C4\"\n\
         \n[[units]]\nid = \"r1\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"4E5\"\n",
    );
    toml
}

/// A map of four whole boards is not shrunk to fit the window: counters stay a readable
/// 24 px across at a desktop size and at 390 px, the board scrolling in its frame, and the page
/// itself never scrolls sideways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_map_scrolls_rather_than_shrinks_its_counters() {
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(&four_boards(), None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let tab = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    browser.wait_for(&tab, "the board", SETTLED, WAIT).await;
    for (width, height, mobile) in [(1100, 760, false), (390, 844, true)] {
        browser.viewport(&tab, width, height, mobile).await;
        let laid_out = browser
            .wait_for(
                &tab,
                "the page at the new width",
                &format!(
                    "window.innerWidth === {width} && \
                     document.documentElement.scrollWidth <= window.innerWidth && \
                     document.querySelector('.counter[data-unit=\"g1\"] .face').getBoundingClientRect().width"
                ),
                WAIT,
            )
            .await;
        let counter = laid_out.as_f64().unwrap();
        assert!(
            counter >= 23.5,
            "a counter {counter} px across at {width} px"
        );
    }
    browser.close().await;
    server.stop().await;
}

/// BENCHMARKS.md's row for the page: what the browser downloads (the page, its script and its
/// style, as sent: compressed) and how long from navigation to the first position drawn, for
/// the walkthrough scenario and for four whole boards, each the median of five fresh tabs.
/// Not part of the suite (it measures, it checks only that the map was drawn):
/// `cargo test -p asl-e2e --test play_page measure_first_render -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn measure_first_render() {
    const RUNS: usize = 5;
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let mut browser = Browser::launch(&binary).await;
    for (name, scenario) in [
        (
            "walkthrough (village-outskirts)",
            include_str!("../../scenarios/village-outskirts.toml").to_string(),
        ),
        ("four boards", four_boards()),
    ] {
        let created = Connection::connect(&server.url)
            .await
            .unwrap()
            .create_game(&scenario, None)
            .await
            .unwrap();
        let mut renders = vec![];
        let mut bytes = 0.0;
        let mut unpacked = 0.0;
        let mut hexes = 0.0;
        for _ in 0..RUNS {
            let tab = browser
                .open(&link(&server, &created.game, &created.tokens.spectator))
                .await;
            browser.wait_for(&tab, "the board", SETTLED, WAIT).await;
            let measured = browser
                .eval(
                    &tab,
                    "(() => { const nav = performance.getEntriesByType('navigation')[0]; \
                     const res = performance.getEntriesByType('resource'); \
                     return [performance.getEntriesByName('asl-first-render')[0].startTime, \
                     nav.transferSize + res.reduce((n, r) => n + r.transferSize, 0), \
                     nav.decodedBodySize + res.reduce((n, r) => n + r.decodedBodySize, 0), \
                     document.querySelectorAll('.hex-cell').length]; })()",
                )
                .await;
            renders.push(measured[0].as_f64().unwrap());
            bytes = measured[1].as_f64().unwrap();
            unpacked = measured[2].as_f64().unwrap();
            hexes = measured[3].as_f64().unwrap();
            assert!(hexes > 0.0, "no map drawn");
        }
        renders.sort_by(f64::total_cmp);
        println!(
            "{name}: {hexes} hexes; page + script + style {:.1} KB as sent ({:.1} KB unpacked); first render median {:.0} ms (of {RUNS}: {:.0}–{:.0} ms)",
            bytes / 1000.0,
            unpacked / 1000.0,
            renders[RUNS / 2],
            renders[0],
            renders[RUNS - 1]
        );
    }
    browser.close().await;
    server.stop().await;
}

/// A counter the engine does not rule on (a save's tank) is moved from the page by an
/// adjudication the opponent may accept or dispute; every act of the rules on it is refused as
/// not modelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_is_relocated_from_the_page() {
    const COUNTERS: &str = r#"name = "A counter"
turns = 2
first = "german"
sides = [{ id = "german", name = "German" }, { id = "russian", name = "Russian" }]

[[area]]
from = "1A1"
to = "1J6"
terrain = "open_ground"

[[units]]
id = "ge"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1D4"

[[units]]
id = "gv"
side = "german"
kind = "counter"
ratings = "PzKw IVH"
hex = "1D4"

[[units]]
id = "ru"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1H4"
"#;
    let binary = chromium_binary();
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(COUNTERS, None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    let russian = browser
        .open(&link(&server, &created.game, &created.tokens.side_b))
        .await;
    let players = [&german, &russian];
    settle(&mut browser, &players).await;
    // The counter shows what it prints.
    let face = browser
        .eval(
            &german,
            "document.querySelector('.counter[data-unit=\"gv\"]').textContent",
        )
        .await;
    assert!(
        face.as_str().unwrap_or_default().contains("PzKw IVH"),
        "{face}"
    );
    browser.type_key(&german, "a").await;
    browser
        .eval(
            &german,
            "document.getElementById('adjudicate-unit').value = 'gv'; \
             document.getElementById('adjudicate-outcome').value = 'relocate'; \
             document.getElementById('adjudicate-to').value = '1E5'; \
             document.getElementById('adjudicate-note').value = 'moved 4 MP'; \
             document.activeElement.blur(); \
             document.getElementById('adjudicate-form').requestSubmit()",
        )
        .await;
    let sent = send(&mut browser, &german).await;
    assert_eq!(sent, "Adjudicate gv: relocate to 1E5: allowed");
    settle(&mut browser, &players).await;
    browser
        .wait_for(
            &russian,
            "the counter in 1E5",
            "window.aslWatch.live.units.gv && window.aslWatch.live.units.gv.hex === '1E5'",
            WAIT,
        )
        .await;
    let asked = prompt(&mut browser, &russian).await;
    assert!(asked.contains("gv relocate to 1E5"), "{asked}");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

/// The page's "more" form sends the CLI's remaining commands — `lift`, an attack into the
/// sewer, the Manhole and tunnel claims of B8.42/B8.63, vacation, the seed's reveal and a
/// player's entropy (`docs/script.md`) — each previewed by the referee, who rules on it as on
/// the CLI's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_of_the_clis_commands_from_the_page() {
    let binary = chromium_binary();
    let (_dir, server, created) = start().await;
    let mut browser = Browser::launch(&binary).await;
    let german = browser
        .open(&link(&server, &created.game, &created.tokens.side_a))
        .await;
    let russian = browser
        .open(&link(&server, &created.game, &created.tokens.side_b))
        .await;
    settle(&mut browser, &[&german, &russian]).await;
    browser.type_key(&german, "a").await;
    for (command, units, hex, said) in [
        (
            "lift_set_up",
            "447a",
            "",
            "Take back 447a: refused (A12.12)",
        ),
        (
            "attack_into_sewer",
            "447a",
            "55I8",
            "Attack the sewer beneath 55I8 with 447a: refused",
        ),
        (
            "declare_manhole_unseen",
            "",
            "55I8",
            "Manhole 55I8 out of enemy LOS: refused",
        ),
        (
            "claim_tunnel_seen",
            "447a",
            "55I8",
            "447a saw the tunnel at 55I8 used: refused",
        ),
        (
            "discover_tunnel",
            "447a",
            "",
            "447a searches for a tunnel entrance: refused",
        ),
        (
            "destroy_tunnel",
            "",
            "55I8",
            "Destroy the tunnel entrance at 55I8: refused",
        ),
        (
            "start_vacation",
            "",
            "",
            "start vacation: refused (docs/clock.md)",
        ),
        (
            "end_vacation",
            "",
            "",
            "end vacation: refused (docs/clock.md)",
        ),
        (
            "agree_to_reveal_seed",
            "",
            "",
            "agree to reveal seed: refused",
        ),
        (
            "contribute_entropy",
            "",
            "",
            "Contribute entropy to the dice: allowed",
        ),
    ] {
        browser.press(&german, "Escape", 27).await;
        browser
            .eval(
                &german,
                &format!(
                    "document.getElementById('forms').open = true; \
                     document.getElementById('more-command').value = '{command}'; \
                     document.getElementById('more-units').value = '{units}'; \
                     document.getElementById('more-hex').value = '{hex}'; \
                     document.activeElement.blur(); \
                     document.getElementById('more-form').requestSubmit()"
                ),
            )
            .await;
        let preview = previewed(&mut browser, &german).await;
        assert!(preview.starts_with(said), "{command}: {preview}");
    }
    // The entropy is sent, and the referee logs it.
    let sent = send(&mut browser, &german).await;
    assert!(sent.ends_with("allowed"), "{sent}");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
