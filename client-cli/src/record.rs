//! The readable game record `watch` and `log` print: a header when play enters a new phase,
//! then one `#SEQ  description` line per event.

use crate::follower::{Advance, FollowError, Follower};
use protocol::wire::Sequenced;
use protocol::{Event, Game};

/// "== Turn 1, German Player Turn: MPh ==" for where `game` stands.
pub(crate) fn phase_header(game: &Game) -> String {
    format!(
        "== Turn {}, {} Player Turn: {} ==",
        game.clock.turn,
        game.side_name(game.attacker()),
        game.clock.phase()
    )
}

/// Turns a stream of events into record lines, remembering which header was printed last.
#[derive(Default)]
pub(crate) struct Record {
    header: Option<String>,
    /// Events before this version are applied for context but not printed.
    from: u64,
}

impl Record {
    pub(crate) fn starting_at(from: u64) -> Record {
        Record { header: None, from }
    }

    /// Applies `sequenced` to `follower` and returns the lines to print for it: none for a
    /// duplicate or an event before `from`, else a header if the event happened in a phase
    /// other than the last printed one, then the event. `GameCreated` precedes play, so it gets
    /// no header.
    pub(crate) fn follow(
        &mut self,
        follower: &mut Follower,
        sequenced: &Sequenced,
    ) -> Result<Vec<String>, FollowError> {
        let header = phase_header(follower.game());
        let text = match follower.advance(sequenced)? {
            Advance::Duplicate => return Ok(vec![]),
            Advance::Applied(description) => description,
        };
        if sequenced.seq < self.from {
            return Ok(vec![]);
        }
        let mut lines = vec![];
        let created = matches!(sequenced.viewed.event, Event::GameCreated(_));
        // Notes, reasons and the scenario's names are others' words: escaped for the terminal.
        if !created && self.header.as_ref() != Some(&header) {
            lines.push(crate::printable(&header));
            self.header = Some(header);
        }
        lines.push(crate::printable(&format!("#{}  {text}", sequenced.seq)));
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::GameCreated;
    use protocol::rules::decide;
    use protocol::ReadScenario;
    use protocol::{apply, Command, Scenario, ScriptedDice, Side};

    fn scenario() -> Scenario {
        Scenario::from_toml(include_str!("../../scenarios/b9-41-wall-advantage.toml")).unwrap()
    }

    fn done(game: &mut Game, by: Side) -> Sequenced {
        let event = decide(game, by, &Command::Done, &mut ScriptedDice::default())
            .unwrap()
            .remove(0);
        apply(game, &event);
        crate::follower::sequenced(game.version, event)
    }

    #[test]
    fn headers_mark_each_new_phase_once() {
        let scenario = scenario();
        let mut server = Game::new(scenario.clone());
        let created = Event::GameCreated(GameCreated {
            scenario: scenario.clone(),
        });
        apply(&mut server, &created);
        let mut stream = vec![crate::follower::sequenced(1, created)];
        // RPh (three steps, all German-led), PFPh, then the end of the MPh.
        for by in [Side::A, Side::A, Side::B, Side::A, Side::A] {
            stream.push(done(&mut server, by));
        }

        let mut follower = Follower::new(Game::new(scenario));
        let mut record = Record::default();
        let mut lines = vec![];
        for s in stream.iter().chain(&stream[..2]) {
            lines.extend(record.follow(&mut follower, s).unwrap());
        }
        let headers: Vec<&String> = lines.iter().filter(|l| l.starts_with("==")).collect();
        assert_eq!(
            headers,
            [
                "== Turn 1, German Player Turn: RPh ==",
                "== Turn 1, German Player Turn: PFPh ==",
                "== Turn 1, German Player Turn: MPh ==",
            ]
        );
        assert!(lines[0].starts_with("#1  game created"), "{lines:?}");
        assert!(
            lines.last().unwrap().starts_with("#6  German ended MPh"),
            "{lines:?}"
        );
        assert_eq!(
            lines.iter().filter(|l| l.starts_with('#')).count(),
            6,
            "the repeated events print nothing"
        );
    }

    #[test]
    fn events_before_from_give_context_but_no_lines() {
        let scenario = scenario();
        let mut server = Game::new(scenario.clone());
        let mut follower = Follower::new(server.clone());
        let mut record = Record::starting_at(3);
        let stream: Vec<Sequenced> = [Side::A, Side::A, Side::B]
            .into_iter()
            .map(|by| done(&mut server, by))
            .collect();
        assert!(record.follow(&mut follower, &stream[0]).unwrap().is_empty());
        assert!(record.follow(&mut follower, &stream[1]).unwrap().is_empty());
        let lines = record.follow(&mut follower, &stream[2]).unwrap();
        assert_eq!(
            lines[0], "== Turn 1, German Player Turn: RPh ==",
            "{lines:?}"
        );
        assert!(lines[1].starts_with("#3  Russian ended"), "{lines:?}");
        assert_eq!(follower.game(), &server);
    }
}
