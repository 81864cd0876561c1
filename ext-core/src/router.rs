//! Which code serves a command: browser-level methods (tabs) or a tab's CDP logic; decodes
//! params into their typed shape so bad arguments fail with `BAD_ARGS` before any CDP traffic.

use futures::future::Either;
use serde::Serialize;
use serde_json::Value;

use crate::cdp::{self, CdpSession};
use crate::methods::Method;
pub use crate::methods::{Command, Route, METHODS};
use crate::protocol::{ErrorCode, WireError};

/// The route of `method`, or `BAD_ARGS` for a method this extension does not know.
pub fn route(method: &str) -> Result<Route, WireError> {
    crate::methods::facts(method)
        .map(|f| f.route)
        .ok_or_else(|| crate::methods::unknown_method(method))
}

/// Decode a method's params, naming the method in the error.
pub fn params<M: Method>(params: Value) -> Result<M, WireError> {
    crate::methods::decode_params(params)
}

fn to_value<T: Serialize>(v: T) -> Result<Value, WireError> {
    serde_json::to_value(v).map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
}

/// Decode `method` + `raw` and run it on an attached tab (see [`run`]): bad arguments fail
/// with `BAD_ARGS` before any CDP traffic.
pub async fn run_on_tab<S: CdpSession>(
    s: &S,
    method: &str,
    raw: Value,
) -> Result<Value, WireError> {
    run(s, &Command::decode(method, raw)?).await
}

/// Run a tab-routed method on an attached tab. A JavaScript dialog blocks the page: a
/// command meeting one (open before, or opening while it runs) ends with `DIALOG_OPEN`
/// instead of hanging; only `handle_dialog` and reads of kept state go through.
pub async fn run<S: CdpSession>(s: &S, cmd: &Command) -> Result<Value, WireError> {
    let facts = cmd.facts();
    // A crashed page can only be navigated away from (or reloaded).
    if s.events().borrow().crashed && !facts.on_crashed_page {
        return Err(crashed(s));
    }
    if facts.during_dialog {
        let mut res = dispatch(s, cmd).await;
        if let (Ok(value), true) = (&mut res, facts.carries_page_text) {
            mask_passwords(s, value).await?;
        }
        return res;
    }
    if let Some(d) = s.events().borrow().dialog.clone() {
        return Err(cdp::dialog_error(&d, s.tab_id()));
    }
    let stopper = s
        .events()
        .borrow_mut()
        .wait_for(|m, _| m == "Page.javascriptDialogOpening" || m == "Inspector.targetCrashed");
    let run = std::pin::pin!(dispatch(s, cmd));
    match futures::future::select(run, stopper).await {
        Either::Left((res, _)) if facts.carries_page_text => match res {
            Ok(mut value) => mask_passwords(s, &mut value).await.map(|()| value),
            err => err,
        },
        Either::Left((res, _)) => res,
        Either::Right((Ok((event, _)), _)) if event == "Inspector.targetCrashed" => Err(crashed(s)),
        Either::Right((Ok(_), _)) => {
            let d = s.events().borrow().dialog.clone();
            Err(d
                .map(|d| cdp::dialog_error(&d, s.tab_id()))
                .unwrap_or_else(|| WireError::new(ErrorCode::Internal, "a dialog came and went")))
        }
        // The waiter was dropped: the tab closed or the debugger left it.
        Either::Right((Err(_), _)) => Err(WireError::new(
            ErrorCode::TabClosed,
            format!("tab {} went away", s.tab_id()),
        )),
    }
}

/// What the page's password fields hold never leaves in an answer, wherever the page
/// copied it (text, scripts' results, logs): each occurrence becomes `[redacted:password]`.
/// Whether `value` holds a string long enough to be a masked value.
fn has_long_string(value: &Value) -> bool {
    match value {
        Value::String(s) => s.len() >= crate::secrets::MIN_VALUE_LEN,
        Value::Array(items) => items.iter().any(has_long_string),
        Value::Object(map) => map.values().any(has_long_string),
        _ => false,
    }
}

