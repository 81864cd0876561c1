//! Recording and saved scenarios: the recorder tool, listing, reading, running,
//! deleting and exporting scenarios.

use super::answer::Block;
use ext_core::escape;
use ext_core::methods;
use ext_core::protocol::{ErrorCode, TabId, WireError};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::*;

#[tool_router(router = scenarios_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_recorder",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Record what a person does in the tab: start, then the person clicks and types in the page, then stop with a name (and tags, dependencies) saves it as a scenario (typed secrets sealed in Kapture's encrypted store, other typed values become parameters; the answer suggests dependencies). enable shows the in-page recorder widget instead, where the person starts, stops and confirms the save. status says whether it records."
    )]
    async fn browser_recorder(
        &self,
        Parameters(a): Parameters<OnTab<methods::Recorder>>,
    ) -> Answer {
        use methods::RecorderAction;
        let name = a.params.name.clone().unwrap_or_default();
        if a.params.action == RecorderAction::Stop && !ext_core::scenario::is_valid_name(&name) {
            return self.reply(Err(WireError::new(
                ErrorCode::BadArgs,
                "stop needs a name for the scenario: letters, digits, - and _ (the recording keeps going)",
            )));
        }
        // Asked before the recording stops, so that it keeps going and can be stopped again
        // under another name.
        if a.params.action == RecorderAction::Stop {
            if let Err(e) = crate::scenarios::check_free(&self.config().data_dir, &name) {
                return self.reply(Err(
                    e.wire("the recording keeps going: stop it with another name")
                ));
            }
        }
        let state = match self.on_tab(&a).await {
            Ok(s) => s,
            Err(e) => return self.reply(Err(e)),
        };
        let text = match a.params.action {
            RecorderAction::Enable => format!(
                "The recorder widget is in the page{}: the person records there with Start, then Stop & Save (the scenario is saved in Kapture once they confirm) [tab {}]",
                if state.recording { " and recording" } else { "" },
                state.tab_id
            ),
            RecorderAction::Start | RecorderAction::Status if state.recording => format!(
                "Recording: {} events captured so far. Do the flow in the page, then call browser_recorder with action stop and a name [tab {}]",
                state.captured, state.tab_id
            ),
            RecorderAction::Start | RecorderAction::Status => {
                format!("Not recording [tab {}]", state.tab_id)
            }
            RecorderAction::Stop => {
                let known = crate::scenarios::summaries(&self.config().data_dir);
                let draft = ext_core::recorder::draft::draft(&state, &known);
                // A named dependency that is a suggested login runs only when logged out.
                let dependencies = a
                    .params
                    .dependencies
                    .iter()
                    .map(|d| {
                        let suggested = draft.suggestions.iter().find(|s| &s.scenario == d);
                        ext_core::scenario::Dependency {
                            scenario: d.clone(),
                            reason: suggested.map_or_else(
                                || "named by the agent when saving".to_string(),
                                |s| s.reason.clone(),
                            ),
                            optional: false,
                            condition: suggested.and_then(|s| s.condition.clone()),
                            parameters: Default::default(),
                            capture_output: None,
                        }
                    })
                    .collect();
                let request = ext_core::recorder::draft::SaveRequest {
                    choices: ext_core::recorder::draft::SaveChoices {
                        name: name.clone(),
                        title: a.params.title.clone().unwrap_or_default(),
                        description: a.params.description.clone().unwrap_or_default(),
                        tags: a.params.tags.clone(),
                        dependencies,
                        ..Default::default()
                    },
                    recording: state.clone(),
                };
                let saved =
                    crate::scenarios::save_off_runtime(self.config().data_dir.clone(), request)
                        .await;
                let unused: Vec<String> = draft
                    .suggestions
                    .iter()
                    .filter(|s| !a.params.dependencies.contains(&s.scenario))
                    .map(|s| format!("{} ({})", s.scenario, s.reason))
                    .collect();
                match saved {
                    Ok(s) => {
                        self.scenarios_changed();
                        format!(
                            "Saved scenario {name}: {} steps from {} events, in {}. Parameters: {}. Secrets sealed in Kapture's store (values not shown): {}.{} [tab {}]",
                            s.steps,
                            state.captured,
                            s.path.display(),
                            if s.parameters.is_empty() { "none".into() } else { s.parameters.join(", ") },
                            s.secrets_note(),
                            if unused.is_empty() { String::new() } else { format!(" Suggested dependencies (add with scenario dependencies): {}.", unused.join("; ")) },
                            state.tab_id
                        )
                    }
                    Err(e) => {
                        return self.reply(Err(e.wire(&format!(
                            "the recording of {} steps is not saved",
                            state.steps.len()
                        ))))
                    }
                }
            }
        };
        self.reply(Ok(text))
    }

    #[tool(
        meta = kind(ToolKind::ReadsStore),
        name = "scenario_list",
        annotations(read_only_hint = true, open_world_hint = false),
        description = "The saved scenarios (recorded with browser_recorder): name, title, steps, parameters and the names of their secrets."
    )]
    async fn scenario_list(&self, Parameters(a): Parameters<ScenarioListArgs>) -> Answer {
        let filter = crate::scenarios::Filter {
            search: a.search.as_deref(),
            tags: &a.tags,
            has_dependencies: a.has_dependencies,
        };
        let found = crate::scenarios::list(&self.config().data_dir, &filter);
        if found.is_empty() {
            return self.reply(Ok(
                "No saved scenarios (record one with browser_recorder)".into()
            ));
        }
        let lines: Vec<String> = found
            .iter()
            .map(|r| match r {
                Ok(s) => {
                    let names = |secret: bool| {
                        let v = s
                            .parameters
                            .iter()
                            .filter(|p| p.secret == secret)
                            .map(|p| escape::inline_cut(&p.name, 60))
                            .collect::<Vec<_>>();
                        if v.is_empty() {
                            "none".to_string()
                        } else {
                            v.join(", ")
                        }
                    };
                    // A title may quote a page: on this line, quoted and escaped.
                    format!(
                        "- {}{}: {} steps; parameters: {}; secrets: {}",
                        escape::inline_cut(&s.name, 80),
                        if s.title.is_empty() {
                            String::new()
                        } else {
                            format!(" (title {})", escape::quoted_cut(&s.title, 120))
                        },
                        s.chain.len(),
                        names(false),
                        names(true)
                    )
                }
                Err(why) => format!("- (unreadable) {}", escape::inline_cut(why, 300)),
            })
            .collect();
        self.reply(Ok(format!(
            "{} scenarios:\n{}",
            lines.len(),
            lines.join("\n")
        )))
    }

    #[tool(
        meta = kind(ToolKind::ReadsStore),
        name = "scenario_get",
        annotations(read_only_hint = true, open_world_hint = false),
        description = "A saved scenario as JSON: metadata, parameters (whether each has a recorded default, never its value), dependencies and its chain of steps with ranked locators. Secrets appear only as {{placeholders}}."
    )]
    async fn scenario_get(&self, Parameters(a): Parameters<ScenarioNameArgs>) -> Answer {
        self.reply(
            crate::scenarios::get(&self.config().data_dir, &a.name)
                .map(|s| {
                    // Labels and locators in it came from a page: JSON-escaped.
                    escape::json(
                        &serde_json::to_string_pretty(&crate::scenarios::for_model(&s))
                            .unwrap_or_default(),
                    )
                })
                .map_err(|why| WireError::new(ErrorCode::BadArgs, why)),
        )
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "scenario_run",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        ),
        description = "Replay a saved scenario without a model: its dependencies first (skipped when their condition, e.g. isAuthenticated, holds; outputs passed on), then its steps, with parameters filled from `parameters`, the recorded defaults and Kapture's sealed secrets (or overrideSecrets for this run; never shown). Each element step tries its locators in rank order. Answers the scenario, success, dependencies executed and skipped, actions executed, duration, the failed step with a screenshot, hints after each action (a dialog opened, the page changed, errors logged, alerts), and screenshots after the steps in screenshotSteps."
    )]
    async fn scenario_run(&self, Parameters(a): Parameters<ScenarioRunArgs>) -> Answer {
        let request = crate::replay::Request {
            name: &a.name,
            given: &a.parameters,
            overrides: &a.override_secrets,
            screenshot_steps: &a.screenshot_steps,
        };
        self.run_scenario(a.tab_id, request).await
    }

    #[tool(
        meta = kind(ToolKind::WritesStore),
        name = "scenario_delete",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        ),
        description = "Delete a saved scenario and its sealed secrets."
    )]
    async fn scenario_delete(&self, Parameters(a): Parameters<ScenarioNameArgs>) -> Answer {
        let allowed = match self
            .judge_store_write(
                &a.name,
                format!("delete scenario {}", escape::quoted(&a.name)),
            )
            .await
        {
            Ok(w) => w,
            Err(e) => return self.reply(Err(e)),
        };
        self.reply(
            crate::scenarios::delete(&self.config().data_dir, &a.name, allowed)
                .map(|()| {
                    self.scenarios_changed();
                    format!("Deleted scenario {} and its secrets", a.name)
                })
                .map_err(|why| WireError::new(ErrorCode::BadArgs, why)),
        )
    }

    #[tool(
        meta = kind(ToolKind::ReadsStore),
        name = "scenario_export",
        annotations(read_only_hint = true, open_world_hint = false),
        description = "A saved scenario as a standalone script (format: playwright-ts, playwright-python, puppeteer or webdriverio) that launches Chromium and replays its steps, each trying its locators best first. Parameters become environment variables with the recorded defaults; secrets are read only from environment variables and never appear in the script. The first line names the variables."
    )]
    async fn scenario_export(&self, Parameters(a): Parameters<ScenarioExportArgs>) -> Answer {
        use ext_core::export::{env_summary, Format};
        let bad = |why: String| WireError::new(ErrorCode::BadArgs, why);
        let answer = match (
            Format::parse(a.format.trim()),
            crate::scenarios::get(&self.config().data_dir, &a.name),
        ) {
            (None, _) => Err(bad(format!(
                "unknown format {:?}: use one of {}",
                a.format,
                Format::ALL.map(Format::as_str).join(", ")
            ))),
            (_, Err(why)) => Err(bad(why)),
            (Some(format), Ok(mut s)) => Ok({
                // What the person typed is not shown to the model, here neither: the script
                // reads every parameter from its environment.
                for p in &mut s.parameters {
                    p.default = None;
                }
                format!(
                    "Save as {}. {}\n\n{}",
                    format.file_name(&s.name),
                    env_summary(&s),
                    self.shared.exit.export(&s, format).into_inner()
                )
            }),
        };
        self.reply(answer)
    }
}

