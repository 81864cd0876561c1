//! The recorder widget seen and clicked like a person, through a raw DevTools client: its
//! closed shadow root is visible to DevTools, never to the page.

use std::time::Duration;

use serde_json::{json, Value};

use crate::cdp::RawCdp;

/// The recorder widget's closed shadow root in the page of `session`, as DevTools sees it.
pub async fn widget_root(raw: &mut RawCdp, session: &str) -> Option<i64> {
    fn host(node: &Value) -> Option<i64> {
        if node["nodeName"] == "KAPTURE-RECORDER" {
            return node["shadowRoots"][0]["nodeId"].as_i64();
        }
        node["children"].as_array()?.iter().find_map(host)
    }
    let doc = raw
        .send(
            Some(session),
            "DOM.getDocument",
            json!({"depth": -1, "pierce": true}),
        )
        .await
        .ok()?;
    host(&doc["root"])
}

/// How many elements match `selector` in the widget (0 without a widget).
pub async fn widget_count(raw: &mut RawCdp, session: &str, selector: &str) -> usize {
    let Some(root) = widget_root(raw, session).await else {
        return 0;
    };
    raw.send(
        Some(session),
        "DOM.querySelectorAll",
        json!({"nodeId": root, "selector": selector}),
    )
    .await
    .map(|v| v["nodeIds"].as_array().map_or(0, Vec::len))
    .unwrap_or(0)
}

/// Wait until the widget in the page shows its recording state (red dot, Stop & Save).
pub async fn until_widget_records(raw: &mut RawCdp, session: &str, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while widget_count(raw, session, ".dot.on").await == 0
        || widget_count(raw, session, "button.stop").await == 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the widget never showed the recording {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Click the widget's `selector` like a person.
pub async fn widget_click(raw: &mut RawCdp, session: &str, selector: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let (x, y) = loop {
        if let Some(p) = widget_point(raw, session, selector).await {
            break p;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the widget never showed {selector}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for kind in ["mousePressed", "mouseReleased"] {
        raw.send(
            Some(session),
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
        )
        .await
        .unwrap();
    }
}

/// The centre of the element `selector` matches inside the widget's closed shadow root,
/// once it is there (DevTools can see into closed roots; the page cannot).
pub async fn widget_point(raw: &mut RawCdp, session: &str, selector: &str) -> Option<(f64, f64)> {
    let root = widget_root(raw, session).await?;
    let found = raw
        .send(
            Some(session),
            "DOM.querySelector",
            json!({"nodeId": root, "selector": selector}),
        )
        .await
        .ok()?;
    let node = found["nodeId"].as_i64().filter(|n| *n > 0)?;
    raw.send(
        Some(session),
        "DOM.scrollIntoViewIfNeeded",
        json!({"nodeId": node}),
    )
    .await
    .ok()?;
    let model = raw
        .send(Some(session), "DOM.getBoxModel", json!({"nodeId": node}))
        .await
        .ok()?;
    let q = model["model"]["content"].as_array()?;
    Some((
        (q[0].as_f64()? + q[4].as_f64()?) / 2.0,
        (q[1].as_f64()? + q[5].as_f64()?) / 2.0,
    ))
}
