//! Tasks on NiceGUI's tea-order app (`tests/corpus/nicegui/app.py`): order a tea with every
//! widget kind of its order page (a Quasar radio, checkbox, select with its popup menu,
//! slider, number and text inputs) confirmed in a dialog, and send feedback on its other
//! page, reached by a link the app routes on the client (a radio, a textarea, a switch).
//! The agent finds every control in snapshot answers and acts as a person would; each task
//! is verified on the `state.json` the app's own handlers write.

use serde_json::json;

use super::gradio::labelled;
use super::streamlit::State;
use super::{last_record, need, records};
use crate::agent::{Agent, Mcp, Name, Page, Report};

impl<M: Mcp> Agent<'_, M> {
    /// Open the tea house and look until its widgets are drawn (NiceGUI renders its Vue
    /// components after load).
    async fn tea_open(&mut self, url: &str) -> Result<Page, String> {
        self.open(url).await?;
        let (page, _) = self
            .look_for("the order form", |p| {
                p.find(&["radio"], Name::Is("Large")).cloned()
            })
            .await?;
        Ok(page)
    }
}

/// "Order two large oolong teas, strong (5 of 5), with extra honey, for Ada": every widget
/// kind of the order page, then the order button and the dialog's confirm; verified on the
/// order the app recorded.
pub async fn order_tea<M: Mcp>(agent: &mut Agent<'_, M>, url: &str, state: State<'_>) -> Report {
    let mut r = Report {
        app: "nicegui order".into(),
        ..Report::default()
    };
    agent.reset();
    let before = records(&state(), "orders");

    let Some(page) = step!(r, "open", agent.tea_open(url).await) else {
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

    step!(r, "tick \"Extra honey\"", {
        async {
            let page = agent.look().await?;
            let honey = need(&page, &["checkbox"], Name::Is("Extra honey"))?;
            agent.click(&honey).await?;
            agent
                .state_json_until(state, "extra honey", |s| s["form"]["honey"] == true)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "choose tea \"Oolong\"", {
        async {
            agent
                .pick_option(&["combobox", "textbox", "button"], "Tea", "Oolong")
                .await?;
            agent
                .state_json_until(state, "tea Oolong", |s| s["form"]["tea"] == "Oolong")
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "set strength to 5", {
        async {
            agent.slide_to(&["slider"], "Strength", 5).await?;
            agent
                .state_json_until(state, "strength 5", |s| s["form"]["strength"] == 5)
                .await?;
            Ok(())
        }
        .await
    });

    step!(r, "set cups to 2", {
        async {
            let page = agent.look().await?;
            let cups = labelled(&page, &["spinbutton", "textbox"], "Cups")?;
            agent.type_into(&cups, "2", false).await?;
            agent
                // A Quasar number field answers a float (2.0).
                .state_json_until(state, "2 cups", |s| s["form"]["cups"].as_f64() == Some(2.0))
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

    step!(r, "place the order and confirm it", {
        async {
            let page = agent.look().await?;
            let place = need(&page, &["button"], Name::Is("Place order"))?;
            agent.click(&place).await?;
            let (_, confirm) = agent
                .look_for("the dialog's Confirm", |p| {
                    p.find(&["button"], Name::Is("Confirm")).cloned()
                })
                .await?;
            agent.click(&confirm).await?;
            let s = agent
                .state_json_until(state, "a new order", |s| records(s, "orders") > before)
                .await?;
            let order = last_record(&s, "orders");
            let want = json!({"size": "Large", "honey": true, "tea": "Oolong",
                "strength": 5, "cups": 2.0, "name": "Ada"});
            super::holds("order", &order, &want)
        }
        .await
    });

    r.cost = agent.spent();
    r
}

/// "Tell them the tea was great, and that they may contact you": follow the header's
/// Feedback link (a client-side route, no page load), then a radio, a textarea, a switch
/// and the send button; verified on the feedback the app recorded.
pub async fn send_feedback<M: Mcp>(
    agent: &mut Agent<'_, M>,
    url: &str,
    state: State<'_>,
) -> Report {
    const COMMENT: &str = "Lovely oolong, thank you!";
    let mut r = Report {
        app: "nicegui feedback".into(),
        ..Report::default()
    };
    agent.reset();
    let before = records(&state(), "feedback");

    let Some(page) = step!(r, "open", agent.tea_open(url).await) else {
        r.cost = agent.spent();
        return r;
    };

    let page = step!(r, "follow the \"Feedback\" link", {
        async {
            let link = need(&page, &["link"], Name::Is("Feedback"))?;
            agent.click(&link).await?;
            let (page, _) = agent
                .look_for("the feedback form", |p| {
                    p.find(&["radio"], Name::Is("Great")).cloned()
                })
                .await?;
            Ok(page)
        }
        .await
    });
    let Some(page) = page else {
        r.cost = agent.spent();
        return r;
    };

    step!(r, "fill in the feedback and send it", {
        async {
            let great = need(&page, &["radio"], Name::Is("Great"))?;
            agent.click(&great).await?;
            let page = agent.look().await?;
            let comment = labelled(&page, &["textbox"], "Comment")?;
            agent.type_into(&comment, COMMENT, false).await?;
            let page = agent.look().await?;
            let contact = labelled(&page, &["switch", "checkbox"], "Contact me")?;
            agent.click(&contact).await?;
            let page = agent.look().await?;
            let send = need(&page, &["button"], Name::Is("Send feedback"))?;
            agent.click(&send).await?;
            let s = agent
                .state_json_until(state, "new feedback", |s| records(s, "feedback") > before)
                .await?;
            let sent = last_record(&s, "feedback");
            let want = json!({"rating": "Great", "comment": COMMENT, "contact": true});
            super::holds("feedback", &sent, &want)
        }
        .await
    });

    r.cost = agent.spent();
    r
}
