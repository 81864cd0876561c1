//! Tasks on Streamlit's coffee-order app (`tests/corpus/streamlit/app.py`): order a coffee
//! (a radio, a checkbox, a select, a number input, a button), sweeten it and add toppings
//! (a slider, a multiselect), and order the special that only the app's HTML component (an
//! iframe) shows. The agent finds every control in snapshot answers and clicks them as a
//! person would; each step is verified on the `state.json` the app's own callbacks write.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{need, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};

/// How long the app (its websocket round trip and rerun) may take to record a change.
const SETTLE: Duration = Duration::from_secs(10);

/// The app's state as its callbacks wrote it: `{changes, orders, form}` (also the Panel
/// tasks' reader).
pub type State<'a> = &'a dyn Fn() -> Value;

impl<M: Mcp> Agent<'_, M> {
    /// Poll the app's own state until `want` holds (bounded in time and count), left out of
    /// the task's time; answers the last state, or why it never held.
    pub async fn state_json_until(
        &self,
        state: State<'_>,
        what: &str,
        want: impl Fn(&Value) -> bool,
    ) -> Result<Value, String> {
        let started = Instant::now();
        let mut last = Value::Null;
        for _ in 0..200 {
            last = state();
            if want(&last) || started.elapsed() >= SETTLE {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.exclude(started.elapsed());
        if want(&last) {
            Ok(last)
        } else {
            Err(format!(
                "the app's state never showed {what} within {SETTLE:?}: {}",
                cut(&last)
            ))
        }
    }
}

/// A state for a failure message: its form and its last order.
fn cut(state: &Value) -> String {
    format!(
        "form {} last order {}",
        state["form"],
        last_order(state).cloned().unwrap_or(Value::Null)
    )
}

fn last_order(state: &Value) -> Option<&Value> {
    state["orders"].as_array().and_then(|o| o.last())
}

fn orders(state: &Value) -> usize {
    state["orders"].as_array().map_or(0, Vec::len)
}

/// The control a widget's label names: the element itself when the snapshot names it so,
/// else the first control of `roles` after the label's text (Streamlit labels some widgets
/// with a separate text above them).
fn control(page: &Page, roles: &[&str], label: &str) -> Result<Item, String> {
    if let Some(item) = page
        .find(roles, Name::Is(label))
        .or(page.find(roles, Name::Has(label)))
    {
        if item.id.is_some() {
            return Ok(item.clone());
        }
    }
    let at = page
        .items
        .iter()
        .position(|i| i.label().trim().eq_ignore_ascii_case(label))
        .ok_or_else(|| format!("no {label:?} in the snapshot:\n{}", tail(&page.text)))?;
    page.items[at..]
        .iter()
        .find(|i| roles.contains(&i.role.as_str()) && i.id.is_some())
        .cloned()
        .ok_or_else(|| {
            format!(
                "no {roles:?} after {label:?} in the snapshot:\n{}",
                tail(&page.text)
            )
        })
}

const COMBO: &[&str] = &["combobox", "textbox", "button"];

impl<M: Mcp> Agent<'_, M> {
    /// Open the app and look until its widgets are drawn (Streamlit renders after load).
    async fn coffee_open(&mut self, url: &str) -> Result<Page, String> {
        self.open(url).await?;
        let (page, _) = self
            .look_for("the order form", |p| {
                p.find(&["radio"], Name::Is("Large")).cloned()
            })
            .await?;
        Ok(page)
    }

    /// Pick `option` in a custom select (a combobox that opens a list): click it, look,
    /// click the option the list shows.
    async fn coffee_pick(&mut self, page: &Page, label: &str, option: &str) -> Result<(), String> {
        let select = control(page, COMBO, label)?;
        self.click(&select).await?;
        let (_, choice) = self
            .look_for(&format!("option {option:?}"), |p| {
                p.find(&["option"], Name::Is(option)).cloned()
            })
            .await?;
        self.click(&choice).await?;
        Ok(())
    }
}

