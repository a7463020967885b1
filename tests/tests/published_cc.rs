//! A published VASL set-up save played from its set-up to a Close Combat on the play page, as
//! two players would, when `ASL_VASL_SAVES` names a directory of saves and `ASL_BOARDS` VASL's
//! board archives (no third party's save or board is in the repository). The same turns always
//! run on a save synthesised in a published set-up save's shape (its whole order of battle and
//! a support weapon in the map's margin, VASL's xz inside the zip) on a board synthesised in
//! VASL's format, with and without the fire.
//!
//! Each save becomes a game with no edits (`asl new SAVE.vsav`). Both sides set up their whole
//! order of battle through the client's connection (a script would send the same commands):
//! a squad of the side moving first two hexes from a squad of the other, on Open Ground of a
//! real board, every other unit well away, each support weapon still to give handed to a unit
//! of its side (A4.43). Then the pages play Turn 1 to its CCPh: the squad moves one hex in the
//! MPh, advances into the enemy's Location in the APh (A4.7), and both players designate their
//! attacks from the CC form, which has the referee roll them on the CC Table (A11.11), and the
//! Player Turn is played to its end, the other side's Player Turn beginning. A
//! second test plays the same turn with the squad firing at the enemy squad from the page in
//! the AFPh first (the IFT with the server's dice, A7.3); when the dice leave that squad
//! changed (broken, pinned, reduced, killed), that save's turn ends with the fire.
//!
//! Nothing is timed: every step waits for a condition on the page, with a generous bound.

#[path = "support/page.rs"]
mod page;
#[path = "support/saves.rs"]
mod saves;

use client::{Connection, Reply};
use e2e::chromium::{self, Browser, Tab};
use e2e::TestServer;
use page::*;
use protocol::board::hex::Hex;
use protocol::board::scenario::{Side, UnitKind};
use protocol::board::terrain::Terrain;
use protocol::game::command::Command;
use protocol::game::Game;
use saves::{dirs, new_from_save};
use server::operations::config::Config;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Hexes tried for one unit before the test gives up on placing it.
const TRIES_PER_UNIT_MAX: usize = 60;

/// Columns between the Close Combat's column and any other unit on its board: out of the way
/// of the three hexes the two squads use.
const CLEAR_COLUMNS: u16 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_saves_are_played_to_a_close_combat_on_the_page() {
    each_save(Fire::None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_saves_are_played_with_advancing_fire_on_the_page() {
    each_save(Fire::Advancing).await;
}

/// A set-up save as published ones are: nothing on the board, each side's order of battle in
/// the map's margin (two squads each), and a German LMG there with nobody
/// holding it, which the German gives to a unit as he sets it up (A4.43). Written as VASL
/// writes one, by the save reader's own test writer.
fn synthesised_setup_save() -> Vec<u8> {
    use vasl_save::save::{writer, Encoding};
    let margin = |n: u32| format!("Main Map;{};{};1", 60 + 60 * n, 120);
    let pieces = [
        "piece;K;D;ge/ge467S;4-6-7 1sq",
        "piece;K;D;ge/ge467S;4-6-7 1sq",
        "piece;K;D;ge/geLMG;LMG",
        "piece;K;D;ru/ru447S;4-4-7 1sq",
        "piece;K;D;ru/ru447S;4-4-7 1sq",
    ];
    let mut lines = vec!["bd\t0\t0\t02\tVER\t6.4\t".to_string()];
    for (n, piece) in pieces.iter().enumerate() {
        let at = margin(n as u32);
        lines.push(writer::piece_command(
            &(n + 1).to_string(),
            &[(*piece, at.as_str())],
        ));
    }
    let text = writer::saved_game_text(&lines);
    writer::vsav(&writer::encode(&text, Encoding::Xz), Some("VASL"))
}

/// The save synthesised above and board 02 in VASL's format, in `dir`: the save's path and
/// the boards' directory.
fn synthesised(dir: &Path) -> (PathBuf, PathBuf) {
    use protocol::board::vasl::synth::SynthBoard;
    let boards = dir.join("boards");
    std::fs::create_dir(&boards).unwrap();
    std::fs::write(boards.join("bd02"), SynthBoard::geomorphic("02").archive()).unwrap();
    let save = dir.join("Synthesised set-up.vsav");
    std::fs::write(&save, synthesised_setup_save()).unwrap();
    (save, boards)
}

/// A set-up save's first turn to its Close Combat on the page, whatever the environment holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synthesised_set_up_save_is_played_to_a_close_combat_on_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let (save, boards) = synthesised(dir.path());
    play_to_close_combat(&save, &boards, Fire::None).await;
}

/// The same turn with the Advancing Fire first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synthesised_set_up_save_is_played_with_advancing_fire_on_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let (save, boards) = synthesised(dir.path());
    play_to_close_combat(&save, &boards, Fire::Advancing).await;
}

