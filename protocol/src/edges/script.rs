//! The script format: one command per line, as a player would say it, with an optional
//! expected result. `asl check` runs a script offline through [`decide`]/[`apply`]; `asl run`
//! sends the same lines to a server; the rules tests are scripts with expectations.
//!
//! ```text
//! # B9.4 EX: 55H7 → I8 costs 3 MF
//! scenario b9-41-wall-advantage.toml
//! german done                                  => ok phase=RPh
//! german move 467a I8                          => ok mf_spent=467a:3
//! british move 447a H7                         => refused A3.3
//! german adjudicate 447a break "IFT 4 +2, DR 9"
//! ```
//!
//! The full grammar is in `docs/script.md`.

use board::hex::Hex;
use board::scenario::{Morale, Scenario, Side, UnitId};
use board::terrain::Mf;
use data_encoding::HEXLOWER;
use game::command::{Command, DiceCount, Outcome};
use game::dice::{DiceSource, RollPurpose, ScriptedDice};
use game::event::Event;
use game::event::{
    AttackLeftToPlayers, DiceRolled, FireEffectLeftToPlayers, FpfNmcTaken, IftAttackResolved,
    RoutLeftToPlayers, UnitRouted,
};
use game::phase::Phase;
use game::{apply, Game};
use rules::violation::RuleViolation;

/// Longest script we read, in lines: far more than a full game, small enough to bound work.
pub const SCRIPT_LINES_MAX: usize = 100_000;

/// Every command word a script line may start with (after its side), in the order
/// docs/script.md lists them: for messages and for completion in `asl play`.
pub const COMMAND_WORDS: &[&str] = &[
    "done",
    "move",
    "advance",
    "melee",
    "cc",
    "bypass",
    "double-time",
    "assault-move",
    "take-cover",
    "pick-up",
    "drop",
    "transfer",
    "claim-wa",
    "forfeit-wa",
    "decline-wa",
    "show-wa",
    "attack",
    "resolve-attack",
    "opportunity",
    "place",
    "sewer-move",
    "designate-sewer",
    "surface",
    "enter-tunnel",
    "destroy-tunnel",
    "manhole-unseen",
    "adjudicate",
    "accept",
    "dispute",
    "undo",
    "consent-undo",
    "decline-undo",
    "contribute",
    "agree-reveal",
    "concede",
    "propose-end",
    "accept-end",
    "rout",
    "tunnel-seen",
    "discover-tunnel",
    "rally",
    "repair",
    "roll",
    "setup",
    "lift",
    "enter",
    "claim-on-time",
    "give-time",
    "vacation",
    "end-vacation",
];

#[derive(Clone, Debug, PartialEq)]
pub struct ScriptLine {
    /// 1-based line number in the file, for messages.
    pub line: usize,
    /// The line as written (without comment), for echoing results.
    pub text: String,
    /// Who issues it; `None` when the line leaves it to the runner (the token's side).
    pub side: Option<Side>,
    pub action: Action,
    pub expect: Option<Expect>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Command(Command),
    /// Faces for the next die rolls (offline only; a server rolls its own dice).
    Dice(Vec<u8>),
    /// The B9.55 question: does bocage cover the unit from every enemy named as seeing it
    /// (`cover 338 from 447 => yes`), or from every Good Order enemy the engine finds with a
    /// LOS to it (`cover 338 => yes`, `seen_by` empty)?
    Cover {
        unit: UnitId,
        seen_by: Vec<UnitId>,
        expect: Option<bool>,
    },
    /// A TEM question (B9.3–B9.36), answered from the position without changing it:
    /// `tem 747a -> 467a direct => 2`.
    Tem {
        firers: Vec<UnitId>,
        target: UnitId,
        fire: rules::tem::Fire,
        /// The expected TEM, or `None` for "Hull Down" (B9.36).
        expect: Option<Option<i8>>,
    },
    /// A LOS question (A6, B9, B10), answered from the position without changing it:
    /// `los 447 467 => clear`, `los 447 Z7 => hindered 1`. Each end is a unit id or a hex name.
    Los {
        from: String,
        to: String,
        expect: Option<board::los::Verdict>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    /// Accepted, and then every check holds.
    Ok(Vec<Check>),
    /// Refused, citing this rule if one is given, with this text in the reason if given.
    Refused(Option<String>, Option<String>),
}

/// A fact about the position after a line, written `key=value` after `=> ok`.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// `hex=467a:H6` — the unit stands in that hex.
    Hex(UnitId, Hex),
    /// `mf_spent=467a:3` — MF spent this MPh.
    MfSpent(UnitId, Mf),
    /// `mf_left=467a:1` — MF left after this line's move (read from the move's own account).
    MfLeft(UnitId, Mf),
    /// `phase=MPh`
    Phase(Phase),
    /// `acting=german` — whose input the game awaits.
    Acting(Side),
    /// `turn=2`
    Turn(u16),
    /// `morale=467a:broken`
    Morale(UnitId, Morale),
    /// `pinned=467a`
    Pinned(UnitId),
    /// `cx=467a:true` — whether the unit is CX.
    Cx(UnitId, bool),
    /// `holds=467a:lmg1` — the unit possesses the weapon (`holds=none:lmg1`: nobody does).
    Holds(Option<UnitId>, String),
    /// `malfunctioned=lmg1:true` — whether the support weapon has malfunctioned (A9.7).
    Malfunctioned(String, bool),
    /// `eliminated=467a`
    Eliminated(UnitId),
    /// `reads=r1:half-squad:2-4-7` — the unit's kind and ratings as they read now, the kind by its
    /// name (`half-squad:2-4-7`; `half-squad:` for a reduced squad awaiting its ratings).
    Reads(UnitId, String, String),
    /// `over=true` — the game has ended.
    Over(bool),
    /// `wa=467a` — the unit holds Wall Advantage.
    Wa(UnitId),
    /// `no_wa=467a` — it does not.
    NoWa(UnitId),
    /// `chance=russian` — that side is being asked whether to claim WA; `chance=none`: nobody.
    Chance(Option<Side>),
    /// `hip=russian` — that side may place a hidden unit and claim WA before the enemy's
    /// claim is settled (B9.324); `hip=none`: no such moment waits.
    Hip(Option<Side>),
    /// `challenge=russian` — that side must show a real WA holder or forfeit (B9.324);
    /// `challenge=none`: no challenge waits.
    Challenge(Option<Side>),
    /// `below=467a:sewer|tunnel|none` — where the unit is below ground.
    Below(UnitId, String),
    /// `lost=467a:true` — the unit's sewer stack is lost.
    Lost(UnitId, bool),
    /// `emergence=467a:may|cannot|discovered|none` — its Sewer Emergence result.
    Emergence(UnitId, String),
    /// `concealed=467a:true`
    Concealed(UnitId, bool),
    /// `hidden=UNIT:true|false` — the unit is hidden (HIP) or not.
    Hidden(UnitId, bool),
    /// `dm=467a:true` — the unit is under Desperation Morale (A10.62).
    Dm(UnitId, bool),
    /// `wounded=l1:true` — the SMC is marked wounded (A17).
    Wounded(UnitId, bool),
    /// `opportunity=467a:true` — the unit carries an Opportunity Firer's Bounding Fire
    /// counter (A7.25).
    Opportunity(UnitId, bool),
    /// `forfeited=g1:true` — the unit forfeited its own inherent FP for the rest of the Player
    /// Turn by the SW it fired (A9.11).
    Forfeited(UnitId, bool),
    /// `fpf=rc:6,l1:7` — the NMCs the line's Final Protective Fire asked of its firers, read
    /// off its Original DR (A8.31): each unit with its check's Final DR, in order. Last, as
    /// new checks go.
    Fpf(Vec<(UnitId, i16)>),
    /// `rolls=5,7` — the Final results of the line's dice rolls, in order.
    Rolls(Vec<i16>),
    /// The IFT results of the attacks the line resolved, as printed (`ift=1MC`, A7.3).
    Ift(Vec<String>),
    /// The IFT columns those attacks were read on (`column=8`, after any Cowering).
    Column(Vec<u8>),
    /// The line left its attack to the players, under this rule (`adjudicated=A7.5`).
    LeftToPlayers(String),
    /// `interdiction=467a:447+338` — the line routed the unit, and these Known enemies
    /// Interdict it where it went (A10.53, A10.532); `interdiction=467a:none` for none.
    Interdiction(UnitId, Vec<UnitId>),
    /// The rules under which the line left parts of an IFT result's effects, or a rout, to the
    /// players,
    /// in order (`asked=A19.13,A10.2`; `asked=none` for none).
    Asked(Vec<String>),
    /// `residual=2E4:2` — Residual FP of 2 lies in the hex (A8.2); `residual=2E4:?` — some,
    /// for the players to determine; `residual=2E4:none` — none.
    Residual(Hex, Option<Option<u8>>),
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ScriptError {
    pub line: usize,
    pub message: String,
}

/// What is wrong with one line of a script, in words for its writer; [`ScriptError`] adds
/// the line's number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LineError(String);

impl From<String> for LineError {
    fn from(why: String) -> LineError {
        LineError(why)
    }
}

impl From<&str> for LineError {
    fn from(why: &str) -> LineError {
        LineError(why.to_string())
    }
}

impl From<board::time_control::TimeControlError> for LineError {
    fn from(why: board::time_control::TimeControlError) -> LineError {
        LineError(why.to_string())
    }
}

impl From<board::hex::HexsideError> for LineError {
    fn from(why: board::hex::HexsideError) -> LineError {
        LineError(why.to_string())
    }
}

/// The `scenario PATH` directive, if the script names its scenario (test files do).
pub fn scenario_directive(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let l = strip_comment(l).trim();
        l.strip_prefix("scenario ").map(|p| p.trim().to_string())
    })
}

