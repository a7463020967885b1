//! VASL board archives: see the module above.
