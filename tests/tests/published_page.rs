//! A published VASL set-up save played on the page as two players would, at the moments a
//! published order of battle made the page hard to play: always on a save synthesised in a
//! published set-up save's shape (each side's order of battle in the map's margin, a support
//! weapon there to give, VASL's xz inside the zip) on board 02 synthesised in VASL's format.
//!
//! - Set-up: a Gun's name stays on its counter's face; an order of battle of more than a
//!   dozen counters is counted by kind in the set-up prompt, not named one by one (each
//!   stays a button); a weapon left to give goes to a unit already placed by a click on its
//!   own hex, without moving it away and back (A4.43).
//! - Turn 1: in the RPh both pages say the ATTACKER's Done ends the DEFENDER's chance to
//!   rally too (A10.6); the Attack button is offered only where a side may fire (A3.2–A3.5);
//!   while the ATTACKER's stack moves, the DEFENDER's page says he may fire at it now
//!   (Defensive First Fire, A8.1), and stops saying so once the MPh ends; a broken squad's
//!   Interdicted rout step asks for its broken-side morale in the rout prompt's box (A10.53);
//!   it routs with the leader of its Location picked with it (Voluntary Rout, A10.711); what
//!   the referee leaves to the players in the step (the pair's Interdiction NMC) stands in
//!   both prompts, with an answer that opens the Adjudicate form, until it is adjudicated.
//!
//! Nothing is timed: every step waits for a condition on the page, with a generous bound.

#[path = "support/page.rs"]
mod page;
#[path = "support/saves.rs"]
mod saves;

use client::{Connection, Reply};
use e2e::chromium::{Browser, Tab};
use e2e::TestServer;
use page::*;
use protocol::board::hex::Hex;
use protocol::board::scenario::{Side, UnitKind};
use protocol::board::terrain::Terrain;
use protocol::game::command::Command;
use protocol::game::Game;
use saves::new_from_save;
use server::operations::config::Config;
use std::path::{Path, PathBuf};

/// Russian squads in the synthesised order of battle: more than the set-up prompt names.
const RUSSIAN_SQUADS: u32 = 13;

/// An 8-1 leader as VASL saves one: his ratings on the layer shown (the third of four).
const LEADER_LAYERS: &str = "emb2;;2;;ELR;2;E;BH;2;Q;;;0;false;0;0;ge/geL103,ge/geL92,ge/geL81,ge/geL61;10-3,9-2,8-1,6\\+1;false;;;;false;;1;1;true;;69,130";

/// A set-up save as published ones are: nothing on the board, each side's order of battle in
/// the map's margin — two German squads, an 8-1 leader and an LMG nobody holds, and
/// [`RUSSIAN_SQUADS`] Russian squads. Written as VASL writes one, by the save reader's own
/// test writer.
fn synthesised_save() -> Vec<u8> {
    use vasl_save::save::{writer, Encoding};
    let margin = |n: usize| format!("Main Map;{};{};1", 60 + 40 * n, 120);
    let mut pieces: Vec<Vec<(String, String)>> = vec![
        vec![("piece;K;D;ge/ge467S;4-6-7 1sq".into(), String::new())],
        vec![("piece;K;D;ge/ge467S;4-6-7 1sq".into(), String::new())],
        vec![
            (LEADER_LAYERS.into(), "3".into()),
            ("piece;K;D; ;geLDR".into(), String::new()),
        ],
        vec![("piece;K;D;ge/geLMG;LMG".into(), String::new())],
        vec![(
            "piece;K;D;ge/gun/geAT38;50L AT PaK 38".into(),
            String::new(),
        )],
    ];
    for _ in 0..RUSSIAN_SQUADS {
        pieces.push(vec![(
            "piece;K;D;ru/ru447S;4-4-7 1sq".into(),
            String::new(),
        )]);
    }
    let mut lines = vec!["bd\t0\t0\t02\tVER\t6.4\t".to_string()];
    for (n, traits) in pieces.iter_mut().enumerate() {
        // The piece's own trait, last, carries where it lies.
        traits.last_mut().unwrap().1 = margin(n);
        let traits: Vec<(&str, &str)> = traits
            .iter()
            .map(|(t, s)| (t.as_str(), s.as_str()))
            .collect();
        lines.push(writer::piece_command(&(n + 1).to_string(), &traits));
    }
    let text = writer::saved_game_text(&lines);
    writer::vsav(&writer::encode(&text, Encoding::Xz), Some("VASL"))
}