fn strip_comment(line: &str) -> &str {
    // A '#' inside a quoted note is part of the note, and one that starts a word and is
    // followed by a digit names an event (`after #41`).
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        let names_event = c == '#'
            && line[i + 1..].starts_with(|d: char| d.is_ascii_digit())
            && line[..i].ends_with(char::is_whitespace);
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted && !names_event => return &line[..i],
            _ => {}
        }
    }
    line
}

fn words(text: &str) -> Result<Vec<String>, LineError> {
    let mut out = vec![];
    let mut current = String::new();
    let mut quoted = false;
    let mut had_quote = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                had_quote = true;
            }
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() || had_quote {
                    out.push(std::mem::take(&mut current));
                }
                had_quote = false;
            }
            c => current.push(c),
        }
    }
    if quoted {
        return Err("a quote is not closed".into());
    }
    if !current.is_empty() || had_quote {
        out.push(current);
    }
    Ok(out)
}

/// Reads a hex name, taking the board from the map when the name leaves it out and the map
/// lies on one board (`H6` on a board-55 map is `55H6`).
pub fn resolve_hex(scenario: &Scenario, word: &str) -> Result<Hex, LineError> {
    let mut hex: Hex = word
        .parse()
        .map_err(|e: board::hex::HexParseError| e.to_string())?;
    if hex.board.is_none() {
        let mut boards = scenario.hexes.keys().map(|h| h.board);
        if let Some(first) = boards.next() {
            if boards.all(|b| b == first) {
                hex.board = first;
            }
        }
    }
    Ok(hex)
}

fn parse_mf(word: &str) -> Result<Mf, LineError> {
    let (whole, half) = match word.strip_suffix('½') {
        Some(w) => (w, true),
        None => match word.strip_suffix(".5") {
            Some(w) => (w, true),
            None => (word, false),
        },
    };
    let whole: u16 = if whole.is_empty() && half {
        0
    } else {
        whole
            .parse()
            .map_err(|_| format!("`{word}` is not an MF figure"))?
    };
    Ok(Mf(whole * 2 + u16::from(half)))
}

fn parse_side(scenario: &Scenario, word: &str) -> Result<Side, LineError> {
    scenario.side_named(word).ok_or_else(|| {
        format!(
            "`{word}` is not a side of this scenario ({} or {})",
            scenario.sides[0].id, scenario.sides[1].id
        )
        .into()
    })
}

fn unit_and<'a>(value: &'a str, key: &str) -> Result<(UnitId, &'a str), LineError> {
    value
        .split_once(':')
        .map(|(u, v)| (u.to_string(), v))
        .ok_or_else(|| format!("`{key}=` takes UNIT:VALUE").into())
}

fn parse_check(scenario: &Scenario, word: &str) -> Result<Check, LineError> {
    let (key, value) = word
        .split_once('=')
        .ok_or_else(|| format!("`{word}` is not a check; write key=value"))?;
    Ok(match key {
        "hex" => {
            let (u, h) = unit_and(value, key)?;
            Check::Hex(u, resolve_hex(scenario, h)?)
        }
        "mf_spent" => {
            let (u, m) = unit_and(value, key)?;
            Check::MfSpent(u, parse_mf(m)?)
        }
        "mf_left" => {
            let (u, m) = unit_and(value, key)?;
            Check::MfLeft(u, parse_mf(m)?)
        }
        "phase" => Check::Phase(
            [
                Phase::Rally,
                Phase::PrepFire,
                Phase::Movement,
                Phase::DefensiveFire,
                Phase::AdvancingFire,
                Phase::Rout,
                Phase::Advance,
                Phase::CloseCombat,
            ]
            .into_iter()
            .find(|p| p.abbreviation().eq_ignore_ascii_case(value))
            .ok_or_else(|| format!("`{value}` is not a phase (RPh, PFPh, MPh …)"))?,
        ),
        "acting" => Check::Acting(parse_side(scenario, value)?),
        "turn" => Check::Turn(value.parse().map_err(|_| "turn= takes a number")?),
        "morale" => {
            let (u, m) = unit_and(value, key)?;
            let morale = match m {
                "good_order" => Morale::GoodOrder,
                "broken" => Morale::Broken,
                "berserk" => Morale::Berserk,
                _ => return Err(format!("`{m}` is not good_order, broken or berserk").into()),
            };
            Check::Morale(u, morale)
        }
        "pinned" => Check::Pinned(value.to_string()),
        "cx" => {
            let (u, b) = unit_and(value, key)?;
            Check::Cx(
                u,
                b.parse().map_err(|_| "cx= takes UNIT:true or UNIT:false")?,
            )
        }
        "holds" => {
            let (u, w) = unit_and(value, key)?;
            Check::Holds((u != "none").then_some(u), w.to_string())
        }
        "eliminated" => Check::Eliminated(value.to_string()),
        "malfunctioned" => {
            let (w, b) = unit_and(value, key)?;
            let b = b
                .parse()
                .map_err(|_| "malfunctioned= takes WEAPON:true or WEAPON:false")?;
            Check::Malfunctioned(w, b)
        }
        "reads" => {
            let (u, rest) = unit_and(value, key)?;
            let (kind, ratings) = rest
                .split_once(':')
                .ok_or("`reads=` takes UNIT:KIND:RATINGS (such as r1:half-squad:2-4-7)")?;
            Check::Reads(u, kind.to_string(), ratings.to_string())
        }
        "over" => Check::Over(value == "true"),
        "wa" => Check::Wa(value.to_string()),
        "no_wa" => Check::NoWa(value.to_string()),
        "below" | "emergence" => {
            let (u, v) = unit_and(value, key)?;
            let allowed: &[&str] = if key == "below" {
                &["sewer", "tunnel", "none"]
            } else {
                &["may", "cannot", "discovered", "none"]
            };
            if !allowed.contains(&v) {
                return Err(format!("`{key}=` takes UNIT:{}", allowed.join("|")).into());
            }
            if key == "below" {
                Check::Below(u, v.to_string())
            } else {
                Check::Emergence(u, v.to_string())
            }
        }
        "lost" | "concealed" | "dm" | "opportunity" | "hidden" | "wounded" | "forfeited" => {
            let (u, b) = unit_and(value, key)?;
            let b = b
                .parse()
                .map_err(|_| format!("{key}= takes UNIT:true or UNIT:false"))?;
            match key {
                "lost" => Check::Lost(u, b),
                "dm" => Check::Dm(u, b),
                "opportunity" => Check::Opportunity(u, b),
                "hidden" => Check::Hidden(u, b),
                "wounded" => Check::Wounded(u, b),
                "forfeited" => Check::Forfeited(u, b),
                _ => Check::Concealed(u, b),
            }
        }
        "rolls" => Check::Rolls(
            value
                .split(',')
                .map(|v| v.parse().map_err(|_| format!("`{v}` is not a Final roll")))
                .collect::<Result<_, _>>()?,
        ),
        "ift" => Check::Ift(
            value
                .split(',')
                .map(|v| {
                    rules::fire::ift::IftResult::parse(v)
                        .map(|r| r.to_string())
                        .ok_or_else(|| {
                            format!("`{v}` is not an IFT result (1KIA, K/2, 3MC, NMC, PTC, NE)")
                        })
                })
                .collect::<Result<_, _>>()?,
        ),
        "interdiction" => {
            let (u, by) = unit_and(value, key)?;
            let by = match by {
                "none" => vec![],
                by => by.split('+').map(str::to_string).collect(),
            };
            Check::Interdiction(u, by)
        }
        "residual" => {
            let (h, fp) = value
                .split_once(':')
                .ok_or_else(|| format!("`{key}=` takes HEX:FP, HEX:? or HEX:none"))?;
            let fp = match fp {
                "none" => None,
                "?" => Some(None),
                n => Some(Some(n.parse().map_err(|_| {
                    format!("`{n}` is not Residual FP: write a number, ? or none")
                })?)),
            };
            Check::Residual(resolve_hex(scenario, h)?, fp)
        }
        "fpf" if value == "none" => Check::Fpf(vec![]),
        "fpf" => Check::Fpf(
            value
                .split(',')
                .map(|v| {
                    let (u, dr) = unit_and(v, key)?;
                    let dr = dr
                        .parse()
                        .map_err(|_| format!("`{dr}` is not a Final DR: `fpf=` takes UNIT:DR,…"))?;
                    Ok((u, dr))
                })
                .collect::<Result<_, LineError>>()?,
        ),
        "adjudicated" => Check::LeftToPlayers(value.to_string()),
        "asked" if value == "none" => Check::Asked(vec![]),
        "asked" => Check::Asked(value.split(',').map(str::to_string).collect()),
        "column" => Check::Column(
            value
                .split(',')
                .map(|v| {
                    v.parse()
                        .ok()
                        .filter(|c| rules::fire::ift::COLUMNS.contains(c))
                        .ok_or_else(|| format!("`{v}` heads no IFT column"))
                })
                .collect::<Result<_, _>>()?,
        ),
        "chance" if value == "none" => Check::Chance(None),
        "chance" => Check::Chance(Some(parse_side(scenario, value)?)),
        "hip" if value == "none" => Check::Hip(None),
        "hip" => Check::Hip(Some(parse_side(scenario, value)?)),
        "challenge" if value == "none" => Check::Challenge(None),
        "challenge" => Check::Challenge(Some(parse_side(scenario, value)?)),
        _ => return Err(format!("unknown check `{key}`").into()),
    })
}