impl KaptureServer {
    /// Ask the gate whether this session may change scenario `name` (and its sealed
    /// secrets): a `kapture.store_write` in the `record` category, on the site the scenario
    /// starts on (a page of no site when it names none), refused by `--read-only`, safe
    /// mode and the rules like any write, asked where they say ask.
    async fn judge_store_write(
        &self,
        name: &str,
        what: String,
    ) -> Result<crate::scenarios::WriteAllowed, WireError> {
        let url = crate::scenarios::get(&self.config().data_dir, name)
            .ok()
            .map(|s| s.summary().start_url);
        self.judge_store_change(url, what).await
    }

    /// Ask the gate whether this session may change what kapture keeps for the site of
    /// `url` (a page of no site when there is none): see [`Self::judge_store_write`].
    pub(super) async fn judge_store_change(
        &self,
        url: Option<String>,
        what: String,
    ) -> Result<crate::scenarios::WriteAllowed, WireError> {
        let url = url
            .filter(|u| ext_core::scenario::page_origin(u).is_some())
            .unwrap_or_else(|| "about:blank".into());
        let judged = self
            .browser_call(None, &ext_core::methods::StoreWrite { what, url })
            .await?;
        Ok(crate::scenarios::WriteAllowed::from_gate(judged))
    }

    /// The saved scenarios changed: their tools did too (`notifications/tools/list_changed`).
    fn scenarios_changed(&self) {
        self.shared.scenarios_changed();
    }

