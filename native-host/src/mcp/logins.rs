//! Saved logins as tools: sign in once, save the site's state sealed under a name, and
//! load it into a tab of any later run or context. Values never reach the agent.

use ext_core::escape;
use ext_core::methods::{LoginRead, LoginWrite};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::*;
use crate::logins::{self, LoginError};

fn store_error(e: LoginError) -> WireError {
    WireError::new(ErrorCode::BadArgs, e.to_string())
}

#[tool_router(router = logins_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::WritesStore),
        name = "browser_login_save",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Save the tab's site sign-in (its cookies and its origin's localStorage) sealed under a name, replacing a login of that name; browser_login_load brings it back in a later run or another context. Values are never shown."
    )]
    async fn browser_login_save(&self, Parameters(a): Parameters<OnTab<LoginNameArgs>>) -> Answer {
        // A name that cannot be saved is said before the browser is asked anything.
        if let Err(e) = logins::check_name(&a.params.name) {
            return self.reply(Err(store_error(e)));
        }
        let read = OnTab {
            tab_id: a.tab_id,
            timeout_ms: a.timeout_ms,
            params: LoginRead {},
        };
        let found = match self.on_tab(&read).await {
            Ok(f) => f,
            Err(e) => return self.reply(Err(e)),
        };
        let name = &a.params.name;
        let origin = escape::inline_cut(&found.state.origin, 200);
        let allowed = match self
            .judge_store_change(
                Some(found.state.url.clone()),
                format!("save login {} for {origin}", escape::quoted_cut(name, 100)),
            )
            .await
        {
            Ok(w) => w,
            Err(e) => return self.reply(Err(e)),
        };
        self.learn_login(&found.state);
        let saved = logins::save(&self.config().data_dir, name, &found.state, allowed).await;
        self.reply(saved.map_err(store_error).map(|()| {
            let withheld = match found.withheld {
                0 => String::new(),
                n => format!(
                    " ({n} cookie{} left out: also sent to a site the rules keep)",
                    if n == 1 { "" } else { "s" }
                ),
            };
            format!(
                "Saved login {} for {origin}: {} cookies, {} localStorage keys{withheld}, sealed.",
                escape::quoted_cut(name, 100),
                found.state.cookies.len(),
                found.state.local_storage.len(),
            )
        }))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_login_load",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Sign the tab in with a saved login: its site's cookies and localStorage are replaced by the saved ones (checked first; a refusal changes nothing), the tab opens the saved page if it is elsewhere, and the page reloads. An unknown name lists the saved ones."
    )]
    async fn browser_login_load(&self, Parameters(a): Parameters<OnTab<LoginNameArgs>>) -> Answer {
        let state = match logins::load(&self.config().data_dir, &a.params.name).await {
            Ok((state, _)) => state,
            Err(e) => return self.reply(Err(store_error(e))),
        };
        self.learn_login(&state);
        let write = OnTab {
            tab_id: a.tab_id,
            timeout_ms: a.timeout_ms,
            params: LoginWrite {
                name: a.params.name.clone(),
                secret: state,
            },
        };
        self.reply(self.on_tab(&write).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::WritesStore),
        name = "browser_login_delete",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        ),
        description = "Delete a saved login."
    )]
    async fn browser_login_delete(&self, Parameters(a): Parameters<LoginNameArgs>) -> Answer {
        let dir = &self.config().data_dir;
        let url = logins::load(dir, &a.name).await.ok().map(|(s, _)| s.url);
        let allowed = match self
            .judge_store_change(
                url,
                format!("delete login {}", escape::quoted_cut(&a.name, 100)),
            )
            .await
        {
            Ok(w) => w,
            Err(e) => return self.reply(Err(e)),
        };
        self.reply(
            logins::delete(dir, &a.name, allowed)
                .map_err(store_error)
                .map(|()| format!("Deleted login {}", escape::quoted_cut(&a.name, 100))),
        )
    }
}

/// Shortest cookie or localStorage value of a saved login that is masked (shorter ones are
/// settings such as a theme, not credentials).
const LOGIN_VALUE_MIN: usize = 8;

impl KaptureServer {
    /// A saved login's values are secrets kapture knows from now on: masked in every
    /// session's answers (a cookie list, a script reading `document.cookie`), however the
    /// login reached the page.
    fn learn_login(&self, state: &ext_core::methods::LoginState) {
        let values = state
            .cookies
            .iter()
            .map(|c| c.value.as_str())
            .chain(state.local_storage.iter().map(|(_, v)| v.as_str()));
        for value in values.filter(|v| v.chars().count() >= LOGIN_VALUE_MIN) {
            self.masks.add(value, "login");
        }
    }
}
