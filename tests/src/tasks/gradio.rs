//! Tasks on Gradio's bakery-order app (`tests/corpus/gradio/app.py`): order a cake with
//! every widget kind of its order tab (a radio, a checkbox, a dropdown's custom listbox, a
//! slider, a number field, a textbox, a button), and ask the baker a question in the other
//! tab (a chat-like textbox and its send button). The agent finds every control in
//! snapshot answers and acts as a person would; each task is verified on the `state.json`
//! the app's own listeners write.

use serde_json::json;

use super::streamlit::State;
use super::{last_record, need, records, tail};
use crate::agent::{Agent, Item, Mcp, Name, Page, Report};

/// The control a widget's label names: the element itself when the snapshot names it so,
/// else the first control of `roles` after the label's text (frameworks that label a widget
/// with a separate text above it). Also the NiceGUI tasks' finder.
pub(crate) fn labelled(page: &Page, roles: &[&str], label: &str) -> Result<Item, String> {
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

/// A slider's value as the snapshot shows it: its value, else the number it is named by
/// (Quasar's slider shows its value in a label only while it is active, and kapture names
/// the slider by that label; it gives no value from `aria-valuenow`).
pub(crate) fn slider_value(page: &Page, slider: &Item) -> Result<i64, String> {
    // Its value, its name, else the number drawn on it (a thumb's label under it).
    let inside = page.within(slider).into_iter().map(|i| i.label());
    [slider.value.as_deref(), Some(slider.name.as_str())]
        .into_iter()
        .flatten()
        .chain(inside)
        .find_map(|v| v.trim().parse::<f64>().ok())
        .map(|v| v.round() as i64)
        .ok_or_else(|| format!("the slider shows no number: {slider:?}"))
}

impl<M: Mcp> Agent<'_, M> {
    /// Set a slider as a person does with the keyboard: click it (which gives it focus and
    /// may move its thumb), read where it is now, step it with the arrow keys.
    pub(crate) async fn slide_to(
        &mut self,
        roles: &[&str],
        label: &str,
        want: i64,
    ) -> Result<(), String> {
        let page = self.look().await?;
        let slider = labelled(&page, roles, label)?;
        self.click(&slider).await?;
        let page = self.look().await?;
        let slider = labelled(&page, roles, label)?;
        let now = slider_value(&page, &slider)?;
        let key = if now < want {
            "ArrowRight"
        } else {
            "ArrowLeft"
        };
        for _ in 0..(want - now).unsigned_abs().min(20) {
            self.press(key).await?;
        }
        Ok(())
    }

    /// Pick `option` in a custom dropdown (a combobox that opens a listbox): click it,
    /// look, click the option the list shows.
    pub(crate) async fn pick_option(
        &mut self,
        roles: &[&str],
        label: &str,
        option: &str,
    ) -> Result<(), String> {
        let page = self.look().await?;
        let select = labelled(&page, roles, label)?;
        self.click(&select).await?;
        let (_, choice) = self
            .look_for(&format!("option {option:?}"), |p| {
                p.find(&["option", "menuitem", "listitem"], Name::Is(option))
                    .filter(|i| i.id.is_some())
                    .cloned()
            })
            .await?;
        self.click(&choice).await?;
        Ok(())
    }

    /// Open the bakery and look until its widgets are drawn (Gradio renders after load).
    async fn bakery_open(&mut self, url: &str) -> Result<Page, String> {
        self.open(url).await?;
        let (page, _) = self
            .look_for("the order form", |p| {
                p.find(&["radio"], Name::Is("Large")).cloned()
            })
            .await?;
        Ok(page)
    }
}

