//! The liveness law: no reachable position is a dead end. From every position random legal play
//! reaches — moves, Bypass, Double Time, sewer and tunnel movement, designations, surfacing,
//! Wall Advantage claims (with the HIP moment and the challenge to concealed holders of
//! B9.324 they raise, and their answers), hidden units placed, attacks, and adjudications
//! (breaks and pins during movement among them) — the side the game waits for has commands
//! that move the clock on.
//!
//! "Moves the clock on" is checked by a bounded search over the commands that finish what is
//! open (end the step, answer the prompt the game waits on, resolve an attack, take a unit out of Bypass, move a
//! sewer stack that must move, bring units up or rout them through a tunnel, rout a broken unit
//! that must rout, A10.5) until one of them ends the step.

use proptest::prelude::*;
use protocol::dice::SeededDice;
use protocol::game::{apply, Game, Underground};
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Hex, Outcome, Scenario, Side};

const KEY: [u8; 32] = [7; 32];

/// How many commands the search may chain before one ends the step: enough for a lost sewer
/// stack (move, designation) per stack, a Bypass to finish and the step itself.
const SEARCH_DEPTH: usize = 6;

fn scenario(which: u8) -> Scenario {
    let text = match which % 6 {
        5 => include_str!("positions/scenarios/wa-positions.toml"),
        4 => include_str!("positions/scenarios/wa-moments.toml"),
        3 => include_str!("positions/scenarios/b8-62-rout.toml"),
        0 => include_str!("positions/scenarios/sewers.toml"),
        1 => include_str!("positions/scenarios/a4-32-bypass-freezes.toml"),
        _ => include_str!("../../scenarios/b9-41-wall-advantage.toml"),
    };
    Scenario::from_toml(text).unwrap()
}

#[derive(Clone, Debug)]
enum Draw {
    Done,
    Move(usize, usize, bool),
    Bypass(usize, usize, Vec<usize>),
    DoubleTime(usize),
    SewerMove(usize, usize),
    Designate(usize),
    Surface(usize),
    EnterTunnel(usize),
    Rout(usize),
    RoutStep(usize, usize),
    Claim(usize),
    Decline,
    Show(usize),
    Forfeit(usize),
    PlaceHidden(usize, bool),
    Attack(usize, usize),
    Resolve,
    Adjudicate(usize, Outcome),
    DestroyTunnel(usize),
    Discover(usize, usize),
}

fn draw() -> impl Strategy<Value = Draw> {
    let outcome = prop_oneof![
        Just(Outcome::Break),
        Just(Outcome::Rally),
        Just(Outcome::Pin),
        Just(Outcome::Eliminate)
    ];
    prop_oneof![
        2 => Just(Draw::Done),
        6 => (0usize..32, 0usize..6, any::<bool>()).prop_map(|(u, d, s)| Draw::Move(u, d, s)),
        6 => (0usize..32, 0usize..6, prop::collection::vec(0usize..6, 1..4))
            .prop_map(|(u, d, a)| Draw::Bypass(u, d, a)),
        1 => (0usize..32).prop_map(Draw::DoubleTime),
        3 => (0usize..32, 0usize..40).prop_map(|(u, m)| Draw::SewerMove(u, m)),
        2 => (0usize..40).prop_map(Draw::Designate),
        1 => (0usize..32).prop_map(Draw::Surface),
        1 => (0usize..32).prop_map(Draw::EnterTunnel),
        1 => (0usize..32).prop_map(Draw::Rout),
        2 => (0usize..32, 0usize..6).prop_map(|(u, d)| Draw::RoutStep(u, d)),
        2 => (0usize..32).prop_map(Draw::Claim),
        1 => Just(Draw::Decline),
        1 => (0usize..32).prop_map(Draw::Show),
        1 => (0usize..32).prop_map(Draw::Forfeit),
        2 => (0usize..32, any::<bool>()).prop_map(|(u, c)| Draw::PlaceHidden(u, c)),
        1 => (0usize..32, 0usize..6).prop_map(|(u, d)| Draw::Attack(u, d)),
        1 => Just(Draw::Resolve),
        2 => (0usize..32, outcome).prop_map(|(u, o)| Draw::Adjudicate(u, o)),
        1 => (0usize..40).prop_map(Draw::DestroyTunnel),
        1 => (0usize..32, 0usize..2).prop_map(|(u, m)| Draw::Discover(u, m)),
    ]
}

