//! Tools that act in the page: mouse, keyboard, forms, dialogs, uploads, scripts.

use ext_core::escape;
use ext_core::methods::{
    Click, Drag, Evaluate, FileUpload, FillForm, HandleDialog, Hover, MouseClickXy, MouseMoveXy,
    PressKey, Scroll, SelectOption, Type,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::answer::{cut, outcome_text};
use super::*;

#[tool_router(router = act_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_click",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Click an element (ref from browser_snapshot, or CSS selector) with a real mouse event at its centre, after scrolling it into view. Waits briefly for it to appear and become clickable."
    )]
    async fn browser_click(&self, Parameters(a): Parameters<Acting<Click>>) -> Answer {
        let what = format!("Clicked {}", a.on.params.target.describe());
        self.act(&a, |o| outcome_text(&what, o)).await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_hover",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Move the mouse over an element (ref or CSS selector)."
    )]
    async fn browser_hover(&self, Parameters(a): Parameters<Acting<Hover>>) -> Answer {
        let what = format!("Hovered {}", a.on.params.target.describe());
        self.act(&a, |o| outcome_text(&what, o)).await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_type",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Fill a text field (ref or CSS selector) like a user: focus, replace its content, fire input and change events. `submit` presses Enter after; `slowly` types key by key."
    )]
    async fn browser_type(&self, Parameters(a): Parameters<Acting<Type>>) -> Answer {
        let what = format!(
            "Typed {} characters into {}",
            a.on.params.text.chars().count(),
            a.on.params.target.describe()
        );
        let typed = [a.on.params.text.as_str()];
        self.act(&a, |o| {
            self.typed_into(o, &typed);
            outcome_text(&what, o)
        })
        .await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_fill_form",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Fill several fields in one call: text fields, checkboxes and radios (\"true\"/\"false\"), selects (value or label); each by ref or selector. `submit` submits the form of the last field."
    )]
    async fn browser_fill_form(&self, Parameters(a): Parameters<Acting<FillForm>>) -> Answer {
        let what = format!(
            "Filled {} fields{}",
            a.on.params.fields.len(),
            if a.on.params.submit {
                " and submitted"
            } else {
                ""
            }
        );
        let typed: Vec<&str> =
            a.on.params
                .fields
                .iter()
                .map(|f| f.value.as_str())
                .collect();
        self.act(&a, |o| {
            self.typed_into(o, &typed);
            outcome_text(&what, o)
        })
        .await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_select_option",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Select options of a <select> (ref or CSS selector) by value or visible label."
    )]
    async fn browser_select_option(
        &self,
        Parameters(a): Parameters<Acting<SelectOption>>,
    ) -> Answer {
        let sel = a.on.params.target.describe();
        self.act(&a, |s| {
            // Option values are the page's: quoted and escaped.
            let values: Vec<String> = s
                .values
                .iter()
                .map(|v| escape::quoted_cut(v, 200))
                .collect();
            format!(
                "Selected [{}] in {sel} [tab {}]",
                values.join(", "),
                s.tab_id
            )
        })
        .await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_press_key",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Press a key or combination on the focused element: Enter, Tab, Escape, ArrowDown, a, Control+a, Shift+Tab…"
    )]
    async fn browser_press_key(&self, Parameters(a): Parameters<Acting<PressKey>>) -> Answer {
        let what = format!("Pressed {}", a.on.params.key);
        self.act(&a, |o| outcome_text(&what, o)).await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_evaluate",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Run JavaScript in the page: an expression, or a function such as `() => document.title` (may be async). With ref or selector the function receives that element: `(el) => el.value`. Answers the result as JSON; a page exception is EVAL_FAILED."
    )]
    async fn browser_evaluate(&self, Parameters(a): Parameters<OnTab<Evaluate>>) -> Answer {
        let max = self.config().max_chars as usize;
        self.reply(self.on_tab(&a).await.map(|e| match e.value {
            Some(v) => cut(escape::json(&v.to_string()), max),
            None => "undefined".into(),
        }))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_handle_dialog",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Answer the JavaScript dialog (alert, confirm, prompt, beforeunload) that stopped the last command: accept or dismiss, with promptText for a prompt."
    )]
    async fn browser_handle_dialog(
        &self,
        Parameters(a): Parameters<OnTab<HandleDialog>>,
    ) -> Answer {
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_file_upload",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Set files on a file input (ref or selector), or on the file chooser a click opened (no ref/selector). Files come only from the upload folders the person allowed: kapture's uploads folder (<kapture data folder>/uploads, e.g. ~/.local/share/kapture/uploads on Linux; a relative path is read there) and folders given with --upload-dir or upload_dirs in the policy file. Hidden files and folders, symlinks leading out and kapture's own files are refused."
    )]
    async fn browser_file_upload(
        &self,
        Parameters(mut a): Parameters<OnTab<FileUpload>>,
    ) -> Answer {
        // The one check for both forms (a file input by ref/selector, or the file chooser).
        match self.config().uploads.check_all(&a.params.paths) {
            Ok(paths) => a.params.paths = paths,
            Err(e) => return self.reply(Err(e)),
        }
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_drag",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Drag an element (startRef or startSelector) and drop it on another (endRef or endSelector); HTML drag and drop and pointer-driven drags both work."
    )]
    async fn browser_drag(&self, Parameters(a): Parameters<Acting<Drag>>) -> Answer {
        self.act(&a, |o| outcome_text("Dragged", o)).await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_scroll",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Scroll with the mouse wheel over an element (ref or selector) or the middle of the viewport; deltaY defaults to 600 px down."
    )]
    async fn browser_scroll(&self, Parameters(a): Parameters<Acting<Scroll>>) -> Answer {
        self.act(&a, |o| outcome_text("Scrolled", o)).await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_mouse_click_xy",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Click at viewport coordinates (CSS pixels), for canvas-like pages."
    )]
    async fn browser_mouse_click_xy(
        &self,
        Parameters(a): Parameters<Acting<MouseClickXy>>,
    ) -> Answer {
        let what = format!("Clicked at {},{}", a.on.params.x, a.on.params.y);
        self.act(&a, |o| outcome_text(&what, o)).await
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_mouse_move_xy",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Move the mouse to viewport coordinates (CSS pixels)."
    )]
    async fn browser_mouse_move_xy(
        &self,
        Parameters(a): Parameters<Acting<MouseMoveXy>>,
    ) -> Answer {
        let what = format!("Moved the mouse to {},{}", a.on.params.x, a.on.params.y);
        self.act(&a, |o| outcome_text(&what, o)).await
    }
}
