//! VASL saved games (`.vsav`), read from bytes: the board picker's layout and every piece
//! with its traits, as VASSAL wrote them. What the pieces *mean* (units, weapons, markers) is
//! `vasl::counters`; where they are (hexes) is `vasl::geometry`.
//!
//! The format, as VASSAL writes it (VASSAL and VASL are LGPL; this is the project's own
//! reading of their output):
//! - a zip holding `savedGame` (the game), `moduledata` (XML naming the module: `VASL`) and
//!   `savedata`;
//! - `savedGame` is obfuscated (`!VCSK`, a key as two hex digits, then every byte XORed with
//!   the key, each written as two hex digits) up to VASSAL 3.7; later ones may be plain text
//!   or xz-compressed, so the reader looks at the bytes rather than assuming;
//! - the text is `begin_save`, the commands, `end_save`, separated by ESC (0x1B); a command
//!   made of commands nests them, its ESCs escaped with a backslash one level deeper;
//! - a piece is `+/ID/TYPE/STATE`: TYPE is its traits, outermost first, each trait's own
//!   definition then a tab then the rest of the stack escaped one level deeper (a backslash
//!   before the tab), down to the innermost `piece;…;IMAGE;NAME`; STATE is the traits' states
//!   nested the same way, the innermost `MAP;X;Y;…` (the map and the pixel the piece sits on);
//! - a stack is `+/ID/stack/MAP;X;Y;ID;ID…`, its pieces bottom first;
//! - the board picker's layout is `bd\t` then, per board, `COLUMN\tROW\tNAME\t…` (a name
//!   starting with `r` for a board turned through 180°, optional crop bounds, `VER\tV`,
//!   overlays, `SSR\t…` terrain changes, `ZOOM\tM`), boards separated by `bd\t`.

use super::geometry::Crop;
use std::io::{Cursor, Read, Write};

/// Largest `.vsav` we read, in bytes. Published saves of whole scenarios are under 100 KB;
/// a long game log stays far below this.
pub const SAVE_BYTES_MAX: usize = 16 * 1024 * 1024;
/// Largest `savedGame` once decoded (obfuscation doubles it, xz shrinks it), in bytes; a zip or
/// xz stream that inflates past this is refused rather than filling memory.
pub const SAVED_GAME_BYTES_MAX: usize = 64 * 1024 * 1024;
/// Most pieces a save may hold. The largest published set-up holds about 600.
pub const PIECES_MAX: usize = 20_000;
/// Most traits on one piece. VASL's richest counters carry about 60.
pub const TRAITS_PER_PIECE_MAX: usize = 256;
/// Most levels commands nest within each other. VASSAL writes two or three.
pub const COMMAND_DEPTH_MAX: usize = 32;
/// Most bytes unescaping one save may produce, summed over every level: the commands nested
/// in commands, each piece split into its id, type and state, and each piece's traits peeled
/// one at a time. Each level is a new copy of the text inside it, so a small file nested
/// deep would otherwise fill memory: a 170 KB zip of a nested, highly compressible
/// `savedGame` once drove `asl import` to 1.2 GB (issue 50). A large real save (600 pieces
/// of some 40 traits each) needs a few tens of MB; reading any save holds at most the file,
/// its `savedGame` as read and as decoded, and this.
pub const UNESCAPED_BYTES_MAX: usize = 128 * 1024 * 1024;
/// Most boards in a layout: far more than any scenario (the engine's map limit is lower).
pub const BOARDS_MAX: usize = 64;

/// Why a file is not a VASL saved game we can read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SaveError {
    #[error("not a VASL saved game: the file is not a zip archive ({0})")]
    NotAZip(String),
    #[error("{bytes} bytes is over the {max}-byte limit for a saved game", max = SAVE_BYTES_MAX)]
    TooLarge { bytes: usize },
    #[error("not a VASSAL saved game: the zip has no `savedGame` entry")]
    NoSavedGame,
    #[error("a saved game of the module `{0}`, not of VASL")]
    OtherModule(String),
    #[error("the saved game is corrupt: {0}")]
    Corrupt(String),
    #[error("the saved game is truncated: {0}")]
    Truncated(String),
    #[error("the saved game's commands nest more than {max} levels deep, past the import's limit (VASSAL writes two or three)")]
    NestedTooDeep { max: usize },
    #[error("unescaping the saved game's nested commands and traits would produce more than {max} bytes, past the import's limit")]
    UnescapedTooLarge { max: usize },
}

fn corrupt(why: impl Into<String>) -> SaveError {
    SaveError::Corrupt(why.into())
}

/// How `savedGame` was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `!VCSK` + key + hex pairs (VASSAL up to 3.7).
    Obfuscated { key: u8 },
    /// The text itself.
    Plain,
    /// xz-compressed text.
    Xz,
}

/// A saved game as VASSAL wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct SavedGame {
    pub encoding: Encoding,
    /// The module named in `moduledata`, when there is one.
    pub module: Option<String>,
    /// The board picker's layout (the last one the save records).
    pub boards: Vec<PickedBoard>,
    pub pieces: Vec<Piece>,
    pub stacks: Vec<StackRecord>,
}