/// "Order a large coffee with an extra shot and oat milk, two of them": a radio, a
/// checkbox, a select and a number input, then the order button.
pub async fn order_coffee<M: Mcp>(agent: &mut Agent<'_, M>, url: &str, state: State<'_>) -> Report {
    let mut r = Report {
        app: "streamlit order".into(),
        ..Report::default()
    };
    agent.reset();
    let before = orders(&state());

    let Some(mut page) = step!(r, "open", agent.coffee_open(url).await) else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "choose size \"Large\"", {
        async {
            let large = need(&page, &["radio"], Name::Is("Large"))?;
            agent.click(&large).await?;
            agent
                .state_json_until(state, "size Large", |s| s["form"]["size"] == "Large")
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "tick \"Extra shot\"", {
        async {
            page = agent.look().await?;
            let shot = need(&page, &["checkbox"], Name::Is("Extra shot"))?;
            agent.click(&shot).await?;
            agent
                .state_json_until(state, "an extra shot", |s| s["form"]["extra_shot"] == true)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "choose milk \"Oat\"", {
        async {
            page = agent.look().await?;
            agent.coffee_pick(&page, "Milk", "Oat").await?;
            agent
                .state_json_until(state, "oat milk", |s| s["form"]["milk"] == "Oat")
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "set quantity 2", {
        async {
            page = agent.look().await?;
            let quantity = control(&page, &["spinbutton", "textbox"], "Quantity")?;
            agent.type_into(&quantity, "2", true).await?;
            agent
                .state_json_until(state, "quantity 2", |s| s["form"]["quantity"] == 2)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "place the order", {
        async {
            page = agent.look().await?;
            let place = need(&page, &["button"], Name::Is("Place order"))?;
            agent.click(&place).await?;
            let s = agent
                .state_json_until(state, "a new order", |s| orders(s) > before)
                .await?;
            let order = last_order(&s).cloned().unwrap_or_default();
            let want = serde_json::json!({"size": "Large", "extra_shot": true, "milk": "Oat", "quantity": 2});
            super::holds("order", &order, &want)
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// "Make it sweeter (8 of 10) with cinnamon and vanilla on top": a slider moved with the
/// keyboard, as a person does once it has focus, and two options of a multiselect.
pub async fn sweeten_and_top<M: Mcp>(
    agent: &mut Agent<'_, M>,
    url: &str,
    state: State<'_>,
) -> Report {
    let mut r = Report {
        app: "streamlit toppings".into(),
        ..Report::default()
    };
    agent.reset();
    let before = orders(&state());

    let Some(mut page) = step!(r, "open", agent.coffee_open(url).await) else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "set sweetness to 8", {
        async {
            let slider = control(&page, &["slider"], "Sweetness")?;
            let now: i64 = slider
                .value
                .as_deref()
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| format!("the slider shows no number: {slider:?}"))?;
            // Focus the thumb with a click, then step it with the arrow keys.
            agent.click(&slider).await?;
            let key = if now < 8 { "ArrowRight" } else { "ArrowLeft" };
            for _ in 0..(8 - now).unsigned_abs().min(10) {
                agent.press(key).await?;
            }
            agent
                .state_json_until(state, "sweetness 8", |s| s["form"]["sweetness"] == 8)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "add cinnamon and vanilla", {
        async {
            for topping in ["Cinnamon", "Vanilla"] {
                page = agent.look().await?;
                // The list may still be open from the first pick: its option is there.
                match page.find(&["option"], Name::Is(topping)).cloned() {
                    Some(option) => {
                        agent.click(&option).await?;
                    }
                    None => agent.coffee_pick(&page, "Toppings", topping).await?,
                }
            }
            agent.press("Escape").await?;
            agent
                .state_json_until(state, "cinnamon and vanilla", |s| {
                    s["form"]["toppings"] == serde_json::json!(["Cinnamon", "Vanilla"])
                })
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "place the order", {
        async {
            page = agent.look().await?;
            let place = need(&page, &["button"], Name::Is("Place order"))?;
            agent.click(&place).await?;
            let s = agent
                .state_json_until(state, "a new order", |s| orders(s) > before)
                .await?;
            let order = last_order(&s).cloned().unwrap_or_default();
            if order["sweetness"] != 8
                || order["toppings"] != serde_json::json!(["Cinnamon", "Vanilla"])
            {
                return Err(format!("the order is {order}"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// "Order today's special": read its name in the specials tab, where only the app's HTML
/// component (an iframe) shows it, then pick that drink in the order tab and order.
pub async fn order_the_special<M: Mcp>(
    agent: &mut Agent<'_, M>,
    url: &str,
    state: State<'_>,
) -> Report {
    let mut r = Report {
        app: "streamlit special".into(),
        ..Report::default()
    };
    agent.reset();
    let before = orders(&state());

    let Some(page) = step!(r, "open", agent.coffee_open(url).await) else {
        r.cost = agent.spent();
        return r;
    };

    let special = step!(r, "read the special in its tab", {
        async {
            let tab = need(&page, &["tab"], Name::Has("special"))?;
            agent.click(&tab).await?;
            // The component's frame loads when its tab shows: look until its heading is there.
            let (page, heading) = agent
                .look_for("the special's heading", |p| {
                    p.find(&["heading"], Name::Is("Today's special")).cloned()
                })
                .await?;
            // The special is the first text after the heading.
            let name = page
                .items
                .iter()
                .skip_while(|i| **i != heading)
                .skip(1)
                .map(|i| i.label().trim().to_string())
                .find(|l| !l.is_empty())
                .ok_or_else(|| format!("nothing after the heading:\n{}", tail(&page.text)))?;
            Ok(name)
        }
        .await
    });
    let Some(special) = special else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "pick the special as the drink", {
        async {
            let page = agent.look().await?;
            let tab = need(&page, &["tab"], Name::Is("Order"))?;
            agent.click(&tab).await?;
            let page = agent.look().await?;
            agent.coffee_pick(&page, "Drink", &special).await?;
            agent
                .state_json_until(state, "the special as the drink", |s| {
                    s["form"]["drink"] == special.as_str()
                })
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "place the order", {
        async {
            let page = agent.look().await?;
            let place = need(&page, &["button"], Name::Is("Place order"))?;
            agent.click(&place).await?;
            let s = agent
                .state_json_until(state, "a new order", |s| orders(s) > before)
                .await?;
            let order = last_order(&s).cloned().unwrap_or_default();
            if order["drink"] != special.as_str() {
                return Err(format!("the order is {order}, expected a {special}"));
            }
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}
