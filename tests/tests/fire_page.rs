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
//! A third shows a wound entered from the Adjudicate form (A17.1): the Wound counter on the
//! leader, on both players' maps.
//!
//! Nothing is timed: every step waits for a condition on the page, with a generous bound.
//! Needs Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use e2e::chromium::{Browser, Tab};
use page::*;

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
        // Its broken side's morale goes with the rout, for an Interdiction NMC (A10.53).
        browser
            .eval(
                &german,
                "(() => { const m = document.getElementById('rout-morale'); m.value = '7'; \
                 m.dispatchEvent(new Event('input')); \
                 document.querySelector('#prompt button.rout-pick[data-unit=\"g1\"]').click(); })()",
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

/// A German squad with a light machine gun whose Breakdown Number is 2, so any Original DR of
/// its attack malfunctions it (A9.7), and a Russian squad in its range, in woods so that
/// broken or not it has no rout to make (A10.5).
const MACHINE_GUN: &str = r#"name = "Machine gun"
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

[[hexes]]
hex = "1B5"
terrain = "woods"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1B2"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1B5"

[[weapons]]
id = "glmg"
name = "LMG"
pp = 1
held_by = "g1"
fp = 3
range = 6
breakdown = 2
repair = 3
"#;

/// A machine gun on the page as `attack g1 glmg at 1B5` and `repair glmg` are in a script: in
/// the attack mode (K) the weapon is picked among the firers from its holder's stack (A9.1),
/// and once malfunctioned (A9.7) it is repaired by a click on it in the RPh (A9.72).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_gun_fires_from_the_page_and_is_repaired_in_the_rally_phase() {
    let (_dir, _server, mut browser, [german, russian]) = start(MACHINE_GUN).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("PFPh, ATTACKER")).await;

    select(&mut browser, &german, "1B2", &["g1"]).await;
    browser.type_key(&german, "k").await;
    let weapon = "#stack button.weapon-pick[data-weapon=\"glmg\"]";
    browser
        .eval(
            &german,
            &format!("document.querySelector('{weapon}').click()"),
        )
        .await;
    assert_eq!(
        browser
            .eval(
                &german,
                &format!("document.querySelector('{weapon}').getAttribute('aria-pressed')")
            )
            .await,
        "true"
    );
    browser.eval(&german, &click_hex("1B5")).await;
    let panel = fire_panel(&mut browser, &german).await;
    // The squad keeps its own 4 FP beside the weapon's 3 (A9.11): 7 FP, the 6 column.
    assert!(panel.contains("7 FP on the 6 column (A7.3)"), "{panel}");
    assert!(panel.contains("glmg"), "{panel}");
    let declared = send(&mut browser, &german).await;
    assert!(
        declared.starts_with("Attack 1B5 with g1 glmg: before the dice (A7):"),
        "{declared}"
    );
    settle(&mut browser, players).await;
    browser.press(&german, "Escape", 27).await;
    browser.type_key(&german, "1").await;
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;
    assert_eq!(
        browser
            .eval(&german, "window.aslWatch.live.weapons.glmg.malfunctioned")
            .await,
        true
    );

    // The next RPh (the Russian's Player Turn): the German repairs his weapon with a click.
    play_until(&mut browser, players, &at("RPh, ATTACKER")).await;
    browser.eval(&german, &click_hex("1B2")).await;
    let shown = browser
        .wait_for(
            &german,
            "the weapon in its stack",
            &format!("document.querySelector('{weapon}') && document.querySelector('{weapon}').textContent"),
            WAIT,
        )
        .await;
    assert!(shown.as_str().unwrap().contains("malfunctioned"), "{shown}");
    browser
        .eval(
            &german,
            &format!("document.querySelector('{weapon}').click()"),
        )
        .await;
    let repair = send(&mut browser, &german).await;
    assert!(repair.starts_with("Repair LMG (glmg)"), "{repair}");
    settle(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "the repair in the record",
                "document.getElementById('events').textContent.includes('tried to repair its glmg: dr ')",
                WAIT,
            )
            .await;
    }
    // Repaired, still malfunctioned or eliminated by a 6: whatever the dr gave, once only.
    browser.eval(&german, &click_hex("1B2")).await;
    let state = browser
        .eval(
            &german,
            "JSON.stringify(window.aslWatch.live.weapons.glmg || null)",
        )
        .await;
    if state.as_str().unwrap().contains("\"malfunctioned\":true") {
        browser
            .eval(
                &german,
                &format!("document.querySelector('{weapon}').click()"),
            )
            .await;
        let again = previewed(&mut browser, &german).await;
        assert!(again.contains("refused (A9.72)"), "{again}");
    }
}

