//! Empty: this package is only fetched, never built (see Cargo.toml).
