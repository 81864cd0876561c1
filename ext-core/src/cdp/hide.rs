//! Screenshots and PDFs, and the frames whose content may not be read kept out of them:
//! hidden while an image is taken (from inside their own document, where the embedding
//! page cannot undo it); a page holding one is not printed.

use serde_json::{json, Value};

use super::read::capture;
use super::world;
use super::{classify_failure, CdpSession};
use crate::methods::{Captured, Pdf, PrintPdf, Screenshot};
use crate::protocol::{ErrorCode, WireError};

/// Capture the viewport, the whole page (capped) or one element, scaled to fit. Frames
/// whose content may not be read are hidden while the image is taken, from inside: their
/// own document's root is made transparent and invisible from Kapture's world in that
/// frame, where the embedding page (of another origin) cannot reach it; their iframe
/// element is hidden too, from Kapture's world in the parent. A page that undoes the
/// iframe's style (a transition, a mutation observer) still shows nothing of the frame. A
/// frame that cannot be hidden refuses the screenshot; frames that changed while the image
/// was taken (one added, navigated or removed) have it taken again.
pub async fn screenshot<S: CdpSession>(s: &S, p: &Screenshot) -> Result<Captured, WireError> {
    // The common case, no frame withheld, in one round trip: the image is taken (right
    // after an action, once its effect rendered, as for a snapshot) while the frame tree is
    // read. It is kept only when no frame is withheld and the frames held still meanwhile;
    // otherwise it is dropped unseen and taken again with the withheld frames hidden.
    let before = s.events().borrow().frame_changes;
    let (shot, refused) = futures::future::join(
        async {
            super::after_action(s).await;
            capture(s, p).await
        },
        withheld_frames(s),
    )
    .await;
    if refused?.is_empty() && s.events().borrow().frame_changes == before {
        return shot;
    }
    for _ in 0..SCREENSHOT_TRIES {
        let before = s.events().borrow().frame_changes;
        let mut hidden = Hidden::default();
        let hid = hide_withheld_frames(s, &mut hidden).await;
        let shot = match hid {
            Ok(()) => capture(s, p).await,
            Err(e) => Err(e),
        };
        show_again(s, hidden).await;
        if s.events().borrow().frame_changes == before {
            return shot;
        }
    }
    // The frames never held still: taken only if no frame is withheld now.
    match withheld_frames(s).await?.into_iter().next() {
        None => capture(s, p).await,
        Some((_, _, why)) => {
            let mut err = why.error();
            err.message = format!(
                "{}; the page's frames kept changing while the screenshot was taken, so it is not taken",
                err.message
            );
            Err(err)
        }
    }
}

/// Times a screenshot is taken again when the page's frames change meanwhile.
const SCREENSHOT_TRIES: usize = 3;

/// What a screenshot hid: iframe elements (objects in Kapture's world of their parent) and
/// the frames whose documents were hidden from inside.
#[derive(Default)]
struct Hidden {
    elements: Vec<String>,
    inside: Vec<String>,
}

async fn show_again<S: CdpSession>(s: &S, hidden: Hidden) {
    for object in hidden.elements {
        let _ = s
            .send(
                "Runtime.callFunctionOn",
                json!({"objectId": object, "functionDeclaration": SHOW_FRAME}),
            )
            .await;
    }
    for frame in hidden.inside {
        let _ = world::run_unjudged(s, &frame, SHOW_INSIDE, &[]).await;
    }
}

/// Run in Kapture's world of a withheld frame: its root (and so everything it holds, the
/// top layer too by inheritance) transparent and invisible, no transition or animation
/// delaying it; what was set inline before is kept to be put back.
const HIDE_INSIDE: &str = "() => { const r = document.documentElement; if (!r) return true; const st = r.style; globalThis.__kaptureInside = ['transition', 'animation', 'opacity', 'visibility'].map((p) => [p, st.getPropertyValue(p), st.getPropertyPriority(p)]); st.setProperty('transition', 'none', 'important'); st.setProperty('animation', 'none', 'important'); st.setProperty('opacity', '0', 'important'); st.setProperty('visibility', 'hidden', 'important'); return true; }";
const SHOW_INSIDE: &str = "() => { const r = document.documentElement; const kept = globalThis.__kaptureInside; if (!r || !kept) return false; for (const [p, v, prio] of kept) { if (v) r.style.setProperty(p, v, prio); else r.style.removeProperty(p); } delete globalThis.__kaptureInside; return true; }";

const HIDE_FRAME: &str = "function() { this.__kaptureShown = [this.style.getPropertyValue('visibility'), this.style.getPropertyPriority('visibility'), this.style.getPropertyValue('opacity'), this.style.getPropertyPriority('opacity')]; this.style.setProperty('visibility', 'hidden', 'important'); this.style.setProperty('opacity', '0', 'important'); }";
const SHOW_FRAME: &str = "function() { const [v, vp, o, op] = this.__kaptureShown || ['', '', '', '']; if (v) this.style.setProperty('visibility', v, vp); else this.style.removeProperty('visibility'); if (o) this.style.setProperty('opacity', o, op); else this.style.removeProperty('opacity'); delete this.__kaptureShown; }";

