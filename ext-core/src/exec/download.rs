//! A download command: start it (by URL, or by the click it is), follow it until the file
//! is complete, judge the URL it really comes from, hold it to the policy's size cap, and
//! cancel it — its file removed — whenever the command ends without answering it.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;

use super::{web_url, Exec, Host, DOWNLOAD_POLL};
use crate::methods::{Command, DownloadArgs, Downloaded};
use crate::platform;
use crate::policy::gate::{self as pure, Guard};
use crate::policy::Category;
use crate::protocol::{ErrorCode, TabId, WireError};

impl<H: Host> Exec<H> {
    /// Download a URL, or what clicking an element downloads, and wait until the file is
    /// complete (polling the host, bounded by the command's deadline). The URL the file
    /// really comes from (after redirects) is judged with `guard` as soon as it is known: a
    /// refused one is cancelled and its file removed.
    pub(super) async fn download(
        &self,
        tab: TabId,
        p: DownloadArgs,
        click: Option<(Command, Option<Guard>)>,
        deadline_ms: f64,
        guard: Option<&Guard>,
        cap: u64,
    ) -> Result<Downloaded, WireError> {
        // Whatever ends this command before it answered the finished file (a pause, a
        // cancel, its deadline, a failure) cancels the download it started.
        let mut watch = DownloadWatch {
            host: self.host.clone(),
            state: Rc::default(),
            answered: false,
        };
        let id = match (&p.url, p.target.get()) {
            (Some(_), Some(_)) => {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    "give either url or the element to click, not both",
                ))
            }
            (None, None) => {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    "give the url to download, or the ref/selector of a link to click",
                ))
            }
            (Some(url), None) => {
                // Only web URLs are fetched: a file:// or browser URL would copy a local
                // file (a key, a cookie store) into the download folder.
                if !web_url(url) {
                    return Err(WireError::new(
                        ErrorCode::BadArgs,
                        format!(
                            "cannot download {}: only http(s) URLs are downloaded",
                            crate::escape::inline(url)
                        ),
                    ));
                }
                let (host, url, state) = (self.host.clone(), url.clone(), watch.state.clone());
                let (found, heard) = oneshot::channel();
                // Started on its own: if this command is stopped before the browser gives the
                // download's id, the id that comes later is cancelled (see `DownloadWatch`).
                self.host.spawn(Box::pin(async move {
                    let got = host.start_download(&url).await;
                    if let Ok(id) = got {
                        if state.dropped.get() {
                            let _ = host.cancel_download(id).await;
                            return;
                        }
                        state.id.set(Some(id));
                    }
                    let _ = found.send(got);
                }));
                heard.await.unwrap_or_else(|_| {
                    Err(WireError::new(
                        ErrorCode::Internal,
                        "the download's start ended unanswered",
                    ))
                })?
            }
            (None, Some(_)) => {
                let Some((click, judged)) = click else {
                    return Err(WireError::new(
                        ErrorCode::Internal,
                        "a download by element came without its click",
                    ));
                };
                let before = self
                    .host
                    .latest_download()
                    .await?
                    .map(|d| d.id)
                    .unwrap_or(-1);
                watch.state.before.set(Some(before));
                self.tabs.run(tab, click, deadline_ms, judged).await?;
                loop {
                    match self.host.latest_download().await? {
                        Some(d) if d.id > before => {
                            watch.state.id.set(Some(d.id));
                            break d.id;
                        }
                        _ if platform::now_ms() > deadline_ms => {
                            return Err(WireError::new(
                                ErrorCode::DownloadFailed,
                                "the click started no download",
                            ))
                        }
                        _ => platform::sleep(DOWNLOAD_POLL).await,
                    }
                }
            }
        };
        loop {
            let item = self.host.get_download(id).await?;
            if let (Some(d), Some(guard)) = (&item, guard) {
                // Held to the rules as they are now (a person may have tightened them).
                let guard = &Guard {
                    policy: self.host.refresh(&guard.policy),
                    ..guard.clone()
                };
                // Only web URLs: a blob:/data: one is the page's own, judged with the click.
                let real: Vec<String> = [&d.url, &d.final_url]
                    .into_iter()
                    .filter(|u| web_url(u))
                    .cloned()
                    .collect();
                let judged = match real.is_empty() {
                    true => Ok(()),
                    false => pure::judge_urls(guard, Category::Download, &real),
                };
                if let Err(e) = judged {
                    watch.answered = true;
                    if let Err(c) = self.host.cancel_download(id).await {
                        return Err(WireError::new(
                            e.code,
                            format!("{}; cancelling it failed: {}", e.message, c.message),
                        ));
                    }
                    return Err(e);
                }
            }
            // Over the size cap, by what arrived or what the server announced: stopped
            // and removed, never kept (nor left half-written).
            let size = item.as_ref().map_or(0.0, |d| {
                d.bytes_received.max(d.total_bytes).max(d.file_size)
            });
            if size > cap as f64 {
                watch.answered = true;
                let url = item.as_ref().map(|d| d.url.clone()).unwrap_or_default();
                let removed = match self.host.cancel_download(id).await {
                    Ok(()) => "it was cancelled and its file removed".to_string(),
                    Err(c) => format!("cancelling it failed: {}", c.message),
                };
                return Err(WireError::new(
                    ErrorCode::DownloadTooLarge,
                    format!(
                        "the download of {} reached {} bytes, over the cap of {cap} bytes (download_max_bytes in the policy file); {removed}",
                        crate::escape::inline(&url),
                        size as u64
                    ),
                ));
            }
            match item {
                Some(d) if d.state == "complete" => {
                    watch.answered = true;
                    return Ok(Downloaded {
                        tab_id: tab,
                        path: d.filename,
                        url: if d.final_url.is_empty() {
                            d.url
                        } else {
                            d.final_url
                        },
                        bytes: d.file_size.max(0.0) as u64,
                        mime_type: d.mime,
                    });
                }
                Some(d) if d.state == "interrupted" => {
                    let why = d.error.unwrap_or_else(|| "interrupted".into());
                    return Err(WireError::new(
                        ErrorCode::DownloadFailed,
                        format!("the download of {} failed: {why}", d.url),
                    ));
                }
                None => {
                    return Err(WireError::new(
                        ErrorCode::DownloadFailed,
                        "the download disappeared",
                    ))
                }
                // Bounded by the command's deadline (the caller's timeout drops this wait).
                _ => platform::sleep(DOWNLOAD_POLL).await,
            }
        }
    }
}

