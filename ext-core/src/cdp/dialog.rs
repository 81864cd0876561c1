//! JavaScript dialogs (alert, confirm, prompt, beforeunload): the error a command meets
//! while one is open, and answering one.

use std::time::Duration;

use serde_json::json;

use super::events::Dialog;
use super::{text, CdpSession};
use crate::escape;
use crate::methods::{HandleDialog, Text};
use crate::platform;
use crate::protocol::{ErrorCode, WireError};

/// The "a dialog is open" answer a command gets when one opens while it runs.
pub fn dialog_error(d: &Dialog, tab_id: crate::protocol::TabId) -> WireError {
    let mut e = WireError::new(
        ErrorCode::DialogOpen,
        format!(
            "{} {} dialog is open: {}",
            article(&d.kind),
            escape::inline(&d.kind),
            escape::quoted_cut(&d.message, 2_000)
        ),
    );
    let mut data = serde_json::to_value(d).unwrap_or_default();
    data["tab_id"] = json!(tab_id);
    // A page's dialog text can be megabytes: the data keeps its start.
    if d.message.chars().count() > 10_000 {
        data["message"] = json!(d.message.chars().take(10_000).collect::<String>());
    }
    e.data = Some(data);
    e
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// The answer of a command whose input the page did not take in time: the dialog when it
/// is known, else the likely cause.
pub fn blocked_by_dialog<S: CdpSession>(s: &S) -> WireError {
    if let Some(d) = s.events().borrow().dialog.clone() {
        return dialog_error(&d, s.tab_id());
    }
    let mut e = WireError::new(
        ErrorCode::DialogOpen,
        "the page did not take the input within 10 s: a JavaScript dialog (alert, confirm, prompt) is probably open, or the page is busy",
    );
    e.data = Some(json!({"tab_id": s.tab_id()}));
    e
}

/// Answer the open dialog. Its type and message may only be known once it is answered
/// (the browser holds the news back while an input waits on the dialog).
pub async fn handle_dialog<S: CdpSession>(s: &S, p: &HandleDialog) -> Result<Text, WireError> {
    let known = s.events().borrow().dialog.clone();
    let mut params = json!({"accept": p.accept});
    if let Some(t) = &p.prompt_text {
        params["promptText"] = json!(t);
    }
    let closed = s
        .events()
        .borrow_mut()
        .wait_for(|m, _| m == "Page.javascriptDialogClosed");
    if let Err(e) = s.send("Page.handleJavaScriptDialog", params).await {
        return Err(if e.message.to_ascii_lowercase().contains("no dialog") {
            WireError::new(ErrorCode::BadArgs, "no dialog is open on this tab")
        } else {
            e
        });
    }
    // Held-back news arrives now: wait a moment for it so the answer can name the dialog.
    let _ = platform::timeout(Duration::from_millis(1000), closed).await;
    let d = known.or_else(|| s.events().borrow().last_dialog.clone());
    s.events().borrow_mut().dialog = None;
    let how = if p.accept { "accepted" } else { "dismissed" };
    Ok(text(
        s,
        match d {
            Some(d) => format!(
                "The {} dialog {} was {how}",
                escape::inline(&d.kind),
                escape::quoted_cut(&d.message, 2_000)
            ),
            None => format!("The dialog was {how}"),
        },
    ))
}
