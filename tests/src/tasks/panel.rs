//! Tasks on Panel's garden-order app (`tests/corpus/panel/app.py`): order plants through
//! Bokeh widgets in shadow roots (a select, a radio group, a checkbox, a slider, a text
//! input, a button), and pick a bed on the Bokeh plot, a canvas the page model cannot see
//! into: the agent finds the red point on a screenshot, as a person looking at it would,
//! and clicks there. Each step is verified on the `state.json` the app's watchers write.

use std::future::Future;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::streamlit::State;
use super::{need, tail};
use crate::agent::{Agent, Mcp, Name, Page, Report};
use crate::Kapture;

/// A screenshot of the viewport as the agent gets it.
#[derive(Debug, Clone)]
pub struct Shot {
    pub png: Vec<u8>,
    /// The answer's size (counted like any answer).
    pub bytes: usize,
    /// Image pixels per CSS pixel: 1 when the server draws at CSS size, else the device's
    /// pixel ratio, which the agent divides a point by before clicking it.
    pub scale: f64,
    /// The tool that took it, for the agent's log.
    pub tool: &'static str,
}

/// A server whose screenshot the agent can look at.
pub trait Screenshots: Mcp {
    fn screenshot(&self) -> impl Future<Output = Result<Shot, String>>;
}

/// The PNG of a `tools/call` result's first image block, and the result's size in bytes.
pub fn png_of(tool: &str, result: rmcp::model::CallToolResult) -> Result<(Vec<u8>, usize), String> {
    let bytes = serde_json::to_value(&result)
        .unwrap_or_default()
        .to_string()
        .len();
    let out = crate::Outcome::from(result);
    if out.is_error {
        return Err(format!("{tool} failed: {}", out.text));
    }
    let (mime, png) = out
        .images
        .into_iter()
        .next()
        .ok_or_else(|| format!("the {tool} answer has no image: {}", out.text))?;
    if mime != "image/png" {
        return Err(format!("{tool} answered {mime}, not a PNG"));
    }
    Ok((png, bytes))
}

impl Screenshots for Kapture {
    async fn screenshot(&self) -> Result<Shot, String> {
        // PNG at scale 1: one image pixel per CSS pixel of the viewport.
        let tool = "browser_take_screenshot";
        let result = self
            .call_raw(tool, json!({"type": "png", "scale": 1}))
            .await
            .map_err(|e| e.to_string())?;
        let (png, bytes) = png_of(tool, result)?;
        Ok(Shot {
            png,
            bytes,
            scale: 1.0,
            tool,
        })
    }
}

/// The centre of the red blob on a PNG, in image pixels: what a person sees as "the red
/// point". Read with Pillow (in the app's venv), not with anything of the page.
const RED_POINT_PY: &str = r#"
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
px = im.load()
xs, ys = [], []
for y in range(h):
    for x in range(w):
        r, g, b = px[x, y]
        if r > 190 and g < 70 and b < 70:
            xs.append(x); ys.append(y)
if not xs:
    print("none")
