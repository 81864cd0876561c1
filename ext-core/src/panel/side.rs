//! The Kapture side panel (`sidepanel.html`): a person's controls beside the agents — pause,
//! every tab's approvals with their risk, the mode of the site in front of them, the live
//! feed, their own rules, grants and budgets. It shares the DevTools panel's pieces
//! (`super::{el, on, approval_list, …}`) and talks only to the worker, over the same port.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element, HtmlInputElement, HtmlSelectElement};

use super::link::Link;
use super::{
    apply_theme, approval_list, arming, by_id, el, on, query_number, show_link, show_pill, time_of,
};
use crate::chrome;
use crate::policy::budget::BudgetState;
use crate::policy::person::{PersonBudget, PersonPolicy, PersonRule, SiteMode};
use crate::policy::{Category, Verdict};
use crate::protocol::TabId;
use crate::ui::{
    self, BudgetKey, FeedEntry, PanelEvent, PanelRequest, SessionBudget, SiteView, PANEL_PORT,
};

/// Steps one "+N" click gives a budget.
const EXTEND_STEPS: u64 = 10;

/// The modes a person can pick (Custom is only shown: it is what mixed rules amount to).
const MODES: [(SiteMode, &str, &str); 3] = [
    (SiteMode::Auto, "auto", "Auto"),
    (SiteMode::Ask, "ask", "Ask"),
    (SiteMode::ReadOnly, "read-only", "Read-only"),
];