fn parse_expect(scenario: &Scenario, text: &str) -> Result<Expect, LineError> {
    let words = words(text)?;
    match words.first().map(String::as_str) {
        Some("ok") => Ok(Expect::Ok(
            words[1..]
                .iter()
                .map(|w| parse_check(scenario, w))
                .collect::<Result<_, _>>()?,
        )),
        Some("refused") if words.len() <= 3 => Ok(Expect::Refused(
            words.get(1).cloned(),
            words.get(2).cloned(),
        )),
        _ => Err(
            "after `=>` write `ok [checks]` or `refused [RULE [\"words of the reason\"]]`".into(),
        ),
    }
}

/// `rally UNIT morale N [with LEADER]` (A10.6): the broken side's morale as printed on the
/// counter and the Good Order leader who rallies it (none: a leader's self-rally). A trailing
/// `dm`, the word for Desperation Morale before the engine tracked it, is still read so that
/// the rules refuse it naming A10.62 rather than the line failing to parse.
fn parse_rally(args: &[String]) -> Result<Command, LineError> {
    const USAGE: &str =
        "`rally` takes a broken unit, `morale` and its broken side's morale, then optionally `with` a leader: rally 467a morale 8 with 9-1a";
    let [unit, morale_word, morale, rest @ ..] = args else {
        return Err(USAGE.into());
    };
    if morale_word != "morale" {
        return Err(USAGE.into());
    }
    let broken_morale = broken_morale(morale)?;
    let (desperation, rest) = match rest.split_last() {
        Some((last, before)) if last == "dm" => (true, before),
        _ => (false, rest),
    };
    let leader = match rest {
        [] => None,
        [with, leader] if with == "with" => Some(leader.clone()),
        _ => return Err(USAGE.into()),
    };
    Ok(Command::Rally {
        unit: unit.clone(),
        broken_morale,
        leader,
        desperation,
    })
}

/// The morale on a counter's broken side, as `rally` and `rout` give it (A10.4).
fn broken_morale(morale: &str) -> Result<u8, LineError> {
    morale
        .parse()
        .ok()
        .filter(|m| (1..=rules::morale::rally::BROKEN_MORALE_MAX).contains(m))
        .ok_or_else(|| {
            LineError::from(format!(
                "`{morale}` is not a morale (1 to {})",
                rules::morale::rally::BROKEN_MORALE_MAX
            ))
        })
}

/// The rout commands: `rout UNIT to HEX [with LEADER] [morale N]`, one hex of a broken unit's rout
/// (A10.5), with a Good Order leader routing along (A10.711), and the
/// tunnel commands of B8.62 and B8.63: `rout UNITS`, `tunnel-seen UNIT HEX`,
/// `discover-tunnel UNIT`.
fn parse_tunnel_command(
    scenario: &Scenario,
    verb: &str,
    args: &[String],
) -> Result<Command, LineError> {
    match (verb, args) {
        ("rout", [unit, word, hex]) if word == "to" => Ok(Command::Rout {
            unit: unit.clone(),
            to: resolve_hex(scenario, hex)?,
            morale: None,
        }),
        ("rout", [unit, word, hex, morale_word, morale]) if word == "to" && morale_word == "morale" => {
            Ok(Command::Rout {
                unit: unit.clone(),
                to: resolve_hex(scenario, hex)?,
                morale: Some(broken_morale(morale)?),
            })
        }
        ("rout", [unit, word, hex, with, leader]) if word == "to" && with == "with" => {
            Ok(Command::RoutWithLeader {
                unit: unit.clone(),
                leader: leader.clone(),
                to: resolve_hex(scenario, hex)?,
                morale: None,
            })
        }
        ("rout", [unit, word, hex, with, leader, morale_word, morale])
            if word == "to" && with == "with" && morale_word == "morale" =>
        {
            Ok(Command::RoutWithLeader {
                unit: unit.clone(),
                leader: leader.clone(),
                to: resolve_hex(scenario, hex)?,
                morale: Some(broken_morale(morale)?),
            })
        }
        ("rout", args) if args.iter().any(|a| a == "to") => Err(
            "`rout` takes one broken unit, `to` and the adjacent hex, then optionally `morale` and its broken side's morale: rout 447a to H6 morale 7".into(),
        ),
        ("rout", units) if !units.is_empty() => Ok(Command::RoutThroughTunnel {
            units: units.to_vec(),
        }),
        ("tunnel-seen", [unit, hex]) => Ok(Command::ClaimTunnelSeen {
            unit: unit.clone(),
            entrance: resolve_hex(scenario, hex)?,
        }),
        ("discover-tunnel", [unit]) => Ok(Command::DiscoverTunnel { unit: unit.clone() }),
        ("rout", _) => Err(
            "`rout` takes a broken unit, `to` and the adjacent hex (rout 447a to H6), or broken units at a tunnel entrance (rout 447a 8-0a)".into(),
        ),
        ("tunnel-seen", _) => {
            Err("`tunnel-seen` takes a unit and the entrance hex: tunnel-seen 447a C6".into())
        }
        _ => Err("`discover-tunnel` takes one unit".into()),
    }
}

/// `cc HEX ATTACKERS vs DEFENDERS [and ATTACKERS vs DEFENDERS …] [and withdraw UNITS to HEX …]
/// [no-ambush]`, or `cc HEX none`: one side's CC attacks in a Location (A11.12), with the
/// withdrawals from its Melee it declares with them (A11.2).
fn parse_close_combat(scenario: &Scenario, args: &[String]) -> Result<Command, LineError> {
    const USAGE: &str = "`cc` takes the hex, then each attack as its units, `vs` and the units attacked, and each withdrawal from Melee as `withdraw`, its units, `to` and the adjacent hex, all joined by `and`, optionally ending `no-ambush`; or `none`: cc H6 467a 9-1a vs 458a and 467b vs 248a; cc H6 withdraw 467a to H7";
    let Some((hex, rest)) = args.split_first() else {
        return Err(USAGE.into());
    };
    let hex = resolve_hex(scenario, hex)?;
    if rest.first().is_some_and(|w| w == "infiltrate") {
        return parse_infiltration(scenario, hex, &rest[1..]);
    }
    let (no_ambush, rest) = match rest.split_last() {
        Some((last, before)) if last == "no-ambush" => (true, before),
        _ => (false, rest),
    };
    if rest.len() == 1 && rest[0] == "none" {
        return Ok(Command::CloseCombat {
            hex,
            attacks: vec![],
            withdrawals: vec![],
            no_ambush,
        });
    }
    let mut attacks = vec![];
    let mut withdrawals = vec![];
    for part in rest.split(|w| w == "and") {
        if let Some(("withdraw", tail)) = part.split_first().map(|(w, t)| (w.as_str(), t)) {
            match tail {
                [units @ .., to_word, to] if !units.is_empty() && to_word == "to" => {
                    withdrawals.push(game::command::CcWithdrawal {
                        units: units.to_vec(),
                        to: resolve_hex(scenario, to)?,
                    });
                }
                _ => return Err(USAGE.into()),
            }
            continue;
        }
        match part.iter().position(|w| w == "vs") {
            Some(i)
                if i > 0 && i + 1 < part.len() && !part[i + 1..].contains(&"vs".to_string()) =>
            {
                attacks.push(game::command::CcAttack {
                    attackers: part[..i].to_vec(),
                    defenders: part[i + 1..].to_vec(),
                });
            }
            _ => return Err(USAGE.into()),
        }
    }
    Ok(Command::CloseCombat {
        hex,
        attacks,
        withdrawals,
        no_ambush,
    })
}

