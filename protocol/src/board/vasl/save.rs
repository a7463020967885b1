//! VASL saved games (`.vsav`): see the module above.
