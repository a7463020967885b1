//! Rout, Assault Movement and Close Combat from the play page in a real browser, as two
//! players would.
//!
//! The first Game Turn of `scenarios/wall-and-sewer.toml` played by two pages up to its Close
//! Combat: in the APh the German 4-6-7 and its 8-1 leader advance from 55F5 into the woods of
//! 55G6, where the Russian 7-4-7 stands. As the APh ends the server checks for Ambush there
//! (A11.4: an advance into woods), both drs in both records. In the CCPh the German designates
//! from the CC form (Q) and the prompt tells the Russian to designate his own; his designation
//! resolves the CC by the CC Table (A11.11) with the server's dice, and both records show the
//! CC rolls: both attacks with no Ambush, the ambusher's first with one.
//!
//! A second game shows Assault Movement declared with J in the MPh (A4.61), and the Rout Phase:
//! a broken German squad ADJACENT to a Russian squad must rout (A10.5); the prompt says so in
//! the server's own words (its refusal of `done`), the squad is picked from the prompt, a hex
//! still ADJACENT to the enemy is refused with its rule (A10.5) and one away from it is taken.
//!
//! A third game starts with a German and a Russian squad held in Melee in 1C3: in the German
//! CCPh the German withdraws his squad to 1C4 from the CC form (A11.2), the Russian designates
//! no attack, and both records show the squad withdrawn, out of the Melee.
//!
//! Nothing is timed: every step waits for a condition on the page, with a generous bound.
//! Needs Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use page::*;

const WALL_AND_SEWER: &str = include_str!("../../scenarios/wall-and-sewer.toml");

/// A German squad broken in 1D5, ADJACENT to the Good Order Russian squad in 1E5 (it must rout,
/// A10.5), and a German squad far off in 1A9 that moves with Assault Movement.
const ROUT: &str = r#"name = "Rout"
turns = 1
first = "german"
sides = [
    { id = "german", name = "German" },
    { id = "russian", name = "Russian" },
]

[[area]]
from = "1A1"
to = "1J10"
terrain = "open_ground"

[[units]]
id = "gb"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1D5"
morale = "broken"

[[units]]
id = "ga"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1A9"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1E5"
"#;

/// A German and a Russian squad sharing 1C3 from the start: held in Melee there (A11.7).
const MELEE: &str = r#"name = "Melee"
turns = 1
first = "german"
sides = [
    { id = "german", name = "German" },
    { id = "russian", name = "Russian" },
]

[[area]]
from = "1A1"
to = "1J10"
terrain = "open_ground"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1C3"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1C3"
"#;

/// The line under the prompt that says what is selected, or why a key does nothing now.
const SELECTION: &str = "document.getElementById('selection').textContent";