/// A German 4-6-7 three hexes from a Russian one, on Open Ground.
const OPPORTUNITY: &str = r#"name = "Opportunity Fire"
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

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1B5"
"#;

/// Opportunity Fire from the page as `opportunity g1` is in a script: beside fire in the PFPh
/// (P), the squad is designated; both players see its counter (A7.25), and in the AFPh its
/// attack is previewed at full FP, not halved as Advancing Fire (A7.24).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opportunity_firer_is_designated_in_the_pfph_and_fires_unhalved_in_the_afph() {
    let (_dir, _server, mut browser, [german, russian]) = start(OPPORTUNITY).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("PFPh, ATTACKER")).await;

    select(&mut browser, &german, "1B2", &["g1"]).await;
    browser.type_key(&german, "p").await;
    let designated = send(&mut browser, &german).await;
    assert!(
        designated.starts_with("Designate g1 Opportunity Firers"),
        "{designated}"
    );
    settle(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "the Opportunity Fire counter",
                "(window.aslWatch.live.opportunity_fire || []).includes('g1') && \
                 document.querySelectorAll('.badge.opportunity').length === 1",
                WAIT,
            )
            .await;
    }

    play_until(&mut browser, players, &at("AFPh, ATTACKER")).await;
    // The PFPh's selection cleared, g1 is picked afresh.
    browser.press(&german, "Escape", 27).await;
    select(&mut browser, &german, "1B2", &["g1"]).await;
    browser.type_key(&german, "k").await;
    browser.eval(&german, &click_hex("1B5")).await;
    let panel = fire_panel(&mut browser, &german).await;
    for piece in [
        "4 FP on the 4 column (A7.3)",
        "Opportunity Fire, not halved (A7.25)",
    ] {
        assert!(panel.contains(piece), "{piece:?} in {panel}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wound_entered_from_the_page_shows_on_the_counter() {
    let (_dir, server, mut browser, [german, russian]) = start(RALLY_AND_MELEE).await;
    let players = [&german, &russian];
    settle(&mut browser, players).await;
    // A wound the referee does not roll (a Sniper's, A14) is the players' to enter (A17.1).
    browser.type_key(&german, "a").await;
    browser
        .eval(
            &german,
            "document.getElementById('adjudicate-unit').value = 'gl'; \
             document.getElementById('adjudicate-outcome').value = 'wound'; \
             document.activeElement.blur(); \
             document.getElementById('adjudicate-form').requestSubmit()",
        )
        .await;
    let adjudicated = send(&mut browser, &german).await;
    assert_eq!(adjudicated, "Adjudicate gl: wound: allowed");
    settle(&mut browser, players).await;
    // The Wound counter is a counter both sides see (A17.1).
    for tab in players {
        browser
            .wait_for(
                tab,
                "the Wound counter on gl",
                "document.querySelector('.counter[data-unit=\"gl\"] .badge.wound') !== null",
                WAIT,
            )
            .await;
        assert_eq!(
            browser
                .eval(
                    tab,
                    "[document.querySelector('.counter[data-unit=\"gl\"] .badge.wound').textContent, \
                      window.aslWatch.live.units.gl.wounded]"
                )
                .await,
            serde_json::json!(["WND", true])
        );
    }
    server.stop().await;
}