/// Whether the turn holds an attack before the Close Combat.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fire {
    None,
    /// The moving squad fires in the AFPh at the squad it is to advance on; the Close Combat
    /// follows when the dice left that squad as it was.
    Advancing,
}

async fn each_save(fire: Fire) {
    let Some((saves, boards)) = dirs() else {
        println!(
            "skipped: set ASL_VASL_SAVES (.vsav files) and ASL_BOARDS (VASL's boards) to run it"
        );
        return;
    };
    if chromium::find().is_none() {
        println!("skipped: no Chromium");
        return;
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(&saves)
        .expect("ASL_VASL_SAVES is a directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "vsav"))
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no .vsav file in ASL_VASL_SAVES");
    for save in found {
        match saves::kind(&save) {
            saves::Kind::SetUp => play_to_close_combat(&save, &boards, fire).await,
            saves::Kind::Placed => println!("{}: nothing to set up", save.display()),
            saves::Kind::Refused(why) => println!("{}: refused: {why}", save.display()),
        }
    }
}

/// Where the two squads meet: the moving side's squad in `from`, the other's in `to`, and the
/// hex between them, all Open Ground at one level in one column of one board.
struct Meeting {
    from: Hex,
    between: Hex,
    to: Hex,
}

/// Three Open Ground hexes of one column, one after another, away from the board's edges.
fn meeting(game: &Game) -> Meeting {
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
        let at = |row: u16| Hex { row, ..*h };
        if h.row < 3 || h.column < 3 {
            continue;
        }
        let three = [at(h.row), at(h.row + 1), at(h.row + 2)];
        if three.iter().all(open) {
            let [from, between, to] = three;
            return Meeting { from, between, to };
        }
    }
    panic!("no three Open Ground hexes in a column");
}

/// Whether `hex` is well away from the meeting's column on its board.
fn clear_of(meeting: &Meeting, hex: &Hex) -> bool {
    hex.board != meeting.from.board || hex.column.abs_diff(meeting.from.column) >= CLEAR_COLUMNS
}

/// Sends `command` as `side`'s connection; `true` when the referee accepted it.
async fn sent(connection: &mut Connection, id: &mut u64, command: Command) -> bool {
    *id += 1;
    match connection.command(*id, command, None).await.unwrap() {
        Reply::Accepted { .. } => true,
        Reply::Refused { .. } => false,
    }
}

/// Sets up `side`'s whole order of battle: its squad `squad` in `at`, every other unit on a
/// hex clear of the meeting the referee takes it in (a Dummy needs Concealment Terrain,
/// A12.12: tried one hex after another, as a player would), each weapon still to give with
/// the next unit that can take it (A4.43); then ends the side's set-up.
async fn set_up(
    connection: &mut Connection,
    view: &Game,
    side: Side,
    squad: &str,
    at: &Hex,
    meeting: &Meeting,
    used: &mut BTreeSet<Hex>,
) {
    let setup = view.scenario.setup.as_ref().expect("a set-up step");
    let mut id = 0;
    let placed = sent(
        connection,
        &mut id,
        Command::SetUp {
            unit: squad.into(),
            hex: *at,
            concealed: false,
            hidden: false,
            weapons: vec![],
        },
    )
    .await;
    assert!(placed, "{squad} is refused in {at}");
    used.insert(*at);
    let mut to_give: Vec<String> = setup
        .weapons
        .values()
        .filter(|w| w.side == side && w.held_by.is_none())
        .map(|w| w.id.clone())
        .collect();
    let candidates: Vec<Hex> = setup
        .area(side)
        .iter()
        .filter(|h| clear_of(meeting, h))
        .copied()
        .collect();
    for unit in setup.units.values() {
        if unit.side != side || unit.id == squad || unit.enters.is_some() {
            continue;
        }
        let infantry = matches!(
            unit.kind,
            UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew | UnitKind::Leader
        );
        let weapons: Vec<String> = if infantry {
            to_give.pop().into_iter().collect()
        } else {
            vec![]
        };
        // A Dummy sets up as a "?" in Concealment Terrain (A12.11, A12.12).
        let dummy = unit.kind == UnitKind::Dummy;
        let fits = |h: &Hex| {
            !dummy
                || view.scenario.hexes.get(h).is_some_and(|s| {
                    matches!(
                        s.terrain,
                        Terrain::Woods
                            | Terrain::Brush
                            | Terrain::Grain
                            | Terrain::Orchard
                            | Terrain::StoneBuilding
                            | Terrain::WoodenBuilding
                    )
                })
        };
        let mut done = false;
        for hex in candidates
            .iter()
            .filter(|h| !used.contains(*h) && fits(h))
            .take(TRIES_PER_UNIT_MAX)
        {
            let command = Command::SetUp {
                unit: unit.id.clone(),
                hex: *hex,
                concealed: dummy,
                hidden: false,
                weapons: weapons.clone(),
            };
            if sent(connection, &mut id, command).await {
                used.insert(*hex);
                done = true;
                break;
            }
        }
        assert!(done, "no hex took {} ({:?})", unit.id, unit.kind);
    }
    assert!(
        to_give.is_empty(),
        "weapons left with nobody to take them: {to_give:?}"
    );
    assert!(
        sent(connection, &mut id, Command::Done).await,
        "set-up done"
    );
}

/// The ATTACKER's `mover`, still picked from its move, fires at `target` from the page in the
/// AFPh: K, the hex, the preview's fire panel naming the IFT column and the LOS, the attack
/// declared and then resolved from the prompt with the server's dice. Both records then hold
/// the attack as a fire log line, which is returned.
async fn advancing_fire(
    browser: &mut Browser,
    players: [&Tab; 2],
    mover: &str,
    target: &str,
    name: &str,
) -> String {
    let attacker = players[0];
    // The squad is still picked from its move: the page follows it to where it went.
    assert_eq!(
        browser
            .eval(
                attacker,
                &format!("window.aslWatch.selected.has('{mover}')")
            )
            .await,
        true,
        "{name}"
    );
    browser.type_key(attacker, "k").await;
    browser.eval(attacker, &click_hex(target)).await;
    previewed(browser, attacker).await;
    let panel = text(
        browser,
        attacker,
        "document.getElementById('fire-preview').hidden ? '' : \
         document.getElementById('fire-preview').innerText",
    )
    .await;
    assert!(panel.contains(" column (A7.3)"), "{name}: {panel}");
    assert!(
        panel.contains(&format!("LOS {mover} → {target}: clear")),
        "{name}: {panel}"
    );
    let declared = send(browser, attacker).await;
    assert!(
        declared.starts_with(&format!(
            "Attack {target} with {mover}: before the dice (A7):"
        )),
        "{name}: {declared}"
    );
    settle(browser, players).await;
    browser.press(attacker, "Escape", 27).await;
    browser.type_key(attacker, "1").await;
    previewed(browser, attacker).await;
    send(browser, attacker).await;
    settle(browser, players).await;
    let log_line = format!(
        "(() => {{ const t = [...document.querySelectorAll('#events li .text')] \
         .map(li => li.textContent); return t.find(l => l.includes(' vs {target} on the ') \
         && l.includes(' → ')) || null; }})()"
    );
    let mut line = String::new();
    for tab in players {
        let found = browser
            .wait_for(tab, "the fire log line", &log_line, WAIT)
            .await;
        line = found.as_str().unwrap().to_string();
        let result = line.rsplit_once(" → ").map(|(_, r)| r).unwrap_or_default();
        assert!(
            ["NE", "PTC", "NMC", "1MC", "2MC", "3MC", "4MC", "K/", "1KIA", "2KIA"]
                .iter()
                .any(|r| result.starts_with(r)),
            "{name}: {line}"
        );
    }
    line
}

async fn play_to_close_combat(save: &Path, boards: &Path, fire: Fire) {
    let name = save.file_stem().unwrap().to_string_lossy().to_string();
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        boards: Some(server::operations::boards::open(boards, None).unwrap()),
        // A whole order of battle is placed at once, faster than a player types.
        commands_per_second_max: 10_000,
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let created = new_from_save(&server.url, save, boards).await;
    let game = created["game"].as_str().unwrap().to_string();
    let tokens = [
        created["tokens"]["side_a"].as_str().unwrap().to_string(),
        created["tokens"]["side_b"].as_str().unwrap().to_string(),
    ];

    // Each side's view of the game, through its own connection.
    let mut connections = vec![];
    let mut views = vec![];
    for token in &tokens {
        let mut connection = Connection::connect(&server.url).await.unwrap();
        let joined = connection.join(&game, token, None).await.unwrap();
        views.push(joined.state.expect("a snapshot"));
        connections.push(connection);
    }
    let first = views[0].scenario.first;
    let second = first.opponent();
    let meeting = meeting(&views[0]);
    let squad_of = |side: Side| {
        let setup = views[side as usize].scenario.setup.as_ref().unwrap();
        setup
            .units
            .values()
            .find(|u| u.side == side && u.kind == UnitKind::Squad && u.enters.is_none())
            .unwrap_or_else(|| panic!("{name}: no squad of {side:?} sets up"))
            .id
            .clone()
    };
    let (mover, stander) = (squad_of(first), squad_of(second));
    let order = views[0].scenario.setup.as_ref().unwrap().order.clone();
    let mut used = BTreeSet::new();
    for side in order {
        let (squad, at) = if side == first {
            (&mover, &meeting.from)
        } else {
            (&stander, &meeting.to)
        };
        let view = views[side as usize].clone();
        set_up(
            &mut connections[side as usize],
            &view,
            side,
            squad,
            at,
            &meeting,
            &mut used,
        )
        .await;
    }
    for connection in connections {
        connection.close().await;
    }

    // The pages of the side moving first and of the other, in that order.
    let link = |token: &str| format!("http://{}/watch#game={game}&token={token}", server.addr);
    let mut browser = Browser::launch(&chromium_binary()).await;
    let attacker = browser.open(&link(&tokens[first as usize])).await;
    let defender = browser.open(&link(&tokens[second as usize])).await;
    let players = [&attacker, &defender];
    let (from, between, to) = (
        meeting.from.to_string(),
        meeting.between.to_string(),
        meeting.to.to_string(),
    );
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;
    select(&mut browser, &attacker, &from, &[mover.as_str()]).await;
    browser.eval(&attacker, &click_hex(&between)).await;
    let moved = send(&mut browser, &attacker).await;
    assert!(moved.contains(&between), "{name}: {moved}");

    if fire == Fire::Advancing {
        // Advancing Fire (A7.24) from the page: the squad that moved fires at the enemy squad
        // next to it, over the real board's LOS and TEM.
        play_until(&mut browser, players, &at("AFPh, ATTACKER")).await;
        let standing = format!(
            "(() => {{ const u = window.aslWatch.live.units['{stander}']; \
             return u ? JSON.stringify([u.ratings, u.morale, u.pinned, u.eliminated, u.hex]) : null; }})()"
        );
        let before = browser.eval(&attacker, &standing).await;
        let fired = advancing_fire(&mut browser, players, &mover, &to, &name).await;
        if browser.eval(&attacker, &standing).await != before {
            // The dice broke, pinned, reduced or killed the squad the Close Combat was to be
            // with: that turn is the fire's, and the Close Combat is shown by the test above.
            println!("{name}: {fired}: no Close Combat this time");
            let errors = browser.page_errors().await;
            assert!(errors.is_empty(), "{name}: {errors:?}");
            browser.close().await;
            server.stop().await;
            return;
        }
    }
    play_until(&mut browser, players, &at("APh, ATTACKER")).await;
    // The squad is still picked from its move (the page follows it to where it went), unless
    // it fired since: then it is picked again.
    let picked = browser
        .eval(
            &attacker,
            &format!("window.aslWatch.selected.has('{mover}')"),
        )
        .await;
    if fire == Fire::None {
        assert_eq!(picked, true, "{name}");
    } else if picked != true {
        select(&mut browser, &attacker, &between, &[mover.as_str()]).await;
    }
    browser.eval(&attacker, &click_hex(&to)).await;
    let advanced = send(&mut browser, &attacker).await;
    assert!(
        advanced.starts_with(&format!("Advance {mover} to {to}: ")),
        "{name}: {advanced}"
    );
    settle(&mut browser, players).await;
    browser.type_key(&attacker, "n").await;
    send(&mut browser, &attacker).await;
    settle(&mut browser, players).await;
    assert_eq!(
        text(&mut browser, &attacker, PHASE_LINE).await,
        "CCPh, ATTACKER",
        "{name}"
    );

    // The ATTACKER designates from the CC form: no Ambush check, as the squad advanced into
    // Open Ground (A11.4).
    browser.type_key(&attacker, "q").await;
    browser
        .eval(
            &attacker,
            "document.getElementById('cc-form').requestSubmit()",
        )
        .await;
    let designated = send(&mut browser, &attacker).await;
    assert!(
        designated.starts_with(&format!("Close Combat in {to}: {mover} vs {stander}: ")),
        "{name}: {designated}"
    );
    settle(&mut browser, players).await;
    // The DEFENDER designates from the prompt's first answer, which opens the form.
    browser.type_key(&defender, "1").await;
    browser
        .eval(
            &defender,
            "document.getElementById('cc-form').requestSubmit()",
        )
        .await;
    let resolved = send(&mut browser, &defender).await;
    assert!(
        resolved.starts_with(&format!("Close Combat in {to}: {stander} vs {mover}: ")),
        "{name}: {resolved}"
    );
    decline_infiltrations(&mut browser, players).await;
    for tab in players {
        browser
            .wait_for(
                tab,
                "both CC rolls in the record",
                "[...document.querySelectorAll('#events li .text')] \
                 .filter(li => li.textContent.includes('rolled DR for CloseCombat (A11.11)')).length >= 2",
                WAIT,
            )
            .await;
    }
    // The CC there is over for this CCPh: no designation is offered there again.
    assert!(
        !prompt(&mut browser, &attacker)
            .await
            .contains(&format!("Designate in {to}")),
        "{name}"
    );
    // The Player Turn ends: the CCPh is done and the side that moved first is the DEFENDER
    // of the turn's second Player Turn (A3.1).
    let phases = play_until(
        &mut browser,
        players,
        &format!("({PHASE_LINE}).endsWith('DEFENDER')"),
    )
    .await;
    assert!(
        phases.iter().any(|p| p.starts_with("CCPh")),
        "{name}: {phases:?}"
    );
    let shot = browser.screenshot(&attacker).await;
    std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-cc.png", name.replace(' ', "-"))),
        shot,
    )
    .unwrap();
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{name}: {errors:?}");
    browser.close().await;
    server.stop().await;
}