/// `cc HEX infiltrate UNITS to HEX [and UNITS to HEX …]`, or `cc HEX infiltrate none`: the
/// asked side's answer to a chance of Infiltration (A11.22).
fn parse_infiltration(
    scenario: &Scenario,
    hex: Hex,
    rest: &[String],
) -> Result<Command, LineError> {
    const USAGE: &str = "`cc HEX infiltrate` takes the infiltrating units, `to` and the adjacent hex, groups joined by `and`; or `none` to decline: cc H6 infiltrate 467a to H7; cc H6 infiltrate none";
    if rest.len() == 1 && rest[0] == "none" {
        return Ok(Command::Infiltrate {
            hex,
            withdrawals: vec![],
        });
    }
    let mut withdrawals = vec![];
    for part in rest.split(|w| w == "and") {
        match part {
            [units @ .., to_word, to] if !units.is_empty() && to_word == "to" => {
                withdrawals.push(game::command::CcWithdrawal {
                    units: units.to_vec(),
                    to: resolve_hex(scenario, to)?,
                });
            }
            _ => return Err(USAGE.into()),
        }
    }
    Ok(Command::Infiltrate { hex, withdrawals })
}

fn parse_command(scenario: &Scenario, verb: &str, args: &[String]) -> Result<Command, LineError> {
    match verb {
        "done" if args.is_empty() => Ok(Command::Done),
        "done" => Err("`done` takes nothing".into()),
        "move" => match args {
            [units @ .., to] if !units.is_empty() => Ok(Command::Move {
                units: units.to_vec(),
                to: resolve_hex(scenario, to)?,
            }),
            _ => Err("`move` takes one or more units and then a hex: move 467a 9-1a H6".into()),
        },
        "melee" => match args {
            [hex] => Ok(Command::Melee {
                hex: resolve_hex(scenario, hex)?,
            }),
            _ => Err("`melee` takes the hex whose Close Combat ended in Melee: melee H6".into()),
        },
        "cc" => parse_close_combat(scenario, args),
        "advance" => match args {
            [units @ .., to] if !units.is_empty() => Ok(Command::Advance {
                units: units.to_vec(),
                to: resolve_hex(scenario, to)?,
            }),
            _ => Err(
                "`advance` takes one or more units and then the adjacent hex: advance 467a 9-1a H6"
                    .into(),
            ),
        },
        "bypass" => {
            let at = args.iter().position(|a| a == "along");
            match at {
                Some(i) if i >= 2 && i + 1 < args.len() => Ok(Command::Bypass {
                    units: args[..i - 1].to_vec(),
                    hex: resolve_hex(scenario, &args[i - 1])?,
                    along: args[i + 1..]
                        .iter()
                        .map(|h| resolve_hex(scenario, h))
                        .collect::<Result<_, _>>()?,
                }),
                _ => Err(
                    "`bypass` takes units, the hex, `along` and the hexes across the hexsides: bypass 467a D4 along C4 C5"
                        .into(),
                ),
            }
        }
        "double-time" if !args.is_empty() => Ok(Command::DoubleTime {
            units: args.to_vec(),
        }),
        "double-time" => Err("`double-time` takes one or more units".into()),
        "assault-move" if !args.is_empty() => Ok(Command::AssaultMove {
            units: args.to_vec(),
        }),
        "assault-move" => Err("`assault-move` takes one or more units".into()),
        "take-cover" if !args.is_empty() => Ok(Command::TakeShellholeCover {
            units: args.to_vec(),
        }),
        "take-cover" => Err("`take-cover` takes one or more units".into()),
        "pick-up" | "drop" => match args {
            [unit, weapon] => Ok(if verb == "drop" {
                Command::Drop {
                    unit: unit.clone(),
                    weapon: weapon.clone(),
                }
            } else {
                Command::PickUp {
                    unit: unit.clone(),
                    weapon: weapon.clone(),
                }
            }),
            _ => Err(format!(
                "`{verb}` takes a unit and a weapon: {verb} 467a lmg1"
            ).into()),
        },
        "transfer" => match args {
            [weapon, to, unit] if to == "to" => Ok(Command::TransferWeapon {
                weapon: weapon.clone(),
                to: unit.clone(),
            }),
            _ => Err("`transfer` takes a weapon, `to` and a unit: transfer lmg1 to 467b".into()),
        },
        "claim-wa" | "forfeit-wa" if !args.is_empty() => Ok(if verb == "claim-wa" {
            Command::ClaimWallAdvantage {
                units: args.to_vec(),
            }
        } else {
            Command::ForfeitWallAdvantage {
                units: args.to_vec(),
            }
        }),
        "claim-wa" | "forfeit-wa" => Err(format!("`{verb}` takes one or more units").into()),
        "decline-wa" if args.is_empty() => Ok(Command::DeclineWallAdvantage),
        "decline-wa" => Err("`decline-wa` takes nothing".into()),
        "show-wa" => match args {
            [unit] => Ok(Command::ShowForWallAdvantage { unit: unit.clone() }),
            _ => Err("`show-wa` takes one unit: show-wa 447b".into()),
        },
        "attack" => {
            let (into_sewer, args) = match args.split_last() {
                Some((last, rest)) if last == "sewer" => (true, rest),
                _ => (false, args),
            };
            match args {
                [firers @ .., at, target] if at == "at" && !firers.is_empty() => {
                    Ok(Command::DeclareAttack {
                        firers: firers.to_vec(),
                        target: resolve_hex(scenario, target)?,
                        into_sewer,
                    })
                }
                _ => Err(
                    "`attack` takes the firing units, `at`, a hex and optionally `sewer`: attack 747a at H6"
                        .into(),
                ),
            }
        }
        "rally" => parse_rally(args),
        "repair" => match args {
            [weapon] => Ok(Command::RepairWeapon {
                weapon: weapon.clone(),
            }),
            _ => Err("`repair` takes one support weapon: repair lmg1".into()),
        },
        "opportunity" if !args.is_empty() => Ok(Command::MarkOpportunityFire {
            units: args.to_vec(),
        }),
        "opportunity" => Err("`opportunity` takes one or more units: opportunity 747a".into()),
        "resolve-attack" if args.is_empty() => Ok(Command::ResolveAttack),
        "resolve-attack" => Err("`resolve-attack` takes nothing".into()),
        "place" => match args {
            [unit] => Ok(Command::PlaceHidden {
                unit: unit.clone(),
                claim_wall_advantage: false,
            }),
            [unit, wa] if wa == "claim-wa" => Ok(Command::PlaceHidden {
                unit: unit.clone(),
                claim_wall_advantage: true,
            }),
            _ => Err("`place` takes a hidden unit and optionally `claim-wa`".into()),
        },
        "sewer-move" => match args {
            [units @ .., to_word, to] if to_word == "to" && !units.is_empty() => {
                Ok(Command::SewerMove {
                    units: units.to_vec(),
                    to: resolve_hex(scenario, to)?,
                })
            }
            _ => Err(
                "`sewer-move` takes units, `to` and a Manhole hex: sewer-move 467a to Y9".into(),
            ),
        },
        "designate-sewer" => match args {
            [to] => Ok(Command::DesignateSewer {
                to: resolve_hex(scenario, to)?,
            }),
            _ => Err("`designate-sewer` takes the hex the lost stack goes to".into()),
        },
        "surface" | "enter-tunnel" if !args.is_empty() => Ok(if verb == "surface" {
            Command::Surface {
                units: args.to_vec(),
            }
        } else {
            Command::EnterTunnel {
                units: args.to_vec(),
            }
        }),
        "surface" | "enter-tunnel" => Err(format!("`{verb}` takes one or more units").into()),
        "destroy-tunnel" | "manhole-unseen" => match args {
            [hex] => {
                let hex = resolve_hex(scenario, hex)?;
                Ok(if verb == "destroy-tunnel" {
                    Command::DestroyTunnel { entrance: hex }
                } else {
                    Command::DeclareManholeUnseen { hex }
                })
            }
            _ => Err(format!("`{verb}` takes a hex").into()),
        },
        "adjudicate" => match args {
            [unit, outcome, after, roll, note @ ..] if after == "after" && note.len() <= 1 => {
                Ok(Command::AdjudicateAfterRoll {
                    unit: unit.clone(),
                    outcome: Outcome::parse(outcome).ok_or_else(|| {
                        format!("`{outcome}` is not an outcome (break, rally, pin, eliminate)")
                    })?,
                    roll: roll
                        .trim_start_matches('#')
                        .parse::<u64>()
                        .map_err(|_| format!("`{roll}` is not an event number"))?,
                    note: note.first().cloned().unwrap_or_default(),
                })
            }
            // A counter the engine does not rule on is moved by adjudication.
            [unit, relocate, hex, note @ ..] if relocate == "relocate" && note.len() <= 1 => {
                Ok(Command::Adjudicate {
                    unit: unit.clone(),
                    outcome: Outcome::Relocate(resolve_hex(scenario, hex)?),
                    note: note.first().cloned().unwrap_or_default(),
                })
            }
            [unit, outcome, note @ ..] if note.len() <= 1 => Ok(Command::Adjudicate {
                unit: unit.clone(),
                outcome: Outcome::parse(outcome).ok_or_else(|| {
                    format!("`{outcome}` is not an outcome (break, rally, pin, eliminate; for a squad: reduce [\"HS RATINGS\"]; for an SMC: wound; for a counter: relocate HEX, relabel)")
                })?,
                note: note.first().cloned().unwrap_or_default(),
            }),
            _ => Err("`adjudicate` takes a unit, an outcome (`relocate` a hex) and an optional \"note\"".into()),
        },
        // Dispute review (docs/review.md, docs/dice.md).
        "accept" | "dispute" | "undo" => {
            let event = |word: &String| {
                word.trim_start_matches('#')
                    .parse::<u64>()
                    .map_err(|_| format!("`{word}` is not an event number"))
            };
            match (verb, args) {
                ("accept", [n]) => Ok(Command::AcceptAdjudication { event: event(n)? }),
                ("dispute", [n, reason]) => Ok(Command::DisputeAdjudication {
                    event: event(n)?,
                    reason: reason.clone(),
                }),
                ("undo", [n]) => Ok(Command::RequestUndo { from: event(n)? }),
                _ => Err(
                    "`accept #N`, `dispute #N \"why\"` and `undo #N` name an event by its number"
                        .into(),
                ),
            }
        }
        // Ending the game early (docs/script.md).
        "concede" | "propose-end" | "accept-end" if args.is_empty() => Ok(match verb {
            "concede" => Command::Concede,
            "propose-end" => Command::ProposeEnd,
            _ => Command::AcceptEnd,
        }),
        "concede" | "propose-end" | "accept-end" => Err(format!("`{verb}` takes nothing").into()),
        "consent-undo" | "decline-undo" | "agree-reveal" if args.is_empty() => Ok(match verb {
            "consent-undo" => Command::ConsentToUndo,
            "decline-undo" => Command::DeclineUndo,
            _ => Command::AgreeToRevealSeed,
        }),
        "consent-undo" | "decline-undo" | "agree-reveal" => Err(format!("`{verb}` takes nothing").into()),
        "roll" => parse_roll(args),
        "setup" => match args {
            [unit, hex, rest @ ..] => {
                // `setup UNIT HEX [concealed|hidden] [with WEAPON…]` (A4.43: weapons of the
                // side's set-up given to the unit as it is placed).
                let (flags, weapons) = match rest.iter().position(|a| a == "with") {
                    Some(i) => (&rest[..i], &rest[i + 1..]),
                    None => (rest, &[][..]),
                };
                let (concealed, hidden) = match flags {
                    [] => (false, false),
                    [f] if f == "concealed" => (true, false),
                    [f] if f == "hidden" => (false, true),
                    _ => {
                        return Err(format!(
                            "`setup` takes a unit, a hex, optionally `concealed` or `hidden`, and optionally `with` and the weapons given to the unit, not `{}`",
                            flags.join(" ")
                        ).into())
                    }
                };
                if rest.iter().any(|a| a == "with") && weapons.is_empty() {
                    return Err("`with` names the weapons given to the unit".into());
                }
                Ok(Command::SetUp {
                    unit: unit.clone(),
                    hex: resolve_hex(scenario, hex)?,
                    concealed,
                    hidden,
                    weapons: weapons.to_vec(),
                })
            }
            _ => Err(
                "`setup` takes a unit, a hex, optionally `concealed` or `hidden`, and optionally `with` and weapons to give it: setup ru-sq1 3B4 concealed with ru-lmg1"
                    .into(),
            ),
        },
        "lift" => match args {
            [unit] => Ok(Command::LiftSetUp { unit: unit.clone() }),
            _ => Err("`lift` takes one unit placed in set-up: lift ru-sq1".into()),
        },
        "enter" => match args {
            [units @ .., to] if !units.is_empty() => Ok(Command::Enter {
                units: units.to_vec(),
                to: resolve_hex(scenario, to)?,
            }),
            _ => Err("`enter` takes one or more units waiting off board and a hex of their edge: enter ge-sq9 1A5".into()),
        },
        "contribute" => match args {
            [nonce] => HEXLOWER
                .decode(nonce.as_bytes())
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .map(|nonce| Command::ContributeEntropy { nonce })
                .ok_or_else(|| format!("`{nonce}` is not a nonce: 64 lowercase hex digits").into()),
            _ => Err("`contribute` takes a nonce: 64 lowercase hex digits".into()),
        },
        "rout" | "tunnel-seen" | "discover-tunnel" => parse_tunnel_command(scenario, verb, args),
        // The clock (docs/clock.md).
        "claim-on-time" | "vacation" | "end-vacation" if args.is_empty() => Ok(match verb {
            "claim-on-time" => Command::ClaimOnTime,
            "vacation" => Command::StartVacation,
            _ => Command::EndVacation,
        }),
        "claim-on-time" | "vacation" | "end-vacation" => Err(format!("`{verb}` takes nothing").into()),
        "give-time" => match args {
            [time] => Ok(Command::GiveTime {
                time: board::time_control::parse_duration(time)?,
            }),
            _ => Err("`give-time` takes a duration: `give-time 1h`".into()),
        },
        _ => Err(format!(
            "unknown command `{verb}` ({})",
            COMMAND_WORDS.join(", ")
        ).into()),
    }
}

