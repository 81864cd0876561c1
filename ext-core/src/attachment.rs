//! What to do when Chrome detaches Kapture's debugger from a tab that lives on: a person
//! who cancelled the "is being debugged" bar has revoked control (never re-attach); a page
//! that made Chrome drop it (a frame navigating to an unknown scheme) gets one re-attach
//! after a short pause, and a second drop soon after stops re-attaching for a cooldown, so
//! a page can never drive an attach/detach loop. Pure; the service worker applies it.

use crate::protocol::{ErrorCode, TabId, WireError};

/// Pause between an involuntary detach and the re-attach, so the frame that caused it settles.
pub const REATTACH_DELAY_MS: f64 = 150.0;
/// A second involuntary detach within this long of a re-attach stops re-attaching for as long.
pub const COOLDOWN_MS: f64 = 3_000.0;

/// The reason Chrome gives when a person cancelled the debugging bar.
pub const CANCELED_BY_USER: &str = "canceled_by_user";

/// One tab's attachment history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attachment {
    revoked: bool,
    /// When Chrome last detached us while the tab lived on.
    detached_at: Option<f64>,
    /// When we last re-attached after such a detach.
    reattached_at: Option<f64>,
    /// When a second detach came within the cooldown.
    gave_up_at: Option<f64>,
}

impl Attachment {
    /// Chrome detached the debugger for `reason` at `now` (ms).
    pub fn on_detach(&mut self, reason: &str, now: f64) {
        if reason == CANCELED_BY_USER {
            self.revoked = true;
            return;
        }
        if self.reattached_at.is_some_and(|at| now - at < COOLDOWN_MS) {
            self.gave_up_at = Some(now);
        }
        self.detached_at = Some(now);
    }

    /// Whether a person revoked control of the tab.
    pub fn revoked(&self) -> bool {
        self.revoked
    }

    /// May a command attach at `now`? `Ok(wait_ms)`: yes, after waiting that long (the pause
    /// after an involuntary detach); else the coded error the command ends with.
    pub fn may_attach(&self, tab_id: TabId, now: f64) -> Result<f64, WireError> {
        if self.revoked {
            return Err(self.revoked_error(tab_id));
        }
        if let Some(at) = self.gave_up_at.filter(|at| now - at < COOLDOWN_MS) {
            return Err(WireError::new(
                ErrorCode::DebuggerDetached,
                format!(
                    "the page in tab {tab_id} made Chrome detach the debugger twice within {} s; kapture stopped re-attaching for {} ms",
                    COOLDOWN_MS / 1000.0,
                    (COOLDOWN_MS - (now - at)).ceil()
                ),
            ));
        }
        Ok(self
            .detached_at
            .map_or(0.0, |at| (REATTACH_DELAY_MS - (now - at)).max(0.0)))
    }

    /// The debugger is attached again at `now`; true if that was a re-attach after a detach.
    pub fn attached(&mut self, now: f64) -> bool {
        let again = self.detached_at.take().is_some();
        if again {
            self.reattached_at = Some(now);
        }
        again
    }

    /// What a command that was running when the debugger left ends with.
    pub fn lost_error(&self, tab_id: TabId, method: &str) -> WireError {
        if self.revoked {
            return self.revoked_error(tab_id);
        }
        WireError::new(
            ErrorCode::DebuggerDetached,
            format!("Chrome detached the debugger from tab {tab_id} while {method} ran (the tab is still open); the action may or may not have taken effect"),
        )
    }

    fn revoked_error(&self, tab_id: TabId) -> WireError {
        WireError::new(
            ErrorCode::UserRevoked,
            format!("a person cancelled Kapture's debugging of tab {tab_id}; kapture does not re-attach to it"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_attach_waits_for_nothing() {
        let a = Attachment::default();
        assert_eq!(a.may_attach(1, 0.0), Ok(0.0));
    }

    #[test]
    fn an_involuntary_detach_gets_one_reattach_after_a_pause() {
        let mut a = Attachment::default();
        a.on_detach("target_closed", 1_000.0);
        assert_eq!(a.may_attach(1, 1_050.0), Ok(100.0));
        assert_eq!(a.may_attach(1, 2_000.0), Ok(0.0));
        assert!(a.attached(2_000.0), "a re-attach");
        assert!(
            !a.attached(2_500.0),
            "attached again without a detach is not a re-attach"
        );
    }

    #[test]
    fn a_second_detach_within_the_cooldown_stops_reattaching_for_the_cooldown() {
        let mut a = Attachment::default();
        a.on_detach("target_closed", 0.0);
        a.attached(200.0);
        a.on_detach("target_closed", 1_200.0);
        let err = a.may_attach(1, 1_300.0).unwrap_err();
        assert_eq!(err.code, ErrorCode::DebuggerDetached);
        assert!(err.message.contains("2900 ms"), "{}", err.message);
        // After the cooldown, one more try is allowed.
        assert_eq!(a.may_attach(1, 4_300.0), Ok(0.0));
    }

    #[test]
    fn a_detach_long_after_the_last_reattach_is_forgiven() {
        let mut a = Attachment::default();
        a.on_detach("target_closed", 0.0);
        a.attached(200.0);
        a.on_detach("target_closed", 10_000.0);
        assert_eq!(a.may_attach(1, 10_000.0), Ok(REATTACH_DELAY_MS));
    }

    #[test]
    fn a_person_cancelling_the_bar_revokes_for_good() {
        let mut a = Attachment::default();
        a.on_detach(CANCELED_BY_USER, 0.0);
        assert!(a.revoked());
        for now in [0.0, 10_000.0, 1e9] {
            assert_eq!(
                a.may_attach(4, now).unwrap_err().code,
                ErrorCode::UserRevoked
            );
        }
        assert_eq!(a.lost_error(4, "click").code, ErrorCode::UserRevoked);
    }

    #[test]
    fn a_command_lost_to_a_page_detach_says_it_may_have_run() {
        let a = Attachment::default();
        let err = a.lost_error(4, "click");
        assert_eq!(err.code, ErrorCode::DebuggerDetached);
        assert!(err.message.contains("may or may not"));
    }
}