/// "Order two large lemon cakes, gift-wrapped, with 3 candles, for Ada": every widget kind
/// of the order tab, then the order button; verified on the order the app recorded.
pub async fn order_cake<M: Mcp>(agent: &mut Agent<'_, M>, url: &str, state: State<'_>) -> Report {
    let mut r = Report {
        app: "gradio order".into(),
        ..Report::default()
    };
    agent.reset();
    let before = records(&state(), "orders");

    let Some(page) = step!(r, "open", agent.bakery_open(url).await) else {
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

    step!(r, "tick \"Gift wrap\"", {
        async {
            let page = agent.look().await?;
            let wrap = need(&page, &["checkbox"], Name::Is("Gift wrap"))?;
            agent.click(&wrap).await?;
            agent
                .state_json_until(state, "gift wrap", |s| s["form"]["gift_wrap"] == true)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "choose flavour \"Lemon\"", {
        async {
            agent
                .pick_option(&["combobox", "textbox", "button"], "Flavour", "Lemon")
                .await?;
            agent
                .state_json_until(state, "flavour Lemon", |s| s["form"]["flavour"] == "Lemon")
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "set candles to 3", {
        async {
            agent.slide_to(&["slider"], "Candles", 3).await?;
            agent
                .state_json_until(state, "3 candles", |s| s["form"]["candles"] == 3)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "set quantity 2", {
        async {
            let page = agent.look().await?;
            let quantity = labelled(&page, &["spinbutton", "textbox"], "Quantity")?;
            agent.type_into(&quantity, "2", false).await?;
            agent
                .state_json_until(state, "quantity 2", |s| s["form"]["quantity"] == 2)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "name the order \"Ada\"", {
        async {
            let page = agent.look().await?;
            let name = labelled(&page, &["textbox"], "Name for the order")?;
            agent.type_into(&name, "Ada", false).await?;
            agent
                .state_json_until(state, "the name Ada", |s| s["form"]["name"] == "Ada")
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
                .state_json_until(state, "a new order", |s| records(s, "orders") > before)
                .await?;
            let order = last_record(&s, "orders");
            let want = json!({"size": "Large", "gift_wrap": true, "flavour": "Lemon",
                "candles": 3, "quantity": 2, "name": "Ada"});
            super::holds("order", &order, &want)
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// "Ask the baker whether the carrot cake has nuts": open the other tab, type the question
/// in its message box, send it; verified on the message the app recorded.
pub async fn ask_the_baker<M: Mcp>(
    agent: &mut Agent<'_, M>,
    url: &str,
    state: State<'_>,
) -> Report {
    const QUESTION: &str = "Does the carrot cake have nuts?";
    let mut r = Report {
        app: "gradio chat".into(),
        ..Report::default()
    };
    agent.reset();
    let before = records(&state(), "messages");

    let Some(page) = step!(r, "open", agent.bakery_open(url).await) else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "open the \"Ask the baker\" tab", {
        async {
            let tab = need(&page, &["tab"], Name::Is("Ask the baker"))?;
            agent.click(&tab).await?;
            agent
                .look_for("the message box", |p| {
                    p.find(&["textbox"], Name::Has("Message")).cloned()
                })
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "type the question and send it", {
        async {
            let page = agent.look().await?;
            let message = labelled(&page, &["textbox"], "Message")?;
            agent.type_into(&message, QUESTION, false).await?;
            let page = agent.look().await?;
            let send = need(&page, &["button"], Name::Is("Send"))?;
            agent.click(&send).await?;
            let s = agent
                .state_json_until(state, "a new message", |s| records(s, "messages") > before)
                .await?;
            let sent = last_record(&s, "messages");
            if sent["text"] != QUESTION {
                return Err(format!("the app got {sent}, expected {QUESTION:?}"));
            }
            Ok(())
        }
        .await
    });

    step!(r, "read the baker's answer", {
        async {
            let (_, _) = agent
                .look_for("the baker's answer", |p| {
                    p.items
                        .iter()
                        .find(|i| i.label().contains("The baker says"))
                        .cloned()
                })
                .await?;
            Ok(())
        }
        .await
    });

    r.cost = agent.spent();
    r
}