/// Every frame of the page whose content may not be read: its id, its parent's, and why.
pub(super) async fn withheld_frames<S: CdpSession>(
    s: &S,
) -> Result<Vec<(String, Option<String>, crate::policy::Refusal)>, WireError> {
    if s.events().borrow().judge.is_none() {
        return Ok(Vec::new());
    }
    let tree = world::refresh_frames(s).await?;
    Ok(tree
        .iter()
        .filter_map(|f| {
            let r = s
                .events()
                .borrow()
                .frame_refusal(&f.id, crate::policy::Category::Read)?;
            Some((f.id.clone(), f.parent.clone(), r))
        })
        .collect())
}

/// Hide every outermost frame whose content may not be read, from inside its document and
/// by its iframe element; what was hidden goes into `hidden`.
async fn hide_withheld_frames<S: CdpSession>(s: &S, hidden: &mut Hidden) -> Result<(), WireError> {
    let refused = withheld_frames(s).await?;
    for (frame, parent, why) in &refused {
        let Some(parent) = parent else {
            return Err(why.error());
        };
        // Hiding the outermost withheld frame hides what it holds.
        if refused.iter().any(|(f, _, _)| f == parent) {
            continue;
        }
        let hide = async {
            // From inside first: the embedding page cannot undo this.
            world::run_unjudged(s, frame, HIDE_INSIDE, &[]).await?;
            hidden.inside.push(frame.clone());
            let owner = s
                .send("DOM.getFrameOwner", json!({"frameId": frame}))
                .await?;
            let ctx = world::world(s, parent).await?;
            let node = s
                .send(
                    "DOM.resolveNode",
                    json!({"backendNodeId": owner.get("backendNodeId"), "executionContextId": ctx}),
                )
                .await?;
            let object = node
                .pointer("/object/objectId")
                .and_then(Value::as_str)
                .ok_or_else(|| WireError::new(ErrorCode::Internal, "no frame element"))?
                .to_string();
            s.send(
                "Runtime.callFunctionOn",
                json!({"objectId": object, "functionDeclaration": HIDE_FRAME}),
            )
            .await?;
            Ok::<String, WireError>(object)
        };
        match hide.await {
            Ok(object) => hidden.elements.push(object),
            Err(e) => {
                let mut err = why.error();
                err.message = format!(
                    "{}; the frame could not be hidden for the screenshot ({})",
                    err.message, e.message
                );
                return Err(err);
            }
        }
    }
    Ok(())
}

/// Run `print` (a PDF) unless the page holds a frame whose content may not be read: a PDF
/// keeps a frame's text (and links) extractable under anything drawn over it, so such a
/// page is not printed at all. Checked before and after; frames that changed meanwhile (one
/// added and removed again) have it printed again, and refused if they never hold still.
pub(super) async fn unless_withheld<S, F, Fut>(s: &S, print: F) -> Result<Value, WireError>
where
    S: CdpSession,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Value, WireError>>,
{
    let refuse = |why: crate::policy::Refusal, more: &str| {
        let mut err = why.error();
        err.message = format!(
            "{}; a PDF would keep that frame's text, so the page is not printed{more}",
            err.message
        );
        err
    };
    for _ in 0..SCREENSHOT_TRIES {
        let before = s.events().borrow().frame_changes;
        if let Some((_, _, why)) = withheld_frames(s).await?.into_iter().next() {
            return Err(refuse(why, " while it holds the frame"));
        }
        let printed = print().await?;
        if let Some((_, _, why)) = withheld_frames(s).await?.into_iter().next() {
            return Err(refuse(why, " while it holds the frame"));
        }
        if s.events().borrow().frame_changes == before {
            return Ok(printed);
        }
    }
    Err(WireError::new(
        ErrorCode::PolicyDenied,
        "the page's frames kept changing while it was printed (one of them could be a frame the rules may not read), so it is not printed",
    ))
}

/// Print the page to PDF (headless browsers only); a page holding a frame that may not be
/// read is not printed (`hide::unless_withheld`).
pub async fn print_pdf<S: CdpSession>(s: &S, _p: &PrintPdf) -> Result<Pdf, WireError> {
    let print = || async {
        s.send("Page.printToPDF", json!({"printBackground": true}))
            .await
            .map_err(|e| match classify_failure(&e.message) {
                ErrorCode::Internal => WireError::new(
                    ErrorCode::Unsupported,
                    format!(
                        "this browser cannot print to PDF ({}); a headless browser launched by kapture can",
                        e.message
                    ),
                ),
                _ => e,
            })
    };
    let res = unless_withheld(s, print).await?;
    let main = world::main_frame(s).await?;
    let title = world::run(s, &main, "() => document.title", &[]).await.ok();
    Ok(Pdf {
        tab_id: s.tab_id(),
        data: res
            .get("data")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        title: title
            .and_then(|t| t.as_str().map(str::to_string))
            .unwrap_or_default(),
    })
}
