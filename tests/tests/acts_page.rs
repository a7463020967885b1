//! Acts the CLI's lines do that the page offers by click where they are done, each driven in a
//! real browser as a player would: a unit set up taken back from the set-up prompt (`lift`,
//! A12.12), a road Manhole declared out of enemy LOS from its hex's stack (`manhole-unseen`,
//! B8.42), and an attack at a Manhole aimed at the sewer beneath it from the attack's own
//! preview (`attack … sewer`, B8.3). Each preview says what the referee says, its refusals in
//! its own words. Needs Chromium, as `play_page.rs`.

#[path = "support/page.rs"]
mod page;

use e2e::chromium::Tab;
use page::{
    at, click_hex, play_until, previewed, select, send, settle, start, text, SETTLED, WAIT,
};

const SETUP: &str = include_str!("../../protocol/tests/positions/scenarios/setup.toml");
const SEWERS: &str = include_str!("../../protocol/tests/positions/scenarios/sewers.toml");

/// JavaScript: the element `selector` exists on the page.
fn exists(selector: &str) -> String {
    format!("document.querySelector('{selector}') !== null")
}

async fn prompt_text(browser: &mut e2e::chromium::Browser, tab: &Tab) -> String {
    text(
        browser,
        tab,
        "document.getElementById('prompt').textContent",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unit_set_up_is_taken_back_from_the_set_up_prompt() {
    let (_dir, server, mut browser, [german, russian]) = start(SETUP).await;
    for tab in [&german, &russian] {
        browser.wait_for(tab, "the board", SETTLED, WAIT).await;
    }
    // The Russian places r1, the first unit left, with a click on a hex of its area.
    browser.eval(&russian, &click_hex("1B2")).await;
    let placed = send(&mut browser, &russian).await;
    assert!(placed.starts_with("Set up r1 in 1B2"), "{placed}");
    browser
        .wait_for(
            &russian,
            "r1 placed and offered back",
            &format!(
                "{SETTLED} && {}",
                exists("#prompt button.lift-pick[data-unit=\"r1\"]")
            ),
            WAIT,
        )
        .await;
    assert!(prompt_text(&mut browser, &russian)
        .await
        .contains("5 left to place"));
    // The German's page offers nothing of the Russian's set-up to take back.
    browser.wait_for(&german, "settled", SETTLED, WAIT).await;
    assert_eq!(
        browser
            .eval(
                &german,
                "document.querySelectorAll('button.lift-pick').length"
            )
            .await,
        0
    );

    // Its ↶ button takes it back, after the referee's preview, as `lift r1` would.
    browser
        .eval(
            &russian,
            "document.querySelector('#prompt button.lift-pick[data-unit=\"r1\"]').click()",
        )
        .await;
    let lifted = send(&mut browser, &russian).await;
    assert!(lifted.starts_with("Take back r1 from 1B2: "), "{lifted}");
    browser
        .wait_for(
            &russian,
            "r1 off the map again",
            &format!("{SETTLED} && window.aslWatch.live.units['r1'] === undefined"),
            WAIT,
        )
        .await;
    let left = prompt_text(&mut browser, &russian).await;
    assert!(left.contains("6 left to place"), "{left}");
    assert_eq!(
        browser
            .eval(
                &russian,
                "document.querySelectorAll('button.lift-pick').length"
            )
            .await,
        0
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_road_manhole_is_declared_unseen_from_its_hex() {
    let (_dir, server, mut browser, [german, russian]) = start(SEWERS).await;
    play_until(&mut browser, [&german, &russian], &at("MPh, ATTACKER")).await;
    settle(&mut browser, [&german, &russian]).await;

    // 20C3's Manhole is on no road: nothing to declare there (B8.42).
    browser.eval(&german, &click_hex("20C3")).await;
    browser
        .wait_for(
            &german,
            "the stack of 20C3",
            &exists("#stack:not([hidden]) li"),
            WAIT,
        )
        .await;
    assert_eq!(
        browser
            .eval(
                &german,
                "document.querySelectorAll('#stack button.hex-act').length"
            )
            .await,
        0
    );
    // 20E4's is on a paved road: its stack offers the declaration, which the referee allows
    // and logs for the Russian to see.
    browser.eval(&german, &click_hex("20E4")).await;
    let button = "#stack button.hex-act[data-act=\"manhole_unseen\"]";
    browser
        .wait_for(&german, "the Manhole's act", &exists(button), WAIT)
        .await;
    // The DEFENDER's page offers it nowhere: only the ATTACKER declares it, in its MPh.
    browser.eval(&russian, &click_hex("20E4")).await;
    browser
        .wait_for(
            &russian,
            "the stack of 20E4",
            &exists("#stack:not([hidden]) li"),
            WAIT,
        )
        .await;
    assert_eq!(
        browser
            .eval(
                &russian,
                "document.querySelectorAll('#stack button.hex-act').length"
            )
            .await,
        0
    );
    browser
        .eval(
            &german,
            &format!("document.querySelector('{button}').click()"),
        )
        .await;
    let declared = send(&mut browser, &german).await;
    assert!(
        declared.starts_with("Manhole 20E4 out of enemy LOS (B8.42): "),
        "{declared}"
    );
    browser
        .wait_for(
            &russian,
            "the declaration in the Russian's record",
            "[...document.querySelectorAll('#events li')].some(li => li.textContent.includes('declared the road Manhole 20E4 out of Known enemy LOS'))",
            WAIT,
        )
        .await;
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attack_at_a_manhole_is_aimed_at_the_sewer_beneath_from_its_preview() {
    let (_dir, server, mut browser, [german, russian]) = start(SEWERS).await;
    // On to the DFPh, where the Russian fires.
    play_until(&mut browser, [&german, &russian], &at("DFPh, DEFENDER")).await;
    settle(&mut browser, [&german, &russian]).await;

    // The Russian's rk fires at 20E4, a road Manhole: the preview offers the sewer beneath.
    select(&mut browser, &russian, "20H5", &["rk"]).await;
    browser.type_key(&russian, "k").await;
    browser.eval(&russian, &click_hex("20E4")).await;
    let surface = previewed(&mut browser, &russian).await;
    assert!(surface.starts_with("Attack 20E4 with rk"), "{surface}");
    let sewer = "document.getElementById('proposal-sewer')";
    assert_eq!(
        browser.eval(&russian, &format!("{sewer}.hidden")).await,
        false
    );
    browser.eval(&russian, &format!("{sewer}.click()")).await;
    // Nobody is beneath it: the referee refuses, and the page shows its words.
    let beneath = previewed(&mut browser, &russian).await;
    assert!(
        beneath.starts_with("Attack the sewer beneath 20E4 with rk: refused (B8"),
        "{beneath}"
    );
    assert_eq!(
        browser
            .eval(&russian, "JSON.stringify(window.aslWatch.proposal.command)")
            .await,
        r#"{"declare_attack":{"firers":["rk"],"target":"20E4","into_sewer":true}}"#
    );
    // Aimed at the sewer already, or at a hex with no Manhole, it offers nothing more.
    assert_eq!(
        browser.eval(&russian, &format!("{sewer}.hidden")).await,
        true
    );
    browser.press(&russian, "Escape", 27).await;
    select(&mut browser, &russian, "20H5", &["rk"]).await;
    browser.type_key(&russian, "k").await;
    browser.eval(&russian, &click_hex("20C6")).await;
    let elsewhere = previewed(&mut browser, &russian).await;
    assert!(elsewhere.starts_with("Attack 20C6 with rk"), "{elsewhere}");
    assert_eq!(
        browser.eval(&russian, &format!("{sewer}.hidden")).await,
        true
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

/// Two German squads and a Russian one sharing 1C3 from the start: held in Melee (A11.7).
const MELEE: &str = r#"name = "Melee of three"
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
id = "g2"
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_unit_withdraws_from_melee_to_a_hex_clicked_while_another_attacks() {
    let (_dir, server, mut browser, [german, russian]) = start(MELEE).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("CCPh, ATTACKER")).await;

    // Q opens the CC form at the Melee, both German squads attacking r1; g2 ticked to
    // withdraw leaves the attack, and a click on 1C4 is where it goes (A11.2).
    browser.type_key(&german, "q").await;
    let ticked = "[...document.querySelectorAll('#cc-attacks input:checked, #cc-withdrawers input:checked')].map(i => i.dataset.role + ':' + i.dataset.unit).join(' ')";
    assert_eq!(
        text(&mut browser, &german, ticked).await,
        "attacker:g1 attacker:g2 defender:r1"
    );
    browser
        .eval(
            &german,
            "document.querySelector('#cc-withdrawers input[data-role=\"withdrawer\"][data-unit=\"g2\"]').click()",
        )
        .await;
    assert_eq!(
        text(&mut browser, &german, ticked).await,
        "attacker:g1 defender:r1 withdrawer:g2"
    );
    browser.eval(&german, &click_hex("1C4")).await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('cc-withdraw').value")
            .await,
        "1C4"
    );
    browser
        .eval(
            &german,
            "document.getElementById('cc-form').requestSubmit()",
        )
        .await;
    // The designation is the CLI's `cc 1C3 g1 vs r1 and withdraw g2 to 1C4`.
    previewed(&mut browser, &german).await;
    assert_eq!(
        text(
            &mut browser,
            &german,
            "JSON.stringify(window.aslWatch.proposal.command)"
        )
        .await,
        r#"{"close_combat":{"hex":"1C3","attacks":[{"attackers":["g1"],"defenders":["r1"]}],"withdrawals":[{"units":["g2"],"to":"1C4"}],"no_ambush":false}}"#
    );
    let designated = send(&mut browser, &german).await;
    assert!(
        designated.starts_with("Close Combat in 1C3: g1 vs r1 and g2 withdraw to 1C4 (A11.2): "),
        "{designated}"
    );
    settle(&mut browser, players).await;
    // The DEFENDER's prompt names the withdrawal beside the attack.
    let asked = prompt_text(&mut browser, &russian).await;
    assert!(asked.contains("g2 withdrawing to 1C4"), "{asked}");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

/// A German squad holding an LMG and another beside it in 1C3; a Russian squad far off.
const TRANSFER: &str = r#"name = "Transfer"
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
id = "g2"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1C3"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1J10"

[[weapons]]
id = "lmg"
name = "LMG"
pp = 1
held_by = "g1"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_support_weapon_is_transferred_at_the_start_of_the_aph_from_the_stack_list() {
    let (_dir, server, mut browser, [german, russian]) = start(TRANSFER).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("APh, ATTACKER")).await;

    // g2 picked, then the LMG g1 holds clicked in the stack list: `transfer lmg to g2` (A4.431).
    select(&mut browser, &german, "1C3", &["g2"]).await;
    let lmg = "document.querySelector('#stack button.weapon-pick[data-weapon=\"lmg\"]')";
    browser.eval(&german, &format!("{lmg}.click()")).await;
    previewed(&mut browser, &german).await;
    assert_eq!(
        text(
            &mut browser,
            &german,
            "JSON.stringify(window.aslWatch.proposal.command)"
        )
        .await,
        r#"{"transfer_weapon":{"weapon":"lmg","to":"g2"}}"#
    );
    let transferred = send(&mut browser, &german).await;
    assert!(
        transferred.starts_with("Transfer LMG to g2: "),
        "{transferred}"
    );
    browser
        .wait_for(
            &german,
            "the LMG with g2",
            &format!("{SETTLED} && {lmg}.textContent.includes('held by g2')"),
            WAIT,
        )
        .await;
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

const TUNNEL: &str = include_str!("../../protocol/tests/positions/scenarios/b8-63-discovery.toml");
const TUNNEL_ROUT: &str = include_str!("../../protocol/tests/positions/scenarios/b8-62-rout.toml");

/// JavaScript: the unit's hex and whether it is below ground, on this page's live position.
fn where_is(unit: &str) -> String {
    format!(
        "(() => {{ const u = window.aslWatch.live.units['{unit}']; \
         return u ? u.hex + (u.underground ? ' below' : '') : 'gone'; }})()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_squad_goes_into_its_tunnel_in_the_mph_and_surfaces_in_the_aph() {
    let (_dir, server, mut browser, [german, russian]) = start(TUNNEL).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;

    // T takes g1 into the tunnel at 20C6; it is beneath the other entrance, 20E6 (B8.6).
    select(&mut browser, &german, "20C6", &["g1"]).await;
    browser.type_key(&german, "t").await;
    let went = send(&mut browser, &german).await;
    assert!(went.starts_with("g1 enter the tunnel: "), "{went}");
    settle(&mut browser, players).await;
    assert_eq!(
        text(&mut browser, &german, &where_is("g1")).await,
        "20E6 below"
    );
    // Surfacing is not for the MPh (B8.61): the key says so, and nothing is proposed.
    browser.type_key(&german, "u").await;
    let why = text(
        &mut browser,
        &german,
        "document.getElementById('selection').textContent",
    )
    .await;
    assert!(why.contains("in your APh (B8.42, B8.61)"), "{why}");
    assert_eq!(
        browser
            .eval(&german, "window.aslWatch.proposal === null")
            .await,
        true
    );

    // In the APh U brings it up, as `surface g1` does.
    browser.press(&german, "Escape", 27).await;
    play_until(&mut browser, players, &at("APh, ATTACKER")).await;
    select(&mut browser, &german, "20E6", &["g1"]).await;
    browser.type_key(&german, "u").await;
    let up = send(&mut browser, &german).await;
    assert!(up.starts_with("g1 surface: "), "{up}");
    settle(&mut browser, players).await;
    assert_eq!(text(&mut browser, &german, &where_is("g1")).await, "20E6");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_squad_routs_through_its_tunnel_from_the_page() {
    let (_dir, server, mut browser, [german, russian]) = start(TUNNEL_ROUT).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("RtPh, ATTACKER")).await;

    // gb would come out ADJACENT to the Good Order r2: O shows the referee's refusal (B8.62).
    select(&mut browser, &german, "4E6", &["gb"]).await;
    browser.type_key(&german, "o").await;
    let refused = previewed(&mut browser, &german).await;
    assert!(
        refused.starts_with("gb rout through the tunnel: refused (B8.62): ")
            && refused.contains("ADJACENT"),
        "{refused}"
    );
    browser.press(&german, "Escape", 27).await;
    // Once r2 is broken (entered from the Adjudicate form), the same keys rout it through.
    browser
        .eval(
            &german,
            "document.getElementById('forms').open = true; \
             document.getElementById('adjudicate-unit').value = 'r2'; \
             document.getElementById('adjudicate-outcome').value = 'break'; \
             document.getElementById('adjudicate-note').value = 'AFPh, 1MC failed'; \
             document.getElementById('adjudicate-form').requestSubmit()",
        )
        .await;
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;
    select(&mut browser, &german, "4E6", &["gb"]).await;
    browser.type_key(&german, "o").await;
    let routed = send(&mut browser, &german).await;
    assert!(
        routed.starts_with("gb rout through the tunnel: "),
        "{routed}"
    );
    settle(&mut browser, players).await;
    assert_eq!(text(&mut browser, &german, &where_is("gb")).await, "4C6");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

const WA_POSITIONS: &str =
    include_str!("../../protocol/tests/positions/scenarios/wa-positions.toml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wall_advantage_is_claimed_and_forfeited_with_the_keys() {
    let (_dir, server, mut browser, [german, russian]) = start(WA_POSITIONS).await;
    let players = [&german, &russian];
    settle(&mut browser, players).await;
    // The RPh ends into the German's step to claim WA (B9.322).
    browser.type_key(&german, "n").await;
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;

    // W claims it for the squads picked, as `claim-wa gb2` does; F gives it up again.
    select(&mut browser, &german, "10C9", &["gb2"]).await;
    browser.type_key(&german, "w").await;
    let claimed = send(&mut browser, &german).await;
    assert!(claimed.starts_with("Claim WA for gb2: "), "{claimed}");
    settle(&mut browser, players).await;
    let wa = "window.aslWatch.live.units['gb2'].wall_advantage";
    assert_eq!(browser.eval(&german, wa).await, true);
    browser.type_key(&german, "f").await;
    let forfeited = send(&mut browser, &german).await;
    assert!(forfeited.starts_with("Forfeit WA for gb2: "), "{forfeited}");
    settle(&mut browser, players).await;
    assert_eq!(browser.eval(&german, wa).await, false);
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

/// JavaScript: the German's page is at `line` in the Russian's Player Turn.
fn in_russian_turn(line: &str) -> String {
    format!(
        "window.aslWatch.live.clock.player_turn === 2 && {}",
        at(line)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enemy_tunnel_entrance_seen_used_is_searched_for_and_destroyed_from_its_hex() {
    let (_dir, server, mut browser, [german, russian]) = start(TUNNEL).await;
    let players = [&german, &russian];
    // The German goes down at 20C6 in rs's view, and comes up at 20E6 in the APh.
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;
    select(&mut browser, &german, "20C6", &["g1"]).await;
    browser.type_key(&german, "t").await;
    send(&mut browser, &german).await;
    browser.press(&german, "Escape", 27).await;
    play_until(&mut browser, players, &at("APh, ATTACKER")).await;
    select(&mut browser, &german, "20E6", &["g1"]).await;
    browser.type_key(&german, "u").await;
    send(&mut browser, &german).await;
    browser.press(&german, "Escape", 27).await;

    // The Russian MPh: rs comes into 20C6, where the side saw the entrance used; its stack
    // offers the search to rs, picked there (B8.63, A4.44).
    play_until(&mut browser, players, &in_russian_turn("MPh, ATTACKER")).await;
    select(&mut browser, &russian, "20C8", &["rs"]).await;
    let search = "#stack button.hex-act[data-act=\"discover_tunnel\"]";
    assert_eq!(browser.eval(&russian, &exists(search)).await, false);
    for hex in ["20C7", "20C6"] {
        browser.eval(&russian, &click_hex(hex)).await;
        send(&mut browser, &russian).await;
        settle(&mut browser, players).await;
    }
    browser
        .wait_for(&russian, "the search offered", &exists(search), WAIT)
        .await;
    // Nothing of it on the German's page, whose units saw nothing used.
    browser.eval(&german, &click_hex("20C6")).await;
    assert_eq!(
        browser
            .eval(
                &german,
                "document.querySelectorAll('#stack button.hex-act').length"
            )
            .await,
        0
    );
    browser
        .eval(
            &russian,
            &format!("document.querySelector('{search}').click()"),
        )
        .await;
    let searched = send(&mut browser, &russian).await;
    assert!(
        searched.starts_with("rs searches 20C6 for the tunnel entrance seen used (B8.63): "),
        "{searched}"
    );
    settle(&mut browser, players).await;

    // Discovered, the entrance is the Russian's to destroy from its hex (B8.63).
    let destroy = "#stack button.hex-act[data-act=\"destroy_tunnel\"]";
    browser.press(&russian, "Escape", 27).await;
    play_until(&mut browser, players, &in_russian_turn("CCPh, ATTACKER")).await;
    browser.eval(&russian, &click_hex("20C6")).await;
    browser
        .wait_for(&russian, "the destruction offered", &exists(destroy), WAIT)
        .await;
    browser
        .eval(
            &russian,
            &format!("document.querySelector('{destroy}').click()"),
        )
        .await;
    let destroyed = send(&mut browser, &russian).await;
    assert!(
        destroyed.starts_with("Destroy the tunnel entrance at 20C6 (B8.63): "),
        "{destroyed}"
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

const B9_41: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

/// JavaScript: clicks the prompt's answer whose text ends with `words`.
fn answer(words: &str) -> String {
    format!(
        "[...document.querySelectorAll('#prompt button.answer')].find(b => b.textContent.endsWith('{words}')).click()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concealed_wall_advantage_holder_is_shown_from_the_challenge_prompt() {
    let (_dir, server, mut browser, [german, russian]) = start(B9_41).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;
    // The B9.4 EX's moves: 447a leaves H7 (the concealed 337a takes WA, B9.323), and 467a
    // leaving its wall gives the 7-4-7 a chance at WA (B9.41, B9.322), which it lets pass.
    select(&mut browser, &german, "55H7", &["447a"]).await;
    browser.eval(&german, &click_hex("55I8")).await;
    send(&mut browser, &german).await;
    browser.press(&german, "Escape", 27).await;
    select(&mut browser, &german, "55H5", &["467a"]).await;
    browser.eval(&german, &click_hex("55H6")).await;
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;
    browser.eval(&russian, &answer("Let the chance pass")).await;
    send(&mut browser, &russian).await;
    settle(&mut browser, players).await;

    // 467a's claim challenges the concealed holder (B9.324): the Russian's prompt offers to
    // show it, as `show-wa 337a` does; shown real, it keeps WA and 467a has none.
    browser
        .wait_for(
            &russian,
            "the challenge's answer",
            "[...document.querySelectorAll('#prompt button.answer')].some(b => b.textContent.endsWith('Show 337a'))",
            WAIT,
        )
        .await;
    browser.eval(&russian, &answer("Show 337a")).await;
    let shown = send(&mut browser, &russian).await;
    assert!(shown.starts_with("Show 337a: "), "{shown}");
    settle(&mut browser, players).await;
    assert_eq!(
        browser
            .eval(
                &russian,
                "[window.aslWatch.live.units['337a'].wall_advantage, window.aslWatch.live.units['467a'].wall_advantage]"
            )
            .await,
        serde_json::json!([true, false])
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

/// A Russian squad that moves up column E at a German squad in 2E6, behind the woods of 2E5
/// until it enters them: the German's first two attacks have no LOS (declared and over at once,
/// A6.11), and mark it First Fire, then Final Fire (A8.3), so its attack at the woods, adjacent,
/// is Final Protective Fire whatever the dice do (A8.31).
const FPF: &str = r#"name = "FPF from behind the woods"
turns = 1
first = "russian"
sides = [
    { id = "german", name = "German", nationality = "german" },
    { id = "russian", name = "Russian", nationality = "russian" },
]

[[area]]
from = "2A1"
to = "2J10"
terrain = "open_ground"

[[hexes]]
hex = "2E5"
terrain = "woods"

[[units]]
id = "ra"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "2E2"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "2E6"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn final_protective_fire_from_the_page_takes_its_nmc_in_both_records() {
    let (_dir, server, mut browser, [german, russian]) = start(FPF).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;
    select(&mut browser, &russian, "2E2", &["ra"]).await;
    for hex in ["2E3", "2E4", "2E5"] {
        // The Russian's step (ra stays picked), then the German's fire at it: K, the hex.
        browser.eval(&russian, &click_hex(hex)).await;
        send(&mut browser, &russian).await;
        settle(&mut browser, players).await;
        browser.press(&german, "Escape", 27).await;
        select(&mut browser, &german, "2E6", &["g1"]).await;
        browser.type_key(&german, "k").await;
        browser.eval(&german, &click_hex(hex)).await;
        let fired = send(&mut browser, &german).await;
        assert!(
            fired.starts_with(&format!("Attack {hex} with g1: ")),
            "{fired}"
        );
        settle(&mut browser, players).await;
    }
    // The third is open: resolved from the prompt, with the server's dice.
    browser.press(&german, "Escape", 27).await;
    browser.type_key(&german, "1").await;
    let resolved = send(&mut browser, &german).await;
    assert!(resolved.starts_with("Resolve the attack: "), "{resolved}");
    settle(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "g1's FPF NMC in the record",
                "[...document.querySelectorAll('#events li .text')].some(li => \
                 li.textContent.includes('`g1` FPF NMC') || li.textContent.includes('g1 FPF NMC'))",
                WAIT,
            )
            .await;
    }
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