/// `roll dr|DR PURPOSE ["NOTE"]`: a roll through the referee (`docs/dice.md`).
fn parse_roll(args: &[String]) -> Result<Command, LineError> {
    let words: Vec<&str> = RollPurpose::ON_REQUEST.iter().map(|(w, _, _)| *w).collect();
    let usage = || {
        format!(
            "`roll` takes dr or DR, a purpose ({}) and an optional \"note\"",
            words.join(", ")
        )
    };
    let [count, purpose, note @ ..] = args else {
        return Err(usage().into());
    };
    if note.len() > 1 {
        return Err(usage().into());
    }
    let dice = match count.as_str() {
        "dr" => DiceCount::Dr,
        "DR" => DiceCount::Two,
        other => return Err(format!("`{other}` is not dr or DR").into()),
    };
    let purpose = RollPurpose::ON_REQUEST
        .iter()
        .find(|(w, _, _)| w.eq_ignore_ascii_case(purpose))
        .map(|(_, p, _)| *p)
        .ok_or_else(|| format!("`{purpose}` is not a purpose ({})", words.join(", ")))?;
    Ok(Command::Roll {
        dice,
        purpose,
        note: note.first().cloned().unwrap_or_default(),
    })
}

/// Parses a script against the scenario it will run on (to resolve sides and hex names).
pub fn parse_script(text: &str, scenario: &Scenario) -> Result<Vec<ScriptLine>, ScriptError> {
    let mut lines = vec![];
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if line > SCRIPT_LINES_MAX {
            return Err(ScriptError {
                line,
                message: format!("scripts end at {SCRIPT_LINES_MAX} lines"),
            });
        }
        let err = |message: LineError| ScriptError {
            line,
            message: message.0,
        };
        let body = strip_comment(raw).trim();
        if body.is_empty() || body.starts_with("scenario ") {
            continue;
        }
        let (command_text, expect_text) = match body.split_once("=>") {
            Some((c, e)) => (c.trim(), Some(e.trim())),
            None => (body, None),
        };
        let mut ws = words(command_text).map_err(err)?;
        if ws.is_empty() {
            return Err(err("a line with an expectation needs a command".into()));
        }
        if ws[0] == "dice" {
            let faces = ws[1..]
                .iter()
                .map(|w| match w.parse::<u8>() {
                    Ok(f @ 1..=6) => Ok(f),
                    _ => Err(err(format!("`{w}` is not a die face 1–6").into())),
                })
                .collect::<Result<Vec<u8>, _>>()?;
            if faces.is_empty() {
                return Err(err("`dice` takes one or more faces".into()));
            }
            lines.push(ScriptLine {
                line,
                text: body.to_string(),
                side: None,
                action: Action::Dice(faces),
                expect: None,
            });
            continue;
        }
        if ws[0] == "cover" {
            let (unit, seen_by) = match ws.as_slice() {
                [_, unit] => (unit.clone(), vec![]),
                [_, unit, from, seen @ ..] if from == "from" && !seen.is_empty() => {
                    (unit.clone(), seen.to_vec())
                }
                _ => {
                    return Err(err(
                        "`cover` takes a unit, and optionally `from` and the enemy units that see it (else the engine traces who does): cover 338, cover 338 from 447"
                            .into(),
                    ))
                }
            };
            let expect = expect_text
                .map(|e| match e {
                    "yes" => Ok(true),
                    "no" => Ok(false),
                    other => Err(err(format!("`{other}` is not yes or no").into())),
                })
                .transpose()?;
            lines.push(ScriptLine {
                line,
                text: command_text.to_string(),
                side: None,
                action: Action::Cover {
                    unit,
                    seen_by,
                    expect,
                },
                expect: None,
            });
            continue;
        }
        if ws[0] == "los" {
            lines.push(parse_los(line, command_text, &ws, expect_text)?);
            continue;
        }
        if ws[0] == "tem" {
            let expect = expect_text
                .map(|e| match e {
                    "hd" => Ok(None),
                    n => n.parse::<i8>().map(Some).map_err(|_| {
                        err(format!("`{n}` is not a TEM; write a number or `hd`").into())
                    }),
                })
                .transpose()?;
            let arrow = ws.iter().position(|w| w == "->");
            let (firers, target, fire) = match arrow {
                Some(i) if i >= 2 && ws.len() == i + 3 => {
                    (ws[1..i].to_vec(), ws[i + 1].clone(), &ws[i + 2])
                }
                _ => {
                    return Err(err(
                        "`tem` takes firers, `->`, the target and the fire (direct, ordnance, indirect, dc): tem 747a -> 467a direct"
                            .into(),
                    ))
                }
            };
            let fire = rules::tem::Fire::parse(fire).ok_or_else(|| {
                err(format!("`{fire}` is not direct, ordnance, indirect or dc").into())
            })?;
            lines.push(ScriptLine {
                line,
                text: command_text.to_string(),
                side: None,
                action: Action::Tem {
                    firers,
                    target,
                    fire,
                    expect,
                },
                expect: None,
            });
            continue;
        }
        let side = scenario.side_named(&ws[0]);
        if side.is_some() {
            ws.remove(0);
        }
        let Some((verb, args)) = ws.split_first() else {
            return Err(err("a side needs a command after it".into()));
        };
        let command = parse_command(scenario, verb, args).map_err(err)?;
        let expect = expect_text
            .map(|e| parse_expect(scenario, e))
            .transpose()
            .map_err(err)?;
        lines.push(ScriptLine {
            line,
            text: command_text.to_string(),
            side,
            action: Action::Command(command),
            expect,
        });
    }
    Ok(lines)
}