/// One board of the picker's layout.
#[derive(Clone, Debug, PartialEq)]
pub struct PickedBoard {
    /// Slot column, west to east from 0.
    pub column: u32,
    /// Slot row, north to south from 0.
    pub row: u32,
    /// The board's file name without `bd` (`02` for `bd02`), rotation marker removed.
    pub file: String,
    pub rotated: bool,
    pub crop: Option<Crop>,
    pub version: Option<String>,
    /// Overlays laid on the board (`OVR` entries), as written.
    pub overlays: Vec<String>,
    /// Terrain SSR changes (`SSR` entry), as written.
    pub ssr: Option<String>,
    /// Magnification other than 1 (`ZOOM`): a deluxe-sized board.
    pub zoom: Option<f64>,
}

impl PickedBoard {
    /// The name its hexes carry: the number without leading zeros for a numbered board
    /// (`bd02` → `2`), the file name otherwise.
    pub fn name(&self) -> String {
        if !self.file.is_empty() && self.file.bytes().all(|b| b.is_ascii_digit()) {
            let trimmed = self.file.trim_start_matches('0');
            if trimmed.is_empty() {
                "0".into()
            } else {
                trimmed.into()
            }
        } else {
            self.file.clone()
        }
    }
}

/// One trait of a piece: its kind (the definition up to the first `;`, e.g. `emb2`, `hide`,
/// `piece`), its whole definition, and its state, both unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trait {
    pub kind: String,
    pub definition: String,
    pub state: String,
}

impl Trait {
    /// The definition's fields after the kind, split on `;` as VASSAL encodes them.
    pub fn fields(&self) -> Vec<String> {
        let mut all = split_escaped(&self.definition, ';');
        all.remove(0);
        all
    }
    /// The state's fields, split on `;`.
    pub fn state_fields(&self) -> Vec<String> {
        split_escaped(&self.state, ';')
    }
}

/// A piece as saved: its id, its traits outermost first (the last is the basic piece), the
/// name and image of the basic piece, and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub id: String,
    pub traits: Vec<Trait>,
    /// The basic piece's name (`4-6-8 Esq`, `geLDR`, `MMG`): the palette entry's name, which
    /// layers may change (see `vasl::counters`).
    pub name: String,
    /// The basic piece's image (`ge/ge228C`); blank when layers draw the counter.
    pub image: String,
    /// The map it is on; `None` for a piece on no map.
    pub map: Option<String>,
    pub x: i64,
    pub y: i64,
}

impl Piece {
    /// The traits of one kind, outermost first.
    pub fn traits_of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Trait> + 'a {
        self.traits.iter().filter(move |t| t.kind == kind)
    }

    /// Hidden by a player (VASSAL's Hideable trait, VASL's "HIP"): its state names who hid
    /// it, `null` when nobody did.
    pub fn hidden(&self) -> bool {
        self.traits_of("hide").any(|t| !is_null(&t.state))
    }

    /// Concealed as the unit itself (VASL's Concealable trait, a VASSAL mask): its first
    /// state field names who masked it, `null` when nobody did.
    pub fn masked(&self) -> bool {
        self.traits_of("conceal")
            .chain(self.traits_of("obs"))
            .any(|t| !is_null(t.state_fields().first().map_or("null", |s| s)))
    }

    /// The nationality of a "?" concealment counter (VASL's Concealment trait), which
    /// conceals the units of that nationality beneath it in its stack.
    pub fn concealment_of(&self) -> Option<String> {
        self.traits_of("concealment")
            .next()
            .map(|t| t.fields().get(1).cloned().unwrap_or_default())
    }

    /// What the piece is for VASL's own bookkeeping (`unit`, `common` for weapons and
    /// equipment, `global` for game markers), from its `mark;DBCounterType` trait.
    pub fn counter_type(&self) -> Option<&str> {
        self.traits_of("mark")
            .find(|t| t.definition == "mark;DBCounterType")
            .map(|t| t.state.as_str())
    }

    /// The layers (VASSAL's Embellishment traits), outermost first.
    pub fn layers(&self) -> Vec<Layer> {
        self.traits
            .iter()
            .filter_map(|t| match t.kind.as_str() {
                "emb2" => Some(Layer::of_emb2(t)),
                "emb" => Some(Layer::of_emb(t)),
                _ => None,
            })
            .collect()
    }

    /// The name VASSAL shows for the piece: the basic name changed by each active layer from
    /// the innermost out (a layer's name replaces it, or adds to it where it has a `+`).
    pub fn shown_name(&self) -> String {
        let mut name = self.name.clone();
        for layer in self.layers().iter().rev() {
            if let Some(level) = layer.active_name() {
                name = layer_name_applied(level, &name);
            }
        }
        name
    }
}

fn is_null(s: &str) -> bool {
    s.is_empty() || s == "null"
}

/// VASSAL's rule for a layer's name: `+x` adds x after the name, `x+` puts x before it, a
/// name without `+` replaces it (a `+` escaped with a backslash is a plain `+`).
fn layer_name_applied(level: &str, inner: &str) -> String {
    let parts = split_escaped(level, '+');
    match parts.as_slice() {
        [only] => only.clone(),
        [first, second, ..] if first.is_empty() => format!("{inner}{second}"),
        [first, ..] => format!("{first}{inner}"),
        [] => inner.to_string(),
    }
}

/// One layer trait: its images and names per level, and which level shows (1-based), if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    pub images: Vec<String>,
    pub names: Vec<String>,
    /// The key that steps it to its next level (`E` for ELR on VASL's squads); empty where
    /// none is set. Layers stepped by one key move together, level for level.
    pub step_key: String,
    /// The level shown, from 1; `None` when the layer is switched off (a negative state).
    pub level: Option<usize>,
}