/// What a download command knows of the download it started.
#[derive(Default)]
struct WatchState {
    /// The download's id, once known.
    id: Cell<Option<i32>>,
    /// A download by click: downloads newer than this one are the click's.
    before: Cell<Option<i32>>,
    /// The command ended unanswered.
    dropped: Cell<bool>,
}

/// The download one command started, followed until the command answers. Dropped before
/// that, the download is cancelled and its file removed: nobody would judge its real URL
/// any more, and an agent told it failed never finds its file later. A click's download
/// that shows only after that is looked for a moment (`LATE_START`), and cancelled too.
struct DownloadWatch<H: Host> {
    host: Rc<H>,
    state: Rc<WatchState>,
    answered: bool,
}

/// How long a stopped download-by-click still looks for the download its click started.
const LATE_START: Duration = Duration::from_secs(2);

impl<H: Host> Drop for DownloadWatch<H> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        self.state.dropped.set(true);
        let (host, state) = (self.host.clone(), self.state.clone());
        self.host.spawn(Box::pin(async move {
            if let Some(id) = state.id.get() {
                let _ = host.cancel_download(id).await;
                return;
            }
            // A start by URL cancels its own download when its id comes.
            let Some(before) = state.before.get() else {
                return;
            };
            let until = platform::now_ms() + LATE_START.as_millis() as f64;
            while platform::now_ms() < until {
                if let Ok(Some(d)) = host.latest_download().await {
                    if d.id > before {
                        let _ = host.cancel_download(d.id).await;
                        return;
                    }
                }
                platform::sleep(DOWNLOAD_POLL).await;
            }
        }));
    }
}