/// JavaScript: the record's lines (as shown) that contain every one of `pieces`, joined.
fn record_lines(pieces: &[&str]) -> String {
    let checks: Vec<String> = pieces
        .iter()
        .map(|p| format!("l.includes({p:?})"))
        .collect();
    format!(
        "[...document.querySelectorAll('#events li .text')].map(li => li.textContent) \
         .filter(l => {}).join('\\n')",
        checks.join(" && ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_combat_designated_by_both_players_and_resolved_by_the_rules() {
    let (_dir, server, mut browser, [german, russian]) = start(WALL_AND_SEWER).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("APh, ATTACKER")).await;

    // The advance into the enemy's Location (A4.7): the same click as a move.
    select(&mut browser, &german, "55F5", &["467b", "g-ldr"]).await;
    browser.eval(&german, &click_hex("55G6")).await;
    let advanced = send(&mut browser, &german).await;
    assert!(
        advanced.starts_with("Advance 467b g-ldr to 55G6: "),
        "{advanced}"
    );
    settle(&mut browser, players).await;
    browser.type_key(&german, "n").await;
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;
    assert_eq!(
        text(&mut browser, &german, PHASE_LINE).await,
        "CCPh, ATTACKER"
    );
    let asked = prompt(&mut browser, &german).await;
    assert!(asked.contains("Close Combat in 55G6 (A11)"), "{asked}");
    let waits = prompt(&mut browser, &russian).await;
    assert!(waits.contains("the ATTACKER designates first"), "{waits}");
    // The DEFENDER cannot designate first: Q says why.
    browser.type_key(&russian, "q").await;
    assert!(text(&mut browser, &russian, SELECTION)
        .await
        .contains("(A11.12)"));

    // Q opens the CC form at the Location, the German units there against the Russian.
    browser.type_key(&german, "q").await;
    assert_eq!(
        browser
            .eval(
                &german,
                "[document.getElementById('cc-form').hidden, document.getElementById('cc-hex').value, \
                 [...document.querySelectorAll('#cc-attacks input')].map(i => `${i.dataset.role}:${i.dataset.unit}:${i.checked}`).join(' ')]"
            )
            .await,
        serde_json::json!([
            false,
            "55G6",
            "attacker:467b:true attacker:g-ldr:true defender:747a:true"
        ])
    );
    // The engine's Ambush check as the APh ended: each side's dr in both records (A11.4).
    for tab in players {
        for who in ["German", "Russian"] {
            browser
                .wait_for(
                    tab,
                    "the Ambush dr in the record",
                    &format!(
                        "({}) || null",
                        record_lines(&["rolled dr", &format!("Ambush dr in 55G6 of the {who}")])
                    ),
                    WAIT,
                )
                .await;
        }
    }
    let checked = text(
        &mut browser,
        &german,
        &record_lines(&["Ambush in 55G6 (A11.4)"]),
    )
    .await;
    let ambusher = ["German", "Russian"]
        .into_iter()
        .find(|who| checked.contains(&format!("the {who} ambushed")));
    assert!(
        ambusher.is_some() || checked.contains("no Ambush in 55G6"),
        "{checked}"
    );
    // With an Ambush the form says whose attacks come first.
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('cc-ambush').hidden")
            .await,
        ambusher.is_none()
    );
    browser
        .eval(
            &german,
            "document.getElementById('cc-form').requestSubmit()",
        )
        .await;
    let designated = send(&mut browser, &german).await;
    assert!(
        designated.starts_with("Close Combat in 55G6: 467b g-ldr vs 747a: "),
        "{designated}"
    );
    settle(&mut browser, players).await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('cc-form').hidden")
            .await,
        true
    );

    // The DEFENDER's turn to designate, said on both pages and in both banners.
    let asked = prompt(&mut browser, &russian).await;
    assert!(
        asked.contains(
            "The ATTACKER designated his Close Combat attacks in 55G6 (467b, g-ldr vs 747a)"
        ),
        "{asked}"
    );
    assert!(prompt(&mut browser, &german)
        .await
        .contains("waiting for the Russian to designate"));
    for tab in players {
        assert_eq!(
            text(
                &mut browser,
                tab,
                "document.getElementById('acting').textContent"
            )
            .await,
            "Russian to act"
        );
    }
    // From the prompt's first answer: the form, the Russian squad against both Germans; the
    // leader is left out of this attack.
    browser.type_key(&russian, "1").await;
    browser
        .eval(
            &russian,
            "document.querySelector('#cc-attacks input[data-unit=\"g-ldr\"]').click()",
        )
        .await;
    // A second attack may be added; one left empty is not sent.
    browser
        .eval(&russian, "document.getElementById('cc-add').click()")
        .await;
    assert_eq!(
        browser
            .eval(
                &russian,
                "document.querySelectorAll('#cc-attacks .cc-attack').length"
            )
            .await,
        2
    );
    // On a phone's width every control of the form is on the screen.
    browser.viewport(&russian, 390, 844, true).await;
    let off = browser
        .eval(
            &russian,
            "[...document.querySelectorAll('#cc-form button, #cc-form input, #cc-form select')] \
             .filter(b => b.getClientRects().length > 0) \
             .filter(b => { const r = b.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth; }) \
             .map(b => b.id || b.dataset.unit || b.textContent)",
        )
        .await;
    assert_eq!(
        off,
        serde_json::json!([]),
        "CC form controls off the screen"
    );
    browser
        .eval(
            &russian,
            "document.getElementById('cc-form').requestSubmit()",
        )
        .await;
    let resolved = send(&mut browser, &russian).await;
    assert!(
        resolved.starts_with("Close Combat in 55G6: 747a vs 467b: "),
        "{resolved}"
    );
    decline_infiltrations(&mut browser, players).await;

    // Both records show the CC rolls, read on the CC Table (A11.11): both attacks when there
    // was no Ambush; with one, the ambusher's, which came first and may have left the other
    // side no unit to attack back with (A11.4).
    let attacks = [
        ("German", "CC in 55G6: 467b, g-ldr"),
        ("Russian", "CC in 55G6: 747a"),
    ];
    for tab in players {
        for (who, attack) in attacks
            .into_iter()
            .filter(|(who, _)| ambusher.is_none_or(|a| a == *who))
        {
            let line = browser
                .wait_for(
                    tab,
                    "the CC roll in the record",
                    &format!(
                        "({}) || null",
                        record_lines(&[
                            "rolled DR for CloseCombat (A11.11)",
                            &format!("{who} {attack}")
                        ])
                    ),
                    WAIT,
                )
                .await;
            assert!(line.as_str().unwrap().contains("Kill Number"), "{line}");
        }
    }
    // The CC in 55G6 is over for this CCPh: no designation is offered there again.
    assert!(!prompt(&mut browser, &german)
        .await
        .contains("Designate in 55G6"));
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assault_movement_and_a_rout_from_the_page() {
    let (_dir, server, mut browser, [german, russian]) = start(ROUT).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;

    // J with a squad picked: Assault Movement, declared before it spends any MF (A4.61).
    select(&mut browser, &german, "1A9", &["ga"]).await;
    browser.type_key(&german, "j").await;
    let declared = send(&mut browser, &german).await;
    assert!(
        declared.starts_with("Assault Movement for ga: "),
        "{declared}"
    );
    settle(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "the Assault Movement in the record",
                &format!("({}) !== ''", record_lines(&["ga", "(A4.61)"])),
                WAIT,
            )
            .await;
    }

    // The Rout Phase: the prompt names the squad that must rout and why, in the server's words.
    play_until(&mut browser, players, &at("RtPh, ATTACKER")).await;
    let asked = browser
        .wait_for(
            &german,
            "the rout prompt",
            "(() => { const t = document.getElementById('prompt').textContent; \
             return t.includes('Rout Phase:') && t; })()",
            WAIT,
        )
        .await;
    let asked = asked.as_str().unwrap();
    assert!(
        asked.contains("gb is broken and ADJACENT to the Known unbroken enemy r1")
            && asked.contains("(A10.5)"),
        "{asked}"
    );
    // Picked from the prompt, its broken side's morale typed for an Interdiction NMC
    // (A10.53); a hex ADJACENT to the enemy too is refused with its rule (A10.5).
    browser
        .eval(
            &german,
            "(() => { const m = document.getElementById('rout-morale'); m.value = '7'; \
             m.dispatchEvent(new Event('input')); \
             document.querySelector('#prompt button.rout-pick[data-unit=\"gb\"]').click(); })()",
        )
        .await;
    assert!(text(&mut browser, &german, SELECTION)
        .await
        .contains("rout to (A10.5)"));
    browser.eval(&german, &click_hex("1E6")).await;
    let refused = previewed(&mut browser, &german).await;
    assert!(
        refused.starts_with("Rout gb to 1E6: refused (A10.5"),
        "{refused}"
    );
    browser.press(&german, "Escape", 27).await;
    browser
        .eval(
            &german,
            "document.querySelector('#prompt button.rout-pick[data-unit=\"gb\"]').click()",
        )
        .await;
    browser.eval(&german, &click_hex("1D6")).await;
    let routed = send(&mut browser, &german).await;
    assert!(routed.starts_with("Rout gb to 1D6: "), "{routed}");
    settle(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "the rout in the record",
                &format!(
                    "({}) !== ''",
                    record_lines(&["gb routed 1D5 → 1D6 (A10.5)"])
                ),
                WAIT,
            )
            .await;
    }
    // Routed: the step may end, and the prompt says so no more.
    browser
        .wait_for(
            &german,
            "the rout prompt gone",
            "!document.getElementById('prompt').textContent.includes('Rout Phase:')",
            WAIT,
        )
        .await;
    browser.type_key(&german, "n").await;
    send(&mut browser, &german).await;
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawal_from_melee_from_the_cc_form() {
    let (_dir, server, mut browser, [german, russian]) = start(MELEE).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("CCPh, ATTACKER")).await;

    // Q opens the CC form at the Melee; a hex typed in its withdrawal box withdraws every
    // German unit there instead of attacking (A11.2).
    browser.type_key(&german, "q").await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('cc-hex').value")
            .await,
        "1C3"
    );
    browser
        .eval(
            &german,
            "document.getElementById('cc-withdraw').value = '1C4'; \
             document.getElementById('cc-form').requestSubmit()",
        )
        .await;
    let designated = send(&mut browser, &german).await;
    assert!(
        designated.starts_with("Close Combat in 1C3: g1 withdraw to 1C4 (A11.2): "),
        "{designated}"
    );
    settle(&mut browser, players).await;
    // The DEFENDER's prompt names the withdrawal, as it names the ATTACKER's attacks.
    let asked = prompt(&mut browser, &russian).await;
    assert!(
        asked.contains("Close Combat attacks in 1C3 (g1 withdrawing to 1C4)"),
        "{asked}"
    );

    // The Russian designates no attack; the German squad leaves the Melee whole.
    browser.type_key(&russian, "1").await;
    browser
        .eval(&russian, "document.getElementById('cc-none').click()")
        .await;
    let resolved = send(&mut browser, &russian).await;
    assert!(
        resolved.starts_with("Close Combat in 1C3: no attacks: "),
        "{resolved}"
    );
    settle(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "the withdrawal in the record",
                &format!(
                    "({}) || null",
                    record_lines(&["g1 withdrew from the Melee in 1C3 to 1C4 (A11.2)"])
                ),
                WAIT,
            )
            .await;
    }
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}