impl Layer {
    fn of_emb2(t: &Trait) -> Layer {
        let f = t.fields();
        let list = |i: usize| f.get(i).map(|s| split_escaped(s, ',')).unwrap_or_default();
        Layer {
            images: list(15),
            names: list(16),
            step_key: f.get(5).cloned().unwrap_or_default(),
            level: level_of(&t.state),
        }
    }

    /// The old layer encoding (`emb;`): after eight fields, one `IMAGE,NAME` per level.
    fn of_emb(t: &Trait) -> Layer {
        let f = t.fields();
        let (mut images, mut names) = (Vec::new(), Vec::new());
        for level in f.iter().skip(8) {
            let mut parts = split_escaped(level, ',').into_iter();
            images.push(parts.next().unwrap_or_default());
            names.push(parts.next().unwrap_or_default());
        }
        Layer {
            images,
            names,
            step_key: String::new(),
            level: level_of(&t.state),
        }
    }

    /// The image of the level shown.
    pub fn active_image(&self) -> Option<&str> {
        self.level
            .and_then(|l| self.images.get(l - 1))
            .map(|s| s.as_str())
            .filter(|s| !s.trim().is_empty())
    }

    /// The name of the level shown, when it has one.
    pub fn active_name(&self) -> Option<&str> {
        self.level
            .and_then(|l| self.names.get(l - 1))
            .map(|s| s.as_str())
            .filter(|s| !s.is_empty())
    }
}

fn level_of(state: &str) -> Option<usize> {
    let first = state.split(';').next().unwrap_or("");
    first
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .map(|v| v as usize)
}

/// A stack as saved: its map and pixel, and its pieces' ids bottom first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackRecord {
    pub id: String,
    pub map: String,
    pub x: i64,
    pub y: i64,
    pub pieces: Vec<String>,
}

// ---- reading --------------------------------------------------------------------------------

/// Reads a `.vsav` file's bytes.
pub fn read(bytes: &[u8]) -> Result<SavedGame, SaveError> {
    if bytes.len() > SAVE_BYTES_MAX {
        return Err(SaveError::TooLarge { bytes: bytes.len() });
    }
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| SaveError::NotAZip(e.to_string()))?;
    let module = match entry(&mut zip, "moduledata")? {
        Some(xml) => module_name(&xml),
        None => None,
    };
    if let Some(name) = &module {
        if name != "VASL" {
            return Err(SaveError::OtherModule(name.clone()));
        }
    }
    let raw = entry(&mut zip, "savedGame")?.ok_or(SaveError::NoSavedGame)?;
    let (encoding, text) = decode_saved_game(&raw)?;
    let mut game = parse(&text)?;
    game.encoding = encoding;
    game.module = module;
    Ok(game)
}

fn entry(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<Vec<u8>>, SaveError> {
    let file = match zip.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(corrupt(format!("the zip entry `{name}`: {e}"))),
    };
    let mut out = Vec::new();
    file.take(SAVED_GAME_BYTES_MAX as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| corrupt(format!("the zip entry `{name}` cannot be read: {e}")))?;
    if out.len() > SAVED_GAME_BYTES_MAX {
        return Err(corrupt(format!(
            "the zip entry `{name}` inflates past {SAVED_GAME_BYTES_MAX} bytes"
        )));
    }
    Ok(Some(out))
}

/// The `<name>` of `moduledata`; `None` when it has none (older saves may not).
fn module_name(xml: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(xml).ok()?;
    let doc = roxmltree::Document::parse(text).ok()?;
    doc.descendants()
        .find(|n| n.has_tag_name("name"))
        .and_then(|n| n.text())
        .map(|s| s.trim().to_string())
}

const OBFUSCATION_HEADER: &[u8] = b"!VCSK";
const XZ_MAGIC: &[u8] = &[0xFD, b'7', b'z', b'X', b'Z', 0x00];

/// `savedGame`'s bytes as text, whichever way they were written.
pub fn decode_saved_game(raw: &[u8]) -> Result<(Encoding, String), SaveError> {
    let (encoding, bytes) = if let Some(rest) = raw.strip_prefix(OBFUSCATION_HEADER) {
        let hex = |pair: &[u8]| -> Result<u8, SaveError> {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
                .ok_or_else(|| corrupt("the obfuscated text holds something not a hex digit"))
        };
        if rest.len() < 2 {
            return Err(SaveError::Truncated(
                "the obfuscated text ends before its key".into(),
            ));
        }
        let key = hex(&rest[..2])?;
        let body: Vec<u8> = rest[2..]
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        if body.len() % 2 != 0 {
            return Err(SaveError::Truncated(
                "the obfuscated text ends in the middle of a byte".into(),
            ));
        }
        let bytes = body
            .chunks(2)
            .map(|pair| hex(pair).map(|b| b ^ key))
            .collect::<Result<Vec<u8>, _>>()?;
        (Encoding::Obfuscated { key }, bytes)
    } else if raw.starts_with(XZ_MAGIC) {
        let mut out = Limited(Vec::new());
        lzma_rs::xz_decompress(&mut Cursor::new(raw), &mut out).map_err(|e| match e {
            lzma_rs::error::Error::IoError(io) if io.kind() == std::io::ErrorKind::Other => {
                corrupt(format!(
                    "the xz stream inflates past {SAVED_GAME_BYTES_MAX} bytes"
                ))
            }
            lzma_rs::error::Error::IoError(_) | lzma_rs::error::Error::HeaderTooShort(_) => {
                SaveError::Truncated("the xz stream ends early".into())
            }
            other => corrupt(format!("the xz stream: {other:?}")),
        })?;
        (Encoding::Xz, out.0)
    } else {
        (Encoding::Plain, raw.to_vec())
    };
    let text = String::from_utf8(bytes).map_err(|_| corrupt("the decoded text is not UTF-8"))?;
    Ok((encoding, text))
}

