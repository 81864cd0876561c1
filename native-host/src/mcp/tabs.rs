//! The tabs tool: list (tabs of other sessions marked), open (in the session's tab group,
//! or its own browser context), select and close — a tab of another session only when
//! the policy shares tabs.

use ext_core::escape;
use ext_core::methods::{TabInfo, TabsClose, TabsList, TabsSelect};
use ext_core::protocol::{ErrorCode, WireError};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::answer::{TITLE_MAX, URL_MAX};
use super::*;

#[tool_router(router = tabs_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_tabs",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "List, open, select or close tabs. `new` and `select` make that tab the current one, which tools without tabId act on. `new` with isolated: true opens it in this session's own browser context (cookies and storage apart). Tabs of other agents' sessions are marked; only they drive them."
    )]
    async fn browser_tabs(&self, Parameters(a): Parameters<TabsArgs>) -> Answer {
        self.reply(self.tabs(a).await)
    }
}

impl KaptureServer {
    async fn tabs(&self, args: TabsArgs) -> Result<String, WireError> {
        let list = self.browser_call(None, &TabsList {}).await?;
        // `index` is the position in the list this tool prints.
        let by_index = |i: u32| {
            list.get(i as usize).map(|t| t.tab_id).ok_or_else(|| {
                WireError::new(
                    ErrorCode::TabNotFound,
                    format!(
                        "there is no tab at index {i}; there are {} tabs",
                        list.len()
                    ),
                )
            })
        };
        let named = match (args.tab_id, args.index) {
            (Some(_), Some(_)) => {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    "give either tabId or index, not both",
                ))
            }
            (Some(id), None) => Some(id),
            (None, Some(i)) => Some(by_index(i)?),
            (None, None) => None,
        };
        match args.action {
            TabAction::List => Ok(self.format_tabs(&list, args.offset.unwrap_or(0) as usize)),
            TabAction::New => {
                let tab = self.open_tab(args.url, args.isolated).await?;
                Ok(format!(
                    "Opened tab {} at {} {}{}; it is now the current tab",
                    tab.tab_id,
                    escape::inline_cut(&tab.url, URL_MAX),
                    escape::quoted_cut(&tab.title, TITLE_MAX),
                    match (&tab.group, args.isolated) {
                        (_, true) => " in this session's own browser context".to_string(),
                        (Some(group), false) =>
                            format!(" in the tab group {}", escape::quoted_cut(group, TITLE_MAX)),
                        (None, false) => String::new(),
                    }
                ))
            }
            TabAction::Select => {
                let id = named.ok_or_else(|| {
                    WireError::new(ErrorCode::BadArgs, "select needs tabId or index")
                })?;
                self.check_tab(id)?;
                let tab = self.browser_call(Some(id), &TabsSelect {}).await?;
                self.set_current(Some(tab.tab_id));
                self.claim(tab.tab_id);
                Ok(format!(
                    "Selected tab {} at {} {}",
                    tab.tab_id,
                    escape::inline_cut(&tab.url, URL_MAX),
                    escape::quoted_cut(&tab.title, TITLE_MAX)
                ))
            }
            TabAction::Close => {
                let id = named.or_else(|| self.current()).ok_or_else(|| {
                    WireError::new(
                        ErrorCode::BadArgs,
                        "close needs tabId or index (there is no current tab)",
                    )
                })?;
                if !list.iter().any(|t| t.tab_id == id) {
                    return Err(WireError::new(
                        ErrorCode::TabNotFound,
                        format!("there is no tab with id {id}"),
                    ));
                }
                self.check_tab(id)?;
                self.browser_call(Some(id), &TabsClose {}).await?;
                if self.current() == Some(id) {
                    self.set_current(None);
                }
                Ok(format!("Closed tab {id}"))
            }
        }
    }

    /// The tabs from `offset`, one line each (titles and URLs escaped and cut), within the
    /// character budget.
    pub(super) fn format_tabs(&self, list: &[TabInfo], offset: usize) -> String {
        if list.is_empty() {
            return "No tabs.".into();
        }
        let current = self.current();
        let registry = self.shared.registry();
        let shared = registry.shares_tabs();
        let lines: Vec<String> = list
            .iter()
            .enumerate()
            .skip(offset)
            .map(|(i, t)| {
                let mut mark = match (Some(t.tab_id) == current, t.active) {
                    (true, _) => " (current)".to_string(),
                    (false, true) => " (active)".to_string(),
                    _ => String::new(),
                };
                if let Some(owner) = registry.mark(self.id(), t.tab_id) {
                    // Client names are the clients' own words: escaped like page text.
                    mark.push_str(&format!(" ({})", escape::inline_cut(&owner, TITLE_MAX)));
                    // Another session's page is its own: its path, query and title may hold
                    // what it typed (a GET form, a search), so only the site shows.
                    if !shared {
                        return format!(
                            "- [{i}] tab {}{mark}: {} (another session's page: only its site is shown)",
                            t.tab_id,
                            escape::inline_cut(&site_of(&t.url), URL_MAX)
                        );
                    }
                }
                format!(
                    "- [{i}] tab {}{mark}: {} {}",
                    t.tab_id,
                    escape::quoted_cut(&t.title, TITLE_MAX),
                    escape::inline_cut(&t.url, URL_MAX)
                )
            })
            .collect();
        drop(registry);
        let max = self.config().max_chars as usize;
        let (text, _) = escape::fit_lines("", &lines, max, |i| {
            format!(
                "… cut at the {max}-character budget. More: browser_tabs {{action: \"list\", offset: {}}}",
                offset + i
            )
        });
        match text.strip_prefix('\n') {
            Some(rest) => rest.to_string(),
            None => format!("No tabs after offset {offset} of {}.", list.len()),
        }
    }
}

/// The site of a URL (its origin), or nothing of it when it has none that can be shown.
fn site_of(url: &str) -> String {
    match url::Url::parse(url).map(|u| u.origin()) {
        Ok(origin) if origin.is_tuple() => origin.ascii_serialization(),
        _ => "(a page without a site of its own)".into(),
    }
}
