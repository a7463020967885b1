//! What one viewer may know of each event: [`project_event`], the one function every stream,
//! record and past position goes through, and the opaque aliases that name units under "?".
//!
//! The law it keeps: an event as a viewer receives it says no more than the viewer's own
//! projection before and after it shows. Concretely, for a viewer who does not own a unit
//! under "?" (A12: concealment; "Sewer?"/"Lost?" alike, B8):
//! - the unit is named by its alias (`?3`), never by its id;
//! - MF allotments, their breakdown and MF left are left out of its accounts (they tell a
//!   leader from a squad, A4.1), and only MF spent — which the board shows — stays;
//! - free text naming it (WA reasons, roll reasons, notes) names the alias, and a reason about
//!   its own qualities is replaced by a neutral one;
//! - an event about a unit the viewer may not see at all (HIP, A12.3) is absent.
//!
//! Aliases are part of the state ([`Game::aliases`]): assigned by `apply` in order of first
//! need as a unit goes under "?" (a unit placed from HIP, a stack entering a sewer or tunnel);
//! units that go under "?" at the same moment are ordered by hex and then by a hash keyed with
//! the whole scenario, which a viewer who does not hold the secret parts cannot compute. An
//! alias is kept while the unit stays concealed and dropped when it is revealed; the event that
//! reveals it says which "?" it was ([`Renamed`]).

use crate::command::{CcAttack, Command};
use crate::event::{each_event, Fact};
use crate::event::{Allotment, Event, MfAccount};
use crate::{apply, hash_encoded, Game, MovementRecord, Unit, Viewer, Weapon};
use board::scenario::{Scenario, Side, UnitId};
use board::terrain::Mf;
use serde::{Deserialize, Serialize};

/// A unit the viewer knew under one name and knows under another after the event: a unit that
/// went under "?" (its id → its alias) or came out of it (its alias → its id).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renamed {
    pub from: UnitId,
    pub to: UnitId,
}

/// One event as one viewer receives it: the event, projected, and what it changes in the
/// viewer's picture beyond the event itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewed {
    /// The event, naming units as the viewer knew them before it.
    pub event: Event,
    /// Units renamed by it, applied after the event.
    pub renamed: Vec<Renamed>,
    /// Support weapons that came into the viewer's sight with it (dropped by a unit under "?",
    /// or carried by a unit it revealed), as they now stand.
    pub weapons: Vec<Weapon>,
}

/// Whether `viewer` sees `unit` only as a "?": it is concealed and not theirs.
pub fn masked(viewer: Viewer, unit: &Unit) -> bool {
    unit.concealed && viewer != Viewer::Side(unit.side)
}

/// `unit` as `viewer` sees it: under "?" (`masked`), what it is — its kind, ratings, morale,
/// wound — is what a projection shows of it, nothing more. A decision that names the enemy's
/// "?" (an adjudication, A12) reads it here, so its answer cannot tell what the "?" hides.
pub fn seen_as(viewer: Viewer, unit: &Unit) -> std::borrow::Cow<'_, Unit> {
    if masked(viewer, unit) {
        let mut shown = unit.clone();
        crate::mask_unit(&mut shown);
        std::borrow::Cow::Owned(shown)
    } else {
        std::borrow::Cow::Borrowed(unit)
    }
}

/// The prefix of every alias; no unit id a scenario may use starts with it.
pub(crate) const ALIAS_PREFIX: char = '?';

/// What a side's word naming no unit it may name is marked with in its command
/// ([`command_in_ids`]): no id or alias holds a control character, so no unit is found by the
/// marked word, and the refusal gives the word back as the side wrote it ([`given_word`]).
const NOT_NAMED: char = '\u{0}';

/// A side's word as it wrote it: `name` without the mark [`command_in_ids`] puts on a word
/// that names a unit the side knows by another name or not at all.
pub fn given_word(name: &str) -> &str {
    name.strip_prefix(NOT_NAMED).unwrap_or(name)
}

/// The event as `viewer` may know it, given the whole game before and after it (`after` is
/// `before` with `event` applied), or `None` when the viewer may not know it happened. The one
/// projection of events: live streams, resumes, the record, past positions and exports' viewer
/// streams all call it.
pub fn project_event(before: &Game, after: &Game, viewer: Viewer, event: &Event) -> Option<Viewed> {
    project(before, after, viewer, event, Walk::WhenNeeded)
}