/// Units of `unit`'s side standing with it (same hex, same level, same Bypass).
fn stack_of(game: &Game, id: &str) -> Vec<String> {
    let unit = &game.units[id];
    game.units
        .values()
        .filter(|o| {
            o.side == unit.side
                && o.hex == unit.hex
                && o.underground == unit.underground
                && o.bypass == unit.bypass
                && !o.eliminated
        })
        .map(|o| o.id.clone())
        .collect()
}

fn command(game: &Game, draw: &Draw) -> (Side, Command) {
    let ids: Vec<String> = game.units.keys().cloned().collect();
    let hexes: Vec<Hex> = game.scenario.hexes.keys().copied().collect();
    let unit = |i: &usize| ids[i % ids.len()].clone();
    let side_of = |i: &usize| game.units[&unit(i)].side;
    let neighbour = |id: &str, d: usize| {
        let n = game.units[id].hex.neighbours();
        n[d % n.len()]
    };
    let acting = game.acting();
    match draw {
        Draw::Done => (acting, Command::Done),
        Draw::Move(u, d, stack) => {
            let id = unit(u);
            let units = if *stack {
                stack_of(game, &id)
            } else {
                vec![id.clone()]
            };
            (
                side_of(u),
                Command::Move {
                    units,
                    to: neighbour(&id, *d),
                },
            )
        }
        Draw::Bypass(u, d, along) => {
            // Mostly well-formed chains of hexsides, so that many Bypasses are accepted: on
            // round the hex it is in, or into a neighbour from one end of the hexside crossed.
            let id = unit(u);
            let here = &game.units[&id];
            let (hex, mut previous, mut current) = match &here.bypass {
                Some(b) if *d < 3 => (
                    b.hex,
                    b.exits(game.scenario.geometry())[0],
                    b.exits(game.scenario.geometry())[1],
                ),
                _ => {
                    let hex = neighbour(&id, *d);
                    let ends: Vec<Hex> = hex
                        .neighbours()
                        .into_iter()
                        .filter(|n| n.is_adjacent(here.hex))
                        .collect();
                    let first = ends
                        .get(along[0] % ends.len().max(1))
                        .copied()
                        .unwrap_or(hex);
                    (hex, here.hex, first)
                }
            };
            let mut chain = vec![current];
            for _ in 1..along.len() {
                let Some(next) = hex
                    .neighbours()
                    .into_iter()
                    .find(|n| n.is_adjacent(current) && *n != previous)
                else {
                    break;
                };
                chain.push(next);
                (previous, current) = (current, next);
            }
            (
                side_of(u),
                Command::Bypass {
                    units: vec![id],
                    hex,
                    along: chain,
                },
            )
        }
        Draw::DoubleTime(u) => (
            side_of(u),
            Command::DoubleTime {
                units: vec![unit(u)],
            },
        ),
        Draw::SewerMove(u, m) => {
            let id = unit(u);
            let options =
                protocol::rules::sewer::sewer_destinations(game, side_of(u), game.units[&id].hex);
            let to = options
                .get(m % options.len().max(1))
                .copied()
                .unwrap_or(hexes[m % hexes.len()]);
            (
                side_of(u),
                Command::SewerMove {
                    units: stack_of(game, &id),
                    to,
                },
            )
        }
        Draw::Designate(m) => (
            acting.opponent(),
            Command::DesignateSewer {
                to: hexes[m % hexes.len()],
            },
        ),
        Draw::Surface(u) => (
            side_of(u),
            Command::Surface {
                units: stack_of(game, &unit(u)),
            },
        ),
        Draw::EnterTunnel(u) => (
            side_of(u),
            Command::EnterTunnel {
                units: vec![unit(u)],
            },
        ),
        Draw::Rout(u) => (
            side_of(u),
            Command::EnterTunnel {
                units: vec![unit(u)],
            },
        ),
        Draw::RoutStep(u, d) => {
            let id = unit(u);
            let to = neighbour(&id, *d);
            (
                side_of(u),
                Command::Rout {
                    unit: id,
                    to,
                    morale: Some(8),
                },
            )
        }
        Draw::Claim(u) => (
            side_of(u),
            Command::ClaimWallAdvantage {
                units: vec![unit(u)],
            },
        ),
        Draw::Decline => (
            game.wa_chance
                .as_ref()
                .map(|c| c.side)
                .or(game.wa_hip_window.as_ref().map(|w| w.side))
                .unwrap_or(acting),
            Command::DeclineWallAdvantage,
        ),
        // Mostly answers to a waiting challenge (B9.324), else a unit of the draw's own.
        Draw::Show(u) => match &game.wa_challenge {
            Some(c) if u % 4 != 0 => (
                c.side,
                Command::ShowForWallAdvantage {
                    unit: c.holders[u % c.holders.len()].clone(),
                },
            ),
            _ => (side_of(u), Command::ShowForWallAdvantage { unit: unit(u) }),
        },
        Draw::Forfeit(u) => match &game.wa_challenge {
            Some(c) if u % 4 != 0 => (
                c.side,
                Command::ForfeitWallAdvantage {
                    units: c.holders.clone(),
                },
            ),
            _ => (
                side_of(u),
                Command::ForfeitWallAdvantage {
                    units: vec![unit(u)],
                },
            ),
        },
        Draw::PlaceHidden(u, claim) => (
            side_of(u),
            Command::PlaceHidden {
                unit: unit(u),
                claim_wall_advantage: *claim,
            },
        ),
        Draw::Attack(u, d) => {
            let id = unit(u);
            let target = if *d == 0 {
                game.units[&id].hex
            } else {
                neighbour(&id, *d)
            };
            (
                side_of(u),
                Command::DeclareAttack {
                    firers: vec![id],
                    target,
                    into_sewer: *d == 0,
                },
            )
        }
        Draw::Resolve => (
            game.attack.as_ref().map_or(acting, |a| a.by),
            Command::ResolveAttack,
        ),
        Draw::Adjudicate(u, outcome) => {
            // Half of them at a unit in Bypass or below ground, if there is one.
            let target = game
                .units
                .values()
                .filter(|o| (o.bypass.is_some() || o.underground.is_some()) && u % 2 == 0)
                .map(|o| o.id.clone())
                .next()
                .unwrap_or_else(|| unit(u));
            (
                game.units[&target].side.opponent(),
                Command::Adjudicate {
                    unit: target,
                    outcome: *outcome,
                    note: String::new(),
                },
            )
        }
        Draw::Discover(u, m) => {
            let id = unit(u);
            let side = side_of(u);
            if *m == 0 {
                (side, Command::DiscoverTunnel { unit: id })
            } else {
                let entrance = game.units[&id].hex;
                (side, Command::ClaimTunnelSeen { unit: id, entrance })
            }
        }
        Draw::DestroyTunnel(m) => (
            acting,
            Command::DestroyTunnel {
                entrance: hexes[m % hexes.len()],
            },
        ),
    }
}