/// A `Vec` that refuses to grow past [`SAVED_GAME_BYTES_MAX`].
struct Limited(Vec<u8>);

impl Write for Limited {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > SAVED_GAME_BYTES_MAX {
            return Err(std::io::Error::other("over the limit"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const COMMAND_SEPARATOR: char = '\u{1b}';

/// The bytes unescaping has produced for one save. Each level is charged before it is copied,
/// with the length of the text it copies from (a copy is never longer), so the copies made
/// never go past the budget, not even by the one that is refused.
struct Unescaping {
    produced: usize,
    max: usize,
}

impl Unescaping {
    fn new(max: usize) -> Unescaping {
        Unescaping { produced: 0, max }
    }

    fn charge(&mut self, bytes: usize) -> Result<(), SaveError> {
        match self.produced.checked_add(bytes) {
            Some(total) if total <= self.max => {
                self.produced = total;
                Ok(())
            }
            _ => Err(SaveError::UnescapedTooLarge { max: self.max }),
        }
    }
}

/// Parses the decoded text of `savedGame`.
pub fn parse(text: &str) -> Result<SavedGame, SaveError> {
    parse_within(text, &mut Unescaping::new(UNESCAPED_BYTES_MAX))
}

fn parse_within(text: &str, budget: &mut Unescaping) -> Result<SavedGame, SaveError> {
    if !text.starts_with("begin_save") {
        return Err(corrupt(
            "it does not start with `begin_save`: not a VASSAL saved game",
        ));
    }
    if !text.trim_end().ends_with("end_save") {
        return Err(SaveError::Truncated(
            "it does not end with `end_save`".into(),
        ));
    }
    let mut commands = Vec::new();
    leaves(text, 0, &mut commands, budget)?;
    let mut game = SavedGame {
        encoding: Encoding::Plain,
        module: None,
        boards: Vec::new(),
        pieces: Vec::new(),
        stacks: Vec::new(),
    };
    for command in &commands {
        if let Some(rest) = command.strip_prefix("+/") {
            budget.charge(rest.len())?;
            let parts = split_escaped(rest, '/');
            let (id, kind, state) = match parts.as_slice() {
                [id, kind, state, ..] => (id, kind, state.as_str()),
                [id, kind] => (id, kind, ""),
                _ => {
                    return Err(corrupt(format!(
                        "a piece without a type: `{}`",
                        clip(command)
                    )))
                }
            };
            if kind == "stack" {
                budget.charge(state.len())?;
                game.stacks.push(stack(id, state)?);
            } else {
                if game.pieces.len() >= PIECES_MAX {
                    return Err(corrupt(format!("more than {PIECES_MAX} pieces")));
                }
                game.pieces.push(piece(id, kind, state, budget)?);
            }
        } else if let Some(rest) = command.strip_prefix("bd\t") {
            let boards = board_layout(rest)?;
            if !boards.is_empty() {
                game.boards = boards;
            }
        }
    }
    Ok(game)
}

/// The leaf commands of a (possibly compound) command, in order: a token that still holds
/// an ESC after one level of unescaping is itself compound. Each level is a copy of the text
/// inside it, and a level's tokens stay alive while the levels inside them are read, so the
/// copies are charged to the budget.
fn leaves(
    text: &str,
    depth: usize,
    out: &mut Vec<String>,
    budget: &mut Unescaping,
) -> Result<(), SaveError> {
    if depth > COMMAND_DEPTH_MAX {
        return Err(SaveError::NestedTooDeep {
            max: COMMAND_DEPTH_MAX,
        });
    }
    budget.charge(text.len())?;
    for token in split_escaped(text, COMMAND_SEPARATOR) {
        if token.contains(COMMAND_SEPARATOR) {
            leaves(&token, depth + 1, out, budget)?;
        } else if !token.is_empty() {
            out.push(token);
        }
    }
    Ok(())
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

/// VASSAL's `SequenceEncoder.Decoder`: tokens separated by `delimiter`; a delimiter with a
/// backslash before it belongs to the token (the backslash dropped); a token wrapped in
/// single quotes loses them (VASSAL quotes a token ending in a backslash).
pub fn split_escaped(value: &str, delimiter: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value;
    loop {
        let mut token = String::new();
        let mut search_from = 0;
        let end = loop {
            match rest[search_from..].find(delimiter) {
                None => break None,
                Some(i) => {
                    let at = search_from + i;
                    if rest[..at].ends_with('\\') {
                        token.push_str(&rest[search_from..at - 1]);
                        token.push(delimiter);
                        search_from = at + delimiter.len_utf8();
                    } else {
                        token.push_str(&rest[search_from..at]);
                        break Some(at);
                    }
                }
            }
        };
        match end {
            None => {
                token.push_str(&rest[search_from..]);
                out.push(unquote(token));
                return out;
            }
            Some(at) => {
                out.push(unquote(token));
                rest = &rest[at + delimiter.len_utf8()..];
            }
        }
    }
}

fn unquote(token: String) -> String {
    if token.len() > 1 && token.starts_with('\'') && token.ends_with('\'') {
        token[1..token.len() - 1].to_string()
    } else {
        token
    }
}

/// A piece's traits from its type and state, peeled one level at a time: each level copies
/// the rest of both, so each is charged to the budget.
fn piece(id: &str, kind: &str, state: &str, budget: &mut Unescaping) -> Result<Piece, SaveError> {
    let mut traits = Vec::new();
    let (mut kind, mut state) = (kind.to_string(), state.to_string());
    loop {
        if traits.len() >= TRAITS_PER_PIECE_MAX {
            return Err(corrupt(format!(
                "piece {id} has more than {TRAITS_PER_PIECE_MAX} traits"
            )));
        }
        budget.charge(kind.len() + state.len())?;
        let mut k = split_escaped(&kind, '\t').into_iter();
        let mut s = split_escaped(&state, '\t').into_iter();
        let definition = k.next().unwrap_or_default();
        let own_state = s.next().unwrap_or_default();
        let trait_kind = definition.split(';').next().unwrap_or("").to_string();
        traits.push(Trait {
            kind: trait_kind,
            definition,
            state: own_state,
        });
        match k.next() {
            Some(inner) => {
                kind = inner;
                state = s.next().unwrap_or_default();
            }
            None => break,
        }
    }
    let basic = traits.last().expect("at least one trait");
    if basic.kind != "piece" {
        return Err(corrupt(format!(
            "piece {id}: its innermost trait is `{}`, not a basic piece",
            clip(&basic.definition)
        )));
    }
    let fields = basic.fields();
    let image = fields.get(2).cloned().unwrap_or_default();
    let name = fields.get(3).cloned().unwrap_or_default();
    let position = basic.state_fields();
    let map = position.first().filter(|m| !is_null(m)).cloned();
    let coordinate = |i: usize| -> Result<i64, SaveError> {
        match position.get(i) {
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| corrupt(format!("piece {id}: position `{v}` is not a number"))),
            None if map.is_none() => Ok(0),
            None => Err(SaveError::Truncated(format!("piece {id} has no position"))),
        }
    };
    Ok(Piece {
        id: id.to_string(),
        name,
        image,
        x: coordinate(1)?,
        y: coordinate(2)?,
        map,
        traits,
    })
}

fn stack(id: &str, state: &str) -> Result<StackRecord, SaveError> {
    let f = split_escaped(state, ';');
    let number = |i: usize| -> Result<i64, SaveError> {
        f.get(i)
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| corrupt(format!("stack {id}: no position")))
    };
    Ok(StackRecord {
        id: id.to_string(),
        map: f.first().cloned().unwrap_or_default(),
        x: number(1)?,
        y: number(2)?,
        pieces: f
            .iter()
            .skip(3)
            .filter(|s| !s.is_empty())
            .cloned()
            .collect(),
    })
}

/// The boards of a `bd\t` command (after the `bd\t`), as VASL's board picker reads them.
pub fn board_layout(text: &str) -> Result<Vec<PickedBoard>, SaveError> {
    let mut boards = Vec::new();
    for description in text.split("bd\t") {
        if description.trim().is_empty() {
            continue;
        }
        if boards.len() >= BOARDS_MAX {
            return Err(corrupt(format!("more than {BOARDS_MAX} boards")));
        }
        boards.push(picked_board(description)?);
    }
    Ok(boards)
}

fn picked_board(description: &str) -> Result<PickedBoard, SaveError> {
    // Like Java's StringTokenizer on tab and newline: empty tokens are skipped.
    let tokens: Vec<&str> = description
        .split(['\t', '\n'])
        .filter(|t| !t.is_empty())
        .collect();
    let bad = || corrupt(format!("board layout `{}`", clip(description)));
    let column: u32 = tokens
        .first()
        .and_then(|t| t.parse().ok())
        .ok_or_else(bad)?;
    let row: u32 = tokens.get(1).and_then(|t| t.parse().ok()).ok_or_else(bad)?;
    let name = *tokens.get(2).ok_or_else(bad)?;
    // A leading `r` marks a rotated board, except the board named `r` itself.
    let (file, rotated) = match name.strip_prefix('r') {
        Some(rest) if !rest.is_empty() => (rest.to_string(), true),
        _ => (name.to_string(), false),
    };
    // Crop bounds, when the four tokens after the name are numbers (VASL tries to read them).
    let numbers: Option<Vec<f64>> = tokens.get(3..7).and_then(|t| {
        t.iter()
            .map(|v| v.parse::<i64>().ok().map(|n| n as f64))
            .collect()
    });
    let crop = numbers.and_then(|n| {
        (n[2] > 0.0 || n[3] > 0.0).then(|| Crop {
            x: n[0],
            y: n[1],
            width: n[2],
            height: n[3],
        })
    });
    let after = |key: &str| {
        tokens
            .iter()
            .position(|t| *t == key)
            .and_then(|i| tokens.get(i + 1))
            .map(|s| s.to_string())
    };
    let overlays = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == "OVR")
        .filter_map(|(i, _)| tokens.get(i + 1).map(|s| s.to_string()))
        .collect();
    Ok(PickedBoard {
        column,
        row,
        file,
        rotated,
        crop,
        version: after("VER"),
        overlays,
        ssr: after("SSR"),
        zoom: after("ZOOM")
            .and_then(|z| z.parse::<f64>().ok())
            .filter(|z| *z != 1.0),
    })
}

pub mod writer {
    //! A small writer of the real format, for tests (here and in the crates that import
    //! saves), so no third party's save needs to sit in the repository: a piece's traits
    //! escaped level by level, commands joined by ESC, `savedGame` obfuscated, plain or xz,
    //! zipped with `moduledata`. Writing to memory cannot fail, so it panics on nothing a
    //! caller passes.