/// The save and board 02 in VASL's format, in `dir`: the save's path and the boards' directory.
fn synthesised(dir: &Path) -> (PathBuf, PathBuf) {
    use protocol::board::vasl::synth::SynthBoard;
    let boards = dir.join("boards");
    std::fs::create_dir(&boards).unwrap();
    std::fs::write(boards.join("bd02"), SynthBoard::geomorphic("02").archive()).unwrap();
    let save = dir.join("Synthesised set-up.vsav");
    std::fs::write(&save, synthesised_save()).unwrap();
    (save, boards)
}

/// A server on the synthesised boards, the game made of the save with no edits, and each
/// side's view of it through its own connection, German first.
struct Match {
    _dir: tempfile::TempDir,
    server: TestServer,
    game: String,
    tokens: [String; 2],
    connections: Vec<Connection>,
    views: Vec<Game>,
}

async fn new_match() -> Match {
    let dir = tempfile::tempdir().unwrap();
    let (save, boards) = synthesised(dir.path());
    let config = Config {
        boards: Some(server::operations::boards::open(&boards, None).unwrap()),
        // An order of battle is placed at once, faster than a player types.
        commands_per_second_max: 10_000,
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let created = new_from_save(&server.url, &save, &boards).await;
    let game = created["game"].as_str().unwrap().to_string();
    let tokens = [
        created["tokens"]["side_a"].as_str().unwrap().to_string(),
        created["tokens"]["side_b"].as_str().unwrap().to_string(),
    ];
    let mut connections = vec![];
    let mut views = vec![];
    for token in &tokens {
        let mut connection = Connection::connect(&server.url).await.unwrap();
        let joined = connection.join(&game, token, None).await.unwrap();
        views.push(joined.state.expect("a snapshot"));
        connections.push(connection);
    }
    assert_eq!(views[0].scenario.first, Side::A, "the German moves first");
    Match {
        _dir: dir,
        server,
        game,
        tokens,
        connections,
        views,
    }
}

impl Match {
    fn link(&self, side: Side) -> String {
        format!(
            "http://{}/watch#game={}&token={}",
            self.server.addr, self.game, self.tokens[side as usize]
        )
    }

    /// The ids of `side`'s units of `kind` in its order of battle, in natural order.
    fn units(&self, side: Side, kind: UnitKind) -> Vec<String> {
        let setup = self.views[side as usize].scenario.setup.as_ref().unwrap();
        let mut ids: Vec<String> = setup
            .units
            .values()
            .filter(|u| u.side == side && u.kind == kind)
            .map(|u| u.id.clone())
            .collect();
        ids.sort_by_key(|id| {
            let n: u32 = id
                .trim_start_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .unwrap_or(0);
            n
        });
        ids
    }

    /// `side`'s connection sends `command`: `true` when the referee accepted it.
    async fn sent(&mut self, side: Side, id: &mut u64, command: Command) -> bool {
        *id += 1;
        match self.connections[side as usize]
            .command(*id, command, None)
            .await
            .unwrap()
        {
            Reply::Accepted { .. } => true,
            Reply::Refused { .. } => false,
        }
    }
}

fn set_up(unit: &str, hex: Hex, weapons: &[&str]) -> Command {
    Command::SetUp {
        unit: unit.into(),
        hex,
        concealed: false,
        hidden: false,
        weapons: weapons.iter().map(|w| w.to_string()).collect(),
    }
}

/// Four Open Ground hexes of one column at level 0, one after another, away from the edges:
/// where the German routs to, where his squads stand, the hex between, the Russian's.
fn column_of_four(game: &Game) -> [Hex; 4] {
    let hexes = &game.scenario.hexes;
    let open = |h: &Hex| {
        hexes.get(h).is_some_and(|s| {
            s.terrain == Terrain::OpenGround
                && s.elevation == 0
                && s.fortifications.is_empty()
                && !s.manhole
        })
    };
    for h in hexes.keys() {
        if h.row < 2 || h.column < 3 || h.column > 20 {
            continue;
        }
        let at = |row: u16| Hex { row, ..*h };
        let four = [at(h.row), at(h.row + 1), at(h.row + 2), at(h.row + 3)];
        if four.iter().all(open) {
            return four;
        }
    }
    panic!("no four Open Ground hexes in a column");
}

/// Hexes of the map at least five columns east of `column`, where the other units stand out
/// of the way, one after another.
fn out_of_the_way(game: &Game, column: u16) -> Vec<Hex> {
    game.scenario
        .hexes
        .keys()
        .filter(|h| h.column >= column + 5 && h.row >= 2)
        .copied()
        .collect()
}

/// Sets up `side`'s units not named in `placed` one to a hex out of the way, each on the
/// first hex the referee takes it in, then ends the side's set-up.
async fn set_up_the_rest(m: &mut Match, side: Side, placed: &[(&str, Hex, &[&str])], column: u16) {
    let mut id = 0;
    for (unit, hex, weapons) in placed {
        let command = set_up(unit, *hex, weapons);
        assert!(m.sent(side, &mut id, command).await, "{unit} in {hex}");
    }
    let named: Vec<&str> = placed.iter().map(|(u, ..)| *u).collect();
    let rest: Vec<String> = m.views[side as usize]
        .scenario
        .setup
        .as_ref()
        .unwrap()
        .units
        .values()
        .filter(|u| u.side == side && u.enters.is_none() && !named.contains(&u.id.as_str()))
        .map(|u| u.id.clone())
        .collect();
    let mut hexes = out_of_the_way(&m.views[side as usize], column).into_iter();
    for unit in rest {
        let mut done = false;
        for hex in hexes.by_ref() {
            if m.sent(side, &mut id, set_up(&unit, hex, &[])).await {
                done = true;
                break;
            }
        }
        assert!(done, "no hex took {unit}");
    }
    assert!(m.sent(side, &mut id, Command::Done).await, "set-up done");
}

/// JavaScript: the page's Attack button (K) is disabled.
const ATTACK_OFF: &str = "document.querySelector('button[data-action=\"attack\"]').disabled";

/// The player of `tab` adjudicates `outcome` for `unit` from the Adjudicate form, and sends it.
async fn adjudicate(browser: &mut Browser, tab: &Tab, unit: &str, outcome: &str) {
    browser
        .eval(
            tab,
            &format!(
                "document.getElementById('forms').open = true; \
                 document.getElementById('adjudicate-unit').value = '{unit}'; \
                 document.getElementById('adjudicate-outcome').value = '{outcome}'; \
                 document.getElementById('adjudicate-form').requestSubmit()"
            ),
        )
        .await;
    send(browser, tab).await;
}

/// The prompt's text on `tab` once the page has settled.
async fn settled_prompt(browser: &mut Browser, tab: &Tab) -> String {
    browser.wait_for(tab, "settled", SETTLED, WAIT).await;
    prompt(browser, tab).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_order_of_battle_is_set_up_on_the_page_with_its_weapon_given_in_place() {
    let mut m = new_match().await;
    let [from, ..] = column_of_four(&m.views[0]);
    let mut browser = Browser::launch(&chromium_binary()).await;
    let russian = browser.open(&m.link(Side::B)).await;

    // The Russian sets up first: his thirteen squads are counted, each still a button.
    let left = settled_prompt(&mut browser, &russian).await;
    assert!(
        left.contains(&format!(
            "{RUSSIAN_SQUADS} left to place: {RUSSIAN_SQUADS} × squad 4-4-7"
        )),
        "{left}"
    );
    assert!(!left.contains("ru-sq13 squad"), "{left}");
    assert_eq!(
        browser
            .eval(
                &russian,
                "[...document.querySelectorAll('#prompt button.answer')].filter(b => /^(▸ )?ru-sq\\d+$/.test(b.textContent)).length"
            )
            .await,
        RUSSIAN_SQUADS
    );
    set_up_the_rest(&mut m, Side::B, &[], from.column).await;

    // The German places his units with no weapon, then gives the LMG to a squad where it
    // stands: its hex, the squad in the stack, the weapon, its hex again.
    let german = browser.open(&m.link(Side::A)).await;
    let squads = m.units(Side::A, UnitKind::Squad);
    let leader = m.units(Side::A, UnitKind::Leader).remove(0);
    let gun = m.units(Side::A, UnitKind::Counter).remove(0);
    let mut id = 100;
    for unit in squads.iter().chain([&leader, &gun]) {
        assert!(
            m.sent(Side::A, &mut id, set_up(unit, from, &[])).await,
            "{unit}"
        );
    }
    // The Gun's name stays on its counter's face, as its ratings would.
    browser
        .wait_for(
            &german,
            "the Gun on the map",
            &format!("document.querySelector('.counter[data-unit=\"{gun}\"] .ratings') !== null"),
            WAIT,
        )
        .await;
    let width = browser
        .eval(
            &german,
            &format!(
                "document.querySelector('.counter[data-unit=\"{gun}\"] .ratings').getBBox().width"
            ),
        )
        .await;
    let face = browser
        .eval(
            &german,
            &format!(
                "document.querySelector('.counter[data-unit=\"{gun}\"] .face').getBBox().width"
            ),
        )
        .await;
    assert!(
        width.as_f64().unwrap() <= face.as_f64().unwrap(),
        "{gun}'s name is {width} wide on a face {face} wide"
    );
    let give = settled_prompt(&mut browser, &german).await;
    assert!(give.contains("every unit is placed"), "{give}");
    assert!(give.contains("click its hex again"), "{give}");
    let hex = from.to_string();
    select(&mut browser, &german, &hex, &[squads[0].as_str()]).await;
    browser
        .eval(
            &german,
            "document.querySelector('#prompt button.weapon-give').click()",
        )
        .await;
    browser.eval(&german, &click_hex(&hex)).await;
    let given = send(&mut browser, &german).await;
    assert!(
        given.starts_with(&format!("Set up {} in {hex} with LMG (", squads[0])),
        "{given}"
    );
    browser.wait_for(&german, "settled", SETTLED, WAIT).await;
    browser.type_key(&german, "n").await;
    let ended = send(&mut browser, &german).await;
    assert!(ended.starts_with("End set-up (A12.12)"), "{ended}");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    m.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_one_of_a_published_save_tells_the_defender_to_fire_and_routs_a_leader_along() {
    let mut m = new_match().await;
    let [away, from, between, to] = column_of_four(&m.views[0]);
    let russian_squad = m.units(Side::B, UnitKind::Squad).remove(0);
    set_up_the_rest(
        &mut m,
        Side::B,
        &[(russian_squad.as_str(), to, &[])],
        from.column,
    )
    .await;
    let squads = m.units(Side::A, UnitKind::Squad);
    let (breaking, mover) = (squads[0].clone(), squads[1].clone());
    let leader = m.units(Side::A, UnitKind::Leader).remove(0);
    let lmg = m.views[0]
        .scenario
        .setup
        .as_ref()
        .unwrap()
        .weapons
        .values()
        .find(|w| w.side == Side::A)
        .unwrap()
        .id
        .clone();
    set_up_the_rest(
        &mut m,
        Side::A,
        &[
            (breaking.as_str(), from, &[]),
            (mover.as_str(), from, &[lmg.as_str()]),
            (leader.as_str(), from, &[]),
        ],
        from.column,
    )
    .await;
    for connection in std::mem::take(&mut m.connections) {
        connection.close().await;
    }

    let mut browser = Browser::launch(&chromium_binary()).await;
    let german = browser.open(&m.link(Side::A)).await;
    let russian = browser.open(&m.link(Side::B)).await;
    let players = [&german, &russian];
    let (away, from, between) = (away.to_string(), from.to_string(), between.to_string());

    // No fire in the RPh: neither page offers the Attack button it would only refuse.
    settle(&mut browser, players).await;
    for tab in players {
        assert_eq!(browser.eval(tab, ATTACK_OFF).await, true);
    }

    // A Russian squad out of the way is ruled broken in the German's RPh: the Russian may
    // rally it only until the German ends the RPh, and both pages say so (A10.6).
    let far = m.units(Side::B, UnitKind::Squad).remove(1);
    adjudicate(&mut browser, &russian, &far, "break").await;
    settle(&mut browser, players).await;
    let own = prompt(&mut browser, &russian).await;
    assert!(
        own.contains(&format!(
            "Broken units of yours may attempt to rally now (A10.6): {far}. Only until the German ends the RPh, which ends it for both sides."
        )),
        "{own}"
    );
    let theirs = prompt(&mut browser, &german).await;
    assert!(
        theirs.contains(&format!(
            "The Russian's broken units may attempt to rally in this RPh too (A10.6): {far}. Your Done ends the RPh for both sides."
        )),
        "{theirs}"
    );

    // In his PFPh the German rules one squad broken, as a player adjudicates what the dice
    // did off the board: it is to rout in the RtPh.
    play_until(&mut browser, players, &at("PFPh, ATTACKER")).await;
    adjudicate(&mut browser, &german, &breaking, "break").await;
    settle(&mut browser, players).await;

    // The MPh: no stack moves yet, and the Russian is told of none.
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;
    assert!(
        !prompt(&mut browser, &russian).await.contains("moving now"),
        "{}",
        prompt(&mut browser, &russian).await
    );
    select(&mut browser, &german, &from, &[mover.as_str()]).await;
    browser.eval(&german, &click_hex(&between)).await;
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;
    let told = prompt(&mut browser, &russian).await;
    assert!(
        told.contains(&format!(
            "The German's stack moving now: {mover} in {between}. You may fire at it before it moves on — Defensive First Fire (A8.1)"
        )),
        "{told}"
    );
    // The German's own page says nothing of the kind to him, nor offers him fire in his
    // MPh; the Russian's offers it.
    assert!(!prompt(&mut browser, &german).await.contains("moving now"));
    assert_eq!(browser.eval(&german, ATTACK_OFF).await, true);
    assert_eq!(browser.eval(&russian, ATTACK_OFF).await, false);
    // His squad picked, the Russian is asked to fire, not to move on the German's move.
    select(
        &mut browser,
        &russian,
        &to.to_string(),
        &[russian_squad.as_str()],
    )
    .await;
    let hint = text(
        &mut browser,
        &russian,
        "document.getElementById('selection').textContent",
    )
    .await;
    assert_eq!(
        hint,
        format!("Selected {russian_squad} (0 MF spent): fire with them: K, then click the hex to attack (A7).")
    );
    // The MPh over, the moment has passed.
    play_until(&mut browser, players, &at("DFPh, DEFENDER")).await;
    assert!(!prompt(&mut browser, &russian).await.contains("moving now"));

    // The RtPh: the broken squad routs away with the leader picked with it (A10.711), into
    // Open Ground in the Russian's LOS and normal range, which leaves its NMC to the players.
    play_until(&mut browser, players, &at("RtPh, ATTACKER")).await;
    // The page asks the referee whether the step may end; its answer names the router.
    let rout = browser
        .wait_for(
            &german,
            "the rout prompt",
            "(() => { const t = document.getElementById('prompt').textContent; \
             return t.startsWith('Rout Phase: ') && t; })()",
            WAIT,
        )
        .await;
    let rout = rout.as_str().unwrap();
    assert!(rout.contains(&breaking), "{rout}");
    assert!(
        rout.contains("a Good Order leader of its Location"),
        "{rout}"
    );
    browser
        .eval(
            &german,
            &format!("document.querySelector('#prompt button.rout-pick[data-unit=\"{breaking}\"]').click()"),
        )
        .await;
    // Alone, its step into the Russian's Interdiction waits on its broken-side morale, which
    // the page asks for in the prompt's box (A10.53).
    browser.eval(&german, &click_hex(&away)).await;
    let refused = previewed(&mut browser, &german).await;
    assert!(
        refused.starts_with(&format!("Rout {breaking} to {away}: refused (A10.53)")),
        "{refused}"
    );
    let asked = text(
        &mut browser,
        &german,
        "document.getElementById('selection').textContent + ' | ' + document.activeElement.id",
    )
    .await;
    assert_eq!(
        asked,
        format!("Type {breaking}'s broken-side morale in the Broken morale box above, then click {away} again (A10.53). | rout-morale")
    );
    let button = format!("#stack button.unit-pick[data-unit=\"{leader}\"]");
    browser
        .wait_for(
            &german,
            "the leader in the stack list",
            &format!("document.querySelector('{button}') !== null"),
            WAIT,
        )
        .await;
    browser
        .eval(
            &german,
            &format!("document.querySelector('{button}').click()"),
        )
        .await;
    browser.eval(&german, &click_hex(&away)).await;
    let routed = send(&mut browser, &german).await;
    assert!(
        routed.starts_with(&format!("Rout {breaking} with {leader} to {away}: ")),
        "{routed}"
    );
    settle(&mut browser, players).await;
    for tab in players {
        let left = prompt(&mut browser, tab).await;
        assert!(left.contains("Left to the players (#"), "{left}");
        assert!(
            left.contains(&format!("{breaking} routed with {leader}")),
            "{left}"
        );
        assert!(left.contains("(A10.711)"), "{left}");
    }
    // Its answer opens the Adjudicate form at the squad; the German rules it, and the notice
    // is gone from both pages.
    browser
        .eval(
            &german,
            &format!(
                "[...document.querySelectorAll('#prompt button.answer')] \
                 .find(b => b.textContent.includes('Adjudicate {breaking}')).click()"
            ),
        )
        .await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('adjudicate-unit').value")
            .await,
        breaking.as_str()
    );
    browser
        .eval(
            &german,
            "document.getElementById('adjudicate-outcome').value = 'eliminate'; \
             document.getElementById('adjudicate-form').requestSubmit()",
        )
        .await;
    send(&mut browser, &german).await;
    settle(&mut browser, players).await;
    for tab in players {
        let after = prompt(&mut browser, tab).await;
        assert!(!after.contains("Left to the players"), "{after}");
    }
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    m.server.stop().await;
}