/// [`project_event`] walking every unit and weapon whatever the games hold: what its short cut
/// must give, event by event (the projection laws' tests compare the two).
pub fn project_event_walked(
    before: &Game,
    after: &Game,
    viewer: Viewer,
    event: &Event,
) -> Option<Viewed> {
    project(before, after, viewer, event, Walk::Always)
}

/// Whether the projection of an event looks through every unit and weapon for names and
/// sightings that changed, or only when a unit is concealed or hidden in either game.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    WhenNeeded,
    Always,
}

/// The one projection of events ([`project_event`]), with its walk chosen.
///
/// The short cut: when no unit is concealed or hidden in either game (`Units::
/// concealed_or_hidden`, counted once per change of the units), nothing the walks look for can
/// be found. [`masked`] needs a concealed unit, so every unit is named by its id before and
/// after: `Names::renamed` finds no name that changed, and `Names::text` has no alias to put
/// in and (every unit seen, [`Viewer::sees_unit`] failing only for a hidden one) no unit to
/// call "a unit". A weapon is then in every viewer's projection of either game (its holder, if
/// any, is neither hidden nor under "?"), so the weapons shown are those in `after` and not in
/// `before`: none when the two share one map or hold the same ids, and otherwise the walk finds
/// them (the opening `GameCreated`, an undo).
fn project(
    before: &Game,
    after: &Game,
    viewer: Viewer,
    event: &Event,
    walk: Walk,
) -> Option<Viewed> {
    let visible = matches!(
        event,
        Event::GameCreated(_)
            | Event::EventsUndone(_)
            | Event::EventsUndoneTo(_)
            | Event::HiddenUnitPlaced(_)
    ) || before.shows(viewer, event);
    if !visible {
        return None;
    }
    let open = walk == Walk::WhenNeeded
        && before.units.concealed_or_hidden() == 0
        && after.units.concealed_or_hidden() == 0;
    let names = Names {
        before,
        after,
        viewer,
        open,
    };
    Some(Viewed {
        event: names.event(event),
        renamed: if open { vec![] } else { names.renamed() },
        weapons: weapons_shown(before, after, viewer, open),
    })
}

/// A side's command with the aliases it names (the opponent's units under "?", as it knows
/// them) turned into ids: a player acts on what it sees. An adjudication names a unit of the
/// opponent's, and so does a CC designation its defenders (A11.12): a "?" in the Location is
/// named by the alias the side's projection shows. An alias the side may not use stays as it
/// is and is refused as unknown.
///
/// A side names a unit only by the name its projection shows (A12): the id of a unit it sees
/// under "?", or not at all (HIP), is no name of a unit to it. Such a word is marked first
/// ([`NOT_NAMED`]), so no decision finds a unit by it: whatever the command, it is refused
/// exactly as a made-up id is, at the same check and in the same words, and neither accepted
/// nor answered with the alias or the side of the unit behind it.
pub fn command_in_ids(game: &Game, side: Side, command: Command) -> Command {
    let viewer = Viewer::Side(side);
    let command = command.map_units(|name| match game.units.get(&name) {
        Some(unit) if !viewer.sees_unit(unit) || masked(viewer, unit) => {
            format!("{NOT_NAMED}{name}")
        }
        _ => name,
    });
    match command {
        Command::Adjudicate {
            unit,
            outcome,
            note,
        } => Command::Adjudicate {
            unit: id_for_alias(game, side, unit),
            outcome,
            note,
        },
        Command::CloseCombat {
            hex,
            attacks,
            withdrawals,
            no_ambush,
        } => Command::CloseCombat {
            hex,
            attacks: attacks
                .into_iter()
                .map(|a| CcAttack {
                    attackers: a.attackers,
                    defenders: a
                        .defenders
                        .into_iter()
                        .map(|d| id_for_alias(game, side, d))
                        .collect(),
                })
                .collect(),
            // A side withdraws its own units, never by an alias.
            withdrawals,
            no_ambush,
        },
        other => other,
    }
}