fn try_command(game: &Game, side: Side, command: &Command) -> Option<Vec<Event>> {
    let mut dice = SeededDice::new(KEY, game.dice_drawn);
    decide(game, side, command, &mut dice).ok()
}

/// Every answer to the Wall Advantage prompt `game` waits on, by the side it waits for: a
/// chance to claim (B9.322: claim, decline, or place a hidden unit), the HIP owner's moment
/// before a mover's claim (B9.324: place a hidden unit, claiming or not, or let it pass), or a
/// challenge to concealed holders (B9.324: show one of them, or forfeit for all).
fn prompt_answers(game: &Game) -> Vec<(Side, Command)> {
    let hidden_of = |side: Side| -> Vec<(Side, Command)> {
        game.units
            .values()
            .filter(|u| u.side == side && u.hidden && !u.eliminated)
            .flat_map(|u| {
                [true, false].map(|claim| {
                    (
                        side,
                        Command::PlaceHidden {
                            unit: u.id.clone(),
                            claim_wall_advantage: claim,
                        },
                    )
                })
            })
            .collect()
    };
    let mut out = vec![];
    if let Some(chance) = &game.wa_chance {
        out.push((chance.side, Command::DeclineWallAdvantage));
        out.push((
            chance.side,
            Command::ClaimWallAdvantage {
                units: chance.units.clone(),
            },
        ));
        out.extend(hidden_of(chance.side));
    }
    if let Some(window) = &game.wa_hip_window {
        out.push((window.side, Command::DeclineWallAdvantage));
        out.extend(hidden_of(window.side));
    }
    if let Some(challenge) = &game.wa_challenge {
        for holder in &challenge.holders {
            out.push((
                challenge.side,
                Command::ShowForWallAdvantage {
                    unit: holder.clone(),
                },
            ));
        }
        out.push((
            challenge.side,
            Command::ForfeitWallAdvantage {
                units: challenge.holders.clone(),
            },
        ));
    }
    out
}