/// How long a page may take to say what its password fields hold before an answer that
/// could carry them is withheld.
const LOOK_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

async fn mask_passwords<S: CdpSession>(s: &S, value: &mut Value) -> Result<(), WireError> {
    // Numbers, booleans and short strings cannot hold a password worth masking: no need to
    // ask the page (a round trip).
    if !has_long_string(value) {
        return Ok(());
    }
    // Nor a document that never held a password field (its watch says so).
    if s.events().borrow().no_password_fields() {
        return Ok(());
    }
    let script = "() => [...document.querySelectorAll('input[type=password]')].map((i) => i.value).filter((v) => v.length >= 4)";
    // Bounded: a page stopped by a dialog, or too busy, cannot answer. Its password fields
    // could hold any of the answer's strings then, so the answer is withheld, never sent
    // unmasked.
    let look = async {
        let main = cdp::world::main_frame(s).await?;
        cdp::world::run(s, &main, script, &[]).await
    };
    let found = match crate::platform::timeout(LOOK_LIMIT, look).await {
        Some(Ok(found)) => found,
        failed => {
            if let Some(d) = s.events().borrow().dialog.clone() {
                return Err(cdp::dialog_error(&d, s.tab_id()));
            }
            let why = match failed {
                Some(Err(e)) => e.message,
                _ => format!("it did not answer within {} s", LOOK_LIMIT.as_secs()),
            };
            return Err(WireError::new(
                ErrorCode::Timeout,
                format!(
                    "the answer is withheld: the page holds password fields and could not be asked what they hold, to mask it ({why}); what the command did is done. Try again once the page answers"
                ),
            ));
        }
    };
    let values: Vec<(String, String)> = found
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(|v| (v.to_string(), "password".to_string())))
        .collect();
    if !values.is_empty() {
        crate::secrets::mask_json(value, &values);
    }
    Ok(())
}

fn crashed<S: CdpSession>(s: &S) -> WireError {
    WireError::new(
        ErrorCode::PageCrashed,
        format!("the page in tab {} crashed", s.tab_id()),
    )
}

