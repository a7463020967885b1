//! Fire by the rules (A7): the Infantry Fire Table as data (`ift`). The table is the one fact
//! of fire every later step reads — the column a total of FP falls in and the result a Final
//! DR gives there — so it stands alone, citing its rule and the sources each cell was checked
//! against, before anything resolves an attack with it.

pub(crate) mod direction;
pub mod ift;
pub(crate) mod mandatory;
pub(crate) mod mf_limit;
pub mod resolution;
pub(crate) mod usage;