else:
    print(sum(xs) // len(xs), sum(ys) // len(ys), len(xs))
"#;

fn red_point(python: &Path, png: &[u8]) -> Result<(f64, f64), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("screen.png");
    std::fs::write(&file, png).map_err(|e| e.to_string())?;
    let out = Command::new(python)
        .args(["-c", RED_POINT_PY])
        .arg(&file)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let nums: Vec<f64> = text.split(' ').filter_map(|n| n.parse().ok()).collect();
    match nums.as_slice() {
        // A blob of a drawn point's size, not a stray pixel.
        [x, y, n] if *n >= 50.0 => Ok((*x, *y)),
        _ => Err(format!(
            "no red point on the screenshot ({text}; {})",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

fn orders(state: &Value) -> usize {
    state["orders"].as_array().map_or(0, Vec::len)
}

fn last_order(state: &Value) -> Value {
    state["orders"]
        .as_array()
        .and_then(|o| o.last())
        .cloned()
        .unwrap_or_default()
}

impl<M: Mcp> Agent<'_, M> {
    /// Open the app and look until its widgets are drawn (Bokeh renders after load).
    async fn garden_open(&mut self, url: &str) -> Result<Page, String> {
        self.open(url).await?;
        let (page, _) = self
            .look_for("the order form", |p| {
                p.find(&["button"], Name::Is("Submit order")).cloned()
            })
            .await?;
        Ok(page)
    }

    /// Press "Submit order" and answer the order the app stored.
    async fn garden_submit(&mut self, state: State<'_>, before: usize) -> Result<Value, String> {
        let page = self.look().await?;
        let submit = need(&page, &["button"], Name::Is("Submit order"))?;
        self.click(&submit).await?;
        let s = self
            .state_json_until(state, "a new order", |s| orders(s) > before)
            .await?;
        Ok(last_order(&s))
    }
}

/// "Three basil plants in a ceramic pot, gift-wrapped, with a note": a select, a radio, a
/// checkbox, a slider (by keyboard) and a text field, then the submit button.
pub async fn order_plants<M: Mcp>(agent: &mut Agent<'_, M>, url: &str, state: State<'_>) -> Report {
    let mut r = Report {
        app: "panel order".into(),
        ..Report::default()
    };
    agent.reset();
    let before = orders(&state());

    let Some(mut page) = step!(r, "open", agent.garden_open(url).await) else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "choose plant \"Basil\"", {
        async {
            let plant = need(&page, &["combobox"], Name::Is("Plant"))?;
            agent.select(&plant, &["Basil"]).await?;
            agent
                .state_json_until(state, "basil", |s| s["form"]["plant"] == "Basil")
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "choose pot \"Ceramic\"", {
        async {
            page = agent.look().await?;
            let ceramic = need(&page, &["radio"], Name::Is("Ceramic"))?;
            agent.click(&ceramic).await?;
            agent
                .state_json_until(state, "a ceramic pot", |s| s["form"]["pot"] == "Ceramic")
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "tick \"Gift wrap\"", {
        async {
            page = agent.look().await?;
            // Bokeh's checkbox has no name of its own: its words are the text drawn after it.
            let gift = page
                .find(&["checkbox"], Name::Is("Gift wrap"))
                .or_else(|| {
                    page.items.windows(2).find_map(|w| {
                        (w[0].role == "checkbox" && w[1].label().starts_with("Gift wrap"))
                            .then_some(&w[0])
                    })
                })
                .cloned()
                .ok_or_else(|| format!("no checkbox \"Gift wrap\":\n{}", tail(&page.text)))?;
            agent.click(&gift).await?;
            agent
                .state_json_until(state, "gift wrap", |s| s["form"]["gift_wrap"] == true)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "set count to 3", {
        async {
            page = agent.look().await?;
            // The slider is named by the "Count: N" title drawn above it (no name of its own).
            let title = page
                .items
                .iter()
                .position(|i| i.label().contains("Count:"))
                .ok_or_else(|| format!("no \"Count:\" in the snapshot:\n{}", tail(&page.text)))?;
            let slider = page.items[title..]
                .iter()
                .find(|i| i.role == "slider")
                .cloned()
                .ok_or_else(|| format!("no slider after \"Count:\":\n{}", tail(&page.text)))?;
            // Its value as the slider's line gives it, else as its title shows it.
            let shown = page.items[title].label();
            let now: i64 = slider
                .value
                .as_deref()
                .or_else(|| shown.split("Count:").nth(1))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok())
                .map(|v| v as i64)
                .ok_or_else(|| format!("no count shown: {shown:?}, {slider:?}"))?;
            // Focus the handle with a click, then step it with the arrow keys.
            agent.click(&slider).await?;
            let key = if now < 3 { "ArrowRight" } else { "ArrowLeft" };
            for _ in 0..(3 - now).unsigned_abs().min(10) {
                agent.press(key).await?;
            }
            agent
                .state_json_until(state, "count 3", |s| s["form"]["count"] == 3)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "write a note", {
        async {
            page = agent.look().await?;
            let note = need(&page, &["textbox"], Name::Has("Note for the gardener"))?;
            agent.type_into(&note, "Water weekly", true).await?;
            agent
                .state_json_until(state, "the note", |s| s["form"]["note"] == "Water weekly")
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "submit the order", {
        async {
            let order = agent.garden_submit(state, before).await?;
            let want = json!({"plant": "Basil", "pot": "Ceramic", "gift_wrap": true, "count": 3, "note": "Water weekly"});
            super::holds("order", &order, &want)
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// "Plant it in the sunny bed (the red point on the plot)": the plot is a canvas, so the
/// agent looks at a screenshot, finds the red point and clicks at its coordinates.
pub async fn plant_in_the_sunny_bed<M: Screenshots>(
    agent: &mut Agent<'_, M>,
    url: &str,
    state: State<'_>,
    python: &Path,
) -> Report {
    let mut r = Report {
        app: "panel canvas".into(),
        ..Report::default()
    };
    agent.reset();
    let before = orders(&state());

    if step!(r, "open", agent.garden_open(url).await).is_none() {
        r.cost = agent.spent();
        return r;
    }

    step!(r, "tap the red point", {
        async {
            let shot = agent.mcp.screenshot().await?;
            agent.cost.calls += 1;
            agent.cost.bytes += shot.bytes;
            agent.log.push(format!("{} → {} B", shot.tool, shot.bytes));
            let (x, y) = red_point(python, &shot.png)?;
            agent.click_at(x / shot.scale, y / shot.scale).await?;
            agent
                .state_json_until(state, "the sunny bed picked", |s| {
                    s["form"]["bed"] == "Sunny bed"
                })
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "submit the order", {
        async {
            let order = agent.garden_submit(state, before).await?;
            if order["bed"] != "Sunny bed" {
                return Err(format!("the order is {order}, expected the sunny bed"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}
