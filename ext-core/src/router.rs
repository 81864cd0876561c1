//! Which code serves a command: browser-level methods (tabs) or a tab's CDP logic; decodes
//! params into their typed shape so bad arguments fail with `BAD_ARGS` before any CDP traffic.

use futures::future::Either;
use serde::Serialize;
use serde_json::Value;

use crate::cdp::{self, CdpSession};
use crate::methods::{
    Click, ConsoleMessages, Cookies, DownloadArgs, Drag, Emulate, Evaluate, ExtractLinks,
    FileUpload, FillForm, Find, GetHtml, GetText, GoBack, GoForward, HandleDialog, Highlight,
    Hover, Method, MouseClickXy, MouseMoveXy, Navigate, NetworkRequest, NetworkRequests, PressKey,
    PrintPdf, ReadMarkdown, Reload, Resize, Screenshot, Scroll, SelectOption, Snapshot, Storage,
    TabsClose, TabsList, TabsNew, TabsSelect, Type, WaitFor,
};
use crate::protocol::{ErrorCode, WireError};

/// Where a method runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Needs no tab (or names one in its params): runs at once, concurrently.
    Browser,
    /// Runs on one tab, in that tab's queue, after attaching the debugger.
    Tab,
}

/// Every method the extension serves, with its route.
pub const METHODS: &[(&str, Route)] = &[
    (TabsList::NAME, Route::Browser),
    (TabsNew::NAME, Route::Browser),
    (TabsSelect::NAME, Route::Browser),
    (TabsClose::NAME, Route::Browser),
    (Navigate::NAME, Route::Tab),
    (GoBack::NAME, Route::Tab),
    (GoForward::NAME, Route::Tab),
    (Reload::NAME, Route::Tab),
    (Click::NAME, Route::Tab),
    (Hover::NAME, Route::Tab),
    (Type::NAME, Route::Tab),
    (SelectOption::NAME, Route::Tab),
    (PressKey::NAME, Route::Tab),
    (Evaluate::NAME, Route::Tab),
    (Screenshot::NAME, Route::Tab),
    (ConsoleMessages::NAME, Route::Tab),
    (Snapshot::NAME, Route::Tab),
    (Find::NAME, Route::Tab),
    (GetText::NAME, Route::Tab),
    (GetHtml::NAME, Route::Tab),
    (ReadMarkdown::NAME, Route::Tab),
    (ExtractLinks::NAME, Route::Tab),
    (WaitFor::NAME, Route::Tab),
    (FillForm::NAME, Route::Tab),
    (HandleDialog::NAME, Route::Tab),
    (FileUpload::NAME, Route::Tab),
    (DownloadArgs::NAME, Route::Browser),
    (NetworkRequests::NAME, Route::Tab),
    (NetworkRequest::NAME, Route::Tab),
    (Cookies::NAME, Route::Tab),
    (Storage::NAME, Route::Tab),
    (Resize::NAME, Route::Tab),
    (Emulate::NAME, Route::Tab),
    (Drag::NAME, Route::Tab),
    (Scroll::NAME, Route::Tab),
    (MouseClickXy::NAME, Route::Tab),
    (MouseMoveXy::NAME, Route::Tab),
    (PrintPdf::NAME, Route::Tab),
    (Highlight::NAME, Route::Tab),
    (crate::methods::Recorder::NAME, Route::Tab),
];

/// The route of `method`, or `BAD_ARGS` for a method this extension does not know.
pub fn route(method: &str) -> Result<Route, WireError> {
    METHODS
        .iter()
        .find(|(name, _)| *name == method)
        .map(|(_, r)| *r)
        .ok_or_else(|| {
            WireError::new(
                ErrorCode::BadArgs,
                format!("unknown method {method:?}; the extension may be older than kapture"),
            )
        })
}

/// Decode a method's params, naming the method in the error.
pub fn params<M: Method>(params: Value) -> Result<M, WireError> {
    let params = if params.is_null() {
        Value::Object(Default::default())
    } else {
        params
    };
    serde_json::from_value(params).map_err(|e| {
        WireError::new(
            ErrorCode::BadArgs,
            format!("bad arguments for {}: {e}", M::NAME),
        )
    })
}

fn to_value<T: Serialize>(v: T) -> Result<Value, WireError> {
    serde_json::to_value(v).map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
}

