//! Tools around the page: network requests, cookies and storage, viewport and emulation,
//! downloads and PDFs.

use ext_core::methods::{
    Cookies, DownloadArgs, Emulate, NetworkRequest, NetworkRequests, PdfSave, PrintPdf, Resize,
    Storage,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::*;

#[tool_router(router = network_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_network_requests",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "The tab's network requests, newest first (method, URL, status, type, size, time), kept since Kapture first controlled the tab; filter by URL text."
    )]
    async fn browser_network_requests(
        &self,
        Parameters(mut a): Parameters<OnTab<NetworkRequests>>,
    ) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_network_request",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "One request by id: headers (Authorization, Cookie and Set-Cookie redacted) and its response body, capped."
    )]
    async fn browser_network_request(
        &self,
        Parameters(mut a): Parameters<OnTab<NetworkRequest>>,
    ) -> Answer {
        // Only the user's configuration decides whether secrets are shown, never the agent.
        a.params.reveal_sensitive = self.config().reveal_sensitive_headers;
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_cookies",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Cookies of the tab's page: list, get (name), set (name, value, path?, expires?, httpOnly?, secure?), delete (name) or clear."
    )]
    async fn browser_cookies(&self, Parameters(mut a): Parameters<OnTab<Cookies>>) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_storage",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "localStorage or sessionStorage of the tab's origin: list, get (key), set (key, value), delete (key) or clear."
    )]
    async fn browser_storage(&self, Parameters(mut a): Parameters<OnTab<Storage>>) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_resize",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Set the tab's viewport size in CSS pixels."
    )]
    async fn browser_resize(&self, Parameters(a): Parameters<OnTab<Resize>>) -> Answer {
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_emulate",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Emulate a device (iPhone 13, Pixel 7, iPad, Desktop, none), a user agent, a geolocation, being offline, or a color scheme (light, dark, none)."
    )]
    async fn browser_emulate(&self, Parameters(a): Parameters<OnTab<Emulate>>) -> Answer {
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_download",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Download a URL, or what clicking a link (ref or selector) downloads, into kapture's download folder; answers when the file is complete: path, bytes, MIME type, suggested name. A file over the size cap (the policy's download_max_bytes, default 512 MiB) is cancelled and removed (DOWNLOAD_TOO_LARGE); a program or script (.exe, .sh, .bat…) is kept inert: saved as <name>.inert, not executable, never opened."
    )]
    async fn browser_download(&self, Parameters(a): Parameters<OnTab<DownloadArgs>>) -> Answer {
        let res = match self.on_tab(&a).await {
            Ok(d) => files::ensure_dir(&self.config().download_dir)
                .and_then(|dir| files::finish_download(&dir, &d)),
            Err(e) => Err(e),
        };
        self.reply(res)
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_pdf_save",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Save the page as a PDF file (headless browsers launched by kapture; a windowed browser answers UNSUPPORTED). The file is always created new in kapture's download folder: path is a file name there (default: named after the page); a taken name gets a numbered one, and the answer gives the real path."
    )]
    async fn browser_pdf_save(&self, Parameters(a): Parameters<OnTab<PdfSave>>) -> Answer {
        let call = OnTab {
            tab_id: a.tab_id,
            timeout_ms: a.timeout_ms,
            params: PrintPdf {},
        };
        let res = match self.on_tab(&call).await {
            Ok(pdf) => {
                files::write_pdf(a.params.path.as_deref(), &self.config().download_dir, &pdf)
            }
            Err(e) => Err(e),
        };
        self.reply(res)
    }
}
