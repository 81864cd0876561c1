//! The whole real-app corpus on both engines (`cargo make corpus`): every app of
//! `kapture_e2e::corpus`, every task of `kapture_e2e::tasks`. Not run by a plain `cargo test`
//! (`test = false`): `cargo make test` runs the subset in `tests/e2e/real_apps.rs` that
//! covers each kind of app; this is the gate for changes to policy, hit-testing, input and
//! navigation.

mod apps;