    /// Run a saved scenario and answer its report, the screenshots asked for, and one where
    /// it failed.
    pub(super) async fn run_scenario(
        &self,
        tab: Option<TabId>,
        request: crate::replay::Request<'_>,
    ) -> Answer {
        if let Err(e) = self.browser_ready().await {
            return Answer::fail(e);
        }
        let tab = match tab {
            Some(t) => self.check_tab(t).map(|()| Some(t)),
            None => self.default_tab().await,
        };
        let tab = match tab {
            Ok(t) => t,
            Err(e) => return Answer::fail(e),
        };
        let mut used = Vec::new();
        // Each action the replay sends is a step of this session's --max-steps.
        let id = self.id();
        let step = || {
            // The registry's lock is let go before the extension is told.
            let taken = self.shared.registry().take_step(id);
            if taken.is_ok() {
                super::progress::step();
            }
            taken.map_err(|b| {
                self.shared.tell_budget(id, b, false);
                b.refusal()
            })
        };
        let report = crate::replay::run(
            self.bridge(),
            &self.config().data_dir,
            tab,
            request,
            crate::replay::Caller {
                step: &step,
                used: &mut used,
            },
        )
        .await;
        // The page holds the run's secrets now: masked in all the session says from here.
        for (value, kind) in &used {
            self.masks.add(value, kind);
        }
        // Where a secret the run typed may show, the page is not photographed.
        let failed = matches!(&report, Ok(r) if !r.success && !r.secret_on_page);
        // Where it stopped, as the agent would see it.
        let failure = match failed {
            true => self
                .bridge()
                .call_raw("screenshot", tab, serde_json::json!({}), 10_000)
                .await
                .ok()
                .and_then(|shot| serde_json::from_value::<ext_core::methods::Captured>(shot).ok()),
            false => None,
        };
        let dir = self.config().screenshot_dir.clone();
        let blocks = report.map(|mut r| {
            if !r.success && r.secret_on_page {
                r.hints.push(
                    "no screenshot of the failure: a secret this run typed may show on the page"
                        .into(),
                );
            }
            // The steps asked for, in the order the report's `screenshots` names them.
            let mut images = std::mem::take(&mut r.images);
            images.extend(failure);
            // The policy file's screenshot folder keeps a copy of these too.
            if let Some(dir) = &dir {
                for shot in &images {
                    match crate::files::save_screenshot(
                        dir,
                        shot.tab_id,
                        &shot.mime_type,
                        &shot.data,
                    ) {
                        Ok(path) => r.saved.push(path.display().to_string()),
                        Err(e) => r.hints.push(e.message),
                    }
                }
            }
            // The report quotes the page (hints, alerts): JSON keeps it on its lines.
            let mut blocks = vec![Block::text(escape::json(
                &serde_json::to_string_pretty(&r).unwrap_or_default(),
            ))];
            for shot in images {
                blocks.push(Block::image(shot.data, shot.mime_type));
            }
            blocks
        });
        Answer::blocks(blocks)
    }
}