/// `los FROM TO [=> clear | blocked | hindered N]`.
fn parse_los(
    line: usize,
    text: &str,
    ws: &[String],
    expect_text: Option<&str>,
) -> Result<ScriptLine, ScriptError> {
    use board::los::Verdict;
    let err = |message: String| ScriptError { line, message };
    let [_, from, to] = ws else {
        return Err(err(
            "`los` takes two ends, each a unit or a hex: los 447 467 => clear".into(),
        ));
    };
    let expect = expect_text
        .map(|e| {
            let words: Vec<&str> = e.split_whitespace().collect();
            match words.as_slice() {
                ["clear"] => Ok(Verdict::Clear),
                ["blocked"] => Ok(Verdict::Blocked),
                ["hindered", n] => match n.parse::<u8>() {
                    Ok(n) if n > 0 => Ok(Verdict::Hindered(n)),
                    _ => Err(err(format!("`{n}` is not a Hindrance DRM of 1 or more"))),
                },
                _ => Err(err(format!(
                    "`{e}` is not a LOS answer; write clear, blocked or hindered N"
                ))),
            }
        })
        .transpose()?;
    Ok(ScriptLine {
        line,
        text: text.to_string(),
        side: None,
        action: Action::Los {
            from: from.clone(),
            to: to.clone(),
            expect,
        },
        expect: None,
    })
}

/// Checks an expectation against the result of a line; each failure is one message.
pub fn check_expectation(
    game: &Game,
    expect: &Expect,
    result: &Result<Vec<Event>, RuleViolation>,
) -> Vec<String> {
    match (expect, result) {
        (Expect::Refused(..), Ok(_)) => vec!["expected a refusal, but it was accepted".into()],
        (Expect::Refused(Some(rule), _), Err(v)) if &v.rule != rule => {
            vec![format!("expected a refusal citing {rule}, got {v}")]
        }
        (Expect::Refused(_, Some(words)), Err(v)) if !v.detail.contains(words.as_str()) => {
            vec![format!("expected a refusal saying \"{words}\", got {v}")]
        }
        (Expect::Refused(..), Err(_)) => vec![],
        (Expect::Ok(_), Err(v)) => vec![format!("expected it accepted, but it was refused: {v}")],
        (Expect::Ok(checks), Ok(events)) => checks
            .iter()
            .filter_map(|c| check_fact(game, events, c).err())
            .map(|e| e.0)
            .collect(),
    }
}