/// A change sent and not yet confirmed: the rules, the budgets, the form that sent it.
type Sent = (Vec<PersonRule>, Vec<PersonBudget>, &'static str);

struct Side {
    doc: Document,
    link: Rc<Link>,
    /// The window whose active tab this panel shows the site of.
    window: Cell<Option<i32>>,
    tab: Cell<Option<TabId>>,
    paused: Cell<bool>,
    person: RefCell<PersonPolicy>,
    /// What each section last showed (serialized): unchanged sections are left alone, so
    /// a click is never lost to a redraw the agents' steps cause.
    shown: RefCell<HashMap<&'static str, String>>,
    /// The rule the form edits (its index), if any.
    editing: Cell<Option<usize>>,
    /// The rules and budgets sent last and not yet confirmed, and which form sent them.
    sent: RefCell<Option<Sent>>,
    /// The worker's state is known (a `Control` came since the port last opened): until
    /// then nothing takes clicks.
    live: Cell<bool>,
    /// The element picker (the DevTools panel's component), on the watched tab.
    picker: RefCell<Option<Rc<super::picker::Picker>>>,
}

impl Side {
    fn send(&self, req: &PanelRequest) {
        self.link.post(req);
    }

    /// The worker went away: "reconnecting", and no clicks (a Pause sent now would reach
    /// nobody) until it tells its state on a new port.
    fn down(&self) {
        self.live.set(false);
        show_link(&self.doc, false, &["pause"]);
    }

    fn sender(self: &Rc<Self>) -> super::Send {
        let ui = self.clone();
        Rc::new(move |r| ui.send(&r))
    }

    /// Whether `section` would show something else than it does (and remember it).
    fn changed(&self, section: &'static str, value: &impl Serialize) -> bool {
        let text = serde_json::to_string(value).unwrap_or_default();
        self.shown.borrow_mut().insert(section, text.clone()) != Some(text)
    }

    fn button(&self, id: &str, label: &str, aria: &str) -> Element {
        el(
            &self.doc,
            "button",
            &[("type", "button"), ("id", id), ("aria-label", aria)],
            label,
        )
    }

    fn on_event(self: &Rc<Self>, ev: PanelEvent) {
        match ev {
            PanelEvent::State { servers, .. } => {
                show_pill(&self.doc, &servers);
                // Watch on a new port (its first word is this), and again when the
                // connected servers change: "This site" shows their rules (a restarted
                // worker knows none at first).
                let rules: Vec<_> = servers
                    .iter()
                    .filter(|s| s.state == "connected")
                    .map(|s| (s.port, s.agreed, s.fingerprint.clone()))
                    .collect();
                if self.changed("servers", &rules) && self.link.is_up() {
                    self.send(&PanelRequest::Watch {
                        tab_id: self.tab.get(),
                    });
                }
            }
            PanelEvent::Feed { entries } => {
                let list: Element = by_id(&self.doc, "feed-list");
                list.set_inner_html("");
                for e in entries.iter().rev().take(ui::FEED_SHOWN) {
                    list.append_child(&self.feed_item(e)).ok();
                }
                self.feed_empty();
            }
            PanelEvent::Step { entry } => {
                let list: Element = by_id(&self.doc, "feed-list");
                let _ = list.prepend_with_node_1(&self.feed_item(&entry));
                while list.child_element_count() as usize > ui::FEED_SHOWN {
                    if let Some(last) = list.last_element_child() {
                        last.remove();
                    }
                }
                self.feed_empty();
            }
            PanelEvent::AllApprovals { pending } => self.show_approvals(&pending),
            PanelEvent::Control {
                paused,
                safe_mode,
                person,
                budgets,
                sessions,
                site,
                error,
            } => {
                self.show_pause(paused, safe_mode);
                *self.person.borrow_mut() = person.clone();
                self.show_site(site.as_ref());
                self.show_rules(&person);
                self.show_budgets(&person, &budgets, &sessions);
                self.settle_forms(&person, error);
                // The state is known again: the controls take clicks.
                if !self.live.replace(true) {
                    show_link(&self.doc, true, &["pause"]);
                }
            }
            // The DevTools panel's events: a side panel does not `Subscribe`.
            PanelEvent::History { .. }
            | PanelEvent::Ran { .. }
            | PanelEvent::Result { .. }
            | PanelEvent::Audit { .. }
            | PanelEvent::Approvals { .. }
            // The options page's.
            | PanelEvent::Paired { .. }
            | PanelEvent::Mode { .. } => {}
        }
        // Whatever changed may have moved a control that loosens or grants.
        arming::settle(&self.doc);
    }

    fn show_pause(&self, paused: bool, safe_mode: bool) {
        self.paused.set(paused);
        let b: Element = by_id(&self.doc, "pause");
        b.set_text_content(Some(if paused { "Resume" } else { "Pause" }));
        let _ = b.set_attribute("aria-pressed", if paused { "true" } else { "false" });
        // Resume loosens (agents act again): armed. Pause never waits.
        if paused {
            arming::guard(&b, "resume");
        } else {
            arming::unguard(&b);
        }
        let banner: Element = by_id(&self.doc, "paused-banner");
        let safe: Element = by_id(&self.doc, "safe-banner");
        for (e, show) in [(&banner, paused), (&safe, safe_mode && !paused)] {
            if show {
                let _ = e.remove_attribute("hidden");
            } else {
                let _ = e.set_attribute("hidden", "");
            }
        }
        if let Some(root) = self.doc.document_element() {
            let _ = root.set_attribute("data-paused", if paused { "true" } else { "false" });
        }
    }

    fn show_approvals(self: &Rc<Self>, pending: &[ui::ApprovalView]) {
        if !self.changed("approvals", &pending) {
            return;
        }
        let list: Element = by_id(&self.doc, "approval-list");
        approval_list(&self.doc, &list, pending, self.sender());
        let count: Element = by_id(&self.doc, "approval-count");
        count.set_text_content(Some(&pending.len().to_string()));
        let section: Element = by_id(&self.doc, "approvals");
        let _ = section.set_attribute("data-pending", &pending.len().to_string());
        if pending.is_empty() {
            list.append_child(&el(
                &self.doc,
                "li",
                &[("class", "muted")],
                "Nothing waiting",
            ))
            .ok();
        }
    }

    fn feed_item(&self, e: &FeedEntry) -> Element {
        let doc = &self.doc;
        let ok = e.status == "ok";
        let li = el(
            doc,
            "li",
            &[
                ("class", "step"),
                ("data-status", &e.status),
                ("data-method", &e.method),
            ],
            "",
        );
        let head = el(doc, "div", &[("class", "head")], "");
        // Named as the agent called it: the MCP tool, where the method has one.
        let tool = crate::methods::facts(&e.method)
            .and_then(|f| f.tool)
            .unwrap_or(&e.method);
        head.append_child(&el(doc, "span", &[("class", "mono method")], tool))
            .ok();
        head.append_child(&el(
            doc,
            "span",
            &[("class", if ok { "status ok" } else { "status bad" })],
            &e.status,
        ))
        .ok();
        head.append_child(&el(doc, "span", &[("class", "verdict")], &e.verdict))
            .ok();
        head.append_child(&el(doc, "time", &[("class", "muted")], &time_of(e.time)))
            .ok();
        li.append_child(&head).ok();
        if let Some(target) = &e.target {
            li.append_child(&el(doc, "div", &[("class", "mono target")], target))
                .ok();
        }
        let origin = if e.origin.is_empty() {
            "—"
        } else {
            &e.origin
        };
        li.append_child(&el(
            doc,
            "div",
            &[("class", "muted where")],
            // A no-break space: the unit stays with its number.
            &format!("{origin} · {} · {:.0}\u{a0}ms", e.who, e.ms),
        ))
        .ok();
        li
    }

    fn feed_empty(&self) {
        let list: Element = by_id(&self.doc, "feed-list");
        let empty: Element = by_id(&self.doc, "feed-empty");
        if list.child_element_count() == 0 {
            let _ = empty.remove_attribute("hidden");
        } else {
            let _ = empty.set_attribute("hidden", "");
        }
    }

    /// The site in front of the person: its origin, the mode (a segmented control), and
    /// the verdict per category.
    fn show_site(self: &Rc<Self>, site: Option<&SiteView>) {
        if !self.changed("site", &site) {
            return;
        }
        let doc = &self.doc;
        let origin: Element = by_id(doc, "site-origin");
        let modes: Element = by_id(doc, "site-modes");
        let verdicts: Element = by_id(doc, "site-verdicts");
        modes.set_inner_html("");
        let _ = modes.remove_attribute("data-key");
        verdicts.set_inner_html("");
        let Some(site) = site else {
            origin.set_text_content(Some("This tab shows no web page a rule can name."));
            return;
        };
        origin.set_text_content(Some(&site.origin));
        let _ = modes.set_attribute("data-key", &site.origin);
        for (mode, key, label) in MODES {
            let pressed = site.mode == mode;
            let b = el(
                doc,
                "button",
                &[
                    ("type", "button"),
                    ("id", &format!("mode-{key}")),
                    ("aria-pressed", if pressed { "true" } else { "false" }),
                ],
                label,
            );
            // Armed per site: another site's modes (the tab navigated, a navigation timed
            // to a person's click) are new controls, whatever their place.
            arming::guard(&b, &site.origin);
            let (ui, o) = (self.clone(), site.origin.clone());
            on(&b, "click", move |_| {
                ui.send(&PanelRequest::SetMode {
                    origin: o.clone(),
                    mode,
                })
            });
            modes.append_child(&b).ok();
        }
        if site.mode == SiteMode::Custom {
            modes
                .append_child(&el(
                    doc,
                    "span",
                    &[("id", "mode-custom"), ("class", "custom")],
                    "Custom",
                ))
                .ok();
        }
        let _ = modes.set_attribute("data-mode", mode_key(site.mode));
        for (verdict, names) in ui::verdict_summary(&site.verdicts) {
            let li = el(doc, "li", &[("data-verdict", verdict_word(verdict))], "");
            li.append_child(&el(doc, "b", &[], verdict_word(verdict)))
                .ok();
            li.append_child(&doc.create_text_node(&format!(" {names}")))
                .ok();
            verdicts.append_child(&li).ok();
        }
    }

    /// The person's rules (Edit / Remove each) and the "always allow here" grants (Revoke).
    fn show_rules(self: &Rc<Self>, person: &PersonPolicy) {
        let doc = &self.doc;
        if self.changed("rules", &person.rules) {
            let body: Element = by_id(doc, "rule-rows");
            body.set_inner_html("");
            for (i, r) in person.rules.iter().enumerate() {
                let tr = el(doc, "tr", &[("id", &format!("rule-{i}"))], "");
                let category = r.category.map(Category::name).unwrap_or("all");
                let verdict = verdict_word(r.verdict);
                for (text, attrs) in [
                    (r.origin.as_str(), &[("class", "mono")][..]),
                    (category, &[][..]),
                    (
                        verdict,
                        &[("class", "verdict"), ("data-verdict", verdict)][..],
                    ),
                ] {
                    tr.append_child(&el(doc, "td", attrs, text)).ok();
                }
                let td = el(doc, "td", &[("class", "actions")], "");
                let edit = self.button(
                    &format!("rule-edit-{i}"),
                    "Edit",
                    &format!("Edit the rule for {}", r.origin),
                );
                let (ui, rule) = (self.clone(), r.clone());
                on(&edit, "click", move |_| ui.edit_rule(i, &rule));
                let remove =
                    self.remover(&format!("rule-remove-{i}"), &r.origin, "rules", move |p| {
                        if i < p.rules.len() {
                            p.rules.remove(i);
                        }
                    });
                // Removing a rule may loosen: armed, as the rule it removes.
                arming::guard(&remove, &format!("{}|{category}|{verdict}", r.origin));
                td.append_child(&edit).ok();
                td.append_child(&remove).ok();
                tr.append_child(&td).ok();
                body.append_child(&tr).ok();
            }
            let empty: Element = by_id(doc, "rules-empty");
            if person.rules.is_empty() {
                let _ = empty.remove_attribute("hidden");
            } else {
                let _ = empty.set_attribute("hidden", "");
            }
        }
        if self.changed("grants", &person.grants) {
            let list: Element = by_id(doc, "grants-list");
            list.set_inner_html("");
            if person.grants.is_empty() {
                list.append_child(&el(doc, "li", &[("class", "muted")], "None yet"))
                    .ok();
            }
            for (i, g) in person.grants.iter().enumerate() {
                let li = el(doc, "li", &[("class", "grant")], "");
                let text = format!(
                    "{} on {} · since {}",
                    g.category.name(),
                    g.origin,
                    time_of(g.since as f64)
                );
                li.append_child(&el(doc, "span", &[("class", "mono")], &text))
                    .ok();
                let b = self.button(
                    &format!("revoke-{i}"),
                    "Revoke",
                    &format!("Revoke: always allow {} on {}", g.category.name(), g.origin),
                );
                let (ui, origin, category) = (self.clone(), g.origin.clone(), g.category);
                on(&b, "click", move |_| {
                    ui.send(&PanelRequest::Revoke {
                        origin: origin.clone(),
                        category,
                    })
                });
                li.append_child(&b).ok();
                list.append_child(&li).ok();
            }
        }
    }

    /// A ✕ button that sends the person's settings with `change` made (a rule or a budget
    /// of `origin` removed, from `form`'s table).
    fn remover(
        self: &Rc<Self>,
        id: &str,
        origin: &str,
        form: &'static str,
        change: impl Fn(&mut PersonPolicy) + 'static,
    ) -> Element {
        let what = if form == "rules" { "rule" } else { "budget" };
        let b = self.button(id, "✕", &format!("Remove the {what} for {origin}"));
        let _ = b.set_attribute("title", "Remove");
        let ui = self.clone();
        on(&b, "click", move |_| {
            let mut p = ui.person.borrow().clone();
            change(&mut p);
            if form == "rules" {
                ui.editing.set(None);
            }
            ui.set_rules(p.rules, p.budgets, form);
        });
        b
    }

    fn edit_rule(&self, i: usize, rule: &PersonRule) {
        self.editing.set(Some(i));
        by_id::<HtmlInputElement>(&self.doc, "rule-origin").set_value(&rule.origin);
        by_id::<HtmlSelectElement>(&self.doc, "rule-category")
            .set_value(rule.category.map(Category::name).unwrap_or("all"));
        by_id::<HtmlSelectElement>(&self.doc, "rule-verdict").set_value(verdict_word(rule.verdict));
        by_id::<Element>(&self.doc, "rule-save").set_text_content(Some("Save rule"));
        let _ = by_id::<Element>(&self.doc, "rule-cancel").remove_attribute("hidden");
        let _ = by_id::<web_sys::HtmlElement>(&self.doc, "rule-origin").focus();
    }

    fn reset_rule_form(&self) {
        self.editing.set(None);
        by_id::<HtmlInputElement>(&self.doc, "rule-origin").set_value("");
        by_id::<HtmlSelectElement>(&self.doc, "rule-category").set_value("all");
        by_id::<HtmlSelectElement>(&self.doc, "rule-verdict").set_value("allow");
        by_id::<Element>(&self.doc, "rule-save").set_text_content(Some("Add rule"));
        let _ = by_id::<Element>(&self.doc, "rule-cancel").set_attribute("hidden", "");
    }

    fn submit_rule(&self) {
        let origin = by_id::<HtmlInputElement>(&self.doc, "rule-origin")
            .value()
            .trim()
            .to_string();
        if origin.is_empty() {
            show_error(
                &self.doc,
                "rules-error",
                Some("Name an origin: example.com, *.example.com, https://example.com:8443"),
            );
            return;
        }
        let category =
            Category::parse(&by_id::<HtmlSelectElement>(&self.doc, "rule-category").value());
        let verdict = match by_id::<HtmlSelectElement>(&self.doc, "rule-verdict")
            .value()
            .as_str()
        {
            "deny" => Verdict::Deny,
            "ask" => Verdict::Ask,
            _ => Verdict::Allow,
        };
        let p = self.person.borrow().clone();
        let rules = ui::upsert_rule(
            &p.rules,
            self.editing.get(),
            PersonRule {
                origin,
                category,
                verdict,
            },
        );
        self.set_rules(rules, p.budgets, "rules");
    }

    fn submit_budget(&self) {
        let origin = by_id::<HtmlInputElement>(&self.doc, "budget-origin")
            .value()
            .trim()
            .to_string();
        let max = by_id::<HtmlInputElement>(&self.doc, "budget-max")
            .value()
            .trim()
            .parse::<u64>();
        let (origin, max) = match (origin.is_empty(), max) {
            (false, Ok(max)) => (origin, max),
            _ => {
                show_error(
                    &self.doc,
                    "budgets-error",
                    Some("Name an origin and a whole number of steps per hour"),
                );
                return;
            }
        };
        let p = self.person.borrow().clone();
        let budgets = ui::upsert_budget(
            &p.budgets,
            PersonBudget {
                origin,
                max_steps_per_hour: max,
            },
        );
        self.set_rules(p.rules, budgets, "budgets");
    }

    /// Send the whole list (the worker validates it; an error comes back in `Control`).
    fn set_rules(&self, rules: Vec<PersonRule>, budgets: Vec<PersonBudget>, form: &'static str) {
        show_error(&self.doc, "rules-error", None);
        show_error(&self.doc, "budgets-error", None);
        *self.sent.borrow_mut() = Some((rules.clone(), budgets.clone(), form));
        self.send(&PanelRequest::SetRules { rules, budgets });
    }

    /// After a change was sent: an error shows next to the form that sent it (the form keeps
    /// what was typed); the change arriving clears that form.
    fn settle_forms(&self, person: &PersonPolicy, error: Option<String>) {
        let Some((rules, budgets, form)) = self.sent.borrow().clone() else {
            return;
        };
        if let Some(why) = error {
            show_error(&self.doc, &format!("{form}-error"), Some(&why));
            *self.sent.borrow_mut() = None;
        } else if person.rules == rules && person.budgets == budgets {
            *self.sent.borrow_mut() = None;
            if form == "rules" {
                self.reset_rule_form();
            } else {
                by_id::<HtmlInputElement>(&self.doc, "budget-origin").set_value("");
                by_id::<HtmlInputElement>(&self.doc, "budget-max").set_value("");
            }
        }
    }

    /// Origin budgets with their counts (+N each), the person's own (Remove each), and the
    /// sessions whose `--max-steps` is spent (Extend each).
    fn show_budgets(
        self: &Rc<Self>,
        person: &PersonPolicy,
        budgets: &[BudgetState],
        sessions: &[SessionBudget],
    ) {
        let doc = &self.doc;
        if self.changed("budgets", &budgets) {
            let list: Element = by_id(doc, "budget-list");
            list.set_inner_html("");
            if budgets.is_empty() {
                list.append_child(&el(doc, "li", &[("class", "muted")], "No step budgets"))
                    .ok();
            }
            for (i, b) in budgets.iter().enumerate() {
                let limit = b.max_steps_per_hour + b.extra;
                let spent = b.used >= limit;
                let li = el(
                    doc,
                    "li",
                    &[
                        ("class", "budget"),
                        ("data-spent", if spent { "true" } else { "false" }),
                    ],
                    "",
                );
                let text = el(doc, "div", &[("class", "grow")], "");
                text.append_child(&el(doc, "span", &[("class", "mono")], &b.origin))
                    .ok();
                let resets = b
                    .resets_at
                    .map(|at| format!(" · resets at {}", time_of(at)))
                    .unwrap_or_default();
                let count = format!("{} / {limit} steps this hour{resets}", b.used);
                text.append_child(&el(doc, "div", &[("class", "used")], &count))
                    .ok();
                text.append_child(&el(doc, "div", &[("class", "muted")], &b.source))
                    .ok();
                li.append_child(&text).ok();
                let more = self.button(
                    &format!("extend-{i}"),
                    &format!("+{EXTEND_STEPS} steps"),
                    &format!("Give {} {EXTEND_STEPS} more steps this hour", b.origin),
                );
                let (ui, origin) = (self.clone(), b.origin.clone());
                on(&more, "click", move |_| {
                    ui.send(&PanelRequest::Extend {
                        budget: BudgetKey::Origin {
                            origin: origin.clone(),
                        },
                        steps: EXTEND_STEPS,
                    })
                });
                arming::guard(&more, &b.origin);
                li.append_child(&more).ok();
                list.append_child(&li).ok();
            }
        }
        if self.changed("my-budgets", &person.budgets) {
            let body: Element = by_id(doc, "my-budget-rows");
            body.set_inner_html("");
            for (i, b) in person.budgets.iter().enumerate() {
                let tr = el(doc, "tr", &[], "");
                tr.append_child(&el(doc, "td", &[("class", "mono")], &b.origin))
                    .ok();
                let per_hour = format!("{} / hour", b.max_steps_per_hour);
                tr.append_child(&el(doc, "td", &[], &per_hour)).ok();
                let td = el(doc, "td", &[("class", "actions")], "");
                let remove = self.remover(
                    &format!("budget-remove-{i}"),
                    &b.origin,
                    "budgets",
                    move |p| {
                        if i < p.budgets.len() {
                            p.budgets.remove(i);
                        }
                    },
                );
                arming::guard(&remove, &b.origin);
                td.append_child(&remove).ok();
                tr.append_child(&td).ok();
                body.append_child(&tr).ok();
            }
        }
        if self.changed("sessions", &sessions) {
            let list: Element = by_id(doc, "session-list");
            list.set_inner_html("");
            if sessions.is_empty() {
                list.append_child(&el(
                    doc,
                    "li",
                    &[("class", "muted")],
                    "No agent has spent its steps",
                ))
                .ok();
            }
            for (i, s) in sessions.iter().enumerate() {
                let key = format!("{}/{}", s.port, s.session);
                let li = el(doc, "li", &[("class", "budget")], "");
                let text = format!("{} · {} / {} steps", s.label, s.used, s.max);
                li.append_child(&el(doc, "span", &[("class", "grow")], &text))
                    .ok();
                let b = self.button(
                    &format!("extend-session-{i}"),
                    &format!("Extend +{EXTEND_STEPS}"),
                    &format!("Give {} {EXTEND_STEPS} more steps", s.label),
                );
                let (ui, port, session) = (self.clone(), s.port, s.session.clone());
                on(&b, "click", move |_| {
                    ui.send(&PanelRequest::Extend {
                        budget: BudgetKey::Session {
                            port,
                            session: session.clone(),
                        },
                        steps: EXTEND_STEPS,
                    })
                });
                arming::guard(&b, &key);
                li.append_child(&b).ok();
                list.append_child(&li).ok();
            }
        }
    }

    /// Show the site of `tab` (the window's active tab) from now on; the picker works on it.
    fn watch(&self, tab: Option<TabId>) {
        let moved = self.tab.replace(tab) != tab;
        // Until the worker speaks on the port, `on_up` sends it (a request sent while a
        // stopped worker starts may be lost).
        if self.link.is_up() {
            self.send(&PanelRequest::Watch { tab_id: tab });
        }
        if let Some(tab) = tab {
            let mounted = self.picker.borrow().clone();
            match mounted {
                // Another tab: a pick under way there ends (the same tab's new URL does not).
                Some(p) if moved => p.set_tab(tab),
                Some(_) => {}
                None => *self.picker.borrow_mut() = super::picker::mount("picker", tab),
            }
        }
    }

    /// Find the window's active tab and watch it; follow it as it changes.
    fn follow_window(self: &Rc<Self>) {
        let ui = self.clone();
        spawn_local(async move {
            // `?tabId=` (a side panel page opened in a tab of its own, as tests do) names a
            // tab of the window to follow; else it is the window this panel is in.
            let window = match query_number("tabId") {
                Some(tab) => chrome::tabs::get(tab).await.ok().map(|t| t.window_id),
                None => chrome::windows::current_id().await.ok(),
            };
            ui.window.set(window);
            let active = match window {
                Some(w) => chrome::tabs::query(&serde_json::json!({"active": true, "windowId": w}))
                    .await
                    .ok()
                    .and_then(|tabs| tabs.first().map(|t| t.tab_id)),
                None => None,
            };
            ui.watch(active);
        });
        // Events, not polling: the site changes the moment the person switches tabs or the
        // tab navigates, and nothing runs while nothing happens.
        let ui = self.clone();
        chrome::tabs::on_activated(move |tab, window| {
            if ui.window.get() == Some(window) {
                ui.watch(Some(tab));
            }
        });
        let ui = self.clone();
        chrome::tabs::on_url_changed(move |tab| {
            if ui.tab.get() == Some(tab) {
                ui.watch(Some(tab));
            }
        });
    }
}

fn show_error(doc: &Document, id: &str, why: Option<&str>) {
    let e: Element = by_id(doc, id);
    e.set_text_content(why);
    if why.is_some() {
        let _ = e.remove_attribute("hidden");
    } else {
        let _ = e.set_attribute("hidden", "");
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::Ask => "ask",
        Verdict::Deny => "deny",
    }
}

fn mode_key(m: SiteMode) -> &'static str {
    match m {
        SiteMode::Auto => "auto",
        SiteMode::Ask => "ask",
        SiteMode::ReadOnly => "read-only",
        SiteMode::Custom => "custom",
    }
}