/// Run one tab command: one arm per command, so a new one cannot be forgotten.
async fn dispatch<S: CdpSession>(s: &S, cmd: &Command) -> Result<Value, WireError> {
    use Command as C;
    match cmd {
        C::Navigate(p) => to_value(cdp::navigate(s, &p.url, p.wait_until).await?),
        C::GoBack(p) => to_value(cdp::history(s, -1, p.wait_until).await?),
        C::GoForward(p) => to_value(cdp::history(s, 1, p.wait_until).await?),
        C::Reload(p) => to_value(cdp::reload(s, p.wait_until).await?),
        C::Click(p) => to_value(cdp::click(s, p).await?),
        C::Hover(p) => to_value(cdp::hover(s, p).await?),
        C::Type(p) => to_value(cdp::type_text(s, p).await?),
        C::SelectOption(p) => to_value(cdp::select_option(s, p).await?),
        C::PressKey(p) => to_value(cdp::press_key(s, p).await?),
        C::Evaluate(p) => to_value(cdp::evaluate(s, p).await?),
        C::Screenshot(p) => to_value(cdp::screenshot(s, p).await?),
        C::ConsoleMessages(p) => to_value(cdp::console_messages(s, p)),
        C::Snapshot(p) => to_value(cdp::snapshot(s, p).await?),
        C::Find(p) => to_value(cdp::find(s, p).await?),
        C::GetText(p) => to_value(cdp::get_text(s, p).await?),
        C::GetHtml(p) => to_value(cdp::get_html(s, p).await?),
        C::ReadMarkdown(p) => to_value(cdp::read_markdown(s, p).await?),
        C::ExtractLinks(p) => to_value(cdp::extract_links(s, p).await?),
        C::WaitFor(p) => to_value(cdp::wait_for(s, p).await?),
        C::FillForm(p) => to_value(cdp::fill_form(s, p).await?),
        C::HandleDialog(p) => to_value(cdp::handle_dialog(s, p).await?),
        C::FileUpload(p) => to_value(cdp::file_upload(s, p).await?),
        C::NetworkRequests(p) => to_value(cdp::network_requests(s, p)),
        C::NetworkRequest(p) => to_value(cdp::network_request(s, p).await?),
        C::Cookies(p) => to_value(cdp::cookies(s, p).await?),
        C::Storage(p) => to_value(cdp::storage(s, p).await?),
        C::LoginRead(_) => to_value(cdp::login_read(s).await?),
        C::LoginWrite(p) => to_value(cdp::login_write(s, p).await?),
        C::Resize(p) => to_value(cdp::resize(s, p).await?),
        C::Emulate(p) => to_value(cdp::emulate(s, p).await?),
        C::Drag(p) => to_value(cdp::drag(s, p).await?),
        C::Scroll(p) => to_value(cdp::scroll(s, p).await?),
        C::MouseClickXy(p) => to_value(cdp::mouse_click_xy(s, p).await?),
        C::MouseMoveXy(p) => to_value(cdp::mouse_move_xy(s, p).await?),
        C::PrintPdf(p) => to_value(cdp::print_pdf(s, p).await?),
        C::Highlight(p) => to_value(cdp::highlight(s, p).await?),
        C::Recorder(p) => to_value(cdp::recorder(s, p).await?),
        C::Pick(p) => to_value(cdp::pick::pick(s, p).await?),
        C::TabsList(_)
        | C::TabsNew(_)
        | C::TabsSelect(_)
        | C::TabsClose(_)
        | C::Download(_)
        | C::StoreWrite(_) => Err(WireError::new(
            ErrorCode::Internal,
            format!("{} is not a tab method", cmd.name()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::methods::{Click, GoBack, GoForward, Reload, SelectOption};

    #[test]
    fn every_method_has_one_route() {
        for f in METHODS {
            assert_eq!(
                METHODS.iter().filter(|g| g.name == f.name).count(),
                1,
                "{}",
                f.name
            );
        }
        assert_eq!(route("click").unwrap(), Route::Tab);
        assert_eq!(route("tabs.list").unwrap(), Route::Browser);
        assert_eq!(route("nope").unwrap_err().code, ErrorCode::BadArgs);
    }

    #[test]
    fn bad_params_are_bad_args_naming_the_method() {
        let err = params::<Click>(json!({"selector": 5})).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArgs);
        assert!(err.message.contains("click"));
        assert!(params::<SelectOption>(json!({})).is_err());
        assert!(params::<GoBack>(Value::Null).is_ok());
    }

    /// Found by `tests/fuzz_args.rs`: `go_back` with params `false` used to run anyway.
    #[test]
    fn methods_without_arguments_refuse_malformed_params_before_any_cdp_traffic() {
        struct Unplugged(
            std::cell::RefCell<cdp::events::TabEvents>,
            std::cell::Cell<usize>,
        );
        impl CdpSession for Unplugged {
            fn tab_id(&self) -> crate::protocol::TabId {
                1
            }
            async fn send_in(
                &self,
                _: Option<&str>,
                _: &str,
                _: Value,
            ) -> Result<Value, WireError> {
                self.1.set(self.1.get() + 1);
                Err(WireError::new(ErrorCode::Internal, "no browser"))
            }
            fn events(&self) -> &std::cell::RefCell<cdp::events::TabEvents> {
                &self.0
            }
        }
        let s = Unplugged(Default::default(), Default::default());
        for method in [GoBack::NAME, GoForward::NAME, Reload::NAME] {
            let err =
                futures::executor::block_on(run_on_tab(&s, method, json!(false))).unwrap_err();
            assert_eq!(err.code, ErrorCode::BadArgs, "{method}");
        }
        assert_eq!(s.1.get(), 0, "nothing reached the browser");
    }
}