    use super::Encoding;
    use std::io::{Cursor, Write};

    /// VASSAL's `SequenceEncoder`: a delimiter inside a token gets a backslash; a token ending
    /// in a backslash is wrapped in single quotes.
    pub fn join_escaped(tokens: &[&str], delimiter: char) -> String {
        tokens
            .iter()
            .map(|t| {
                let escaped = t.replace(delimiter, &format!("\\{delimiter}"));
                if t.ends_with('\\') || (t.starts_with('\'') && t.ends_with('\'')) {
                    format!("'{escaped}'")
                } else {
                    escaped
                }
            })
            .collect::<Vec<_>>()
            .join(&delimiter.to_string())
    }

    /// `+/ID/TYPE/STATE` for traits given outermost first as (definition, state); the last is
    /// the basic piece (`piece;;;IMAGE;NAME`, `MAP;X;Y;GPID`).
    pub fn piece_command(id: &str, traits: &[(&str, &str)]) -> String {
        let mut kind = String::new();
        let mut state = String::new();
        for (i, (d, s)) in traits.iter().rev().enumerate() {
            if i == 0 {
                kind = d.to_string();
                state = s.to_string();
            } else {
                kind = join_escaped(&[d, &kind], '\t');
                state = join_escaped(&[s, &state], '\t');
            }
        }
        format!("+/{}", join_escaped(&[id, &kind, &state], '/'))
    }