/// The commands that finish what is open in `game`, for the side each belongs to.
fn finishing_commands(game: &Game) -> Vec<(Side, Command)> {
    let acting = game.acting();
    let mut out = vec![(acting, Command::Done)];
    out.extend(prompt_answers(game));
    if let Some(d) = &game.sewer_designation {
        for to in &d.options {
            out.push((d.defender, Command::DesignateSewer { to: *to }));
        }
    }
    if let Some(a) = &game.attack {
        out.push((a.by, Command::ResolveAttack));
    }
    // A Location in Close Combat holds the CCPh until its Melee is recorded (A11.7), or
    // until the DEFENDER answers the ATTACKER's designation there (A11.12).
    for hex in protocol::rules::close_combat::locations(game) {
        out.push((acting, Command::Melee { hex }));
    }
    // A CC stopped for Infiltration waits on the side it asks (A11.22): its decline, or its
    // `done`, answers.
    if let Some(c) = &game.cc_infiltration {
        out.push((
            c.side,
            Command::Infiltrate {
                hex: c.hex,
                withdrawals: vec![],
            },
        ));
        out.push((c.side, Command::Done));
    }
    for hex in game.movement.cc_designated.keys() {
        out.push((
            game.attacker().opponent(),
            Command::CloseCombat {
                hex: *hex,
                attacks: vec![],
                withdrawals: vec![],
                no_ambush: false,
            },
        ));
    }
    for unit in game
        .units
        .values()
        .filter(|u| u.side == acting && !u.eliminated)
    {
        if let Some(b) = &unit.bypass {
            for to in [
                b.hex,
                b.exits(game.scenario.geometry())[0],
                b.exits(game.scenario.geometry())[1],
            ] {
                out.push((
                    acting,
                    Command::Move {
                        units: vec![unit.id.clone()],
                        to,
                    },
                ));
            }
            // On round the hex one more hexside, to cheaper ways out (A4.31).
            out.push((
                acting,
                Command::Bypass {
                    units: vec![unit.id.clone()],
                    hex: b.hex,
                    along: vec![b.exits(game.scenario.geometry())[1]],
                },
            ));
        }
        // A broken unit that must rout holds up the RtPh step until it has (A10.5).
        if game.clock.phase() == protocol::game::phase::Phase::Rout
            && protocol::rules::movement::must_rout(game, unit).is_some()
        {
            for to in unit.hex.neighbours() {
                out.push((
                    acting,
                    Command::Rout {
                        unit: unit.id.clone(),
                        to,
                        morale: Some(8),
                    },
                ));
            }
            // What it cannot carry, it drops first.
            for (weapon, _) in game
                .weapons
                .iter()
                .filter(|(_, w)| w.held_by.as_ref() == Some(&unit.id))
            {
                out.push((
                    acting,
                    Command::Drop {
                        unit: unit.id.clone(),
                        weapon: weapon.clone(),
                    },
                ));
            }
        }
        match unit.underground {
            Some(Underground::Sewer { moved: false, .. }) => {
                let units: Vec<String> = stack_of(game, &unit.id)
                    .into_iter()
                    .filter(|id| {
                        matches!(
                            game.units[id].underground,
                            Some(Underground::Sewer { moved: false, .. })
                        )
                    })
                    .collect();
                for to in protocol::rules::sewer::sewer_destinations(game, acting, unit.hex) {
                    out.push((
                        acting,
                        Command::SewerMove {
                            units: units.clone(),
                            to,
                        },
                    ));
                }
            }
            Some(_) => out.push((
                acting,
                Command::Surface {
                    units: stack_of(game, &unit.id),
                },
            )),
            None => {}
        }
    }
    out
}