fn check_fact(game: &Game, events: &[Event], check: &Check) -> Result<(), LineError> {
    let unit = |id: &UnitId| {
        game.units
            .get(id)
            .ok_or_else(|| format!("no unit `{id}` to check"))
    };
    let expect = |ok: bool, what: String| if ok { Ok(()) } else { Err(what.into()) };
    match check {
        Check::Hex(id, hex) => {
            let u = unit(id)?;
            expect(u.hex == *hex, format!("`{id}` is in {}, not {hex}", u.hex))
        }
        Check::MfSpent(id, mf) => {
            let u = unit(id)?;
            expect(
                u.mf_spent == *mf,
                format!("`{id}` has spent {} MF, not {mf}", u.mf_spent),
            )
        }
        Check::MfLeft(id, mf) => {
            let account = events
                .iter()
                .rev()
                .find_map(|e| e.accounts().iter().find(|a| &a.unit == id));
            match account {
                Some(a) => expect(
                    a.left == *mf,
                    format!("`{id}` has {} MF left, not {mf}", a.left),
                ),
                None => {
                    Err(format!("this line spent no MF of `{id}`'s; mf_left= checks a move").into())
                }
            }
        }
        Check::Phase(p) => expect(
            game.clock.phase() == *p,
            format!("the phase is {}, not {p}", game.clock.phase()),
        ),
        Check::Acting(s) => expect(
            game.acting() == *s,
            format!(
                "{} is to act, not {}",
                game.side_name(game.acting()),
                game.side_name(*s)
            ),
        ),
        Check::Turn(t) => expect(
            game.clock.turn == *t,
            format!("it is turn {}, not {t}", game.clock.turn),
        ),
        Check::Morale(id, m) => {
            let u = unit(id)?;
            expect(
                u.morale == *m,
                format!("`{id}` is {:?}, not {m:?}", u.morale),
            )
        }
        Check::Pinned(id) => expect(unit(id)?.pinned, format!("`{id}` is not pinned")),
        Check::Cx(id, cx) => expect(
            unit(id)?.cx == *cx,
            format!("`{id}` CX is {}, not {cx}", unit(id)?.cx),
        ),
        Check::Holds(holder, weapon) => {
            let w = game
                .weapons
                .get(weapon)
                .ok_or_else(|| format!("no weapon `{weapon}` to check"))?;
            expect(
                &w.held_by == holder,
                format!("`{weapon}` is held by {:?}, not {holder:?}", w.held_by),
            )
        }
        Check::Malfunctioned(weapon, want) => {
            let w = game
                .weapons
                .get(weapon)
                .ok_or_else(|| format!("no weapon `{weapon}` to check"))?;
            expect(
                w.malfunctioned == *want,
                format!(
                    "`{weapon}` malfunctioned is {}, not {want}",
                    w.malfunctioned
                ),
            )
        }
        Check::Eliminated(id) => expect(unit(id)?.eliminated, format!("`{id}` is in play")),
        Check::Reads(id, kind, ratings) => {
            let u = unit(id)?;
            expect(
                u.kind.name() == kind && &u.ratings == ratings,
                format!(
                    "`{id}` reads {}:{}, not {kind}:{ratings}",
                    u.kind.name(),
                    u.ratings
                ),
            )
        }
        Check::Over(o) => expect(game.over == *o, format!("game over is {}", game.over)),
        Check::Wa(id) => expect(unit(id)?.wall_advantage, format!("`{id}` has no WA")),
        Check::NoWa(id) => expect(!unit(id)?.wall_advantage, format!("`{id}` has WA")),
        Check::Below(id, want) => {
            let got = match unit(id)?.underground {
                None => "none",
                Some(game::Underground::Sewer { .. }) => "sewer",
                Some(game::Underground::Tunnel) => "tunnel",
            };
            expect(
                got == want,
                format!("`{id}` is below ground: {got}, not {want}"),
            )
        }
        Check::Lost(id, want) => {
            let got = matches!(
                unit(id)?.underground,
                Some(game::Underground::Sewer { lost: true, .. })
            );
            expect(got == *want, format!("`{id}` lost is {got}, not {want}"))
        }
        Check::Emergence(id, want) => {
            use game::{Emergence, Underground};
            let got = match unit(id)?.underground {
                Some(Underground::Sewer {
                    emergence: Some(e), ..
                }) => match e {
                    Emergence::MayEmerge => "may",
                    Emergence::CannotEmerge => "cannot",
                    Emergence::Discovered => "discovered",
                },
                _ => "none",
            };
            expect(
                got == want,
                format!("`{id}` emergence is {got}, not {want}"),
            )
        }
        Check::Concealed(id, want) => {
            let got = unit(id)?.concealed;
            expect(
                got == *want,
                format!("`{id}` concealed is {got}, not {want}"),
            )
        }
        Check::Hidden(id, want) => {
            let got = unit(id)?.hidden;
            expect(got == *want, format!("`{id}` hidden is {got}, not {want}"))
        }
        Check::Dm(id, want) => {
            let got = unit(id)?.desperation;
            expect(
                got == *want,
                format!("`{id}` under Desperation Morale is {got}, not {want}"),
            )
        }
        Check::Wounded(id, want) => {
            let got = unit(id)?.wounded;
            expect(got == *want, format!("`{id}` wounded is {got}, not {want}"))
        }
        Check::Opportunity(id, want) => {
            unit(id)?;
            let got = game.opportunity_fire.contains(id);
            expect(
                got == *want,
                format!("`{id}` designated an Opportunity Firer is {got}, not {want}"),
            )
        }
        Check::Forfeited(id, want) => {
            unit(id)?;
            let got = game.inherent_fp_forfeited.contains(id);
            expect(
                got == *want,
                format!("`{id}` having forfeited its own FP is {got}, not {want} (A9.11)"),
            )
        }
        Check::Rolls(want) => {
            let got: Vec<i16> = events
                .iter()
                .filter_map(|e| match e {
                    Event::DiceRolled(DiceRolled { roll }) => Some(roll.final_result),
                    _ => None,
                })
                .collect();
            expect(
                &got == want,
                format!("the Final rolls were {got:?}, not {want:?}"),
            )
        }
        Check::Fpf(want) => {
            let got: Vec<(UnitId, i16)> = events
                .iter()
                .filter_map(|e| match e {
                    Event::FpfNmcTaken(FpfNmcTaken { unit, final_dr, .. }) => {
                        Some((unit.clone(), *final_dr))
                    }
                    _ => None,
                })
                .collect();
            expect(
                &got == want,
                format!("the FPF's NMCs (A8.31) were {got:?}, not {want:?}"),
            )
        }
        Check::Ift(want) => {
            let got: Vec<&String> = events
                .iter()
                .filter_map(|e| match e {
                    Event::IftAttackResolved(IftAttackResolved { result, .. }) => Some(result),
                    _ => None,
                })
                .collect();
            expect(
                got.iter().copied().eq(want.iter()),
                format!("the IFT results were {got:?}, not {want:?}"),
            )
        }
        Check::LeftToPlayers(want) => {
            let got: Vec<&String> = events
                .iter()
                .filter_map(|e| match e {
                    Event::AttackLeftToPlayers(AttackLeftToPlayers { rule, .. }) => Some(rule),
                    _ => None,
                })
                .collect();
            expect(
                got == [want],
                format!("the attacks left to the players cite {got:?}, not [{want:?}]"),
            )
        }
        Check::Interdiction(unit, want) => {
            let got: Vec<&Vec<UnitId>> = events
                .iter()
                .filter_map(|e| match e {
                    Event::UnitRouted(UnitRouted {
                        unit: u,
                        interdiction_by,
                        ..
                    }) if u == unit => Some(interdiction_by),
                    _ => None,
                })
                .collect();
            expect(
                got == [want],
                format!("the line's routs of `{unit}` may be Interdicted by {got:?}, not {want:?}"),
            )
        }
        Check::Asked(want) => {
            let got: Vec<&String> = events
                .iter()
                .filter_map(|e| match e {
                    Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers { rule, .. })
                    | Event::RoutLeftToPlayers(RoutLeftToPlayers { rule, .. }) => Some(rule),
                    _ => None,
                })
                .collect();
            expect(
                got.iter().copied().eq(want.iter()),
                format!("the effects left to the players cite {got:?}, not {want:?}"),
            )
        }
        Check::Residual(hex, want) => {
            let got = game.residual_fp.get(hex).map(|r| r.fp);
            let words = |r: &Option<Option<u8>>| match r {
                None => "none".to_string(),
                Some(None) => "some, for the players to determine".to_string(),
                Some(Some(fp)) => fp.to_string(),
            };
            expect(
                &got == want,
                format!(
                    "the Residual FP in {hex} is {}, not {}",
                    words(&got),
                    words(want)
                ),
            )
        }
        Check::Column(want) => {
            let got: Vec<u8> = events
                .iter()
                .filter_map(|e| match e {
                    Event::IftAttackResolved(IftAttackResolved { column, .. }) => Some(*column),
                    _ => None,
                })
                .collect();
            expect(
                &got == want,
                format!("the IFT columns were {got:?}, not {want:?}"),
            )
        }
        Check::Chance(side) => {
            let now = game.wa_chance.as_ref().map(|c| c.side);
            expect(
                now == *side,
                format!("the WA chance is for {now:?}, not {side:?}"),
            )
        }
        Check::Hip(side) => {
            let now = game.wa_hip_window.as_ref().map(|w| w.side);
            expect(
                now == *side,
                format!("the HIP moment waits for {now:?}, not {side:?}"),
            )
        }
        Check::Challenge(side) => {
            let now = game.wa_challenge.as_ref().map(|c| c.side);
            expect(
                now == *side,
                format!("the WA challenge waits for {now:?}, not {side:?}"),
            )
        }
    }
}

/// One line's outcome when a script is run.
#[derive(Clone, Debug)]
pub struct LineReport {
    pub line: usize,
    pub text: String,
    pub result: Result<Vec<Event>, RuleViolation>,
    /// Expectations that did not hold (empty when none were given or all held).
    pub failures: Vec<String>,
    /// For a question (`tem`), the answer in words.
    pub answer: Option<String>,
}

/// A script being played offline, one line at a time: each command through `decide`, each
/// resulting event through `apply`, dice from the script's own `dice` lines.
pub struct OfflineRun {
    pub game: Game,
    dice: ScriptedDice,
    /// The events so far with the side that issued each, as a server keeps its log: answers to
    /// adjudications and undo are decided against it (`record::dispute`). Event 1 is
    /// `GameCreated`, so events are numbered as on a server.
    log: Vec<record::chain::Entry>,
}

impl OfflineRun {
    pub fn new(mut game: Game) -> OfflineRun {
        let mut log = vec![];
        if game.version == 0 {
            game.version = 1;
            log.push(record::chain::Entry::created((*game.scenario).clone()));
        }
        OfflineRun {
            game,
            dice: ScriptedDice::default(),
            log,
        }
    }

    /// Plays one line; `None` for a line that is not a command (`dice`). A line without a
    /// side is refused: offline there is no token to say who speaks.
    pub fn step(&mut self, line: &ScriptLine) -> Option<LineReport> {
        let command = match &line.action {
            Action::Dice(faces) => {
                for f in faces {
                    self.dice.push(*f).expect("parsed faces are 1-6");
                }
                return None;
            }
            Action::Command(c) => c,
            Action::Tem {
                firers,
                target,
                fire,
                expect,
            } => return Some(self.ask_tem(line, firers, target, *fire, *expect)),
            Action::Cover {
                unit,
                seen_by,
                expect,
            } => return Some(self.ask_cover(line, unit, seen_by, *expect)),
            Action::Los { from, to, expect } => return Some(self.ask_los(line, from, to, *expect)),
        };
        let result = match line.side {
            Some(side) => record::dispute::decide(
                &self.game,
                &self.log,
                side,
                command,
                &mut self.dice as &mut dyn DiceSource,
            ),
            None => Err(RuleViolation::new(
                "A3",
                rules::violation::ViolationKind::WrongSide,
                "offline, every line must start with the side that issues it",
            )),
        };
        if let Ok(events) = &result {
            let first = self.game.version + 1;
            for e in events {
                apply(&mut self.game, e);
                if self.log.len() as u64 + 1 == self.game.version {
                    self.log.push(record::chain::Entry {
                        seq: self.game.version,
                        by: line.side,
                        first,
                        key: None,
                        command: None,
                        event: e.clone(),
                    });
                }
            }
        }
        let failures = line
            .expect
            .as_ref()
            .map(|e| check_expectation(&self.game, e, &result))
            .unwrap_or_default();
        Some(LineReport {
            line: line.line,
            text: line.text.clone(),
            result,
            failures,
            answer: None,
        })
    }