/// The id of the unit `side` knows by the alias `name`, if `name` is the alias of a unit masked
/// from it; otherwise `name` as it is (an id, or an alias it may not use). Only the units the
/// side sees under "?" are found, so an alias tells nothing the side's projection does not.
fn id_for_alias(game: &Game, side: Side, name: UnitId) -> UnitId {
    if !name.starts_with(ALIAS_PREFIX) {
        return name;
    }
    game.aliases
        .iter()
        .find(|(id, alias)| {
            **alias == name
                && game
                    .units
                    .get(*id)
                    .is_some_and(|u| masked(Viewer::Side(side), u))
        })
        .map_or(name, |(id, _)| id.clone())
}

/// `text` with every whole-word `id` (quoted or bare) replaced by `name`, or by "a unit" when
/// the reader may not know it (`None`; its quotes go with it). A word runs over the characters
/// a unit id may hold (letters, digits, `-`, `_`, `.`); a `.` ending a sentence is no part of it.
fn rename_word(text: &str, id: &str, name: Option<&str>) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(id) {
        let before = rest[..i].chars().next_back();
        let after_id = &rest[i + id.len()..];
        let mut next = after_id.chars();
        let ends = match next.next() {
            None => true,
            Some('.') => !next.next().is_some_and(word),
            Some(c) => !word(c),
        };
        let starts = !before.is_some_and(|c| word(c) || c == '.');
        if !(starts && ends) {
            let step = i + id.len();
            out.push_str(&rest[..step]);
            rest = &rest[step..];
            continue;
        }
        let quoted = before == Some('`') && after_id.starts_with('`');
        match name {
            Some(name) => {
                out.push_str(&rest[..i]);
                out.push_str(name);
                rest = after_id;
            }
            None if quoted => {
                out.push_str(&rest[..i - 1]);
                out.push_str("a unit");
                rest = &after_id[1..];
            }
            None => {
                out.push_str(&rest[..i]);
                out.push_str("a unit");
                rest = after_id;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The name `viewer` knows unit `id` by (its alias while it is under another side's "?"), or
/// `None` for a unit the viewer may not know of at all (HIP, A12.3). An id that is no unit of
/// the game is the reader's own word, given back as it is.
pub fn name_for(game: &Game, viewer: Viewer, id: &str) -> Option<UnitId> {
    match game.units.get(id) {
        None => Some(given_word(id).to_string()),
        Some(unit) if !viewer.sees_unit(unit) => None,
        Some(unit) if masked(viewer, unit) => Some(
            game.aliases
                .get(id)
                .cloned()
                .unwrap_or_else(|| ALIAS_PREFIX.to_string()),
        ),
        Some(_) => Some(id.to_string()),
    }
}

/// Applies an event as a viewer received it to that viewer's projection.
pub fn apply_viewed(view: &mut Game, viewed: &Viewed) {
    apply(view, &viewed.event);
    for r in &viewed.renamed {
        rename_unit(view, &r.from, &r.to);
    }
    for w in &viewed.weapons {
        view.weapons.insert(w.id.clone(), w.clone());
    }
    if let Some(viewer) = view.viewer {
        super::mask_concealed(view, viewer);
        keep_attackers_record(view, viewer);
    }
}

/// Which weapons changed Location in this MPh (`Game::moved_weapons`, A4.41) is the ATTACKER's
/// own record of his moves, and only a rule on his AFPh fire reads it: the DEFENDER and
/// spectators are shown the moves, not the record, so a weapon that moved under "?" or HIP and
/// is seen later tells them nothing new. Run on every projection and after every event a
/// viewer applies, as `mask_concealed` is.
pub(super) fn keep_attackers_record(game: &mut Game, viewer: Viewer) {
    if viewer != Viewer::Side(game.attacker()) {
        game.moved_weapons.clear();
    }
}

/// How a viewer names units around one event.
pub(crate) struct Names<'g> {
    pub(crate) before: &'g Game,
    pub(crate) after: &'g Game,
    pub(crate) viewer: Viewer,
    /// No unit is concealed or hidden in either game: every unit goes by its id (`project`).
    open: bool,
}

impl Names<'_> {
    /// The alias of a unit under "?" in either position.
    pub(crate) fn alias(&self, id: &UnitId) -> Option<&UnitId> {
        self.before
            .aliases
            .get(id)
            .or_else(|| self.after.aliases.get(id))
    }

    /// Masked from the viewer before the event, or unseen before and masked after it.
    pub(crate) fn masked(&self, id: &UnitId) -> bool {
        match self.before.units.get(id) {
            Some(u) if self.viewer.sees_unit(u) => masked(self.viewer, u),
            _ => self
                .after
                .units
                .get(id)
                .is_some_and(|u| masked(self.viewer, u)),
        }
    }

    /// The name the viewer knows `id` by, as of before the event.
    pub(crate) fn name(&self, id: &UnitId) -> UnitId {
        if self.masked(id) {
            self.alias(id)
                .cloned()
                .unwrap_or_else(|| ALIAS_PREFIX.to_string())
        } else {
            id.clone()
        }
    }

    /// Whether the viewer's projection before the event shows the weapon: its possessor is
    /// neither hidden from it nor under another side's "?".
    pub(crate) fn weapon_seen(&self, id: &str) -> bool {
        self.before.weapons.get(id).is_some_and(|w| {
            w.held_by.as_ref().is_none_or(|h| {
                self.before
                    .units
                    .get(h)
                    .is_some_and(|u| self.viewer.sees_unit(u))
                    && !self.masked(h)
            })
        })
    }

    pub(crate) fn names(&self, ids: &[UnitId]) -> Vec<UnitId> {
        ids.iter().map(|id| self.name(id)).collect()
    }

    /// An MF account as the viewer may read it: a unit under "?" shows only the MF it spent.
    pub(crate) fn account(&self, a: &MfAccount) -> MfAccount {
        if self.masked(&a.unit) {
            MfAccount {
                unit: self.name(&a.unit),
                allotment: Allotment::default(),
                spent: a.spent,
                left: Mf::default(),
            }
        } else {
            a.clone()
        }
    }

    pub(crate) fn accounts(&self, accounts: &[MfAccount]) -> Vec<MfAccount> {
        accounts.iter().map(|a| self.account(a)).collect()
    }

    /// Text an event carries (a reason, a note a player wrote) with every unit the viewer may
    /// not know by its id renamed, quoted or bare: a masked one to its alias, one it may not
    /// know of to "a unit". Refusals are never read this way: they are built from typed pieces
    /// (`rules::violation::Piece`).
    pub(crate) fn text(&self, text: &str) -> String {
        let mut text = text.to_string();
        if self.open {
            return text;
        }
        for id in self.before.units.keys().chain(self.after.units.keys()) {
            if self.masked(id) {
                text = rename_word(&text, id, Some(&self.name(id)));
            } else if !self.seen(id) {
                text = rename_word(&text, id, None);
            }
        }
        text
    }

    /// Words a side wrote (an adjudication's note, a dispute's reason) as `viewer` may read
    /// them: [`Names::text`] for the writer's own units alone. A word naming another side's
    /// unit is the writer's own guess at an id it was never shown, and stays as written for
    /// every reader: renamed, its alias or "a unit" would tell the writer (or anyone reading
    /// with the spectators' token) which guessed ids are under which "?" and which are HIP.
    pub(crate) fn text_by(&self, writer: Side, text: &str) -> String {
        let mut text = text.to_string();
        if self.open {
            return text;
        }
        let written_of = |id: &UnitId| {
            [self.before, self.after]
                .into_iter()
                .find_map(|game| game.units.get(id))
                .is_some_and(|u| u.side == writer)
        };
        for id in self.before.units.keys().chain(self.after.units.keys()) {
            if !written_of(id) {
                continue;
            }
            if self.masked(id) {
                text = rename_word(&text, id, Some(&self.name(id)));
            } else if !self.seen(id) {
                text = rename_word(&text, id, None);
            }
        }
        text
    }

    /// Whether the viewer may know of unit `id` at all, before or after the event.
    pub(crate) fn seen(&self, id: &UnitId) -> bool {
        let mut units = [self.before, self.after]
            .into_iter()
            .filter_map(|game| game.units.get(id))
            .peekable();
        units.peek().is_none() || units.any(|u| self.viewer.sees_unit(u))
    }

    pub(crate) fn event(&self, event: &Event) -> Event {
        let _v = self.viewer;
        each_event!(event.clone(), e => e.viewed(self))
    }

    /// Units the viewer saw before and after under different names.
    pub(crate) fn renamed(&self) -> Vec<Renamed> {
        let mut renamed = vec![];
        for (id, unit) in &self.after.units {
            let Some(was) = self.before.units.get(id) else {
                continue;
            };
            if !self.viewer.sees_unit(was) || !self.viewer.sees_unit(unit) {
                continue;
            }
            let from = if masked(self.viewer, was) {
                self.before.aliases.get(id)
            } else {
                Some(id)
            };
            let to = if masked(self.viewer, unit) {
                self.after.aliases.get(id)
            } else {
                Some(id)
            };
            if let (Some(from), Some(to)) = (from, to) {
                if from != to {
                    renamed.push(Renamed {
                        from: from.clone(),
                        to: to.clone(),
                    });
                }
            }
        }
        renamed
    }
}

/// Weapons in the viewer's projection after the event that were not in it before.
///
/// `open`: no unit is concealed or hidden in either game (`project`), so every weapon is in
/// both projections it is in the games of, and none is shown while the two hold the same ids.
fn weapons_shown(before: &Game, after: &Game, viewer: Viewer, open: bool) -> Vec<Weapon> {
    if open
        && (before.weapons.shared_with(&after.weapons)
            || before.weapons.keys().eq(after.weapons.keys()))
    {
        return vec![];
    }
    // A projection keeps a weapon unless its holder is hidden from the viewer or under another
    // side's "?" (`Game::project`), and then leaves it as it is (only a masked holder is
    // renamed): so the weapons shown are read off the whole games, with no projection built.
    let kept = |game: &Game, w: &Weapon| {
        w.held_by.as_ref().is_none_or(|h| {
            game.units
                .get(h)
                .is_none_or(|u| viewer.sees_unit(u) && !masked(viewer, u))
        })
    };
    let shown: Vec<Weapon> = after
        .weapons
        .values()
        .filter(|w| kept(after, w))
        .filter(|w| !before.weapons.get(&w.id).is_some_and(|b| kept(before, b)))
        .cloned()
        .collect();
    debug_assert_eq!(
        shown,
        {
            let seen_before = before.project(viewer).weapons;
            after
                .project(viewer)
                .weapons
                .values()
                .filter(|w| !seen_before.contains_key(&w.id))
                .cloned()
                .collect::<Vec<_>>()
        },
        "the weapons shown are those the projections show"
    );
    shown
}

/// Renames a unit everywhere the state refers to it. If a unit of the new name is there
/// already (a revealed unit arrives with its id), the old entry is dropped.
pub(super) fn rename_unit(game: &mut Game, from: &UnitId, to: &UnitId) {
    let Some(mut unit) = game.units.remove(from) else {
        return;
    };
    if !game.units.contains_key(to) {
        unit.id = to.clone();
        game.units.insert(to.clone(), unit.into_inner());
    }
    let swap = |id: &mut UnitId| {
        if id == from {
            *id = to.clone();
        }
    };
    // The Movement Phase's record is shared with the game projected: copied only when it
    // names the unit renamed.
    let movement = &game.movement;
    let named = [
        &movement.moving_stack,
        &movement.last_movers,
        &movement.finished,
        &movement.sewer_check_failed,
        &movement.advanced,
        &movement.rallied,
        &movement.bypassed_concealed,
        &movement.dropped_to_withdraw,
    ]
    .into_iter()
    .chain(movement.recovery_attempts.values())
    .any(|set| set.contains(from))
        || movement.rally_phase_acts.contains_key(from);
    let mut unnamed = MovementRecord::default();
    let movement: &mut MovementRecord = if named {
        &mut game.movement
    } else {
        &mut unnamed
    };
    for set in [
        &mut game.prep_fired,
        &mut game.first_fired,
        &mut game.final_fired,
        &mut game.opportunity_fire,
        &mut game.inherent_fp_forfeited,
        &mut movement.moving_stack,
        &mut movement.last_movers,
        &mut movement.finished,
        &mut movement.sewer_check_failed,
        &mut movement.advanced,
        &mut movement.rallied,
        &mut movement.bypassed_concealed,
        &mut movement.dropped_to_withdraw,
        &mut game.wa_shown,
    ]
    .into_iter()
    .chain(movement.recovery_attempts.values_mut())
    {
        if set.remove(from) {
            set.insert(to.clone());
        }
    }
    if let Some(act) = movement.rally_phase_acts.remove(from) {
        movement.rally_phase_acts.insert(to.clone(), act);
    }
    for u in game.units.values_mut() {
        if let Some(l) = &mut u.led_by {
            swap(l);
        }
    }
    for w in game.weapons.values_mut() {
        if let Some(h) = &mut w.held_by {
            swap(h);
        }
    }
    game.tunnel_sightings = std::mem::take(&mut game.tunnel_sightings)
        .into_iter()
        .map(|(hex, mut unit)| {
            swap(&mut unit);
            (hex, unit)
        })
        .collect();
    if let Some(c) = &mut game.wa_chance {
        c.units.iter_mut().for_each(swap);
    }
    if let Some(c) = &mut game.wa_challenge {
        c.holders.iter_mut().chain(&mut c.claimants).for_each(swap);
    }
    if let Some(w) = &mut game.wa_hip_window {
        w.claimants.iter_mut().for_each(swap);
    }
    if let Some(a) = &mut game.attack {
        a.firers.iter_mut().for_each(swap);
        if a.wa_holders.remove(from) {
            a.wa_holders.insert(to.clone());
        }
    }
    if let Some(d) = &mut game.sewer_designation {
        d.units.iter_mut().for_each(swap);
    }
    if let Some(c) = &mut game.cc_infiltration {
        c.ids_mut().for_each(swap);
    }
}

/// Gives every unit that went under "?" an alias and takes it from every unit that came out:
/// run by `apply` on the whole game after each event. Hidden units get none until placed, so
/// the numbers a viewer sees never skip one it could not see.
pub(super) fn refresh_aliases(game: &mut Game) {
    let units = &game.units;
    let masked = |id: &UnitId| units.get(id).is_some_and(|u| u.concealed && !u.hidden);
    // Most events unmask nobody: the aliases are only walked, not rebuilt, then.
    if !game.aliases.keys().all(masked) {
        game.aliases.retain(|id, _| masked(id));
    }
    // Every alias left names a unit under "?": as many of those as aliases means none is new.
    let under = units.under_cover();
    if under == game.aliases.len() {
        return;
    }
    let mut fresh: Vec<&Unit> = units
        .values()
        .filter(|u| u.concealed && !u.hidden && !game.aliases.contains_key(&u.id))
        .collect();
    if fresh.is_empty() {
        return;
    }
    let key = scenario_key(&game.scenario);
    fresh.sort_by_key(|u| (u.hex, *blake3::keyed_hash(&key, u.id.as_bytes()).as_bytes()));
    let fresh: Vec<UnitId> = fresh.into_iter().map(|u| u.id.clone()).collect();
    for id in fresh {
        game.next_alias += 1;
        game.aliases
            .insert(id, format!("{ALIAS_PREFIX}{}", game.next_alias));
    }
}

/// The key that orders units going under "?" at the same moment: the whole scenario, hidden
/// parts included, so only someone who holds all of it can compute the order.
fn scenario_key(scenario: &Scenario) -> [u8; 32] {
    // `blake3::derive_key` of the scenario's encoding, without holding the encoding whole.
    hash_encoded(
        blake3::Hasher::new_derive_key("asl alias order v1"),
        &[],
        scenario,
    )
}

#[cfg(test)]
mod tests {
    use super::rename_word;

    #[test]
    fn a_unit_id_is_renamed_quoted_or_bare_and_only_as_a_whole_word() {
        let alias = Some("?2");
        assert_eq!(
            rename_word("`r4` may not move; r4 is pinned.", "r4", alias),
            "`?2` may not move; ?2 is pinned."
        );
        assert_eq!(
            rename_word("r41, xr4, r4-b, r4.b and r4_ stay", "r4", alias),
            "r41, xr4, r4-b, r4.b and r4_ stay"
        );
        assert_eq!(
            rename_word("seen by `r4` (r4)", "r4", None),
            "seen by a unit (a unit)"
        );
        assert_eq!(rename_word("r4", "r4", None), "a unit");
    }
}