/// Whether some chain of at most `depth` finishing commands ends the current step.
fn clock_moves_on(game: &Game, depth: usize) -> bool {
    if game.over {
        return true;
    }
    for (side, command) in finishing_commands(game) {
        let Some(events) = try_command(game, side, &command) else {
            continue;
        };
        if events
            .iter()
            .any(|e| matches!(e, Event::StepEnded(_) | Event::GameEnded(_)))
        {
            return true;
        }
        if depth > 0 {
            let mut after = game.clone();
            for e in &events {
                apply(&mut after, e);
            }
            if after != *game && clock_moves_on(&after, depth - 1) {
                return true;
            }
        }
    }
    false
}

/// The Wall Advantage prompts random play reached, counted over positions it checked.
#[derive(Default)]
struct Reached {
    hip_windows: usize,
    challenges: usize,
    answered: usize,
}

/// Plays the draws from the scenario; after every accepted command, the law must hold.
fn play_and_check(which: u8, skip_to_movement: bool, draws: &[Draw]) -> Result<(), TestCaseError> {
    play_counting(which, skip_to_movement, draws, &mut Reached::default())
}

/// `play_and_check`, counting in `reached` the B9.324 prompts met and answered on the way.
fn play_counting(
    which: u8,
    skip_to_movement: bool,
    draws: &[Draw],
    reached: &mut Reached,
) -> Result<(), TestCaseError> {
    let mut game = Game::new(scenario(which));
    if skip_to_movement {
        while game.clock.phase() != protocol::phase::Phase::Movement {
            let events = try_command(&game, game.acting(), &Command::Done).expect("done");
            for e in &events {
                apply(&mut game, e);
            }
        }
    }
    prop_assert!(clock_moves_on(&game, SEARCH_DEPTH), "dead end at the start");
    let mut trail = vec![];
    for d in draws {
        let (side, command) = command(&game, d);
        let Some(events) = try_command(&game, side, &command) else {
            continue;
        };
        if game.wa_hip_window.is_some() || game.wa_challenge.is_some() {
            reached.answered += 1;
        }
        for e in &events {
            apply(&mut game, e);
        }
        reached.hip_windows += usize::from(game.wa_hip_window.is_some());
        reached.challenges += usize::from(game.wa_challenge.is_some());
        trail.push(format!("{side:?} {command:?}"));
        prop_assert!(
            clock_moves_on(&game, SEARCH_DEPTH),
            "dead end at {} after:\n{}",
            game.clock,
            trail.join("\n")
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn no_reachable_position_is_a_dead_end(
        which in 0u8..6,
        skip in any::<bool>(),
        draws in prop::collection::vec(draw(), 0..150),
    ) {
        play_and_check(which, skip, &draws)?;
    }
}

/// The law above covers the B9.324 prompts only if random play reaches them: over a fixed run
/// of the same draws, it raises HIP windows and challenges and answers them.
#[test]
fn random_play_reaches_the_wall_advantage_prompts() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (0u8..6, any::<bool>(), prop::collection::vec(draw(), 0..150));
    let mut reached = Reached::default();
    for _ in 0..150 {
        let (which, skip, draws) = strategy.new_tree(&mut runner).unwrap().current();
        play_counting(which, skip, &draws, &mut reached).unwrap();
    }
    assert!(
        reached.hip_windows > 0 && reached.challenges > 0 && reached.answered > 0,
        "HIP windows {}, challenges {}, answers {}",
        reached.hip_windows,
        reached.challenges,
        reached.answered
    );
}
