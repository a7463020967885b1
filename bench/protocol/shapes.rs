//! Positions of a real scenario's size, written as scenario files: shared by the `decide`
//! bench and the memory test (`protocol/tests/game_memory.rs`), so both measure one shape.

/// `pairs` German squads along row 2 of board 55 holding WA over the wall to row 3, where as
/// many Russian squads stand in woods (in-hex TEM, so none must claim WA: B9.323).
pub fn walled_line(pairs: usize) -> String {
    let mut text = String::from(
        "name = \"A walled line\"\nturns = 2\nfirst = \"german\"\nsides = [{ id = \"german\", name = \"German\" }, { id = \"russian\", name = \"Russian\" }]\n\n[[area]]\nfrom = \"55A1\"\nto = \"55GG10\"\nterrain = \"open_ground\"\n",
    );
    let columns = [
        "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R",
        "S", "T", "U", "V", "W", "X", "Y", "Z", "AA", "BB", "CC", "DD", "EE", "FF", "GG",
    ];
    for (i, column) in columns.iter().take(pairs).enumerate() {
        text += &format!(
            "\n[[hexes]]\nhex = \"55{column}3\"\nterrain = \"woods\"\n\n[[hexsides]]\nhexside = \"55{column}2-55{column}3\"\nfeature = \"wall\"\n\n[[units]]\nid = \"ge{i}\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"55{column}2\"\nwall_advantage = true\n\n[[units]]\nid = \"ru{i}\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"55{column}3\"\n"
        );
    }
    text
}

/// `pairs` German squads holding WA over a wall, each with a Russian squad in woods across it
/// ([`walled_line`]'s pair), in up to three lines across board 55 (rows 2–3, 5–6 and 8–9), so
/// that a position has as many units as a real scenario's: 150 in 75 pairs.
pub fn walled_lines(pairs: usize) -> String {
    let mut text = String::from(
        "name = \"Walled lines\"\nturns = 2\nfirst = \"german\"\nsides = [{ id = \"german\", name = \"German\" }, { id = \"russian\", name = \"Russian\" }]\n\n[[area]]\nfrom = \"55A1\"\nto = \"55GG10\"\nterrain = \"open_ground\"\n",
    );
    let columns = [
        "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R",
        "S", "T", "U", "V", "W", "X", "Y", "Z", "AA", "BB", "CC", "DD", "EE", "FF", "GG",
    ];
    assert!(
        pairs <= 3 * columns.len(),
        "three lines of {} pairs at most",
        columns.len()
    );
    for i in 0..pairs {
        let column = columns[i % columns.len()];
        let (wall, woods) = [(2, 3), (5, 6), (8, 9)][i / columns.len()];
        text += &format!(
            "\n[[hexes]]\nhex = \"55{column}{woods}\"\nterrain = \"woods\"\n\n[[hexsides]]\nhexside = \"55{column}{wall}-55{column}{woods}\"\nfeature = \"wall\"\n\n[[units]]\nid = \"ge{i}\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"55{column}{wall}\"\nwall_advantage = true\n\n[[units]]\nid = \"ru{i}\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"55{column}{woods}\"\n"
        );
    }
    text
}