    fn ask_cover(
        &self,
        line: &ScriptLine,
        unit: &UnitId,
        seen_by: &[UnitId],
        expect: Option<bool>,
    ) -> LineReport {
        let asked = if seen_by.is_empty() {
            rules::tem::bocage_cover_traced(&self.game, unit)
        } else {
            rules::tem::bocage_cover(&self.game, unit, seen_by).map(|c| (c, seen_by.to_vec()))
        };
        let (answer, failures) = match asked {
            Ok((covered, seers)) => {
                let who = if seers.is_empty() {
                    "no Good Order enemy has a LOS to it".to_string()
                } else {
                    format!("seen by {}", seers.join(", "))
                };
                let shown = if covered {
                    format!("covered by bocage: out of their LOS and in Concealment Terrain (B9.55); {who}")
                } else {
                    format!("not covered by bocage against all of them (B9.55); {who}")
                };
                let failures = match expect {
                    Some(want) if want != covered => vec![format!(
                        "expected {}, got {}",
                        if want { "yes" } else { "no" },
                        if covered { "yes" } else { "no" }
                    )],
                    _ => vec![],
                };
                (shown.to_string(), failures)
            }
            Err(e) => (
                e.to_string(),
                vec![format!("the cover question failed: {e}")],
            ),
        };
        answered(line, answer, failures)
    }

    fn ask_los(
        &self,
        line: &ScriptLine,
        from: &str,
        to: &str,
        expect: Option<board::los::Verdict>,
    ) -> LineReport {
        use rules::los::{between, Spot};
        let report = Spot::read(&self.game, from)
            .and_then(|f| Ok((f, Spot::read(&self.game, to)?)))
            .and_then(|(f, t)| between(&self.game, &f, &t));
        let (answer, failures) = match report {
            Ok(r) => {
                let failures = match expect {
                    Some(want) if want != r.verdict => {
                        vec![format!(
                            "expected {want}, got {}: {}",
                            r.verdict,
                            r.reasons.join("; ")
                        )]
                    }
                    _ => vec![],
                };
                (format!("{}: {}", r.verdict, r.reasons.join("; ")), failures)
            }
            Err(e) => (e.to_string(), vec![format!("the LOS question failed: {e}")]),
        };
        answered(line, answer, failures)
    }

    fn ask_tem(
        &self,
        line: &ScriptLine,
        firers: &[UnitId],
        target: &UnitId,
        fire: rules::tem::Fire,
        expect: Option<Option<i8>>,
    ) -> LineReport {
        let (answer, failures) = match rules::tem::query(&self.game, firers, target, fire) {
            Ok(report) => {
                let got = if report.hull_down {
                    None
                } else {
                    Some(report.tem)
                };
                let shown = match got {
                    Some(t) => format!("TEM {t:+}"),
                    None => "Hull Down".to_string(),
                };
                let failures = match expect {
                    Some(want) if want != got => {
                        let want = want.map_or("Hull Down".to_string(), |t| format!("TEM {t:+}"));
                        vec![format!("expected {want}, got {shown}")]
                    }
                    _ => vec![],
                };
                (format!("{shown}: {}", report.reasons.join("; ")), failures)
            }
            Err(e) => (e.to_string(), vec![format!("the TEM question failed: {e}")]),
        };
        answered(line, answer, failures)
    }
}

/// The report of a question line: nothing happened to the game; the answer in words.
fn answered(line: &ScriptLine, answer: String, failures: Vec<String>) -> LineReport {
    LineReport {
        line: line.line,
        text: line.text.clone(),
        result: Ok(vec![]),
        failures,
        answer: Some(answer),
    }
}

/// Runs a whole script offline (see [`OfflineRun`]) and reports every command line.
pub fn run_offline(game: Game, lines: &[ScriptLine]) -> (Game, Vec<LineReport>) {
    let mut run = OfflineRun::new(game);
    let reports = lines.iter().filter_map(|l| run.step(l)).collect();
    (run.game, reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::wall_advantage::ReadScenario;

    fn scenario() -> Scenario {
        Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml")).unwrap()
    }

    #[test]
    fn parses_commands_expectations_and_comments() {
        let s = scenario();
        let text = "# comment\nscenario x.toml\ngerman move 467a H6 => ok hex=467a:H6 mf_left=467a:1½\nrussian adjudicate 467a break \"IFT #4\" => refused A3.3\ndice 3 4\ndone\n";
        let lines = parse_script(text, &s).unwrap();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].side, Some(Side::A));
        assert!(matches!(&lines[0].expect, Some(Expect::Ok(c)) if c.len() == 2));
        assert!(
            matches!(&lines[0].action, Action::Command(Command::Move { to, .. }) if to.to_string() == "55H6")
        );
        assert!(
            matches!(&lines[1].action, Action::Command(Command::Adjudicate { note, .. }) if note == "IFT #4")
        );
        assert_eq!(
            lines[1].expect,
            Some(Expect::Refused(Some("A3.3".into()), None))
        );
        assert_eq!(lines[2].action, Action::Dice(vec![3, 4]));
        assert_eq!(lines[3].side, None);
        assert_eq!(scenario_directive(text).as_deref(), Some("x.toml"));
    }

    #[test]
    fn rolls_and_cited_adjudications_parse_and_run_offline() {
        let s = scenario();
        let text =
            "dice 3 4\ngerman roll DR ift \"4 FP\"\nrussian roll dr other \"who moves first\"\n";
        let lines = parse_script(text, &s).unwrap();
        assert_eq!(
            lines[1].action,
            Action::Command(Command::Roll {
                dice: DiceCount::Two,
                purpose: RollPurpose::Ift,
                note: "4 FP".into()
            })
        );
        let (game, reports) = run_offline(Game::new(s.clone()), &lines);
        assert!(reports[0].result.is_ok(), "{:?}", reports[0].result);
        let refused = reports[1].result.as_ref().unwrap_err();
        assert_eq!(refused.kind, rules::violation::ViolationKind::NoDice);
        assert_eq!(game.dice_drawn, 2);
        let cited = parse_script("german adjudicate 467a break after #2 \"1MC\"", &s).unwrap();
        assert!(matches!(
            &cited[0].action,
            Action::Command(Command::AdjudicateAfterRoll { roll: 2, note, .. }) if note == "1MC"
        ));
    }

    #[test]
    fn a_withdrawal_from_melee_parses_beside_attacks() {
        let s = scenario();
        let lines = parse_script(
            "german cc H6 467a vs 447a and withdraw 8-0a 467b to H7\ngerman cc H6 withdraw 467a to I7",
            &s,
        )
        .unwrap();
        let Action::Command(Command::CloseCombat {
            attacks,
            withdrawals,
            ..
        }) = &lines[0].action
        else {
            panic!("{:?}", lines[0].action);
        };
        assert_eq!(attacks.len(), 1);
        assert_eq!(withdrawals.len(), 1);
        assert_eq!(
            withdrawals[0].units,
            vec!["8-0a".to_string(), "467b".into()]
        );
        assert_eq!(withdrawals[0].to.to_string(), "55H7");
        assert!(matches!(
            &lines[1].action,
            Action::Command(Command::CloseCombat { attacks, withdrawals, .. })
                if attacks.is_empty() && withdrawals.len() == 1
        ));
    }

    #[test]
    fn bad_lines_say_where_and_why() {
        let s = scenario();
        for (text, want) in [
            ("german fly 467a H6", "unknown command"),
            ("german roll 3d6 IFT", "not dr or DR"),
            ("german roll DR lunch", "not a purpose"),
            ("german roll DR", "`roll` takes"),
            ("german adjudicate 467a pin after x", "not an event number"),
            ("german move H6", "one or more units"),
            ("german move 467a Q99x", "not a hex"),
            ("german done => maybe", "ok [checks]"),
            ("dice 7", "die face"),
            ("german adjudicate 467a explode", "not an outcome"),
            ("german move 467a H6 => ok fp=467a", "unknown check"),
            ("german cc H6 withdraw 467a to", "withdrawal from Melee"),
            ("german cc H6 withdraw to H7", "withdrawal from Melee"),
            ("german cc H6 withdraw 467a H7", "withdrawal from Melee"),
        ] {
            let e = parse_script(&format!("\n{text}"), &s).unwrap_err();
            assert_eq!(e.line, 2, "{text}");
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
    }
}