    pub fn stack_command(id: &str, map: &str, x: i64, y: i64, pieces: &[&str]) -> String {
        let mut fields = vec![map.to_string(), x.to_string(), y.to_string()];
        fields.extend(pieces.iter().map(|p| p.to_string()));
        format!("+/{id}/stack/{}", fields.join(";"))
    }

    /// The text of `savedGame`: the commands nested in one compound command, as VASSAL
    /// writes its restore command.
    pub fn saved_game_text(commands: &[String]) -> String {
        let refs: Vec<&str> = commands.iter().map(|c| c.as_str()).collect();
        let inner = join_escaped(&refs, '\u{1b}');
        let mut outer = String::from("\u{1b}");
        outer.push_str(&inner);
        join_escaped(&["begin_save", "", &outer, "end_save"], '\u{1b}')
    }

    pub fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
        match encoding {
            Encoding::Plain => text.as_bytes().to_vec(),
            Encoding::Obfuscated { key } => {
                let mut out = format!("!VCSK{key:02x}");
                for b in text.as_bytes() {
                    out.push_str(&format!("{:02x}", b ^ key));
                }
                out.into_bytes()
            }
            Encoding::Xz => {
                let mut out = Vec::new();
                lzma_rs::xz_compress(&mut Cursor::new(text.as_bytes()), &mut out)
                    .expect("writing to memory");
                out
            }
        }
    }

    pub fn module_xml(name: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<data version=\"1\">\r\n  <version>6.6.8</version>\r\n  <name>{name}</name>\r\n</data>\r\n"
        )
    }

    /// A `.vsav`: a zip of `savedGame`, `moduledata` and `savedata`.
    pub fn vsav(saved_game: &[u8], module: Option<&str>) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("savedGame", options)
            .expect("writing to memory");
        zip.write_all(saved_game).expect("writing to memory");
        if let Some(m) = module {
            zip.start_file("moduledata", options)
                .expect("writing to memory");
            zip.write_all(module_xml(m).as_bytes())
                .expect("writing to memory");
        }
        zip.start_file("savedata", options)
            .expect("writing to memory");
        zip.write_all(b"<?xml version=\"1.0\"?><data version=\"1\"/>")
            .expect("writing to memory");
        zip.finish().expect("writing to memory").into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::writer::*;
    use super::*;

    fn squad(id: &str, x: i64, y: i64, level: i32, hidden: bool, masked: bool) -> String {
        piece_command(
            id,
            &[
                ("mark;DBCounterType", "unit"),
                (
                    "hide;72,130;HIP;;player:;0.3",
                    if hidden { "alice" } else { "null" },
                ),
                (
                    "conceal;C;ge/geqmark;ge;;",
                    if masked { "alice;|0" } else { "null;" },
                ),
                (
                    "emb2;;2;FV;;2;E;;2;Q;;;0;false;0;0;ge/ges8b,ge/ges7b;broken +,broken +;false;BRK;;;false;;1;1;false;70,130;69,130",
                    "-1",
                ),
                (
                    "emb2;;2;;ELR;2;E;BH;2;Q;;;0;false;0;0;ge/ge468S,ge/ge467S;4-6-8 Esq,4-6-7 1sq;false;;;;false;;1;1;true;;69,130;81,130",
                    &level.to_string(),
                ),
                ("piece;K;D; ;4-6-8 Esq", &format!("Main Map;{x};{y};2364")),
            ],
        )
    }

    fn game(commands: Vec<String>) -> String {
        saved_game_text(&commands)
    }

    #[test]
    fn escaping_round_trips_through_vassals_decoder() {
        for tokens in [
            vec!["a", "b"],
            vec!["a\tb", "c"],
            vec!["ends\\", "x"],
            vec!["", "", ""],
            vec!["'quoted'", "y"],
        ] {
            let joined = join_escaped(&tokens, '\t');
            assert_eq!(split_escaped(&joined, '\t'), tokens, "{joined:?}");
        }
        assert_eq!(split_escaped("a\\;b;c", ';'), vec!["a;b", "c"]);
        assert_eq!(split_escaped("", ';'), vec![""]);
    }

