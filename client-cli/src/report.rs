//! How `run` and `check` report a script line: the same words online and offline, so a script
//! checked with `asl check` reads the same when played with `asl run`.

use protocol::{Event, RuleViolation};
use serde::Serialize;
use std::io::{self, Write};

/// One script line's outcome, ready to print.
#[derive(Clone, Debug)]
pub(crate) struct LineOutcome {
    pub line: usize,
    pub text: String,
    pub result: Result<Vec<Event>, RuleViolation>,
    /// One description per event, each written against the position the event happened in.
    pub descriptions: Vec<String>,
    /// Expectations that did not hold.
    pub failures: Vec<String>,
}

#[derive(Serialize)]
struct LineJson<'a> {
    line: usize,
    text: &'a str,
    accepted: bool,
    events: &'a [Event],
    violation: Option<&'a RuleViolation>,
    failures: &'a [String],
}

impl LineOutcome {
    /// `LINE: TEXT -> accepted: a; b` or `LINE: TEXT -> refused RULE: detail`, then one
    /// `  expectation failed: …` line per failure.
    pub(crate) fn text(&self) -> String {
        let mut s = match &self.result {
            Ok(_) if self.descriptions.is_empty() => {
                format!("{}: {} -> accepted", self.line, self.text)
            }
            // Events and refusals may carry the opponent's words: escaped for the terminal.
            Ok(_) => format!(
                "{}: {} -> accepted: {}",
                self.line,
                self.text,
                crate::printable(&self.descriptions.join("; "))
            ),
            Err(v) => format!(
                "{}: {} -> refused {}",
                self.line,
                self.text,
                crate::printable(&v.to_string())
            ),
        };
        for failure in &self.failures {
            s.push_str("\n  expectation failed: ");
            s.push_str(failure);
        }
        s
    }

    /// `{line, text, accepted, events, violation, failures}` on one line.
    pub(crate) fn json(&self) -> String {
        let (events, violation): (&[Event], _) = match &self.result {
            Ok(events) => (events, None),
            Err(v) => (&[], Some(v)),
        };
        serde_json::to_string(&LineJson {
            line: self.line,
            text: &self.text,
            accepted: self.result.is_ok(),
            events,
            violation,
            failures: &self.failures,
        })
        .expect("a line report always encodes")
    }

    pub(crate) fn write(&self, out: &mut dyn Write, json: bool) -> io::Result<()> {
        if json {
            writeln!(out, "{}", crate::printable_json(&self.json()))
        } else {
            writeln!(out, "{}", self.text())
        }
    }
}

/// Counts for the summary line `asl check` ends with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Tally {
    pub lines: usize,
    pub accepted: usize,
    pub refused: usize,
    pub expectation_failures: usize,
}

impl Tally {
    pub(crate) fn add(&mut self, outcome: &LineOutcome) {
        self.lines += 1;
        match outcome.result {
            Ok(_) => self.accepted += 1,
            Err(_) => self.refused += 1,
        }
        self.expectation_failures += outcome.failures.len();
    }

    /// `N lines, N accepted, N refused, N expectation failures` — always in this form, so
    /// scripts can grep it.
    pub(crate) fn text(&self) -> String {
        format!(
            "{} lines, {} accepted, {} refused, {} expectation failures",
            self.lines, self.accepted, self.refused, self.expectation_failures
        )
    }

    pub(crate) fn json(&self) -> String {
        serde_json::to_string(self).expect("a tally always encodes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::ViolationKind;

    fn refused() -> LineOutcome {
        LineOutcome {
            line: 4,
            text: "russian move 747a H6".into(),
            result: Err(RuleViolation::new(
                "A3.3",
                ViolationKind::WrongSide,
                "the German is to act",
            )),
            descriptions: vec![],
            failures: vec!["expected it accepted, but it was refused: A3.3: …".into()],
        }
    }

    #[test]
    fn text_names_the_line_the_result_and_each_failure() {
        assert_eq!(
            refused().text(),
            "4: russian move 747a H6 -> refused A3.3: the German is to act\n  expectation \
             failed: expected it accepted, but it was refused: A3.3: …"
        );
        let accepted = LineOutcome {
            line: 2,
            text: "german done".into(),
            result: Ok(vec![]),
            descriptions: vec!["a".into(), "b".into()],
            failures: vec![],
        };
        assert_eq!(accepted.text(), "2: german done -> accepted: a; b");
    }

    #[test]
    fn json_has_every_field_even_when_empty() {
        let v: serde_json::Value = serde_json::from_str(&refused().json()).unwrap();
        assert_eq!(v["line"], 4);
        assert_eq!(v["accepted"], false);
        assert_eq!(v["events"], serde_json::json!([]));
        assert_eq!(v["violation"]["rule"], "A3.3");
        assert_eq!(v["violation"]["kind"], "wrong_side");
        assert_eq!(v["failures"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn tally_counts_lines_results_and_failures() {
        let mut tally = Tally::default();
        tally.add(&refused());
        assert_eq!(
            tally.text(),
            "1 lines, 0 accepted, 1 refused, 1 expectation failures"
        );
    }
}