/// Run a tab-routed method on an attached tab. A JavaScript dialog blocks the page: a
/// command meeting one (open before, or opening while it runs) ends with `DIALOG_OPEN`
/// instead of hanging; only `handle_dialog` and reads of kept state go through.
pub async fn run_on_tab<S: CdpSession>(
    s: &S,
    method: &str,
    raw: Value,
) -> Result<Value, WireError> {
    // A crashed page can only be navigated away from (or reloaded).
    if s.events().borrow().crashed && !matches!(method, Navigate::NAME | Reload::NAME) {
        return Err(crashed(s));
    }
    let unblocked = matches!(
        method,
        HandleDialog::NAME | ConsoleMessages::NAME | NetworkRequests::NAME | NetworkRequest::NAME
    );
    if unblocked {
        let mut res = dispatch(s, method, raw).await;
        if let (Ok(value), true) = (&mut res, method != HandleDialog::NAME) {
            mask_passwords(s, value).await;
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
    let run = std::pin::pin!(dispatch(s, method, raw));
    match futures::future::select(run, stopper).await {
        Either::Left((res, _)) if reads_page_text(method) => match res {
            Ok(mut value) => {
                mask_passwords(s, &mut value).await;
                Ok(value)
            }
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

/// Methods whose answers carry page text, where a password could show up.
fn reads_page_text(method: &str) -> bool {
    matches!(
        method,
        Evaluate::NAME
            | GetText::NAME
            | GetHtml::NAME
            | ReadMarkdown::NAME
            | Snapshot::NAME
            | Find::NAME
            | ExtractLinks::NAME
    )
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

async fn mask_passwords<S: CdpSession>(s: &S, value: &mut Value) {
    // Numbers, booleans and short strings cannot hold a password worth masking: no need to
    // ask the page (a round trip).
    if !has_long_string(value) {
        return;
    }
    let script = "() => [...document.querySelectorAll('input[type=password]')].map((i) => i.value).filter((v) => v.length >= 4)";
    let Ok(main) = cdp::world::main_frame(s).await else {
        return;
    };
    // Bounded: a page stopped by a dialog cannot answer; the host's detectors still apply.
    let look = cdp::world::run(s, &main, script, &[]);
    let Some(Ok(found)) =
        crate::platform::timeout(std::time::Duration::from_millis(500), look).await
    else {
        return;
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
}

fn crashed<S: CdpSession>(s: &S) -> WireError {
    WireError::new(
        ErrorCode::PageCrashed,
        format!("the page in tab {} crashed", s.tab_id()),
    )
}

async fn dispatch<S: CdpSession>(s: &S, method: &str, raw: Value) -> Result<Value, WireError> {
    match method {
        Navigate::NAME => to_value(cdp::navigate(s, &params::<Navigate>(raw)?.url).await?),
        // Methods without arguments still refuse arguments of the wrong shape (`BAD_ARGS`
        // before any CDP traffic, like every other method).
        GoBack::NAME => {
            params::<GoBack>(raw)?;
            to_value(cdp::history(s, -1).await?)
        }
        GoForward::NAME => {
            params::<GoForward>(raw)?;
            to_value(cdp::history(s, 1).await?)
        }
        Reload::NAME => {
            params::<Reload>(raw)?;
            to_value(cdp::reload(s).await?)
        }
        Click::NAME => to_value(cdp::click(s, &params(raw)?).await?),
        Hover::NAME => to_value(cdp::hover(s, &params(raw)?).await?),
        Type::NAME => to_value(cdp::type_text(s, &params(raw)?).await?),
        SelectOption::NAME => to_value(cdp::select_option(s, &params(raw)?).await?),
        PressKey::NAME => to_value(cdp::press_key(s, &params(raw)?).await?),
        Evaluate::NAME => to_value(cdp::evaluate(s, &params(raw)?).await?),
        Screenshot::NAME => to_value(cdp::screenshot(s, &params(raw)?).await?),
        ConsoleMessages::NAME => to_value(cdp::console_messages(s, &params(raw)?)),
        Snapshot::NAME => to_value(cdp::snapshot(s, &params(raw)?).await?),
        Find::NAME => to_value(cdp::find(s, &params(raw)?).await?),
        GetText::NAME => to_value(cdp::get_text(s, &params(raw)?).await?),
        GetHtml::NAME => to_value(cdp::get_html(s, &params(raw)?).await?),
        ReadMarkdown::NAME => to_value(cdp::read_markdown(s, &params(raw)?).await?),
        ExtractLinks::NAME => to_value(cdp::extract_links(s, &params(raw)?).await?),
        WaitFor::NAME => to_value(cdp::wait_for(s, &params(raw)?).await?),
        FillForm::NAME => to_value(cdp::fill_form(s, &params(raw)?).await?),
        HandleDialog::NAME => to_value(cdp::handle_dialog(s, &params(raw)?).await?),
        FileUpload::NAME => to_value(cdp::file_upload(s, &params(raw)?).await?),
        NetworkRequests::NAME => to_value(cdp::network_requests(s, &params(raw)?)),
        NetworkRequest::NAME => to_value(cdp::network_request(s, &params(raw)?).await?),
        Cookies::NAME => to_value(cdp::cookies(s, &params(raw)?).await?),
        Storage::NAME => to_value(cdp::storage(s, &params(raw)?).await?),
        Resize::NAME => to_value(cdp::resize(s, &params(raw)?).await?),
        Emulate::NAME => to_value(cdp::emulate(s, &params(raw)?).await?),
        Drag::NAME => to_value(cdp::drag(s, &params(raw)?).await?),
        Scroll::NAME => to_value(cdp::scroll(s, &params(raw)?).await?),
        MouseClickXy::NAME => to_value(cdp::mouse_click_xy(s, &params(raw)?).await?),
        MouseMoveXy::NAME => to_value(cdp::mouse_move_xy(s, &params(raw)?).await?),
        PrintPdf::NAME => to_value(cdp::print_pdf(s, &params(raw)?).await?),
        Highlight::NAME => to_value(cdp::highlight(s, &params(raw)?).await?),
        crate::methods::Recorder::NAME => to_value(cdp::recorder(s, &params(raw)?).await?),
        other => Err(route(other).err().unwrap_or_else(|| {
            WireError::new(ErrorCode::Internal, format!("{other} is not a tab method"))
        })),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_method_has_one_route() {
        for (name, _) in METHODS {
            assert_eq!(
                METHODS.iter().filter(|(n, _)| n == name).count(),
                1,
                "{name}"
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
            async fn send(&self, _: &str, _: Value) -> Result<Value, WireError> {
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