    #[test]
    fn traits_unnest_level_by_level_down_to_the_basic_piece() {
        let text = game(vec![squad("1", 500, 600, 2, false, false)]);
        let g = parse(&text).unwrap();
        let p = &g.pieces[0];
        assert_eq!(p.traits.len(), 6);
        assert_eq!(p.name, "4-6-8 Esq");
        assert_eq!(p.map.as_deref(), Some("Main Map"));
        assert_eq!((p.x, p.y), (500, 600));
        assert_eq!(p.counter_type(), Some("unit"));
        let layers = p.layers();
        assert_eq!(layers[1].active_image(), Some("ge/ge467S"));
        assert_eq!(layers[0].level, None, "the broken side is off");
        assert_eq!(p.shown_name(), "4-6-7 1sq");
        assert!(!p.hidden() && !p.masked());
    }

    #[test]
    fn hidden_and_masked_states_are_read() {
        let g = parse(&game(vec![squad("1", 0, 0, 1, true, true)])).unwrap();
        assert!(g.pieces[0].hidden());
        assert!(g.pieces[0].masked());
    }

    #[test]
    fn layer_names_replace_prefix_or_suffix() {
        assert_eq!(layer_name_applied("4-6-7 1sq", "4-6-8 Esq"), "4-6-7 1sq");
        assert_eq!(layer_name_applied("broken +", "x"), "broken x");
        assert_eq!(layer_name_applied("+ BU", "x"), "x BU");
        assert_eq!(layer_name_applied("6\\+1", "geLDR"), "6+1");
    }

    #[test]
    fn every_encoding_is_detected() {
        let text = game(vec![squad("1", 10, 20, 1, false, false)]);
        for encoding in [
            Encoding::Plain,
            Encoding::Obfuscated { key: 0x5a },
            Encoding::Xz,
        ] {
            let file = vsav(&encode(&text, encoding), Some("VASL"));
            let g = read(&file).unwrap();
            assert_eq!(g.encoding, encoding);
            assert_eq!(g.pieces.len(), 1);
            assert_eq!(g.module.as_deref(), Some("VASL"));
        }
    }

