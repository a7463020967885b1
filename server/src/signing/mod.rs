//! The server's signing key on disk (`key`), receipts signed in batches across games
//! (`batch`), and the files only the server's user may read (`private`).

pub mod batch;
pub mod key;
pub mod private;