/// The side panel page; the JS glue creates it once.
#[wasm_bindgen]
pub struct SidePanelUi {
    ui: Rc<Side>,
}

#[wasm_bindgen]
impl SidePanelUi {
    #[wasm_bindgen(constructor)]
    pub fn new() -> SidePanelUi {
        let ui = Rc::new(Side {
            doc: super::document(),
            link: Link::open(PANEL_PORT),
            window: Cell::new(None),
            tab: Cell::new(None),
            paused: Cell::new(false),
            person: RefCell::default(),
            shown: RefCell::default(),
            editing: Cell::new(None),
            sent: RefCell::new(None),
            live: Cell::new(false),
            picker: RefCell::default(),
        });
        SidePanelUi { ui }
    }

    /// Wire the controls, find the tab, start watching.
    pub fn start(&self) {
        let ui = self.ui.clone();
        let doc = ui.doc.clone();
        apply_theme(&doc);
        super::start_countdowns(&doc);
        arming::install(&doc);
        // Nothing takes clicks before the worker's state is known.
        show_link(&doc, false, &["pause"]);
        let listener = Rc::downgrade(&ui);
        ui.link.on_message(move |msg| {
            if let (Some(ui), Ok(ev)) = (listener.upgrade(), chrome::from_js::<PanelEvent>(msg)) {
                ui.on_event(ev);
            }
        });
        // The worker listens (at the start, and on a new port after it restarted): its
        // first word, a `State`, has the panel watch again (see `on_event`), so the feed,
        // approvals, Pause and the person's settings reach it.
        let u = Rc::downgrade(&ui);
        ui.link.on_up(move || {
            if let Some(ui) = u.upgrade() {
                ui.shown.borrow_mut().remove("servers");
            }
        });
        let u = Rc::downgrade(&ui);
        ui.link.on_down(move || {
            if let Some(ui) = u.upgrade() {
                ui.down();
            }
        });
        for (id, what) in [("rule-save", "rules"), ("budget-add", "budgets")] {
            arming::guard(&by_id::<Element>(&doc, id), what);
        }
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "pause"), "click", move |_| {
            u.send(&PanelRequest::Pause {
                on: !u.paused.get(),
            })
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "rule-form"), "submit", move |e| {
            e.prevent_default();
            u.submit_rule();
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "rule-cancel"), "click", move |_| {
            u.reset_rule_form();
            show_error(&u.doc, "rules-error", None);
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "budget-form"), "submit", move |e| {
            e.prevent_default();
            u.submit_budget();
        });
        let category: Element = by_id(&doc, "rule-category");
        for name in std::iter::once("all").chain(Category::ALL.iter().map(|c| c.name())) {
            category
                .append_child(&el(&doc, "option", &[("value", name)], name))
                .ok();
        }
        ui.reset_rule_form();
        ui.follow_window();
    }
}

impl Default for SidePanelUi {
    fn default() -> Self {
        Self::new()
    }
}