    #[test]
    fn the_board_layout_reads_rotation_crop_version_and_ssr() {
        let b = board_layout("0\t0\t02\tVER\t6.4\tbd\t1\t0\tr4\tVER\t6.1\tbd\t0\t1\t03\t0\t0\t900\t645\tVER\t6.3\tSSR\tNoHedges\t").unwrap();
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].column, b[0].row, b[0].file.as_str()), (0, 0, "02"));
        assert_eq!(b[0].name(), "2");
        assert!(!b[0].rotated);
        assert_eq!(b[0].version.as_deref(), Some("6.4"));
        assert!(b[1].rotated);
        assert_eq!(b[1].file, "4");
        assert_eq!(
            b[2].crop,
            Some(Crop {
                x: 0.0,
                y: 0.0,
                width: 900.0,
                height: 645.0
            })
        );
        assert_eq!(b[2].ssr.as_deref(), Some("NoHedges"));
        // The board named `r` is not a rotated board named ``.
        let r = board_layout("0\t0\tr\tVER\t1\t").unwrap();
        assert!(!r[0].rotated);
        assert_eq!(r[0].file, "r");
    }

    #[test]
    fn stacks_keep_their_order_bottom_first() {
        let text = game(vec![
            squad("1", 10, 20, 1, false, false),
            squad("2", 10, 20, 1, false, false),
            stack_command("s", "Main Map", 10, 20, &["1", "2"]),
            "bd\t0\t0\t01\tVER\t6.1\t".into(),
        ]);
        let g = parse(&text).unwrap();
        assert_eq!(g.stacks[0].pieces, vec!["1", "2"]);
        assert_eq!(g.boards.len(), 1);
    }

    #[test]
    fn bad_files_are_named_for_what_is_wrong() {
        assert!(matches!(read(b"hello"), Err(SaveError::NotAZip(_))));
        let text = game(vec![squad("1", 10, 20, 1, false, false)]);
        let other = vsav(&encode(&text, Encoding::Plain), Some("Panzer Leader"));
        assert_eq!(
            read(&other),
            Err(SaveError::OtherModule("Panzer Leader".into()))
        );
        let mut truncated = encode(&text, Encoding::Obfuscated { key: 7 });
        truncated.truncate(truncated.len() / 2 + 1);
        assert!(matches!(
            read(&vsav(&truncated, Some("VASL"))),
            Err(SaveError::Truncated(_))
        ));
        let mut cut = encode(&text, Encoding::Obfuscated { key: 7 });
        cut.truncate(cut.len() - 20);
        assert!(matches!(
            read(&vsav(&cut, Some("VASL"))),
            Err(SaveError::Truncated(_))
        ));
        let mut garbage = encode(&text, Encoding::Obfuscated { key: 7 });
        garbage[20] = b'z';
        assert!(matches!(
            read(&vsav(&garbage, Some("VASL"))),
            Err(SaveError::Corrupt(_))
        ));
        let xz = encode(&text, Encoding::Xz);
        assert!(read(&vsav(&xz[..xz.len() / 2], Some("VASL"))).is_err());
        assert!(matches!(
            read(&vsav(b"something else", Some("VASL"))),
            Err(SaveError::Corrupt(_))
        ));
        let mut zip = vsav(b"", None);
        zip[0] = b'X';
        assert!(read(&zip).is_err());
        let no_saved_game = {
            let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
            z.start_file("other", zip::write::SimpleFileOptions::default())
                .unwrap();
            z.finish().unwrap().into_inner()
        };
        assert_eq!(read(&no_saved_game), Err(SaveError::NoSavedGame));
    }

    #[test]
    fn limits_are_enforced() {
        assert_eq!(
            read(&vec![0u8; SAVE_BYTES_MAX + 1]),
            Err(SaveError::TooLarge {
                bytes: SAVE_BYTES_MAX + 1
            })
        );
        let mut deep = String::from("x");
        for _ in 0..TRAITS_PER_PIECE_MAX + 1 {
            deep = join_escaped(&["mark;M", &deep], '\t');
        }
        let deep = deep.replace("x", "piece;;;i;n");
        let text = game(vec![format!("+/{}", join_escaped(&["1", &deep, ""], '/'))]);
        assert!(matches!(parse(&text), Err(SaveError::Corrupt(_))));
        let at_limit = {
            let mut d = String::from("piece;;;i;n");
            for _ in 0..TRAITS_PER_PIECE_MAX - 1 {
                d = join_escaped(&["mark;M", &d], '\t');
            }
            d
        };
        let text = game(vec![format!(
            "+/{}",
            join_escaped(&["1", &at_limit, "Main Map;1;2"], '/')
        )]);
        assert_eq!(
            parse(&text).unwrap().pieces[0].traits.len(),
            TRAITS_PER_PIECE_MAX
        );
    }

    /// `savedGame`'s text: a command of `payload` bytes nested `depth` levels deep, as VASSAL
    /// nests compound commands (a short command, then the rest escaped once more).
    fn nested(payload: usize, depth: usize) -> String {
        let mut command = format!("x{}", "a".repeat(payload));
        for _ in 0..depth {
            command = join_escaped(&["y", &command], COMMAND_SEPARATOR);
        }
        game(vec![command, squad("1", 10, 20, 1, false, false)])
    }

    /// Issue 50: each level of nesting is a copy of the text inside it. Everything unescaping
    /// copies is counted; a save that needs exactly the budget is read, one that needs a byte
    /// more is refused, saying which limit it passed, and the copies made before the refusal
    /// stayed within the budget.
    #[test]
    fn unescaping_stops_at_its_budget() {
        let text = nested(100_000, 20);
        let mut unlimited = Unescaping::new(usize::MAX);
        let g = parse_within(&text, &mut unlimited).unwrap();
        assert_eq!(g.pieces.len(), 1);
        let needed = unlimited.produced;
        assert!(
            needed > 20 * 100_000,
            "every level of the 20 is counted: {needed}"
        );

        let mut at_limit = Unescaping::new(needed);
        assert_eq!(parse_within(&text, &mut at_limit), Ok(g));
        assert_eq!(at_limit.produced, needed);

        let mut past = Unescaping::new(needed - 1);
        let refused = parse_within(&text, &mut past).unwrap_err();
        assert_eq!(refused, SaveError::UnescapedTooLarge { max: needed - 1 });
        assert!(past.produced < needed, "{}", past.produced);
        assert!(
            refused.to_string().contains("past the import's limit"),
            "{refused}"
        );
        // The save's own budget: a few tens of MB nested 30 deep is refused within it.
        let deep = nested(8 << 20, 28);
        let mut budget = Unescaping::new(UNESCAPED_BYTES_MAX);
        assert_eq!(
            parse_within(&deep, &mut budget),
            Err(SaveError::UnescapedTooLarge {
                max: UNESCAPED_BYTES_MAX
            })
        );
        assert!(budget.produced <= UNESCAPED_BYTES_MAX);
    }

    /// A piece's traits are nesting too: peeling them copies the rest at each level.
    #[test]
    fn peeling_traits_is_counted() {
        let mut type_ = String::from("piece;;;i;n");
        let mut state = String::from("Main Map;1;2");
        for _ in 0..200 {
            type_ = join_escaped(&[&format!("mark;{}", "m".repeat(1000)), &type_], '\t');
            state = join_escaped(&["s", &state], '\t');
        }
        let text = game(vec![format!(
            "+/{}",
            join_escaped(&["1", &type_, &state], '/')
        )]);
        let mut unlimited = Unescaping::new(usize::MAX);
        assert_eq!(
            parse_within(&text, &mut unlimited).unwrap().pieces[0]
                .traits
                .len(),
            201
        );
        // Some 200 levels of 100 KB on average, beside the text's own few copies.
        assert!(unlimited.produced > 200 * 90_000, "{}", unlimited.produced);
        let mut small = Unescaping::new(4 * text.len());
        assert_eq!(
            parse_within(&text, &mut small),
            Err(SaveError::UnescapedTooLarge {
                max: 4 * text.len()
            })
        );
    }

    #[test]
    fn commands_nested_past_the_limit_are_refused_naming_it() {
        // `nested` adds the save's own level (its restore command) to those asked for.
        let at_limit = nested(10, COMMAND_DEPTH_MAX - 1);
        assert!(parse(&at_limit).is_ok());
        let past = nested(10, COMMAND_DEPTH_MAX);
        let refused = parse(&past).unwrap_err();
        assert_eq!(
            refused,
            SaveError::NestedTooDeep {
                max: COMMAND_DEPTH_MAX
            }
        );
        assert!(
            refused
                .to_string()
                .contains("nest more than 32 levels deep"),
            "{refused}"
        );
    }
}
